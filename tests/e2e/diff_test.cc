// End to end: `sample-report --diff` over two fresh recordings of the split
// workload, whose shares are 60/30/10% by construction, so that the deltas
// of two runs are small and a recording against itself has none; and the
// three ways to name the files, and the refused ones, as typed.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;

// The words of the table row whose symbol is `symbol` (both sides present:
// Baseline, Base samples, Delta, Samples, Shared Object, [.], symbol).
std::vector<std::string> RowOf(const std::string& table, const std::string& symbol) {
  for (const std::string& line : Lines(table)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (!words.empty() && words.back() == symbol) return words;
  }
  return {};
}

double Percent(const std::string& cell) { return std::stod(cell.substr(0, cell.size() - 1)); }

class DiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string& data : {base_, next_}) {
      const RunResult rec = RunTool(
          {kRecord, "-g", "-e", "cpu-clock", "-F", "1000", "-o", data, "--", kSplit, "0.5"}, dir_);
      ASSERT_EQ(rec.exit_code, 0) << rec.err;
    }
  }
  RunResult Report(std::vector<std::string> args) {
    args.insert(args.begin(), kReport);
    return RunTool(args, dir_);
  }
  ScratchDir dir_;
  const std::string base_ = dir_ / "base.data";
  const std::string next_ = dir_ / "new.data";
};

TEST_F(DiffTest, TwoRunsOfOneWorkloadDifferLittleAndARunNotAtAll) {
  const RunResult diff = Report({"--diff", base_, next_});
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  for (const char* symbol : {"compute_sixty", "compute_thirty", "compute_ten"}) {
    const std::vector<std::string> row = RowOf(diff.out, symbol);
    ASSERT_EQ(row.size(), 7u) << symbol << "\n" << diff.out;
    EXPECT_EQ(row[4], "split");
    EXPECT_GT(std::stoul(row[1]), 20u) << diff.out;  // base samples
    EXPECT_GT(std::stoul(row[3]), 20u) << diff.out;  // new samples
    EXPECT_LT(std::abs(Percent(row[2])), 10.0) << diff.out;
  }
  EXPECT_NEAR(Percent(RowOf(diff.out, "compute_sixty")[0]), 60.0, 10.0) << diff.out;

  // The same tables however the files are named.
  EXPECT_EQ(Report({"-i", next_, "--diff", base_}).out, diff.out);
  EXPECT_EQ(Report({"--diff", base_, "-i", next_}).out, diff.out);

  const RunResult self = Report({"--diff", base_, base_, "--children"});
  ASSERT_EQ(self.exit_code, 0) << self.err;
  size_t rows = 0;
  for (const std::string& line : Lines(self.out)) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_NE(line.find(" +0.00% "), std::string::npos) << line;
    ++rows;
  }
  EXPECT_GE(rows, 4u) << self.out;  // the three leaves and their callers
  EXPECT_NEAR(Percent(RowOf(self.out, "main")[0]), 100.0, 5.0) << self.out;
}

// Refused while parsing the options, before any file is read.
TEST(DiffCommandLineTest, WrongNumbersOfFilesAndOneRecordingViewsAreRefusedByName) {
  const ScratchDir dir;
  const std::string base_ = dir / "base.data";
  const std::string next_ = dir / "new.data";
  struct Refused {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Refused> cases = {
      {{"--diff"}, "'--diff'"},
      {{"--diff", base_, next_, base_},
       "--diff takes BASE [NEW] (NEW defaults to -i's file), "
       "not 3 files"},
      {{"--diff", base_, next_, "-i", next_}, "--diff BASE NEW and -i both name the new file"},
      {{"--diff", base_, "--script"}, "--diff compares two recordings' profiles"},
      {{"--diff", base_, "--stats"}, "--diff compares two recordings' profiles"},
      {{"--diff", base_, "--header-only"}, "--diff compares two recordings' profiles"},
      {{"--diff", base_, "--format", "folded"}, "--diff prints --format text or json"},
  };
  for (const Refused& c : cases) {
    std::vector<std::string> argv = {kReport};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const RunResult run = RunTool(argv, dir);
    EXPECT_EQ(run.exit_code, 2) << c.message;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace sample::e2e
