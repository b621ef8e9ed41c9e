// Toggle events end to end: uprobe/uretprobe triggers on the toggle
// workload's work(), which takes 30% of its CPU time (tests/workloads/
// toggle.c), switch cpu-clock (sampling) or task-clock (--stat) on and off;
// the report keeps only the samples inside the windows, per thread, with
// recursion counted by depth.
#include <unistd.h>

#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

constexpr const char* kToggle = WORKLOAD_TOGGLE_PATH;

// cpu-clock switched on at work's entry and off at its return (fn:
// another function of the workload, e.g. work_recursive).
std::string ToggleEvents(const std::string& counter, const std::string& fn = "work") {
  return fmt::format("{},uprobe:{}:{}/on={}/,uretprobe:{}:{}/off={}/", counter, kToggle, fn,
                     counter, kToggle, fn, counter);
}

struct Workload {
  long calls = -1;
  double work_ms = -1;
};

// The "work_calls=N work_ns=T" line the workload prints at exit.
Workload ParseWorkload(const std::string& out) {
  std::smatch m;
  Workload w;
  if (std::regex_search(out, m, std::regex("work_calls=([0-9]+) work_ns=([0-9]+)"))) {
    w.calls = std::stol(m[1]);
    w.work_ms = std::stod(m[2]) / 1e6;
  }
  return w;
}

struct Windows {
  long windows = -1, inside = -1, outside = -1;
  bool offs_while_off = false;
};

// The header's "toggled: NAME: ...; W windows; I samples inside, O outside" line.
Windows ParseWindows(const std::string& header) {
  std::smatch m;
  Windows w;
  if (std::regex_search(header, m,
                        std::regex("toggled *: .*; ([0-9]+) windows; ([0-9]+) samples inside, "
                                   "([0-9]+) outside"))) {
    w.windows = std::stol(m[1]);
    w.inside = std::stol(m[2]);
    w.outside = std::stol(m[3]);
    w.offs_while_off = m.suffix().str().find("offs while off") < m.suffix().str().find('\n');
  }
  return w;
}

class ToggleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/sys/bus/event_source/devices/uprobe/type", R_OK) != 0) {
      GTEST_SKIP() << "no uprobe PMU in this kernel (CONFIG_UPROBE_EVENTS)";
    }
    if (geteuid() != 0) GTEST_SKIP() << "uprobes need root or CAP_PERFMON here";
  }

  // Records the workload in `mode` with cpu-clock toggled by `fn`.
  RunResult Record(const std::string& mode, const std::string& fn = "work") {
    return RunTool({SAMPLE_RECORD_PATH, "-q", "-g", "-F", "2000", "-o", data_, "-e",
                    ToggleEvents("cpu-clock", fn), "--", kToggle, mode, "1.5"},
                   dir_);
  }
  RunResult Report(std::vector<std::string> args) {
    args.insert(args.begin(), {SAMPLE_REPORT_PATH, "-i", data_});
    return RunTool(args, dir_);
  }

  ScratchDir dir_;
  std::string data_ = dir_ / "toggle.data";
};

TEST_F(ToggleTest, KeepsOnlyTheSamplesInsideWork) {
  const RunResult rec = Record("single");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const Workload work = ParseWorkload(rec.out);
  ASSERT_GT(work.calls, 50) << rec.out;

  const RunResult header = Report({"--header-only"});
  ASSERT_EQ(header.exit_code, 0) << header.err;
  const Windows w = ParseWindows(header.out);
  ASSERT_GT(w.inside, 0) << header.out;
  // Every call of work() is a window, and about 30% of the samples fall in them.
  EXPECT_EQ(w.windows, work.calls) << header.out;
  const double share = 100.0 * w.inside / (w.inside + w.outside);
  EXPECT_NEAR(share, 30, 5) << header.out;

  // The kept samples are work's (children: work or what it calls).
  const RunResult kept = Report({"--children", "--sort", "sym"});
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  const auto in_work = OverheadOf(kept.out, "work");
  ASSERT_TRUE(in_work) << kept.out;
  EXPECT_GE(*in_work, 95) << kept.out;
  // rest() runs only between the calls.
  EXPECT_LT(OverheadOf(kept.out, "rest").value_or(0), 1.0) << kept.out;

  // --no-toggle shows them all, rest() at about 70%.
  const RunResult all = Report({"--no-children", "--sort", "sym", "--no-toggle"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const auto rest = OverheadOf(all.out, "rest");
  ASSERT_TRUE(rest) << all.out;
  EXPECT_NEAR(*rest, 70, 6) << all.out;
}

TEST_F(ToggleTest, RecursionKeepsTheOutermostWindow) {
  const RunResult rec = Record("recursive", "work_recursive");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const Workload work = ParseWorkload(rec.out);
  ASSERT_GT(work.calls, 20) << rec.out;
  const RunResult header = Report({"--header-only"});
  const Windows w = ParseWindows(header.out);
  ASSERT_GT(w.inside, 0) << header.out;
  // Four nested calls and returns per window: one window each, none
  // closed early (40% of the time is inside the outermost call).
  EXPECT_EQ(w.windows, work.calls) << header.out;
  EXPECT_FALSE(w.offs_while_off) << header.out;
  EXPECT_NEAR(100.0 * w.inside / (w.inside + w.outside), 40, 5) << header.out;
  const RunResult kept = Report({"--children", "--sort", "sym"});
  const auto in_work = OverheadOf(kept.out, "work_recursive");
  ASSERT_TRUE(in_work) << kept.out;
  EXPECT_GE(*in_work, 95) << kept.out;
}

TEST_F(ToggleTest, AnotherThreadKeepsNothing) {
  const RunResult rec = Record("threads");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult kept = Report({"--no-children", "--sort", "comm,sym", "-n"});
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_NE(kept.out.find("work"), std::string::npos) << kept.out;
  // The bystander thread never calls work(): none of its samples is kept.
  EXPECT_EQ(kept.out.find("rest_elsewhere"), std::string::npos) << kept.out;
  EXPECT_EQ(kept.out.find("bystander"), std::string::npos) << kept.out;
  const RunResult all = Report({"--no-children", "--sort", "comm,sym", "--no-toggle"});
  const auto elsewhere = OverheadOfRow(all.out, {"bystander", "rest_elsewhere"});
  ASSERT_TRUE(elsewhere) << all.out;
  EXPECT_GT(*elsewhere, 30) << all.out;
}

TEST_F(ToggleTest, UnknownNameIsRefusedAtRecordTime) {
  const RunResult rec =
      RunTool({SAMPLE_RECORD_PATH, "-q", "-o", data_, "-e",
               fmt::format("cpu-clock,uprobe:{}:work/on=cpu-clok/", kToggle), "--", kToggle,
               "single", "0.1"},
              dir_);
  EXPECT_NE(rec.exit_code, 0);
  EXPECT_NE(rec.err.find("on=cpu-clok names no event of this -e list (events: 'cpu-clock')"),
            std::string::npos)
      << rec.err;
}

// perf stat's side: task-clock counted only inside work(), read at each
// trigger hit, against the CPU time work() measures itself; the triggers
// count the calls exactly.
TEST_F(ToggleTest, StatCountsInsideTheWindows) {
  const RunResult stat =
      RunTool({SAMPLE_RECORD_PATH, "--stat", "-x", ",", "-e", ToggleEvents("task-clock"), "--",
               kToggle, "single", "1"},
              dir_);
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  const Workload work = ParseWorkload(stat.out);
  ASSERT_GT(work.calls, 50) << stat.out;
  double clock_ms = -1;
  long entries = -1, returns = -1;
  for (const std::string& line : Lines(stat.err)) {
    const std::vector<std::string> f = [&] {
      std::vector<std::string> fields;
      size_t start = 0;
      for (size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1) {
        fields.push_back(line.substr(start, comma - start));
      }
      fields.push_back(line.substr(start));
      return fields;
    }();
    if (f.size() < 3) continue;
    if (f[2] == "task-clock") clock_ms = std::stod(f[0]);
    if (f[2].starts_with("uprobe:")) entries = std::stol(f[0]);
    if (f[2].starts_with("uretprobe:")) returns = std::stol(f[0]);
  }
  EXPECT_EQ(entries, work.calls) << stat.err;
  EXPECT_EQ(returns, work.calls) << stat.err;
  ASSERT_GT(clock_ms, 0) << stat.err;
  // Inside the windows, task-clock reads 0.5% under the workload's own
  // measure when the machine is idle (the probes' cost is inside the
  // latter only), but up to 8% over it with two busy loops per CPU beside
  // it (1 run in 15 over 5%, with every call's on and off seen and no hit
  // lost; the cause is not found). 12% still tells windows from none
  // (330% here) and from empty ones.
  EXPECT_NEAR(clock_ms, work.work_ms, work.work_ms * 0.12) << stat.err << stat.out;
}

}  // namespace
}  // namespace sample::e2e
