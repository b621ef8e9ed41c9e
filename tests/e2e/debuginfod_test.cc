// End to end: sample-report fetches the debug file of a stripped binary from
// a debuginfod server. A copy of the bundled split workload is stripped of
// everything but its dynamic symbols and build-id, recorded, and reported
// with DEBUGINFOD_URLS pointing at a local debuginfod (tests/debuginfod_server.h)
// that serves the split's --only-keep-debug file. Function names and source
// lines must come from that file, and must not come without it (no
// DEBUGINFOD_URLS, or --no-debuginfod). Skipped, saying why, without the
// debuginfod server.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/symbols/elf_symbols.h"
#include "tests/debuginfod_server.h"
#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

using testing::DebuginfodServer;

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;

TEST(DebuginfodE2eTest, StrippedBinaryIsSymbolizedFromTheServer) {
  const auto debuginfod = DebuginfodServer::FindBinary();
  if (!debuginfod) GTEST_SKIP() << DebuginfodServer::kMissingReason;
  const auto objcopy = testing::FindInPath("objcopy");
  if (!objcopy) GTEST_SKIP() << "objcopy is not installed (Debian package binutils)";

  ScratchDir dir;
  // The debug file goes only to the server's directory: no .gnu_debuglink
  // and no build-id directory can lead the report to it.
  const std::string serve = dir / "serve";
  const std::string debug = serve + "/split.debug";
  const std::string binary = dir / "bin/split";
  std::filesystem::create_directories(serve);
  std::filesystem::create_directories(dir / "bin");
  const RunResult keep = RunTool({*objcopy, "--only-keep-debug", kSplit, debug}, dir);
  ASSERT_EQ(keep.exit_code, 0) << keep.err;
  // --strip-all keeps allocated sections, the build-id note among them.
  const RunResult strip = RunTool({*objcopy, "--strip-all", kSplit, binary}, dir);
  ASSERT_EQ(strip.exit_code, 0) << strip.err;
  const auto id = ReadElfBuildId(binary);
  ASSERT_TRUE(id && !id->empty()) << binary << " has no build-id";
  ASSERT_EQ(ReadElfBuildId(debug).value_or(""), *id);

  const std::string data = dir / "split.data";
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "-F", "1000", "-o", data, "--", binary, "0.3"}, dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  auto server = DebuginfodServer::Start(*debuginfod, serve, dir.path(), *id);
  ASSERT_TRUE(server) << server.error().message;
  const std::string urls = "DEBUGINFOD_URLS=" + server->url();
  const std::string cache = "DEBUGINFOD_CACHE_PATH=" + (dir / "cache");
  const std::vector<std::string> report = {kReport, "-i", data, "--no-children", "--sort", "sym"};
  auto with_env = [](std::vector<std::string> env, const std::vector<std::string>& argv) {
    env.insert(env.begin(), "/usr/bin/env");
    env.insert(env.end(), argv.begin(), argv.end());
    return env;
  };

  // Names: the stripped binary's .dynsym has none of split's functions.
  const RunResult named = RunTool(with_env({urls, cache}, report), dir);
  ASSERT_EQ(named.exit_code, 0) << named.err;
  const auto sixty = OverheadOf(named.out, "compute_sixty");
  ASSERT_TRUE(sixty) << named.out << named.err;
  EXPECT_GT(*sixty, 40.0) << named.out;
  EXPECT_TRUE(OverheadOf(named.out, "compute_thirty")) << named.out;

  // Source lines: the downloaded file's DWARF.
  std::vector<std::string> by_line = report;
  by_line.back() = "srcline";
  const RunResult lines = RunTool(with_env({urls, cache}, by_line), dir);
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  const auto split_c = OverheadOfRow(lines.out, {"split.c:"});
  ASSERT_TRUE(split_c) << lines.out;
  EXPECT_GT(*split_c, 10.0) << lines.out;

  // ... which the client left in its cache.
  EXPECT_TRUE(std::filesystem::exists(dir / ("cache/" + *id + "/debuginfo")));

  // Without a server to ask, the same frames have no names, only the start
  // of the .eh_frame FDE that covers them (split+0x...); --no-debuginfod
  // does not even use the copy already in the client's cache.
  for (const auto& env : {std::vector<std::string>{"-u", "DEBUGINFOD_URLS", cache},
                          std::vector<std::string>{urls, cache}}) {
    std::vector<std::string> argv = report;
    if (env[0] != "-u") argv.push_back("--no-debuginfod");
    const RunResult unnamed = RunTool(with_env(env, argv), dir);
    ASSERT_EQ(unnamed.exit_code, 0) << unnamed.err;
    EXPECT_FALSE(OverheadOf(unnamed.out, "compute_sixty")) << unnamed.out;
    EXPECT_EQ(unnamed.out.find("compute_"), std::string::npos) << unnamed.out;
    EXPECT_NE(unnamed.out.find("[.] split+0x"), std::string::npos) << unnamed.out;
  }
}

}  // namespace
}  // namespace sample::e2e
