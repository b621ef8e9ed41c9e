// End to end: Go binaries named right where perf shows hex or the wrong
// names. A stripped Go binary (`-ldflags=-s -w`: no .symtab, no DWARF) is
// named, with lines, from the function table its runtime keeps, in the
// report and in what the recording embeds. A Go binary has no GNU build-id:
// the recording stores its Go build ID, so another Go program copied to
// its path is not taken for it; the recording's own tables name its code
// then, and --stats counts the mismatch. go_names splits about 60/40
// between main.alpha and main.(*Worker).spin.
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;

class GoBinariesTest : public ::testing::Test {
 protected:
  // Records `program` (copied into the scratch directory as `prog`) for
  // 0.8 s of CPU at 2 kHz into `data`.
  void RecordCopy(const std::string& program, const std::string& data,
                  std::vector<std::string> options = {}) {
    std::filesystem::copy_file(program, prog_, std::filesystem::copy_options::overwrite_existing);
    std::vector<std::string> argv = {kRecord, "-F", "2000", "-o", data};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", prog_, "0.8"});
    const RunResult rec = RunTool(argv, dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
  }

  RunResult Report(const std::string& data, std::vector<std::string> options) {
    std::vector<std::string> argv = {kReport, "-i", data};
    argv.insert(argv.end(), options.begin(), options.end());
    RunResult rep = RunTool(argv, dir_);
    EXPECT_EQ(rep.exit_code, 0) << rep.err;
    return rep;
  }

  // Both hot functions named, with their shares (60/40 of the CPU, wide
  // margins for a loaded machine).
  void ExpectGoNames(const std::string& flat) {
    const auto alpha = OverheadOf(flat, "[.] main.alpha");
    const auto spin = OverheadOf(flat, "[.] main.(*Worker).spin");
    ASSERT_TRUE(alpha && spin) << flat;
    EXPECT_GT(*alpha, 40) << flat;
    EXPECT_GT(*spin, 25) << flat;
  }

  ScratchDir dir_;
  const std::string prog_ = dir_ / "prog";
};

#if defined(WORKLOAD_GO_NAMES_STRIPPED_PATH)
TEST_F(GoBinariesTest, AStrippedGoBinaryIsNamedFromItsFunctionTable) {
  const std::string data = dir_ / "stripped.data";
  RecordCopy(WORKLOAD_GO_NAMES_STRIPPED_PATH, data);
  ExpectGoNames(Report(data, {"--no-children"}).out);
  // Lines too: the table maps pcs to files and lines.
  const std::string lines = Report(data, {"--no-children", "--sort", "sym,srcline"}).out;
  EXPECT_TRUE(OverheadOfRow(lines, {"main.alpha", "go_names.go:"})) << lines;
  EXPECT_NE(Report(data, {"--stats"}).out.find(" + Go function table"), std::string::npos);
  // Without the binary: what the recording embedded names the same.
  std::filesystem::remove(prog_);
  ExpectGoNames(Report(data, {"--no-children"}).out);
}

// The calls Go inlined, from the table's inline trees: go_inline (a
// stripped PIE) spends its time in main.mix, inlined into main.churn, at
// go_inline.go:22.
TEST_F(GoBinariesTest, AStrippedGoBinarysInlinedCallsAreFramesOfTheirOwn) {
  const std::string data = dir_ / "inline.data";
  RecordCopy(WORKLOAD_GO_INLINE_STRIPPED_PATH, data);
  const auto expect_inlined = [&](const std::string& when) {
    SCOPED_TRACE(when);
    const std::string inner = Report(data, {"--no-children", "--sort", "inline,srcline"}).out;
    const auto mix = OverheadOfRow(inner, {"main.mix (inlined)", "go_inline.go:22"});
    ASSERT_TRUE(mix) << inner;
    EXPECT_GT(*mix, 60) << inner;
    const std::string graph = Report(data, {"-g", "caller", "--sort", "sym"}).out;
    EXPECT_TRUE(std::regex_search(
        graph, std::regex("main\\.churn\\n(?:[ |]*\\n)*[ |]*(?:--[0-9.]+%--)?main\\.mix "
                          "\\(inlined\\)")))
        << graph;
  };
  expect_inlined("with the binary");
  // Without the binary: what the recording embedded has the same frames.
  std::filesystem::remove(prog_);
  expect_inlined("from the recording");
}

TEST_F(GoBinariesTest, AGoBinaryReplacedAtItsPathIsNamedFromTheRecording) {
  const std::string data = dir_ / "replaced.data";
  RecordCopy(WORKLOAD_GO_NAMES_PATH, data);
  // Another Go program at the path (another build ID, no GNU build-id).
  std::filesystem::copy_file(WORKLOAD_GOLEAF_PATH, prog_,
                             std::filesystem::copy_options::overwrite_existing);
  const RunResult flat = Report(data, {"--no-children"});
  ExpectGoNames(flat.out);
  const std::string stats = Report(data, {"--stats"}).out;
  EXPECT_NE(stats.find("mismatched binaries:          1"), std::string::npos) << stats;
  EXPECT_NE(stats.find("embedded (the file found has build-id go:"), std::string::npos) << stats;

  // Recorded without embedding: nothing names it, and the report says why
  // rather than naming goleaf's functions.
  const std::string bare = dir_ / "bare.data";
  RecordCopy(WORKLOAD_GO_NAMES_PATH, bare, {"--no-embed"});
  std::filesystem::copy_file(WORKLOAD_GOLEAF_PATH, prog_,
                             std::filesystem::copy_options::overwrite_existing);
  const RunResult unnamed = Report(bare, {"--no-children", "--sort", "dso"});
  EXPECT_NE(unnamed.err.find("has build-id go:"), std::string::npos) << unnamed.err;
  EXPECT_NE(unnamed.err.find("but the recording saw go:"), std::string::npos) << unnamed.err;
  const std::string by_sym = Report(bare, {"--no-children", "--sort", "sym"}).out;
  double unknown = 0;
  for (const std::string& line : Lines(by_sym)) {
    if (line.find("[.] [unknown]") == std::string::npos) continue;
    unknown += OverheadOfRow(line, {"[.] [unknown]"}).value_or(0);
  }
  EXPECT_GT(unknown, 70) << by_sym;
}
#else
TEST_F(GoBinariesTest, AStrippedGoBinaryIsNamedFromItsFunctionTable) {
  GTEST_SKIP() << "go was not found when the build was configured (scripts/setup.sh installs "
                  "golang-go with the test packages)";
}
#endif

}  // namespace
}  // namespace sample::e2e
