// End to end: --annotate. The shares of the instructions of a function
// whose time is spent in one inlined loop, on our recording and on perf's
// (against perf annotate's own shares), with the binary and without it
// (the code the recording embedded).
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <span>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "libsample/crc32.h"
#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSharedInline = WORKLOAD_SHARED_INLINE_PATH;

struct Annotation {
  std::map<uint64_t, double> percent;  // by instruction address
  uint64_t hottest = 0;
  std::string hottest_source;  // the source line printed last before it
  double total = 0;
};

// perf annotate --stdio's layout, which ours follows: "  12.34 :   12dc:   add ...",
// with source lines as "         : 17   text".
Annotation Parse(const std::string& text) {
  static const std::regex kInstruction(R"(^\s*([0-9]+\.[0-9]+)\s*:\s+([0-9a-f]+):\s)");
  static const std::regex kSource(R"(^\s+:\s+[0-9]+\s+(.*)$)");
  Annotation a;
  std::istringstream in(text);
  std::string line, source;
  double best = -1;
  for (std::smatch m; std::getline(in, line);) {
    if (std::regex_search(line, m, kInstruction)) {
      const double p = std::stod(m[1]);
      const uint64_t address = std::stoull(m[2], nullptr, 16);
      a.percent[address] = p;
      a.total += p;
      if (p > best) {
        best = p;
        a.hottest = address;
        a.hottest_source = source;
      }
    } else if (std::regex_search(line, m, kSource)) {
      source = m[1];
    }
  }
  return a;
}

class AnnotateTest : public ::testing::Test {
 protected:
  std::string Annotate(const std::string& data, const std::string& symbol) {
    const RunResult r = RunTool({kReport, "-i", data, "--annotate", symbol}, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  // shared_inline copied to `copy`, recorded from there into `data`.
  bool RecordCopy(const std::filesystem::path& copy, const std::string& data) {
    std::filesystem::copy_file(kSharedInline, copy);
    const RunResult rec = RunTool(
        {kRecord, "-e", "cpu-clock", "-F", "2000", "-o", data, "--", copy.string(), "0.5"}, dir_);
    EXPECT_EQ(rec.exit_code, 0) << rec.err;
    return rec.exit_code == 0;
  }

  ScratchDir dir_;
};

// shared_inline spends its time in func_a/b/c, each spinning in the same
// inlined loop: nearly all of a function's samples fall in that loop, on
// the SPIN LINE.
TEST_F(AnnotateTest, AFunctionsTimeIsInItsInlinedLoopWithOrWithoutTheBinary) {
  const std::filesystem::path copy = dir_ / "shared_inline";
  const std::string data = dir_ / "ours.data";
  ASSERT_TRUE(RecordCopy(copy, data));

  const std::string text = Annotate(data, "func_a");
  EXPECT_NE(text.find("Source code & Disassembly of shared_inline for cpu-clock"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<func_a>:"), std::string::npos) << text;
  const Annotation with = Parse(text);
  ASSERT_GT(with.percent.size(), 10u) << text;
  EXPECT_NEAR(with.total, 100.0, 0.5) << text;
  EXPECT_NE(with.hottest_source.find("SPIN LINE"), std::string::npos) << text;
  EXPECT_GT(with.percent.at(with.hottest), 30.0) << text;

  // The binary gone: its code is in the recording.
  std::filesystem::remove(copy);
  const std::string embedded = Annotate(data, "func_a");
  const Annotation without = Parse(embedded);
  EXPECT_EQ(without.percent, with.percent) << embedded;

  const RunResult json =
      RunTool({kReport, "-i", data, "--annotate", "func_a", "--format", "json"}, dir_);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"origin\": \"the recording (embedded)\""), std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find("\"text\": \"push   %rbp\""), std::string::npos) << json.out;

  // Intel syntax on request; an unknown name is refused by name.
  const RunResult intel =
      RunTool({kReport, "-i", data, "--annotate", "func_a", "-M", "intel"}, dir_);
  EXPECT_NE(intel.out.find("push   rbp"), std::string::npos) << intel.out;
  const RunResult unknown = RunTool({kReport, "-i", data, "--annotate", "no_such_fn"}, dir_);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("no_such_fn"), std::string::npos) << unknown.err;
}

// On perf's recording of the same program, each instruction with 5% or more
// of a function's samples has the share perf annotate gives it, within 1.5
// points, and the hottest instruction is the same.
TEST_F(AnnotateTest, SharesPerInstructionAreThoseOfPerfAnnotate) {
  if (!PerfUnusable().empty()) GTEST_SKIP() << PerfUnusable();
  const std::string data = dir_ / "perf.data";
  const RunResult rec = RunTool({kPerf, "record", "-q", "--no-buildid-cache", "-e", "cpu-clock",
                                 "-F", "2000", "-o", data, "--", kSharedInline, "0.5"},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  for (const std::string symbol : {"func_a", "func_b", "func_c"}) {
    const RunResult perf = RunTool({kPerf, "annotate", "--stdio", "-i", data, symbol}, dir_);
    ASSERT_EQ(perf.exit_code, 0) << perf.err;
    const Annotation theirs = Parse(perf.out);
    const Annotation ours = Parse(Annotate(data, symbol));
    ASSERT_FALSE(theirs.percent.empty()) << perf.out;
    EXPECT_EQ(ours.hottest, theirs.hottest) << symbol;
    for (const auto& [address, percent] : theirs.percent) {
      if (percent < 5.0) continue;
      ASSERT_TRUE(ours.percent.contains(address)) << symbol << std::hex << " 0x" << address;
      EXPECT_NEAR(ours.percent.at(address), percent, 1.5) << symbol << std::hex << " 0x" << address;
    }
  }
}

// A second --annotate of the same recording with the same options reads
// the index the first kept (report/annotate_cache.h), and says the same;
// a changed binary, --no-cache or other options read the recording again.
TEST_F(AnnotateTest, ALaterRunReadsTheKeptIndexUntilABinaryChanges) {
  const std::filesystem::path copy = dir_ / "shared_inline";
  const std::string data = dir_ / "ours.data";
  ASSERT_TRUE(RecordCopy(copy, data));
  const std::string cache = dir_ / "cache";
  const auto report = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/env", "XDG_CACHE_HOME=" + cache, kReport, "-i", data});
    return RunTool(args, dir_);
  };
  const RunResult first = report({"--annotate", "func_a"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(cache + "/sample/annotate")) {
    files.push_back(entry.path());
  }
  ASSERT_EQ(files.size(), 1u);
  const RunResult second = report({"--annotate", "func_a"});
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(second.err, first.err);
  const RunResult json = report({"--annotate", "func_b", "--format", "json"});
  const RunResult json_uncached =
      report({"--annotate", "func_b", "--format", "json", "--no-cache"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out, json_uncached.out);

  // The index renamed in place (its checksum made again): only a run that
  // reads it knows func_A.
  std::string bytes = ReadFile(files[0].string());
  ASSERT_GT(bytes.size(), 12u);
  for (size_t at = bytes.find("func_a"); at != std::string::npos; at = bytes.find("func_a", at)) {
    bytes[at + 5] = 'A';
  }
  const uint32_t crc = Crc32(std::as_bytes(std::span(bytes).subspan(12)));
  std::memcpy(bytes.data() + 8, &crc, sizeof(crc));
  std::ofstream(files[0], std::ios::binary) << bytes;
  const RunResult renamed = report({"--annotate", "func_A"});
  ASSERT_EQ(renamed.exit_code, 0) << renamed.err;
  EXPECT_NE(renamed.out.find("<func_A>:"), std::string::npos) << renamed.out;
  EXPECT_NE(report({"--annotate", "func_A", "--no-cache"}).err.find("no samples of func_A"),
            std::string::npos);
  // Other options: another index.
  EXPECT_NE(report({"--annotate", "func_A", "--cpu", "0-1023"}).err.find("no samples of func_A"),
            std::string::npos);

  // The binary rebuilt (here: touched): the recording is read again.
  const auto now = std::filesystem::file_time_type::clock::now();
  std::filesystem::last_write_time(copy, now + std::chrono::seconds(5));
  const RunResult after = report({"--annotate", "func_A"});
  EXPECT_NE(after.exit_code, 0);
  EXPECT_NE(after.err.find("no samples of func_A"), std::string::npos) << after.err;
  const RunResult again = report({"--annotate", "func_a"});
  EXPECT_EQ(again.out, first.out);
}

}  // namespace
}  // namespace sample::e2e
