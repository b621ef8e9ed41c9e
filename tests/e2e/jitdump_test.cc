// End to end: JIT code named from jitdumps, without perf inject. The fake
// JIT (tests/workloads/jitdump.c: two copied functions, 70/30 of the work
// by construction, one moved halfway) is recorded with frame-pointer
// chains and with --call-graph dwarf; the split must hold within 5 points
// in the flat profile, JSON and folded stacks, also after the dump file is
// deleted (the recording holds it), and source lines come from its
// debug-info records. node --perf-prof running a bundled script
// (tests/workloads/jitdump_split.js) must have its two hot JS functions
// named with their split, also after its dump is deleted.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kJitDump = WORKLOAD_JITDUMP_PATH;
const std::string kSplitJs = WORKLOAD_JITDUMP_JS;
const std::string kMapHashJs = WORKLOAD_MAP_HASH_JS;

// The split as each view shows it, in percent of all samples.
struct Split {
  double seventy = 0;
  double thirty = 0;
};

// The sum of the first column of every flat row whose text holds `name`
// (a JIT may load one function several times: V8 compiles it again).
double FlatSum(const std::string& report, const std::string& name) {
  double sum = 0;
  for (const std::string& line : Lines(report)) {
    if (line.empty() || line[0] == '#' || line.find(name) == std::string::npos) continue;
    sum += std::strtod(line.c_str(), nullptr);
  }
  return sum;
}

// The sum of "self" of every JSON entry whose symbol holds `name`.
double JsonSum(const std::string& json, const std::string& name) {
  double sum = 0;
  size_t at = 0;
  while ((at = json.find("\"symbol\": \"", at)) != std::string::npos) {
    const size_t end = json.find('"', at + 11);
    const std::string symbol = json.substr(at + 11, end - at - 11);
    const size_t self = json.rfind("\"self\": ", at);
    if (symbol.find(name) != std::string::npos && self != std::string::npos) {
      sum += std::strtod(json.c_str() + self + 8, nullptr);
    }
    at = end;
  }
  return sum;
}

// The percentage of folded stacks whose leaf frame holds `name`.
double FoldedLeafShare(const std::string& folded, const std::string& name) {
  double total = 0, leaf = 0;
  for (const std::string& line : Lines(folded)) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const double count = std::strtod(line.c_str() + space + 1, nullptr);
    total += count;
    const size_t last = line.rfind(';', space);
    const std::string frame = line.substr(last == std::string::npos ? 0 : last + 1,
                                          space - (last == std::string::npos ? 0 : last + 1));
    if (frame.find(name) != std::string::npos) leaf += count;
  }
  return total == 0 ? 0 : 100.0 * leaf / total;
}

class JitDumpTest : public ::testing::Test {
 protected:
  // The shares of `seventy` and `thirty` in the flat profile, JSON and the
  // folded stacks of `data`; each view's pair must be 70/30 of their sum
  // within 5 points, and their sum at least `min_sum`.
  void ExpectSplit(const std::string& data, const std::string& seventy, const std::string& thirty,
                   double min_sum, const std::string& what) {
    const RunResult flat = RunTool({kReport, "-i", data, "--no-children", "--sort", "sym"}, dir_);
    ASSERT_EQ(flat.exit_code, 0) << flat.err;
    const RunResult json =
        RunTool({kReport, "-i", data, "--no-children", "--sort", "sym", "--format", "json"}, dir_);
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const RunResult folded = RunTool({kReport, "-i", data, "--format", "folded"}, dir_);
    ASSERT_EQ(folded.exit_code, 0) << folded.err;
    const std::vector<std::pair<std::string, Split>> views = {
        {"flat", {FlatSum(flat.out, seventy), FlatSum(flat.out, thirty)}},
        {"json", {JsonSum(json.out, seventy), JsonSum(json.out, thirty)}},
        {"folded", {FoldedLeafShare(folded.out, seventy), FoldedLeafShare(folded.out, thirty)}},
    };
    for (const auto& [view, split] : views) {
      const double sum = split.seventy + split.thirty;
      EXPECT_GE(sum, min_sum) << what << ", " << view << "\n" << flat.out;
      if (sum == 0) continue;
      EXPECT_NEAR(100.0 * split.seventy / sum, 70.0, 5.0) << what << ", " << view << "\n"
                                                          << flat.out;
    }
  }

  ScratchDir dir_;
};

TEST_F(JitDumpTest, FakeJitIsNamedFromItsDumpWithCallChains) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the fake JIT writes x86-64 machine code";
#endif
  for (const std::string mode : {"fp", "dwarf"}) {
    const std::string data = dir_ / ("jitdump-" + mode + ".data");
    // 2000 samples: 5 points are about five standard deviations of the
    // share (at 999 Hz, 1000 samples, about three).
    const RunResult rec = RunTool({kRecord, "-e", "cpu-clock", "-F", "2000", "--call-graph", mode,
                                   "-o", data, "--", kJitDump, "1.0", dir_.path()},
                                  dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    const std::string dump = Lines(rec.out).at(0);
    ASSERT_NE(dump.find("/jit-"), std::string::npos) << rec.out;
    EXPECT_NE(rec.err.find("1 jitdump"), std::string::npos) << rec.err;
    // The moved function is named at both of its places: 70/30 holds.
    ExpectSplit(data, "jit_seventy", "jit_thirty", 90.0, mode);
    ASSERT_EQ(unlink(dump.c_str()), 0) << dump;
    ExpectSplit(data, "jit_seventy", "jit_thirty", 90.0, mode + ", dump deleted");

    // Source lines from the debug-info records: the loop is on the line
    // after each function's first.
    const RunResult lines =
        RunTool({kReport, "-i", data, "--no-children", "--sort", "srcline"}, dir_);
    ASSERT_EQ(lines.exit_code, 0) << lines.err;
    const double seventy_line = FlatSum(lines.out, "jit_seventy.js:8");
    const double thirty_line = FlatSum(lines.out, "jit_thirty.js:4");
    ASSERT_GT(seventy_line + thirty_line, 90.0) << lines.out;
    EXPECT_NEAR(100.0 * seventy_line / (seventy_line + thirty_line), 70.0, 5.0) << lines.out;

    // Where the names came from, and what the dump held.
    const RunResult stats = RunTool({kReport, "-i", data, "--stats"}, dir_);
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    EXPECT_NE(stats.out.find("embedded jitdump (2 functions)"), std::string::npos) << stats.out;
    const size_t moves = stats.out.find("code moves:");
    ASSERT_NE(moves, std::string::npos) << stats.out;
    EXPECT_EQ(std::strtol(stats.out.c_str() + moves + 11, nullptr, 10), 1) << stats.out;
    const RunResult header = RunTool({kReport, "-i", data, "--header-only"}, dir_);
    ASSERT_EQ(header.exit_code, 0) << header.err;
    EXPECT_NE(header.out.find("named from its jitdump (2 functions, 1 move)"), std::string::npos)
        << header.out;
  }
}

TEST_F(JitDumpTest, DumpNamesWhatItCoversOverThePerfMap) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the fake JIT writes x86-64 machine code";
#endif
  const std::string data = dir_ / "both.data";
  // 0.6 s at 4000 Hz: 2400 samples, so that 70/30 within 5 points holds
  // by over five standard deviations (at 999 Hz, 600 samples, a run in
  // about 150 missed it: 65.0% in a fresh clone's CI run).
  const RunResult rec = RunTool({kRecord, "-e", "cpu-clock", "-F", "4000", "-o", data, "--",
                                 kJitDump, "0.6", dir_.path(), "map"},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::string dump = Lines(rec.out).at(0);
  const std::string pid = dump.substr(dump.rfind("jit-") + 4, dump.size() - dump.rfind("jit-") - 9);
  struct MapRemover {
    std::string path;
    ~MapRemover() { unlink(path.c_str()); }
  } remove_map{"/tmp/perf-" + pid + ".map"};
  ExpectSplit(data, "jit_seventy", "jit_thirty", 90.0, "with a perf map");
  const RunResult flat = RunTool({kReport, "-i", data, "--no-children", "--sort", "sym"}, dir_);
  EXPECT_LT(FlatSum(flat.out, "perfmap_"), 5.0) << flat.out;
}

// Whether `node` runs here: the probe the node test skips on.
bool NodeRuns(const ScratchDir& dir) {
  const RunResult probe = RunTool({"/bin/sh", "-c", "command -v node && node --version"}, dir);
  return probe.exit_code == 0;
}

TEST_F(JitDumpTest, NodePerfProfFunctionsAreNamed) {
  if (!NodeRuns(dir_)) GTEST_SKIP() << "node is not installed (apt-get install nodejs)";
  // --perf-prof writes jit-PID.dump in the working directory (dir_); no
  // other V8 flag is needed: the hot loops are optimized within the first
  // rounds, and their code keeps frame pointers.
  for (const std::vector<std::string> chains :
       std::vector<std::vector<std::string>>{{"-g"}, {"--call-graph", "dwarf"}}) {
    const std::string data = dir_ / ("node" + chains.back() + ".data");
    std::vector<std::string> argv = {kRecord, "-e", "cpu-clock", "-F", "999", "-o", data};
    argv.insert(argv.end(), chains.begin(), chains.end());
    argv.insert(argv.end(), {"--", "node", "--perf-prof", kSplitJs, "1.5"});
    const RunResult rec = RunTool(argv, dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    EXPECT_NE(rec.err.find("jitdump"), std::string::npos) << rec.err;
    // Some time goes to node's start and V8's compilers: the two functions
    // hold most of it, not all.
    const std::string what = "node " + chains.back();
    ExpectSplit(data, "jsSeventy", "jsThirty", 50.0, what);
    const RunResult dumps =
        RunTool({"/bin/sh", "-c", "rm -v jit-*.dump"}, dir_);  // in dir_, node's working directory
    ASSERT_EQ(dumps.exit_code, 0) << dumps.err;
    ASSERT_NE(dumps.out.find("jit-"), std::string::npos) << dumps.out;
    ExpectSplit(data, "jsSeventy", "jsThirty", 50.0, what + ", dump deleted");
    // V8's debug-info records (each before its load's unwinding info and
    // the load) give the hot functions source lines. Their file names are
    // V8's to get right: node 20 sometimes writes garbage there.
    const RunResult lines =
        RunTool({kReport, "-i", data, "--no-children", "--sort", "sym,srcline"}, dir_);
    ASSERT_EQ(lines.exit_code, 0) << lines.err;
    const double with_lines = FlatSum(lines.out, "jsSeventy") + FlatSum(lines.out, "jsThirty");
    const double without = FlatSum(lines.out, "??:0");
    EXPECT_GT(with_lines - without, 40.0) << lines.out;
  }
}

// node with a perf map, -g: V8 maps its builtins from node's file at an
// address the file's layout does not give, and leaves in node's C++ code
// sit under them; every view reads the same with and without the
// binaries (the recording's own tables), the leaf check's callers there
// included.
TEST_F(JitDumpTest, NodeReportsTheSameWithoutItsBinaries) {
  if (!NodeRuns(dir_)) GTEST_SKIP() << "node is not installed (apt-get install nodejs)";
  const std::string data = dir_ / "node-map.data";
  const RunResult rec = RunTool({kRecord, "-e", "cpu-clock", "-g", "-F", "2000", "-o", data, "--",
                                 "node", "--perf-basic-prof", kMapHashJs, "1.5"},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  ASSERT_FALSE(Lines(rec.out).empty()) << rec.out;
  struct MapRemover {
    std::string path;
    ~MapRemover() { unlink(path.c_str()); }
  } remove_map{"/tmp/perf-" + Lines(rec.out).front() + ".map"};
  const std::string empty = dir_ / "empty symfs";
  std::filesystem::create_directories(empty);
  for (const std::vector<std::string>& view :
       std::vector<std::vector<std::string>>{{"--script"}, {"--format", "folded"}}) {
    std::vector<std::string> with = {kReport, "-i", data};
    with.insert(with.end(), view.begin(), view.end());
    std::vector<std::string> without = with;
    without.insert(without.end(), {"--symfs", empty});
    const RunResult a = RunTool(with, dir_);
    const RunResult b = RunTool(without, dir_);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_NE(a.out.find("Builtins_FindOrderedHashMapEntry"), std::string::npos);
    EXPECT_EQ(a.out, b.out) << view[0] << " differs without the binaries";
  }
}

}  // namespace
}  // namespace sample::e2e
