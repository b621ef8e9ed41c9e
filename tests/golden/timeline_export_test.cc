// The timeline exports (--format speedscope, --format gecko) checked for
// structure by tests/golden/check_timeline_export.py: the fields and index
// ranges the viewers rely on, over the golden recordings, whole and
// filtered, written with -o (the extension picks the format); and the
// exported sample counts equal the text report's for the same filters.
// The script also breaks each file in ways its checks must catch, so a
// check that stopped checking fails here.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/golden/run_in_dir.h"

namespace sample::golden {
namespace {

using sample::testing::RunResult;

const std::string kGoldenDir = GOLDEN_DIR;
const std::string kReport = SAMPLE_REPORT_PATH;


// Runs argv[0] (a path, or a name looked up on PATH) in the golden
// directory; standard error follows standard output in `out`.
RunResult RunIn(const std::vector<std::string>& argv) {
  RunResult run = sample::testing::RunInDir(kGoldenDir, argv);
  run.out += run.err;
  return run;
}

bool HavePython() { return RunIn({"python3", "-c", "import json"}).status == 0; }

// The samples the text report counts for `filters`: the sum of its
// "# Samples: N of event ..." lines.
uint64_t TextReportSamples(const std::vector<std::string>& filters) {
  std::vector<std::string> argv = {kReport, "--symfs", "symfs", "--no-children", "--sort", "pid"};
  argv.insert(argv.end(), filters.begin(), filters.end());
  const RunResult run = RunIn(argv);
  EXPECT_EQ(run.status, 0) << run.out;
  const std::regex line(R"(# Samples: (\d+) of event)");
  uint64_t total = 0;
  for (std::sregex_iterator it(run.out.begin(), run.out.end(), line), end; it != end; ++it) {
    total += std::stoull((*it)[1]);
  }
  return total;
}

struct ExportCase {
  std::string name;
  std::vector<std::string> filters;  // -i and the filter options
};

class TimelineExportTest : public ::testing::TestWithParam<ExportCase> {};

TEST_P(TimelineExportTest, BothFormatsAreWellFormedAndHoldTheKeptSamples) {
  if (!HavePython()) GTEST_SKIP() << "python3 is not installed (scripts/setup.sh installs it)";
  const ExportCase& c = GetParam();
  const uint64_t samples = TextReportSamples(c.filters);
  ASSERT_GT(samples, 0u);
  char dir_template[] = "/tmp/timeline-export-dir-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  for (const std::string kind : {"speedscope", "gecko"}) {
    SCOPED_TRACE(kind);
    const std::string path = dir + "/" + c.name + "." + kind + ".json";
    std::vector<std::string> argv = {kReport, "--symfs", "symfs", "-o", path};
    argv.insert(argv.end(), c.filters.begin(), c.filters.end());
    const RunResult exported = RunIn(argv);
    ASSERT_EQ(exported.status, 0) << exported.out;
    const RunResult checked = RunIn({"python3", "check_timeline_export.py", kind, path, "--samples",
                               std::to_string(samples), "--self-test"});
    EXPECT_EQ(checked.status, 0) << checked.out;
  }
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Recordings, TimelineExportTest,
    ::testing::Values(ExportCase{"split", {"-i", "split.data"}},
                      ExportCase{"split_filtered",
                                 {"-i", "split.data", "--pid", "2243", "--cpu", "1", "--time",
                                  "10%-60%", "--max-stack", "3"}},
                      ExportCase{
                          "split_symbols",
                          {"-i", "split.data", "--comm", "split", "--symbols", "compute_ten"}},
                      ExportCase{"group", {"-i", "group.data"}},
                      ExportCase{"vdso", {"-i", "vdso.data"}}),
    [](const ::testing::TestParamInfo<ExportCase>& info) { return info.param.name; });

// A file the script must refuse: proof that a failing check fails the test.
TEST(TimelineExportCheckTest, RefusesAFrameIndexOutOfRange) {
  if (!HavePython()) GTEST_SKIP() << "python3 is not installed (scripts/setup.sh installs it)";
  char path[] = "/tmp/timeline-export-bad-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string bad =
      R"({"$schema": "https://www.speedscope.app/file-format-schema.json", "name": "x",)"
      R"( "exporter": "x", "activeProfileIndex": 0, "shared": {"frames": [{"name": "main"}]},)"
      R"( "profiles": [{"type": "sampled", "name": "p", "unit": "none", "startValue": 0,)"
      R"( "endValue": 1, "samples": [[0, 1]], "weights": [1]}]})";
  ASSERT_EQ(write(fd, bad.data(), bad.size()), static_cast<ssize_t>(bad.size()));
  close(fd);
  const RunResult run = RunIn({"python3", "check_timeline_export.py", "speedscope", path});
  unlink(path);
  EXPECT_EQ(run.status, 1) << run.out;
  EXPECT_NE(run.out.find("frame index 1 out of range"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace sample::golden
