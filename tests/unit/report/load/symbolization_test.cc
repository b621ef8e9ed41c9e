// Tests for SymbolizeLocations with what a recording carries beside its
// records: JIT perf maps (named from the recording's copy, else the file)
// and embedded binaries (a binary missing here named from the recording,
// with nothing counted missing and nothing to warn of).
#include "report/load/symbolization.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/symbolizer_test_util.h"

namespace sample::report {
namespace {

using sample::testing::ScratchDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The names of `result`'s frames of location `i`.
std::vector<std::string> NamesOf(const SymbolizeResult& result, size_t i) {
  std::vector<std::string> names;
  for (uint32_t k = 0; k < result.frames_count[i]; ++k) {
    names.push_back(result.frames[result.frames_begin[i] + k].name);
  }
  return names;
}

std::string SourceOf(const SymbolizeResult& result, const std::string& path) {
  auto source = format::FindMetadata(result.symbol_sources, path);
  return source ? *source : "(none)";
}

class SymbolizationTest : public ::testing::Test {
 protected:
  SymbolizeResult Symbolize(const std::vector<Location>& locations) {
    SymbolizeOptions options;
    options.binaries.files.use_debuginfod = false;
    options.binaries.files.symfs = symfs_;
    options.recorded.embedded = &embedded_;
    options.perf_maps = perf_maps_;
    options.recording_facts = &facts_;
    return SymbolizeLocations(locations, dso_paths_, build_ids_, "", options);
  }

  ScratchDir dir_;
  std::string symfs_;
  // Dso ids as the ProcessTable gives them: the two pseudo DSOs first.
  std::vector<std::string> dso_paths_ = {"[unknown]", "[kernel.kallsyms]"};
  format::Metadata build_ids_;
  EmbeddedBinaries embedded_;
  std::vector<RecordedPerfMap> perf_maps_;
  format::Metadata facts_;  // the recording's metadata
};

TEST_F(SymbolizationTest, JitCodeIsNamedFromTheRecordingsPerfMap) {
  dso_paths_.push_back(PerfMapPath(4242));  // dso 2: recorded, no file
  dso_paths_.push_back(PerfMapPath(4243));  // dso 3: neither
  perf_maps_.push_back({4242, "7f0000001000 40 jitted loop\n"});
  perf_maps_.push_back({99, "7f0000001000 40 another process\n"});
  const auto result = Symbolize({{2, 0x7f0000001010}, {3, 0x7f0000001010}});
  EXPECT_THAT(NamesOf(result, 0), ElementsAre("jitted loop"));
  EXPECT_EQ(result.frames[result.frames_begin[0]].symbol_offset, 0x10u);
  EXPECT_EQ(SourceOf(result, PerfMapPath(4242)), "embedded perf map");
  EXPECT_THAT(NamesOf(result, 1), ElementsAre("[unknown] 0x7f0000001010"));
  EXPECT_THAT(SourceOf(result, PerfMapPath(4243)), HasSubstr("none: "));
}

TEST_F(SymbolizationTest, ARecordedPerfMapComesBeforeTheFile) {
  // Under --symfs (the file's place is ours to write): the file has other
  // names than the recording's copy, which wins; without a copy, the file.
  symfs_ = dir_.path();
  std::filesystem::create_directories(symfs_ + "/tmp");
  for (uint32_t pid : {4242u, 4243u}) {
    std::ofstream(symfs_ + PerfMapPath(pid)) << "7f0000001000 40 from the file\n";
  }
  dso_paths_.push_back(PerfMapPath(4242));
  dso_paths_.push_back(PerfMapPath(4243));
  perf_maps_.push_back({4242, "7f0000001000 40 from the recording\n"});
  const auto result = Symbolize({{2, 0x7f0000001010}, {3, 0x7f0000001010}});
  EXPECT_THAT(NamesOf(result, 0), ElementsAre("from the recording"));
  EXPECT_THAT(NamesOf(result, 1), ElementsAre("from the file"));
  EXPECT_EQ(SourceOf(result, PerfMapPath(4243)), "perf map");
}

// Issue 56: without a copy, this host's /tmp/perf-PID.map was read for
// any recording; after a reboot or a pid's reuse it names another
// process's code (root's JIT's names on a user's). Only on the recording's
// boot, and only a map of the user whose process it was.
TEST_F(SymbolizationTest, ThisHostsMapNamesOnlyTheRecordedProcessOfThisBoot) {
  const std::string boot = BootId();
  ASSERT_FALSE(boot.empty());
  facts_ = {{"boot_id", boot}, {"jit_uid 4243", std::to_string(geteuid())}};
  auto own = PerfMapFallback(4243, facts_);
  ASSERT_TRUE(own) << own.error().message;
  EXPECT_EQ(own->user, geteuid());
  auto unknown = PerfMapFallback(4244, facts_);
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message,
              HasSubstr("/tmp/perf-4244.map: not read: the recording does not say whose process "
                        "4244 was"));
  auto other_boot = PerfMapFallback(4243, {{"boot_id", "0000-another-boot"}});
  ASSERT_FALSE(other_boot);
  EXPECT_THAT(other_boot.error().message, HasSubstr("made on another boot (0000-another-boot)"));
  // Older recordings and perf.data say neither: the reporting user's own.
  auto older = PerfMapFallback(4243, {});
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_EQ(older->user, geteuid());
  EXPECT_EQ(PerfMapPid(PerfMapPath(4243)), 4243u);

  // Through SymbolizeLocations: the file named with the facts, and not
  // with another process's user or another boot's.
  symfs_ = dir_.path();
  std::filesystem::create_directories(symfs_ + "/tmp");
  std::ofstream(symfs_ + PerfMapPath(4243)) << "7f0000001000 40 from the file\n";
  dso_paths_.push_back(PerfMapPath(4243));
  EXPECT_THAT(NamesOf(Symbolize({{2, 0x7f0000001010}}), 0), ElementsAre("from the file"));
  facts_ = {{"boot_id", boot}, {"jit_uid 4243", std::to_string(geteuid() + 1)}};
  auto others = Symbolize({{2, 0x7f0000001010}});
  EXPECT_THAT(NamesOf(others, 0), ElementsAre("[unknown] 0x7f0000001010"));
  EXPECT_THAT(SourceOf(others, PerfMapPath(4243)), HasSubstr("not by the process's user"));
  facts_ = {{"boot_id", "0000-another-boot"}, {"jit_uid 4243", std::to_string(geteuid())}};
  EXPECT_THAT(NamesOf(Symbolize({{2, 0x7f0000001010}}), 0),
              ElementsAre("[unknown] 0x7f0000001010"));
}

TEST_F(SymbolizationTest, AMissingBinaryIsNamedFromTheRecordingAndNotCountedMissing) {
  const std::string gone = dir_ / "gone/libwork.so";
  const std::string absent = dir_ / "absent/libother.so";
  dso_paths_.push_back(gone);    // dso 2: embedded
  dso_paths_.push_back(absent);  // dso 3: not embedded
  build_ids_ = {{gone, "ab12"}, {absent, "cd34"}};
  auto binary = std::make_shared<EmbeddedBinary>();
  binary->path = gone;
  binary->build_id = "ab12";
  binary->segments.push_back({0, 0x2000, 0, 0x2000, true});
  binary->addresses.push_back({0x1010, {{"work", "work.c", 4, false, 0x10}}});
  binary->functions.push_back({0x1000, 0x100, "work"});
  embedded_.Add(binary);
  const auto result = Symbolize({{2, 0x1010}, {2, 0x1020}, {3, 0x1010}});
  EXPECT_THAT(NamesOf(result, 0), ElementsAre("work"));
  EXPECT_THAT(NamesOf(result, 1), ElementsAre("work"));
  EXPECT_THAT(NamesOf(result, 2), ElementsAre("[unknown] 0x1010"));
  EXPECT_EQ(SourceOf(result, gone), "embedded, 1 function");
  EXPECT_EQ(SourceOf(result, absent), "none: not found");
  EXPECT_EQ(result.missing_binaries, 1u);  // only the one not embedded
  EXPECT_EQ(result.mismatched_binaries, 0u);
  EXPECT_TRUE(result.warnings.empty());
}

// A perf.data recorded on the running kernel: its kernel addresses are
// named from what the host's table gives for them (kernel_feed), asked
// once with every sampled address, beside the file's own kallsyms text.
TEST_F(SymbolizationTest, KernelAddressesAreNamedFromTheFeedAndTheText) {
  std::vector<std::vector<uint64_t>> asked;
  SymbolizeOptions options;
  options.binaries.files.use_debuginfod = false;
  options.kernel_symbols_origin = "kallsyms";
  options.kernel_feed = [&](const std::vector<uint64_t>& addresses) {
    asked.push_back(addresses);
    KallsymsSnapshot snapshot;
    snapshot.symbols = {{0xffffffff81000100, "from_host", ""},
                        {0xffffffff81000200, "host_next", ""}};
    return snapshot;
  };
  const std::vector<Location> locations = {{1, 0xffffffff81000110}, {1, 0xffffffff81000010}};
  const auto result =
      SymbolizeLocations(locations, dso_paths_, build_ids_,
                         "ffffffff81000000 T from_text\nffffffff81000080 T text_next\n", options);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_THAT(asked[0], ElementsAre(0xffffffff81000110, 0xffffffff81000010));
  EXPECT_THAT(NamesOf(result, 0), ElementsAre("from_host"));
  EXPECT_THAT(NamesOf(result, 1), ElementsAre("from_text"));

  // A table, none of it covering: said, not "no symbols".
  options.kernel_feed = [](const std::vector<uint64_t>&) { return KallsymsSnapshot{}; };
  const auto none = SymbolizeLocations(locations, dso_paths_, build_ids_, "", options);
  EXPECT_THAT(SourceOf(none, "[kernel.kallsyms]"), HasSubstr("none covers a sampled address"));
  // No table (unreadable, addresses hidden): why.
  options.kernel_feed = [](const std::vector<uint64_t>&) {
    KallsymsSnapshot snapshot;
    snapshot.note = "cannot read /proc/kallsyms";
    return snapshot;
  };
  const auto unread = SymbolizeLocations(locations, dso_paths_, build_ids_, "", options);
  EXPECT_EQ(SourceOf(unread, "[kernel.kallsyms]"), "none: cannot read /proc/kallsyms");
}

// A crafted --no-embed recording claims its JIT process was another user's
// (`jit_uid 4245 = U`): a report run as root (a service rendering uploaded
// recordings) read U's 0600 /tmp/perf-4245.map and printed its names to the
// uploader. The claim alone does not make a private map readable: only one
// the reporting user could read anyway (readable by everyone) is shown.
TEST_F(SymbolizationTest, ARecordingsClaimOfAnotherUserShowsNoPrivateMapOfTheirs) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a map of another user";
  const uid_t claimed = 4246;
  facts_ = {{"boot_id", BootId()}, {"jit_uid 4245", std::to_string(claimed)}};
  symfs_ = dir_.path();
  std::filesystem::create_directories(symfs_ + "/tmp");
  const std::string map = symfs_ + PerfMapPath(4245);
  std::ofstream(map) << "7f0000001000 40 carols_secret_function\n";
  ASSERT_EQ(chown(map.c_str(), claimed, claimed), 0);
  ASSERT_EQ(chmod(map.c_str(), 0600), 0);
  dso_paths_.push_back(PerfMapPath(4245));
  auto hidden = Symbolize({{2, 0x7f0000001010}});
  EXPECT_THAT(NamesOf(hidden, 0), ElementsAre("[unknown] 0x7f0000001010"));
  EXPECT_THAT(SourceOf(hidden, PerfMapPath(4245)),
              HasSubstr("owned by uid 4246 and not readable by others (mode 0600)"));
  // Readable by everyone: no secret, and the claimed user's map names it.
  ASSERT_EQ(chmod(map.c_str(), 0644), 0);
  EXPECT_THAT(NamesOf(Symbolize({{2, 0x7f0000001010}}), 0), ElementsAre("carols_secret_function"));
  // The reporting user's own private map stays readable to them.
  facts_ = {{"boot_id", BootId()}, {"jit_uid 4245", std::to_string(geteuid())}};
  ASSERT_EQ(chown(map.c_str(), geteuid(), getegid()), 0);
  ASSERT_EQ(chmod(map.c_str(), 0600), 0);
  EXPECT_THAT(NamesOf(Symbolize({{2, 0x7f0000001010}}), 0), ElementsAre("carols_secret_function"));
}

}  // namespace
}  // namespace sample::report
