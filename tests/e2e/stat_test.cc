// End to end: sample-record --stat counting the bundled workloads, whose
// CPU time is known by construction (split N burns N seconds of its own
// thread's CPU time), in each of its output forms. Bounds are generous: the
// machine is shared, and only what the counts must contain is asserted.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;
const std::string kHits = WORKLOAD_HITS_PATH;

class StatTest : public ::testing::Test {
 protected:
  ScratchDir dir_;
};

// The first table line naming `event` (as a whole word after the unit).
std::optional<std::string> LineOf(const std::string& text, const std::string& event) {
  const std::regex row("^\\s*\\S+( \\S+)? (msec |     )" + event + "(\\s|$)");
  for (const std::string& line : Lines(text)) {
    if (std::regex_search(line, row)) return line;
  }
  return std::nullopt;
}

// The count at the start of a table line, without thousands separators.
double CountOf(const std::string& line) {
  std::string digits;
  size_t i = line.find_first_not_of(' ');
  for (; i < line.size() && line[i] != ' '; ++i) {
    if (line[i] != ',') digits += line[i];
  }
  return std::stod(digits);
}

std::vector<std::string> Split(const std::string& line, char sep) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t end; (end = line.find(sep, start)) != std::string::npos; start = end + 1) {
    fields.push_back(line.substr(start, end - start));
  }
  fields.push_back(line.substr(start));
  return fields;
}

TEST_F(StatTest, CountsTheWorkloadsCpuTime) {
  const RunResult r = RunTool(
      {kRecord, "--stat", "-e", "task-clock,page-faults,context-switches", "--", kSplit, "0.3"},
      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Performance counter stats for '" + kSplit + " 0.3':"), std::string::npos)
      << r.err;
  const auto clock = LineOf(r.err, "task-clock");
  ASSERT_TRUE(clock) << r.err;
  // 300 ms of the workload's own CPU time, plus its start-up; never less.
  EXPECT_GE(CountOf(*clock), 280) << *clock;
  EXPECT_LE(CountOf(*clock), 600) << *clock;
  EXPECT_NE(clock->find("msec task-clock"), std::string::npos) << *clock;
  EXPECT_NE(clock->find("CPUs utilized"), std::string::npos) << *clock;
  const auto faults = LineOf(r.err, "page-faults");
  ASSERT_TRUE(faults) << r.err;
  EXPECT_GT(CountOf(*faults), 0) << *faults;  // exec alone faults pages in
  EXPECT_TRUE(LineOf(r.err, "context-switches")) << r.err;
  EXPECT_NE(r.err.find(" seconds time elapsed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" seconds user"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" seconds sys"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(dir_ / "sample.data").good()) << "counting writes no file unasked";
}

// Counters are inherited: a shell's two children are counted too.
TEST_F(StatTest, CountsChildren) {
  const std::string split = ShellQuote(kSplit);
  const RunResult r = RunTool({kRecord, "--stat", "-e", "task-clock", "--", "/bin/sh", "-c",
                               split + " 0.2; " + split + " 0.2"},
                              dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto clock = LineOf(r.err, "task-clock");
  ASSERT_TRUE(clock) << r.err;
  EXPECT_GE(CountOf(*clock), 380) << *clock;
  EXPECT_LE(CountOf(*clock), 900) << *clock;
}

// A group is read in one read(2) of its leader; inherited, it still sums
// the children.
TEST_F(StatTest, GroupCountsChildrenToo) {
  const std::string split = ShellQuote(kSplit);
  const RunResult r = RunTool({kRecord, "--stat", "-e", "{task-clock,page-faults}", "--", "/bin/sh",
                               "-c", split + " 0.2; " + split + " 0.2"},
                              dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto clock = LineOf(r.err, "task-clock");
  ASSERT_TRUE(clock) << r.err;
  EXPECT_GE(CountOf(*clock), 380) << *clock;
  EXPECT_LE(CountOf(*clock), 900) << *clock;
  const auto faults = LineOf(r.err, "page-faults");
  ASSERT_TRUE(faults) << r.err;
  EXPECT_GT(CountOf(*faults), 50) << *faults;  // three execs' worth
}

// Without -e: perf stat's default set; hardware events are counted where
// there is a PMU and marked <not supported> where there is none.
TEST_F(StatTest, DefaultEvents) {
  const RunResult r = RunTool({kRecord, "--stat", "--", kSplit, "0.05"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* event : {"task-clock", "context-switches", "cpu-migrations", "page-faults",
                            "cycles", "instructions", "branches", "branch-misses"}) {
    EXPECT_TRUE(LineOf(r.err, event)) << event << " missing in\n" << r.err;
  }
}

TEST_F(StatTest, RepeatShowsTheSpread) {
  const RunResult r = RunTool(
      {kRecord, "--stat", "-r", "3", "-e", "task-clock,page-faults", "--", kSplit, "0.05"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(" (3 runs):"), std::string::npos) << r.err;
  const auto clock = LineOf(r.err, "task-clock");
  ASSERT_TRUE(clock) << r.err;
  EXPECT_TRUE(std::regex_search(*clock, std::regex("\\( \\+- +[0-9]+\\.[0-9]{2}% \\)$"))) << *clock;
  // The mean of three 50 ms runs.
  EXPECT_GE(CountOf(*clock), 45) << *clock;
  EXPECT_LE(CountOf(*clock), 200) << *clock;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("[0-9.]+ \\+- [0-9.]+ seconds time elapsed  \\( \\+- +[0-9.]+% \\)")))
      << r.err;
}

TEST_F(StatTest, IntervalsAddUpToTheRun) {
  const RunResult r =
      RunTool({kRecord, "--stat", "-I", "100", "-e", "task-clock", "--", kSplit, "0.5"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::regex row("^ *([0-9]+\\.[0-9]{9}) +([0-9.,]+) msec task-clock");
  double sum = 0, last_time = 0;
  int intervals = 0;
  for (const std::string& line : Lines(r.err)) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    const double time = std::stod(m[1]);
    EXPECT_GT(time, last_time) << r.err;
    last_time = time;
    sum += CountOf(line.substr(line.find(m[2].str()) - 1));
    ++intervals;
  }
  // Half a second of CPU in 100 ms intervals: at least three of them even
  // if the workload got the whole of a CPU.
  EXPECT_GE(intervals, 3) << r.err;
  EXPECT_GE(sum, 470) << r.err;
  EXPECT_LE(sum, 1000) << r.err;
  EXPECT_EQ(r.err.find("Performance counter stats"), std::string::npos) << r.err;
}

TEST_F(StatTest, SeparatedOutputParses) {
  const RunResult r = RunTool(
      {kRecord, "--stat", "-x", ",", "-e", "task-clock,page-faults", "--", kSplit, "0.1"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  const auto clock = Split(lines[0], ',');
  ASSERT_EQ(clock.size(), 7u) << lines[0];
  EXPECT_EQ(clock[1], "msec");
  EXPECT_EQ(clock[2], "task-clock");
  EXPECT_GE(std::stod(clock[0]), 95) << lines[0];
  EXPECT_GT(std::stoull(clock[3]), 95'000'000u) << lines[0];  // ns it ran
  EXPECT_EQ(clock[4], "100.00");  // software events are never multiplexed
  EXPECT_EQ(clock[6], "CPUs utilized");
  const auto faults = Split(lines[1], ',');
  ASSERT_EQ(faults.size(), 7u) << lines[1];
  EXPECT_EQ(faults[1], "");
  EXPECT_EQ(faults[2], "page-faults");
  EXPECT_GT(std::stoull(faults[0]), 0u);
}

// A probe counted for a command is opened on every CPU (never inherited), so
// it is not switched on by the exec: it must be on before the command is
// released, or a command as short as this one runs past every hit.
TEST_F(StatTest, UprobeCountsEveryHitOfAShortCommand) {
  if (access("/sys/bus/event_source/devices/uprobe/type", R_OK) != 0) {
    GTEST_SKIP() << "no uprobe PMU in this kernel (CONFIG_UPROBE_EVENTS)";
  }
  if (geteuid() != 0) GTEST_SKIP() << "uprobes need root or CAP_PERFMON here";
  for (int run = 0; run < 5; ++run) {
    const RunResult r = RunTool(
        {kRecord, "--stat", "-x", ",", "-e", "uprobe:" + kHits + ":hit", "--", kHits, "1000"},
        dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = Lines(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(Split(lines[0], ',')[0], "1000") << "run " << run << ": " << lines[0];
  }
}

TEST_F(StatTest, JsonLines) {
  const RunResult r =
      RunTool({kRecord, "--stat", "-j", "-e", "task-clock", "--", kSplit, "0.05"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_TRUE(std::regex_match(
      lines[0], std::regex("\\{\"counter-value\" : \"[0-9]+\\.[0-9]{6}\", \"unit\" : \"msec\", "
                           "\"event\" : \"task-clock\", \"event-runtime\" : [0-9]+, "
                           "\"pcnt-running\" : 100\\.00, \"metric-value\" : [0-9.]+, "
                           "\"metric-unit\" : \"CPUs utilized\"\\}")))
      << lines[0];
}

// -o: the counts go into a file as well, and the report's header and
// --stats show them.
TEST_F(StatTest, CountsFileShownByTheReport) {
  const std::string data = dir_ / "counts.data";
  const RunResult r = RunTool({kRecord, "--stat", "-I", "100", "-e", "task-clock,page-faults", "-o",
                               data, "--", kSplit, "0.25"},
                              dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const RunResult header = RunTool({kReport, "-i", data, "--header-only"}, dir_);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  EXPECT_NE(header.out.find("# counts         : counted (sample-record --stat) over "),
            std::string::npos)
      << header.out;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(header.out, m,
                        std::regex("# count +: task-clock ([0-9]+), enabled .* \\(100\\.00%\\), "
                                   "([0-9]+) intervals")))
      << header.out;
  EXPECT_GE(std::stoull(m[1]), 240'000'000u) << header.out;  // ns of 250 ms of CPU
  EXPECT_LE(std::stoull(m[1]), 600'000'000u) << header.out;
  EXPECT_GE(std::stoi(m[2]), 2) << header.out;
  EXPECT_TRUE(std::regex_search(header.out, std::regex("# count +: page-faults [1-9][0-9]*, ")))
      << header.out;
  const RunResult stats = RunTool({kReport, "-i", data, "--stats"}, dir_);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("0 of 2 events multiplexed"), std::string::npos) << stats.out;
  // The flat view has no samples to show, and says where the numbers are.
  const RunResult flat = RunTool({kReport, "-i", data}, dir_);
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  EXPECT_NE(flat.err.find("holds the counts of sample-record --stat, no samples"),
            std::string::npos)
      << flat.err;
}

// Every sampling recording stores each event's final count: software
// events on a thread are never multiplexed, whatever the number of CPUs
// its per-CPU copies ran on.
TEST_F(StatTest, SamplingRecordingStoresFinalCounts) {
  const std::string data = dir_ / "sampled.data";
  const RunResult r = RunTool(
      {kRecord, "-q", "-e", "cpu-clock,page-faults", "-o", data, "--", kSplit, "0.2"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const RunResult header = RunTool({kReport, "-i", data, "--header-only"}, dir_);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  EXPECT_NE(header.out.find("# counts         : final counts of the sampling events over "),
            std::string::npos)
      << header.out;
  EXPECT_NE(header.out.find(", 0 of 2 events multiplexed"), std::string::npos) << header.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      header.out, m, std::regex("# count +: cpu-clock ([0-9]+), enabled .* \\(100\\.00%\\)")))
      << header.out;
  EXPECT_GE(std::stoull(m[1]), 190'000'000u) << header.out;  // 200 ms of CPU, in ns
  EXPECT_LE(std::stoull(m[1]), 600'000'000u) << header.out;
}

TEST_F(StatTest, PassesTheCommandsExitStatus) {
  const RunResult r =
      RunTool({kRecord, "--stat", "-e", "task-clock", "--", "/bin/sh", "-c", "exit 3"}, dir_);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(LineOf(r.err, "task-clock")) << r.err;
}

TEST_F(StatTest, CountingOptionsNeedStat) {
  const RunResult r = RunTool({kRecord, "-I", "100", "--", "/bin/true"}, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--interval-print is an option of counting mode"), std::string::npos)
      << r.err;
}

// A counting-only PMU: msr's tsc counts a command's time in TSC ticks,
// which task-clock turns into the TSC's rate.
TEST_F(StatTest, CountingOnlyPmu) {
  if (!std::ifstream("/sys/bus/event_source/devices/msr/events/tsc").good()) {
    GTEST_SKIP() << "no msr PMU with a tsc event here";
  }
  const RunResult r =
      RunTool({kRecord, "--stat", "-e", "msr/tsc/,task-clock", "--", kSplit, "0.1"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto tsc = LineOf(r.err, "msr/tsc/");
  ASSERT_TRUE(tsc) << r.err;
  // 100 ms at any TSC rate from 100 MHz up.
  EXPECT_GT(CountOf(*tsc), 10e6) << *tsc;
  EXPECT_TRUE(std::regex_search(*tsc, std::regex("# +[0-9.]+ [GM]/sec$"))) << *tsc;
}

// More hardware events than the PMU has counters: the kernel multiplexes
// them, and each count is scaled and marked with the share of time it ran.
TEST_F(StatTest, ForcedMultiplexingShowsScaledCounts) {
  if (!std::ifstream("/sys/bus/event_source/devices/cpu/type").good()) {
    GTEST_SKIP() << "no hardware PMU here (a VM without one): software events are never "
                    "multiplexed, so nothing can force it";
  }
  const std::vector<std::string> events = {
      "cycles",         "instructions",     "branches",      "branch-misses",
      "cache-references", "cache-misses",   "L1-dcache-loads", "L1-dcache-load-misses",
      "LLC-loads",      "LLC-load-misses",  "dTLB-loads",    "dTLB-load-misses",
      "cycles/name=cycles2/", "instructions/name=instructions2/"};
  std::string list;
  for (const std::string& e : events) list += (list.empty() ? "" : ",") + e;
  const RunResult r = RunTool({kRecord, "--stat", "-e", list, "--", kSplit, "0.5"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int multiplexed = 0;
  for (const std::string& line : Lines(r.err)) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex("\\(([0-9.]+)%\\)$")) && std::stod(m[1]) < 100) {
      ++multiplexed;
    }
  }
  EXPECT_GT(multiplexed, 0) << r.err;
}

// An unprivileged user under perf_event_paranoid 2 counts user space only,
// and is told so.
TEST_F(StatTest, UnprivilegedCountsUserSpaceAndSaysSo) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run the recorder as another user";
  std::ifstream paranoid_file("/proc/sys/kernel/perf_event_paranoid");
  int paranoid = 0;
  if (!(paranoid_file >> paranoid) || paranoid < 2) {
    GTEST_SKIP() << "kernel.perf_event_paranoid is below 2: nothing is excluded";
  }
  if (access(kSetpriv, X_OK) != 0) GTEST_SKIP() << "no " << kSetpriv << " to become nobody";
  NobodyDir home;
  ASSERT_FALSE(home.path().empty());
  ASSERT_TRUE(home.Copy(kRecord, "sample-record"));
  ASSERT_TRUE(home.Copy(kSplit, "split"));
  const RunResult r = RunTool(
      AsNobody({"/bin/sh", "-c",
                "cd \"$0\" && exec ./sample-record --stat -e task-clock -- ./split 0.1",
                home.path()}),
      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("counting user space only"), std::string::npos) << r.err;
  const auto clock = LineOf(r.err, "task-clock");
  ASSERT_TRUE(clock) << r.err;
  EXPECT_GE(CountOf(*clock), 90) << *clock;
}

// Options that mean nothing when counting are refused by name, as are
// combinations that cannot work.
TEST_F(StatTest, RefusesWhatCountingCannotDo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--stat", "-F", "100"}, "-F is an option of sampling"},
      {{"--stat", "-g"}, "-g is an option of sampling"},
      {{"--stat", "--call-graph", "dwarf"}, "--call-graph is an option of sampling"},
      {{"--stat", "-I", "100", "-r", "2"}, "-I and -r do not combine"},
      {{"--stat", "-x", ",", "-j"}, "-x and -j are two output formats"},
      {{"--stat", "-I", "5"}, "-I '5' is too small"},
      {{"--stat", "--flight-recorder=5"}, "--flight-recorder is an option of sampling"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {kRecord};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", "/bin/true"});
    const RunResult r = RunTool(argv, dir_);
    EXPECT_EQ(r.exit_code, 2) << message << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  const RunResult cpus = RunTool({kRecord, "--stat", "-a", "-r", "2", "--duration", "0.1"}, dir_);
  EXPECT_EQ(cpus.exit_code, 1);
  EXPECT_NE(cpus.err.find("-r repeats a command"), std::string::npos) << cpus.err;
  // With -a a command sets how long every CPU is counted, each run.
  const RunResult machine = RunTool(
      {kRecord, "--stat", "-a", "-e", "task-clock", "-r", "2", "--", "/bin/sleep", "0.2"}, dir_);
  EXPECT_EQ(machine.exit_code, 0) << machine.err;
  EXPECT_NE(machine.err.find("'system wide'"), std::string::npos) << machine.err;
  // Every CPU's clock over 0.2 s, where sleep's own is about a millisecond.
  std::smatch clock;
  ASSERT_TRUE(std::regex_search(machine.err, clock, std::regex("([0-9.]+) msec task-clock")))
      << machine.err;
  EXPECT_GT(std::stod(clock[1]), 100) << machine.err;
}

}  // namespace
}  // namespace sample::e2e
