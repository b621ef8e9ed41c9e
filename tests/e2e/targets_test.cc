// End to end: the recorder's targets other than a new command (-p, -a/-C),
// its timing options (--duration, -D) and honest accounting of lost
// samples under overload.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "formats/sample_file_reader.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"
#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;

class TargetsTest : public ::testing::Test {
 protected:
  ScratchDir dir_;
};

// Attaching to a process that started before us: its existing mappings
// come from /proc synthesis, so its samples still resolve to functions.
TEST_F(TargetsTest, AttachToRunningProcess) {
  const pid_t workload = Start({kSplit, "4"}, dir_, "workload");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string data = dir_ / "attach.data";
  const RunResult rec =
      RunTool({kRecord, "-p", std::to_string(workload), "--duration", "1", "-o", data}, dir_);
  kill(-workload, SIGKILL);
  Wait(workload, dir_, "workload");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  const RunResult rep = RunTool({kReport, "-i", data, "--sort", "comm,sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  // 1 s of wall time at 4000 Hz of the workload's CPU time: ~4000 samples
  // with a whole CPU, but 2000 needed more than half of one, which a loaded
  // machine does not give. A tenth is asked; the shares are the test.
  EXPECT_GT(SampleCount(rep.out), 400) << rep.out;
  const auto sixty = OverheadOf(rep.out, "[.] compute_sixty");
  ASSERT_TRUE(sixty) << rep.out;
  EXPECT_NEAR(*sixty, 60.0, 6.0) << rep.out;
}

// The recording of -p ends when the process does.
TEST_F(TargetsTest, AttachEndsWhenTheProcessExits) {
  const pid_t workload = Start({kSplit, "0.6"}, dir_, "short");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto begin = std::chrono::steady_clock::now();
  const RunResult rec =
      RunTool({kRecord, "-p", std::to_string(workload), "-o", dir_ / "short.data"}, dir_);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  Wait(workload, dir_, "short");
  EXPECT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_LT(seconds, 5.0);
}

// -a -C 0 with two busy processes pinned to CPU 0: both are in the report.
TEST_F(TargetsTest, CpuWideRecordingSeesEveryProcess) {
  const pid_t alpha =
      Start({"/usr/bin/taskset", "-c", "0", WORKLOAD_CHILD_ALPHA_PATH, "3"}, dir_, "a");
  const pid_t beta =
      Start({"/usr/bin/taskset", "-c", "0", WORKLOAD_CHILD_BETA_PATH, "3"}, dir_, "b");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string data = dir_ / "cpu0.data";
  const RunResult rec = RunTool({kRecord, "-a", "-C", "0", "--duration", "1", "-o", data}, dir_);
  kill(-alpha, SIGKILL);
  kill(-beta, SIGKILL);
  Wait(alpha, dir_, "a");
  Wait(beta, dir_, "b");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  const RunResult by_cpu = RunTool({kReport, "-i", data, "--sort", "cpu"}, dir_);
  ASSERT_EQ(by_cpu.exit_code, 0) << by_cpu.err;
  // Only CPU 0 was recorded.
  EXPECT_TRUE(OverheadOf(by_cpu.out, "000").has_value()) << by_cpu.out;
  EXPECT_FALSE(OverheadOf(by_cpu.out, "001").has_value()) << by_cpu.out;

  const RunResult comms = RunTool({kReport, "-i", data, "--sort", "comm,sym"}, dir_);
  ASSERT_EQ(comms.exit_code, 0) << comms.err;
  const auto a = OverheadOfRow(comms.out, {" child-alpha ", "[.] child_work"});
  const auto b = OverheadOfRow(comms.out, {" child-beta ", "[.] child_work"});
  ASSERT_TRUE(a && b) << comms.out;
  // They share the CPU: each gets a fair part of what the two got. (Of all
  // of CPU 0's samples they may get less than half each: whatever else
  // runs there on a loaded machine is recorded too.)
  EXPECT_GT(*a / (*a + *b), 0.3) << comms.out;
  EXPECT_GT(*b / (*a + *b), 0.3) << comms.out;
}

// -a with a command, as perf: the whole machine, for as long as the
// command runs (`-a -- sleep 10`). child-alpha, busy beside it and no
// child of the command, is recorded; the recording ends with the command
// and exits with its status.
TEST_F(TargetsTest, AWholeMachineRecordingLastsAsLongAsItsCommand) {
  const pid_t alpha = Start({WORKLOAD_CHILD_ALPHA_PATH, "4"}, dir_, "a");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string data = dir_ / "machine.data";
  const auto begin = std::chrono::steady_clock::now();
  const RunResult rec =
      RunTool({kRecord, "-a", "-o", data, "--", "/bin/sh", "-c", "sleep 0.6; exit 3"}, dir_);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  kill(-alpha, SIGKILL);
  Wait(alpha, dir_, "a");
  EXPECT_EQ(rec.exit_code, 3) << rec.err;
  EXPECT_LT(seconds, 3.5) << "the recording outlived its command";
  const RunResult comms = RunTool({kReport, "-i", data, "--sort", "comm"}, dir_);
  ASSERT_EQ(comms.exit_code, 0) << comms.err;
  const auto busy = OverheadOf(comms.out, "child-alpha");
  ASSERT_TRUE(busy) << comms.out;
  // One CPU's worth of a busy loop, of all CPUs' samples: half on two CPUs,
  // less on a loaded machine.
  EXPECT_GT(*busy, 15) << comms.out;
  const RunResult header = RunTool({kReport, "-i", data, "--header-only"}, dir_);
  const std::regex duration("duration +: ([0-9.]+) s");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(header.out, match, duration)) << header.out;
  EXPECT_GT(std::stod(match[1]), 0.5) << header.out;
  EXPECT_LT(std::stod(match[1]), 3.0) << header.out;
}

// The CPU of a sample is the ring buffer's, inserted by the writer: -C 1
// with a busy process pinned there shows CPU 1 only (not the ring's index,
// which is 0, nor a constant).
TEST_F(TargetsTest, SamplesCarryTheCpuOfTheirBuffer) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs a second CPU";
  const pid_t alpha =
      Start({"/usr/bin/taskset", "-c", "1", WORKLOAD_CHILD_ALPHA_PATH, "3"}, dir_, "a");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string data = dir_ / "cpu1.data";
  const RunResult rec = RunTool({kRecord, "-a", "-C", "1", "--duration", "0.5", "-o", data}, dir_);
  kill(-alpha, SIGKILL);
  Wait(alpha, dir_, "a");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult by_cpu = RunTool({kReport, "-i", data, "--sort", "cpu,comm"}, dir_);
  ASSERT_EQ(by_cpu.exit_code, 0) << by_cpu.err;
  const auto alpha_on_1 = OverheadOfRow(by_cpu.out, {" 001 ", " child-alpha"});
  ASSERT_TRUE(alpha_on_1.has_value()) << by_cpu.out;
  // Not most of CPU 1's samples on a loaded machine, where other tasks run
  // there too and are recorded with it: a good part.
  EXPECT_GT(*alpha_on_1, 10.0) << by_cpu.out;
  EXPECT_FALSE(OverheadOf(by_cpu.out, "000").has_value()) << by_cpu.out;
}

TEST_F(TargetsTest, DurationStopsTheRecording) {
  const std::string data = dir_ / "dur.data";
  const auto begin = std::chrono::steady_clock::now();
  const RunResult rec =
      RunTool({kRecord, "-F", "1000", "--duration", "0.5", "-o", data, "--", kSplit, "5"}, dir_);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_EQ(rec.exit_code, 128 + SIGTERM) << "the command is stopped with SIGTERM\n" << rec.err;
  EXPECT_LT(seconds, 3.0);
  // At most 0.5 s of the command's 5 s of CPU (fewer on a loaded machine,
  // where the command gets less than a whole CPU).
  const RunResult rep = RunTool({kReport, "-i", data}, dir_);
  EXPECT_GT(SampleCount(rep.out), 0) << rep.out;
  EXPECT_LE(SampleCount(rep.out), 600) << rep.out;
}

// -D delays in wall time, so how many samples remain depends on the load;
// what must hold is that no sample is older than the delay. Samples carry
// CLOCK_MONOTONIC times, as does the start time in the file's metadata.
TEST_F(TargetsTest, DelaySkipsTheStart) {
  const std::string data = dir_ / "delay.data";
  const RunResult rec =
      RunTool({kRecord, "-F", "1000", "-D", "500", "-o", data, "--", kSplit, "1"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  auto reader = format::SampleFileReader::Open(data);
  ASSERT_TRUE(reader) << reader.error().message;
  const auto start = format::FindMetadata(reader->metadata(), "start_clock_ns");
  ASSERT_TRUE(start);
  const perf_event_attr& attr = reader->events().events().at(0).attr;
  uint64_t first_sample = UINT64_MAX;
  size_t samples = 0;
  for (const auto& chunk : reader->record_chunks()) {
    auto payload = reader->ReadPayload(chunk);
    ASSERT_TRUE(payload);
    ForEachRecord(payload->bytes(), [&](const perf_event_header& h, auto record) {
      if (h.type != PERF_RECORD_SAMPLE) return;
      ++samples;
      first_sample = std::min(first_sample, RecordTime(record, attr));
    });
  }
  ASSERT_GT(samples, 0u);
  EXPECT_GE(first_sample, std::stoull(*start) + 500'000'000ull);
  // And the recording did not wait much longer than asked.
  EXPECT_LT(first_sample, std::stoull(*start) + 1'500'000'000ull);
}

// Sampling that starts late still knows the command's name and mappings:
// without sideband during the delay every frame was [unknown] and the
// command showed as ":PID".
TEST_F(TargetsTest, DelayedRecordingNamesFunctionsLikeAnImmediateOne) {
  const std::string data = dir_ / "delay-names.data";
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "-D", "100", "-o", data, "--", kSplit, "0.8"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--no-children", "--sort", "comm,sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  // Without the sideband every row was [unknown]; with it hardly any is (a
  // stray sample at an address nothing names may be).
  double unknown = 0;
  for (const std::string& line : Lines(rep.out)) {
    if (line.empty() || line[0] == '#' || line.find("[unknown]") == std::string::npos) continue;
    unknown += std::stod(line.substr(0, line.find('%')));
  }
  EXPECT_LT(unknown, 5.0) << rep.out;
  const auto sixty = OverheadOfRow(rep.out, {"split", "compute_sixty"});
  const auto thirty = OverheadOfRow(rep.out, {"split", "compute_thirty"});
  ASSERT_TRUE(sixty && thirty) << rep.out;
  EXPECT_NEAR(*sixty, 60, 10) << rep.out;
  EXPECT_NEAR(*thirty, 30, 8) << rep.out;
  // The dummy that carried the sideband has no section of its own.
  EXPECT_EQ(rep.out.find("dummy"), std::string::npos) << rep.out;
}

// The same for a running process: the tracking event is on from the start.
TEST_F(TargetsTest, DelayedAttachNamesFunctions) {
  const pid_t target = Start({kSplit, "3"}, dir_, "target");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string data = dir_ / "delay-attach.data";
  const RunResult rec = RunTool({kRecord, "-e", "cpu-clock", "-D", "200", "--duration", "0.6", "-p",
                                 std::to_string(target), "-o", data},
                                dir_);
  kill(target, SIGKILL);
  Wait(target, dir_, "target");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--no-children", "--sort", "comm,sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_GT(SampleCount(rep.out), 0) << rep.out;
  EXPECT_TRUE(OverheadOfRow(rep.out, {"split", "compute_sixty"})) << rep.out;
}

// A one-page buffer at a high rate with call chains overflows; the loss the
// recorder reports and the loss the report shows must be the same number,
// and it must not be zero.
//
// At -F max the sampling interrupts can take nearly all of a CPU, and the
// workload advances its CPU clock only between them: on a loaded machine
// 1 s of it once took 418 s. A short workload, and --duration as a bound
// (the recorder then stops it: exit 128 + SIGTERM), keep the test short;
// the one-page buffer overflows in the first milliseconds anyway.
TEST_F(TargetsTest, OverloadLossIsCountedNotHidden) {
  const std::string data = dir_ / "lost.data";
  const RunResult rec = RunTool(
      {kRecord, "-g", "-m", "1", "-F", "max", "--duration", "3", "-o", data, "--", kSplit, "0.3"},
      dir_);
  ASSERT_TRUE(rec.exit_code == 0 || rec.exit_code == 128 + SIGTERM) << rec.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(rec.err, m, std::regex("samples, ([0-9]+) lost"))) << rec.err;
  const long recorded_lost = std::stol(m[1]);
  const RunResult rep = RunTool({kReport, "-i", data}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  ASSERT_TRUE(std::regex_search(rep.out, m, std::regex("# Lost samples: ([0-9]+)"))) << rep.out;
  EXPECT_EQ(std::stol(m[1]), recorded_lost);
  if (recorded_lost == 0) {
    GTEST_SKIP() << "the kernel kept up with a 1-page buffer at max rate; no loss to compare";
  }
  EXPECT_NE(rec.err.find("Use a larger buffer"), std::string::npos) << rec.err;
}

// Records of type `type` in a recording, read straight from the file.
size_t CountRecords(const std::string& path, uint32_t type) {
  auto reader = format::SampleFileReader::Open(path);
  EXPECT_TRUE(reader) << reader.error().message;
  if (!reader) return 0;
  size_t count = 0;
  for (const auto& chunk : reader->record_chunks()) {
    auto payload = reader->ReadPayload(chunk);
    EXPECT_TRUE(payload);
    if (!payload) continue;
    ForEachRecord(payload->bytes(),
                  [&](const perf_event_header& h, auto) { count += h.type == type; });
  }
  return count;
}

TEST_F(TargetsTest, SwitchEventsAreRecordedOnlyWhenAsked) {
  const std::vector<std::string> sleepy = {"--", "/bin/sh", "-c", "sleep 0.01; sleep 0.01"};
  std::vector<std::string> with = {kRecord, "--switch-events", "-o", dir_ / "sw.data"};
  std::vector<std::string> without = {kRecord, "-o", dir_ / "nosw.data"};
  with.insert(with.end(), sleepy.begin(), sleepy.end());
  without.insert(without.end(), sleepy.begin(), sleepy.end());
  ASSERT_EQ(RunTool(with, dir_).exit_code, 0);
  ASSERT_EQ(RunTool(without, dir_).exit_code, 0);
  // Each sleep switches out and back in at least once.
  EXPECT_GE(CountRecords(dir_ / "sw.data", PERF_RECORD_SWITCH), 4u);
  EXPECT_EQ(CountRecords(dir_ / "nosw.data", PERF_RECORD_SWITCH), 0u);
}

// --no-inherit: the command itself is recorded, the children it starts are not.
TEST_F(TargetsTest, NoInheritLeavesChildrenOut) {
  const std::string data = dir_ / "noinherit.data";
  const RunResult rec = RunTool({kRecord, "--no-inherit", "-o", data, "--", WORKLOAD_FORKEXEC_PATH,
                                 WORKLOAD_CHILD_ALPHA_PATH},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--sort", "comm,sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_TRUE(OverheadOfRow(rep.out, {" forkexec ", "[.] parent_work"})) << rep.out;
  EXPECT_EQ(rep.out.find("child_work"), std::string::npos) << rep.out;
}

// -t records the given thread of a process started before us.
TEST_F(TargetsTest, AttachToThread) {
  const pid_t workload = Start({kSplit, "3"}, dir_, "thread");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string data = dir_ / "tid.data";
  const RunResult rec =
      RunTool({kRecord, "-t", std::to_string(workload), "--duration", "0.5", "-o", data}, dir_);
  kill(-workload, SIGKILL);
  Wait(workload, dir_, "thread");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--sort", "tid,sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  // 0.5 s of wall time at 4000 Hz of the thread's CPU time: 1000 samples
  // needed half a CPU, more than a loaded machine gives it.
  EXPECT_GT(SampleCount(rep.out), 200) << rep.out;
  EXPECT_TRUE(OverheadOfRow(rep.out, {" " + std::to_string(workload) + " ", "compute_sixty"}))
      << rep.out;
}

TEST_F(TargetsTest, BadTargetsAreRefused) {
  EXPECT_EQ(RunTool({kRecord, "-p", "999999999"}, dir_).exit_code, 1);
  const RunResult both = RunTool({kRecord, "-a", "-p", "1", "--duration", "0.1"}, dir_);
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.err.find("-a"), std::string::npos) << both.err;
  const RunResult cpu = RunTool({kRecord, "-C", "4096", "--duration", "0.1"}, dir_);
  EXPECT_NE(cpu.exit_code, 0);
  EXPECT_NE(cpu.err.find("4096"), std::string::npos) << cpu.err;
}

}  // namespace
}  // namespace sample::e2e
