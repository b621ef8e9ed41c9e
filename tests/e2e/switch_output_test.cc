// End to end: --switch-output cuts a recording into complete files. Each
// file reports alone (its samples resolve through the sideband carried
// over from before it), and the samples of all files add up to the
// recording's, none lost or counted twice at a switch.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;
const std::string kPhases = WORKLOAD_PHASES_PATH;

// The files of `dir` named PREFIX.*, sorted (their names are times).
std::vector<std::string> Outputs(const ScratchDir& dir, const std::string& prefix) {
  std::vector<std::string> paths;
  if (DIR* d = opendir(dir.path().c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.starts_with(prefix + ".")) paths.push_back(dir / name);
    }
    closedir(d);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// "[ sample-record: N samples, M lost, ..." -> {N, M}.
std::pair<long, long> SummaryCounts(const std::string& err) {
  std::smatch m;
  static const std::regex kSummary("sample-record: ([0-9]+) samples, ([0-9]+) lost");
  if (!std::regex_search(err, m, kSummary)) return {-1, -1};
  return {std::stol(m[1]), std::stol(m[2])};
}

// Each file reports alone; returns the sum of their samples.
long CheckFiles(const std::vector<std::string>& files, const ScratchDir& dir) {
  long sum = 0;
  for (const std::string& file : files) {
    const RunResult rep = RunTool({kReport, "-i", file, "--no-children"}, dir);
    EXPECT_EQ(rep.exit_code, 0) << file << ": " << rep.err;
    const long samples = SampleCount(rep.out);
    EXPECT_GE(samples, 0) << rep.out;
    sum += std::max(samples, 0L);
    const RunResult header = RunTool({kReport, "-i", file, "--header-only"}, dir);
    EXPECT_EQ(header.out.find("not finalized"), std::string::npos) << file << header.out;
    // Named in every file, not only in the first, which saw the mappings.
    if (samples >= 500) {
      EXPECT_NEAR(OverheadOf(rep.out, "compute_sixty").value_or(0), 60.0, 12.0) << file << "\n"
                                                                                << rep.out;
    }
  }
  return sum;
}

TEST(SwitchOutputTest, EverySecondACompleteFileAndTheirSamplesAddUp) {
  ScratchDir dir;
  const RunResult rec = RunTool({kRecord, "-e", "cpu-clock", "-F", "2000", "-g",
                                 "--switch-output=1s", "-o", dir / "rot.data", "--", kSplit, "3"},
                                dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::vector<std::string> files = Outputs(dir, "rot.data");
  // 3 CPU seconds take 3 s at least: the switches at 1 s and 2 s come.
  EXPECT_GE(files.size(), 3u) << rec.err;
  EXPECT_NE(rec.err.find("switched to "), std::string::npos) << rec.err;
  // The first file is named as it starts.
  EXPECT_NE(rec.err.find("recording to " + files.front()), std::string::npos) << rec.err;
  const auto [total, lost] = SummaryCounts(rec.err);
  ASSERT_GT(total, 0) << rec.err;
  const long sum = CheckFiles(files, dir);
  EXPECT_LE(std::abs(sum - total), lost) << rec.err;

  // Read together (-i with every file), they are the one recording.
  std::vector<std::string> argv = {kReport, "--no-children", "-i"};
  argv.insert(argv.end(), files.begin(), files.end());
  const RunResult all = RunTool(argv, dir);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(SampleCount(all.out), sum) << all.out;
  EXPECT_NEAR(OverheadOf(all.out, "compute_sixty").value_or(0), 60.0, 8.0) << all.out;
  // And as a pprof profile a continuous-profiling backend takes: the
  // host, the command and the time range of them all.
  argv.insert(argv.end(), {"-o", dir / "all.pb.gz"});
  const RunResult pprof = RunTool(argv, dir);
  ASSERT_EQ(pprof.exit_code, 0) << pprof.err;
}

// phase_a runs in the first files, phase_c in the last: read together
// without the binary, each is named by what its own file embedded.
TEST(SwitchOutputTest, FilesReadTogetherNameFromEveryFilesEmbeddedCode) {
  ScratchDir dir;
  const std::string copy = dir / "phases-copy";
  ASSERT_EQ(RunTool({"/bin/cp", kPhases, copy}, dir).exit_code, 0);
  const RunResult rec =
      RunTool({kRecord, "-q", "-e", "cpu-clock", "-F", "1000", "--switch-output=2s", "-o",
               dir / "ph.data", "--", copy, "--mark", dir / "cue"},
              dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  ASSERT_EQ(unlink(copy.c_str()), 0);
  const std::vector<std::string> files = Outputs(dir, "ph.data");
  ASSERT_GE(files.size(), 3u);
  std::vector<std::string> argv = {kReport, "--no-children", "-i"};
  argv.insert(argv.end(), files.begin(), files.end());
  const RunResult all = RunTool(argv, dir);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  // 1, 2 and 3 s of CPU time.
  EXPECT_NEAR(OverheadOf(all.out, "phase_a").value_or(0), 100.0 / 6, 6.0) << all.out;
  EXPECT_NEAR(OverheadOf(all.out, "phase_b").value_or(0), 200.0 / 6, 6.0) << all.out;
  EXPECT_NEAR(OverheadOf(all.out, "phase_c").value_or(0), 300.0 / 6, 6.0) << all.out;
}

TEST(SwitchOutputTest, FilesOfOtherEventsAreNotReportedAsOne) {
  ScratchDir dir;
  for (const char* event : {"cpu-clock", "task-clock"}) {
    const RunResult rec = RunTool({kRecord, "-q", "-e", event, "-o",
                                   dir / (std::string(event) + ".data"), "--", kSplit, "0.2"},
                                  dir);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
  }
  const RunResult rep =
      RunTool({kReport, "-i", dir / "cpu-clock.data", dir / "task-clock.data"}, dir);
  EXPECT_EQ(rep.exit_code, 1);
  EXPECT_NE(rep.err.find("task-clock.data: its events are not those of"), std::string::npos)
      << rep.err;
}

TEST(SwitchOutputTest, SignalSwitchesAndOnlyTheNewestFilesStay) {
  ScratchDir dir;
  const pid_t rec = Start({kRecord, "-e", "cpu-clock", "--switch-output", "--switch-max-files=2",
                           "-o", dir / "sig.data", "--", kSplit, "3"},
                          dir, "rec");
  ASSERT_GT(rec, 0);
  // The first file exists once the recorder takes SIGUSR2 (blocked before).
  for (int i = 0; i < 500 && Outputs(dir, "sig.data").empty(); ++i) usleep(20'000);
  ASSERT_FALSE(Outputs(dir, "sig.data").empty());
  // Each signal once the last one's file is there: signals do not queue.
  std::set<std::string> seen;
  for (const std::string& file : Outputs(dir, "sig.data")) seen.insert(file);
  for (int i = 0; i < 3; ++i) {
    usleep(200'000);
    kill(rec, SIGUSR2);
    const size_t before = seen.size();
    for (int wait = 0; wait < 500 && seen.size() == before; ++wait) {
      usleep(10'000);
      for (const std::string& file : Outputs(dir, "sig.data")) seen.insert(file);
    }
  }
  const RunResult done = Wait(rec, dir, "rec");
  ASSERT_EQ(done.exit_code, 0) << done.err;
  // Four files made, the two oldest removed.
  size_t switches = 0, removed = 0;
  for (const std::string& line : Lines(done.err)) {
    switches += line.find("switched to ") != std::string::npos;
    removed += line.find("removed ") != std::string::npos;
  }
  EXPECT_EQ(switches, 3u) << done.err;
  EXPECT_EQ(removed, 2u) << done.err;
  const std::vector<std::string> files = Outputs(dir, "sig.data");
  EXPECT_EQ(files.size(), 2u);
  CheckFiles(files, dir);
}

TEST(SwitchOutputTest, SizeSwitchesOnceAFileHoldsThatMuch) {
  ScratchDir dir;
  const RunResult rec = RunTool({kRecord, "-q", "-e", "cpu-clock", "-F", "4000", "-g",
                                 "--switch-output=8K", "-o", dir / "size.data", "--", kSplit, "3"},
                                dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::vector<std::string> files = Outputs(dir, "size.data");
  ASSERT_GE(files.size(), 2u);
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    struct stat st {};
    ASSERT_EQ(stat(files[i].c_str(), &st), 0);
    EXPECT_GE(st.st_size, 8 * 1024) << files[i];
  }
  CheckFiles(files, dir);
}

TEST(SwitchOutputTest, RefusesWhatItCannotDoByName) {
  ScratchDir dir;
  const std::vector<std::vector<std::string>> refused = {
      {"--switch-output=0"},
      {"--switch-output=10x"},
      {"--switch-output=-5s"},
      {"--switch-max-files=2"},
      {"--switch-output", "--switch-max-files=0"},
      {"--switch-output=1s", "--flight-recorder=5"},
  };
  for (const std::vector<std::string>& args : refused) {
    std::vector<std::string> argv = {kRecord, "-o", dir / "x.data"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", "/bin/true"});
    const RunResult rec = RunTool(argv, dir);
    EXPECT_EQ(rec.exit_code, 2) << args.back() << ": " << rec.err;
    EXPECT_NE(rec.err.find("--switch-"), std::string::npos) << rec.err;
    EXPECT_TRUE(Outputs(dir, "x.data").empty());
  }
}

}  // namespace
}  // namespace sample::e2e
