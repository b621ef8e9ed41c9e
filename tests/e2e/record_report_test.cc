// End to end: record the bundled workloads with sample-record, report them
// with sample-report, and check the numbers against what the workloads do
// by construction.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;

bool FileExists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

// The chain printed under a flat-profile entry, one frame per line.
std::vector<std::string> ChainUnder(const std::string& report, const std::string& symbol) {
  std::vector<std::string> chain;
  bool inside = false;
  for (const std::string& line : Lines(report)) {
    if (!inside) {
      inside = line.size() >= symbol.size() && line[0] != '#' &&
               line.compare(line.size() - symbol.size(), symbol.size(), symbol) == 0;
      continue;
    }
    if (line.empty()) break;
    const size_t start = line.find_first_not_of(" |-");
    if (start == std::string::npos) continue;
    chain.push_back(line.substr(start));
  }
  return chain;
}

class RecordReportTest : public ::testing::Test {
 protected:
  ScratchDir dir_;
};

// split.c spends thread CPU time 60/30/10 in compute_sixty/thirty/ten.
TEST_F(RecordReportTest, SplitWorkloadSharesMatchDesign) {
  const std::string data = dir_ / "split.data";
  const RunResult rec = RunTool({kRecord, "-g", "-F", "2000", "-o", data, "--", kSplit, "2"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_NE(rec.err.find("samples, 0 lost"), std::string::npos) << rec.err;

  const RunResult rep = RunTool({kReport, "-i", data, "--no-children", "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_GT(SampleCount(rep.out), 3000) << rep.out;
  const auto sixty = OverheadOf(rep.out, "compute_sixty");
  const auto thirty = OverheadOf(rep.out, "compute_thirty");
  const auto ten = OverheadOf(rep.out, "compute_ten");
  ASSERT_TRUE(sixty && thirty && ten) << rep.out;
  EXPECT_NEAR(*sixty, 60.0, 5.0) << rep.out;
  EXPECT_NEAR(*thirty, 30.0, 5.0) << rep.out;
  EXPECT_NEAR(*ten, 10.0, 5.0) << rep.out;
}

TEST_F(RecordReportTest, CallChainsNameTheCallers) {
  const std::string data = dir_ / "chains.data";
  ASSERT_EQ(RunTool({kRecord, "-g", "-o", data, "--", kSplit, "1"}, dir_).exit_code, 0);

  // Callee order under each leaf: the leaf, then run_round, then main.
  const RunResult flat =
      RunTool({kReport, "-i", data, "--no-children", "-g", "--sort", "sym"}, dir_);
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  for (const std::string leaf : {"compute_sixty", "compute_thirty", "compute_ten"}) {
    const auto chain = ChainUnder(flat.out, "[.] " + leaf);
    ASSERT_GE(chain.size(), 3u) << leaf << "\n" << flat.out;
    EXPECT_EQ(chain[0], leaf) << flat.out;
    EXPECT_EQ(chain[1], "run_round") << flat.out;
    EXPECT_EQ(chain[2], "main") << flat.out;
  }

  // Children mode: main and run_round carry (nearly) everything as callers.
  const RunResult children = RunTool({kReport, "-i", data, "--children", "--sort", "sym"}, dir_);
  ASSERT_EQ(children.exit_code, 0) << children.err;
  const auto main_share = OverheadOf(children.out, "[.] main");
  ASSERT_TRUE(main_share) << children.out;
  EXPECT_GT(*main_share, 95.0) << children.out;
}

TEST_F(RecordReportTest, ForkedAndExecedChildrenAreNamed) {
  const std::string data = dir_ / "fork.data";
  const RunResult rec = RunTool({kRecord, "-o", data, "--", WORKLOAD_FORKEXEC_PATH,
                                 WORKLOAD_CHILD_ALPHA_PATH, WORKLOAD_CHILD_BETA_PATH},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--sort", "comm,sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  // Each child's samples carry its own command name and its own function.
  bool alpha = false, beta = false, parent = false;
  for (const std::string& line : Lines(rep.out)) {
    if (line.find("child-alpha") != std::string::npos &&
        line.find("[.] child_work") != std::string::npos) {
      alpha = true;
    }
    if (line.find("child-beta") != std::string::npos &&
        line.find("[.] child_work") != std::string::npos) {
      beta = true;
    }
    if (line.find("forkexec") != std::string::npos &&
        line.find("[.] parent_work") != std::string::npos) {
      parent = true;
    }
  }
  EXPECT_TRUE(alpha) << rep.out;
  EXPECT_TRUE(beta) << rep.out;
  EXPECT_TRUE(parent) << rep.out;
}

// A recorder killed with SIGKILL leaves no trailer; the chunks it flushed
// (at least twice a second) are still reported.
TEST_F(RecordReportTest, KilledRecorderLeavesAReadableFile) {
  if (kSanitized) GTEST_SKIP() << "a timing test: the sanitized recorder starts too slowly";
  const std::string data = dir_ / "killed.data";
  const pid_t recorder =
      Start({kRecord, "-F", "1000", "-o", data, "--", kSplit, "3"}, dir_, "killed");
  // Killed once the workload has had 1.5 s of CPU, however long that took
  // on a loaded machine (a fixed 1.7 s left it under 900 samples there).
  // The recorder and the workload share the process group Start() made.
  EXPECT_TRUE(WaitForCommandCpu(recorder, recorder, 1.5)) << "the recorder ended early";
  kill(-recorder, SIGKILL);
  const RunResult rec = Wait(recorder, dir_, "killed");
  ASSERT_EQ(rec.exit_code, 128 + SIGKILL) << rec.err;

  const RunResult rep = RunTool({kReport, "-i", data, "--no-children", "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.err.find("not finalized"), std::string::npos) << rep.err;
  // Flushed at least every half second of wall time, in which the workload
  // ran at most half a second: at least 1 s of its CPU at 1000 Hz is in the
  // file (allow 20% for its start and the recorder's wakeups).
  EXPECT_GE(SampleCount(rep.out), 800) << rep.out << rep.err;
  EXPECT_TRUE(OverheadOf(rep.out, "compute_sixty").has_value()) << rep.out;
}

// The kernel's symbols are written at the close, so a killed recorder's
// file holds none; reported on the boot it was recorded on, this host's
// table names its kernel addresses (dd spends most of its time there).
TEST_F(RecordReportTest, AKilledRecordingNamesTheKernelOnItsOwnBoot) {
  if (const std::string why = KernelSamplesUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string data = dir_ / "killed-kernel.data";
  const pid_t recorder = Start({kRecord, "-F", "1000", "-o", data, "--", "/bin/dd",
                                "if=/dev/zero", "of=/dev/null", "bs=64", "count=1000000000"},
                               dir_, "killed-kernel");
  EXPECT_TRUE(WaitForCommandCpu(recorder, recorder, 1.0)) << "the recorder ended early";
  kill(-recorder, SIGKILL);
  const RunResult rec = Wait(recorder, dir_, "killed-kernel");
  ASSERT_EQ(rec.exit_code, 128 + SIGKILL) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--no-children", "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  double kernel = 0, unnamed = 0;
  for (const std::string& line : Lines(rep.out)) {
    if (line.find("[k] ") == std::string::npos) continue;
    const double share = OverheadOfRow(line, {"[k] "}).value_or(0);
    kernel += share;
    if (line.find("[k] [unknown]") != std::string::npos) unnamed += share;
  }
  EXPECT_GT(kernel, 30) << rep.out;
  EXPECT_LT(unnamed, kernel / 10) << rep.out;
  const RunResult stats = RunTool({kReport, "-i", data, "--stats"}, dir_);
  EXPECT_NE(stats.out.find("/proc/kallsyms of this boot (the file was not closed)"),
            std::string::npos)
      << stats.out;
}

// Killed early, the recorder still leaves samples: the first chunk with
// records is flushed after 100 ms, not after the usual half second (kills
// before 0.3 s used to leave none). Killed at moments from 0.2 s on (0.1 s
// of margin over the flush), each file holds samples of the workload's
// functions. The moments are of the workload's CPU time, which is never
// ahead of the wall clock: on a loaded machine 0.2 s of wall time could
// pass before the workload had run at all, and its file rightly be empty.
TEST_F(RecordReportTest, RecorderKilledSoonAfterTheStartKeepsSamples) {
  if (kSanitized) GTEST_SKIP() << "a timing test: the sanitized recorder starts too slowly";
  for (const int ms : {200, 250, 320, 410}) {
    const std::string data = dir_ / ("early" + std::to_string(ms) + ".data");
    const pid_t recorder =
        Start({kRecord, "-F", "1000", "-o", data, "--", kSplit, "3"}, dir_, "early");
    EXPECT_TRUE(WaitForCommandCpu(recorder, recorder, ms / 1000.0)) << "the recorder ended early";
    kill(-recorder, SIGKILL);
    const RunResult rec = Wait(recorder, dir_, "early");
    ASSERT_EQ(rec.exit_code, 128 + SIGKILL);
    const RunResult rep = RunTool({kReport, "-i", data, "--no-children", "--sort", "sym"}, dir_);
    ASSERT_EQ(rep.exit_code, 0) << rep.err;
    EXPECT_GT(SampleCount(rep.out), 0) << "killed after " << ms << " ms\n" << rep.out << rep.err;
  }
}

// A full disk: the recorder stops recording at the failed write (and
// stops the command, as --duration would: a 10 s workload would otherwise
// run on unrecorded), says so, and the chunks that fit are reported. A 64 KiB tmpfs, mounted in a mount
// namespace of its own (gone with the shell, even if the test dies), fills
// within the first second of a --call-graph dwarf recording at 10 kHz;
// record chunks are at most 1 MiB raw (about 40 KiB compressed here), so
// at least one fits.
TEST_F(RecordReportTest, FullDiskKeepsTheChunksThatFit) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string mount_point = dir_ / "full";
  const std::string kept = dir_ / "kept.data";
  ASSERT_EQ(mkdir(mount_point.c_str(), 0700), 0);
  const std::string script =
      "mount -t tmpfs -o size=64k sample-full \"$1\" || exit 90\n"
      "\"$2\" --call-graph dwarf -F 10000 -o \"$1/full.data\" -- \"$3\" deep 64 10\n"
      "rc=$?\n"
      "cp \"$1/full.data\" \"$4\" || exit 91\n"
      "exit $rc\n";
  const RunResult rec = RunTool({"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh",
                                 "-c", script, "sh", mount_point, kRecord,
                                 WORKLOAD_UNWIND_NOFP_PATH, kept},
                                dir_);
  if (rec.exit_code == 90) GTEST_SKIP() << "cannot mount a tmpfs here: " << rec.err;
  ASSERT_NE(rec.exit_code, 91) << rec.err;
  EXPECT_EQ(rec.exit_code, 1) << rec.err;
  EXPECT_NE(rec.err.find("full.data: write failed: No space left on device; recording stopped"),
            std::string::npos)
      << rec.err;

  const RunResult rep = RunTool({kReport, "-i", kept, "--no-children", "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.err.find("not finalized"), std::string::npos) << rep.err;
  EXPECT_GT(SampleCount(rep.out), 100) << rep.out << rep.err;
  EXPECT_TRUE(OverheadOf(rep.out, "deep_leaf").has_value()) << rep.out;
}

// SIGTERM to the recorder alone: it stops, passes the signal to the command
// and still finalizes the file.
TEST_F(RecordReportTest, SigtermStopsCleanly) {
  const std::string data = dir_ / "term.data";
  const pid_t recorder = Start({kRecord, "-o", data, "--", kSplit, "5"}, dir_, "term");
  // Stopped after 0.5 s of the workload's CPU (at the default 4000 Hz,
  // ~2000 samples), not of wall time, which a loaded machine stretches.
  EXPECT_TRUE(WaitForCommandCpu(recorder, recorder, 0.5)) << "the recorder ended early";
  kill(recorder, SIGTERM);
  const RunResult rec = Wait(recorder, dir_, "term");
  EXPECT_EQ(rec.exit_code, 128 + SIGTERM) << "the command's fate is the exit status\n" << rec.err;
  EXPECT_NE(rec.err.find("[ sample-record:"), std::string::npos) << rec.err;

  const RunResult rep = RunTool({kReport, "-i", data, "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_EQ(rep.err.find("not finalized"), std::string::npos) << rep.err;
  EXPECT_GT(SampleCount(rep.out), 1000) << rep.out;
}

// -c: one sample per N events. task-clock counts nanoseconds of CPU time,
// so 0.5 s of CPU at -c 1000000 is about 500 samples.
TEST_F(RecordReportTest, FixedPeriodSampling) {
  const std::string data = dir_ / "period.data";
  const RunResult rec = RunTool(
      {kRecord, "-e", "task-clock", "-c", "1000000", "-o", data, "--", kSplit, "0.5"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NEAR(SampleCount(rep.out), 500, 60) << rep.out;
  EXPECT_NE(rep.out.find("of event 'task-clock'"), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find("# Event count (approx.): "), std::string::npos);
}

TEST_F(RecordReportTest, CommandExitStatusIsReturned) {
  const RunResult rec =
      RunTool({kRecord, "-o", dir_ / "exit.data", "--", "/bin/sh", "-c", "exit 3"}, dir_);
  EXPECT_EQ(rec.exit_code, 3) << rec.err;
}

TEST_F(RecordReportTest, ExistingOutputIsKeptAsOld) {
  const std::string data = dir_ / "again.data";
  ASSERT_EQ(RunTool({kRecord, "-q", "-o", data, "--", kSplit, "0.1"}, dir_).exit_code, 0);
  ASSERT_EQ(RunTool({kRecord, "-q", "-o", data, "--", kSplit, "0.1"}, dir_).exit_code, 0);
  EXPECT_TRUE(FileExists(data));
  EXPECT_TRUE(FileExists(data + ".old"));
  struct stat st {};
  ASSERT_EQ(stat(data.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(RecordReportTest, MissingCommandIsAClearError) {
  const std::string data = dir_ / "none.data";
  const RunResult rec = RunTool({kRecord, "-o", data, "--", "/nonexistent/tool"}, dir_);
  EXPECT_EQ(rec.exit_code, 127) << "as a shell says 'not found'";
  EXPECT_NE(rec.err.find("/nonexistent/tool"), std::string::npos) << rec.err;
  EXPECT_FALSE(FileExists(data)) << "a failed start must not leave an output file";
  // There but not executable: 126, as shells; --stat the same.
  const std::string text = dir_ / "not-executable";
  std::ofstream(text) << "#!/bin/sh\n";
  const RunResult denied = RunTool({kRecord, "-o", data, "--", text}, dir_);
  EXPECT_EQ(denied.exit_code, 126) << denied.err;
  EXPECT_FALSE(FileExists(data));
  const RunResult stat = RunTool({kRecord, "--stat", "--", "/nonexistent/tool"}, dir_);
  EXPECT_EQ(stat.exit_code, 127) << stat.err;
}

// Boost reads "-1" into an unsigned option as 2^64 - 1: -D -1 used to
// record at once, -j -1 to die allocating threads. Every numeric option
// refuses what is out of its range, by name, before recording anything.
TEST_F(RecordReportTest, NumericOptionsOutOfRangeAreRefusedByName) {
  const std::string data = dir_ / "never.data";
  const std::vector<std::pair<std::vector<std::string>, std::string>> record_cases = {
      {{"-D", "-2"}, "-D '-2' is negative"},  // -1 is perf's "until enabled" (control_test)
      {{"-D", "99999999999999999999"}, "-D '99999999999999999999' is too large"},
      {{"-c", "-1"}, "-c '-1' is negative"},
      {{"-c", "0"}, "-c '0' is zero"},
      {{"-c", "9223372036854775808"}, "-c '9223372036854775808' is too large"},
      {{"-F", "-1"}, "-F '-1' is negative"},
      {{"-F", "0"}, "-F '0' is zero"},
      {{"-F", "4000x"}, "-F '4000x' is not a whole number"},
      {{"-F", "4294967295"}, "-F 4294967295 is above the kernel's limit"},
      {{"-m", "-1"}, "-m '-1' is negative"},
      {{"-m", "0"}, "-m '0' is zero"},
      {{"-m", "3"}, "-m 3 is not a power of two"},
      {{"-z", "-1"}, "-z '-1' is negative"},
      {{"-z", "23"}, "-z '23' is too large"},
      {{"--duration", "-1"}, "--duration '-1' is negative"},
      {{"--duration", "0"}, "--duration '0' is zero"},
      {{"--duration", "nan"}, "--duration 'nan' is not a number"},
  };
  for (const auto& [args, message] : record_cases) {
    std::vector<std::string> argv = {kRecord, "-e", "cpu-clock", "-o", data};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", kSplit, "0.01"});
    const RunResult rec = RunTool(argv, dir_);
    EXPECT_EQ(rec.exit_code, 2) << args[0] << " " << args[1] << "\n" << rec.err;
    EXPECT_NE(rec.err.find("sample-record: " + message), std::string::npos)
        << args[0] << " " << args[1] << "\n"
        << rec.err;
    EXPECT_NE(access(data.c_str(), F_OK), 0) << args[0] << " " << args[1] << " recorded";
  }

  ASSERT_EQ(
      RunTool({kRecord, "-q", "-e", "cpu-clock", "-o", data, "--", kSplit, "0.05"}, dir_).exit_code,
      0);
  const std::vector<std::pair<std::vector<std::string>, std::string>> report_cases = {
      {{"-j", "-1"}, "-j '-1' is negative"},
      {{"-j", "0"}, "-j '0' is zero"},
      {{"-j", "100000"}, "-j '100000' is too large"},
      {{"--max-stack", "-1"}, "--max-stack '-1' is negative"},
      {{"--max-stack", "0"}, "--max-stack '0' is zero"},
      {{"--percent-limit", "-5"}, "--percent-limit '-5' is negative"},
      {{"--percent-limit", "101"}, "--percent-limit '101' is too large"},
      {{"--percent-limit", "nan"}, "--percent-limit 'nan' is not a number"},
  };
  for (const auto& [args, message] : report_cases) {
    std::vector<std::string> argv = {kReport, "-i", data};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult rep = RunTool(argv, dir_);
    EXPECT_EQ(rep.exit_code, 2) << args[0] << " " << args[1] << "\n" << rep.err;
    EXPECT_NE(rep.err.find("sample-report: " + message), std::string::npos)
        << args[0] << " " << args[1] << "\n"
        << rep.err;
    EXPECT_EQ(rep.out, "") << args[0] << " " << args[1];
  }
}

// Each option's --help line, by its names ("-F, --freq"): the help after
// the name column.
std::map<std::string, std::string> HelpLines(const std::string& help) {
  std::map<std::string, std::string> out;
  for (const std::string& line : Lines(help)) {
    if (!line.starts_with("  -") && !line.starts_with("      --")) continue;
    const size_t start = line.find('-');
    const size_t gap = line.find("  ", start);
    const size_t text = line.find_first_not_of(' ', gap);
    std::string names = line.substr(start, gap - start);  // "-F, --freq <n>"
    names = names.substr(0, std::min(names.find(" <"), names.find('[')));
    EXPECT_FALSE(out.contains(names)) << names << " listed twice";
    out[names] = gap == std::string::npos ? "" : line.substr(text);
  }
  return out;
}

TEST_F(RecordReportTest, HelpIsGroupedOneLineAnOptionAndTopSharesItsOptions) {
  const std::string top = SAMPLE_TOP_PATH;
  std::map<std::string, std::map<std::string, std::string>> helps;
  // --help answers even beside a value its option refuses.
  for (const std::string& program : {kRecord, kReport, top}) {
    const RunResult help = RunTool({program, "--help", "--max-stack", "0"}, dir_);
    ASSERT_EQ(help.exit_code, 0) << program << help.err;
    size_t headings = 0;
    for (const std::string& line : Lines(help.out)) {
      EXPECT_LE(line.size(), 100u) << program << ": " << line;
      if (!line.empty() && line.back() == ':' && line[0] != ' ') ++headings;
      // Boost's raw layout is gone: "-h [ --help ]", "arg".
      EXPECT_EQ(line.find("[ --"), std::string::npos) << line;
      EXPECT_EQ(line.find(" arg "), std::string::npos) << line;
    }
    EXPECT_GE(headings, 4u) << program << "\n" << help.out;
    helps[program] = HelpLines(help.out);
  }
  // sample-top takes sample-record's sampling, target and call-chain
  // options and sample-report's rows, the same lines.
  for (const char* names : {"-e, --event", "-F, --freq", "-c, --count", "-g", "--call-graph",
                            "--max-stack", "-p, --pid", "-t, --tid", "-C, --cpu", "--filter",
                            "--duration"}) {
    ASSERT_TRUE(helps[top].contains(names)) << names;
    EXPECT_EQ(helps[top][names], helps[kRecord][names]) << names;
  }
  for (const char* names : {"-s, --sort", "--children", "--no-children", "--percent-limit",
                            "-n, --show-nr-samples"}) {
    ASSERT_TRUE(helps[top].contains(names)) << names;
    EXPECT_EQ(helps[top][names], helps[kReport][names]) << names;
  }
  // And with them their checks: -F above the kernel's limit, in both.
  for (const std::string& program : {kRecord, top}) {
    const RunResult high = RunTool({program, "-F", "4294967295", "--duration", "1"}, dir_);
    EXPECT_EQ(high.exit_code, 2) << program << high.err;
    EXPECT_NE(high.err.find("-F 4294967295 is above the kernel's limit"), std::string::npos)
        << program << high.err;
  }
}

TEST_F(RecordReportTest, AnOutputFileWhoseExtensionNamesNoFormatIsRefused) {
  const std::string data = dir_ / "small.data";
  ASSERT_EQ(
      RunTool({kRecord, "-q", "-e", "cpu-clock", "-o", data, "--", kSplit, "0.05"}, dir_).exit_code,
      0);
  const std::string png = dir_ / "fg.png";
  const RunResult refused = RunTool({kReport, "-i", data, "-o", png}, dir_);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("'.png' names no output format"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find(".svg (svg)"), std::string::npos) << refused.err;
  EXPECT_NE(access(png.c_str(), F_OK), 0) << "a text report was written to fg.png";
  // --format says what the bytes are, whatever the name; a name without
  // an extension is text, and a known one picks its format.
  EXPECT_EQ(RunTool({kReport, "-i", data, "--format", "svg", "-o", png}, dir_).exit_code, 0);
  EXPECT_EQ(ReadFile(png).rfind("<?xml", 0), 0u);
  const std::string plain = dir_ / "report";
  ASSERT_EQ(RunTool({kReport, "-i", data, "-o", plain}, dir_).exit_code, 0);
  EXPECT_NE(ReadFile(plain).find("# Samples"), std::string::npos) << ReadFile(plain);
  const std::string svg = dir_ / "fg.svg";
  ASSERT_EQ(RunTool({kReport, "-i", data, "-o", svg}, dir_).exit_code, 0);
  EXPECT_EQ(ReadFile(svg).rfind("<?xml", 0), 0u);
}

TEST_F(RecordReportTest, ReportRejectsGarbageWithFileAndOffset) {
  const std::string junk = dir_ / "junk.data";
  std::ofstream(junk)
      << "this is not a recording, just some text that is long enough to fill a header";
  const RunResult rep = RunTool({kReport, "-i", junk}, dir_);
  EXPECT_EQ(rep.exit_code, 1);
  EXPECT_NE(rep.err.find(junk), std::string::npos) << rep.err;
  EXPECT_NE(rep.err.find("offset 0"), std::string::npos) << rep.err;
}

TEST_F(RecordReportTest, UnknownEventListsCloseMatches) {
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clok", "-o", dir_ / "x.data", "--", kSplit, "0.1"}, dir_);
  EXPECT_NE(rec.exit_code, 0);
  EXPECT_NE(rec.err.find("cpu-clock"), std::string::npos) << rec.err;
}

}  // namespace
}  // namespace sample::e2e

namespace sample::e2e {
namespace {

// The recorder raises its own open-file limit (it may hold many fds), not
// the profiled command's: the command sees the limit it was started with.
TEST(OpenFileLimitTest, CommandKeepsItsOwnLimit) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max <= 512) {
    GTEST_SKIP() << "the hard open-file limit is " << saved.rlim_max << ", nothing to raise";
  }
  rlimit lowered = saved;
  lowered.rlim_cur = 512;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  ScratchDir dir;
  const std::string out = dir / "limit.txt";
  const RunResult rec = RunTool({SAMPLE_RECORD_PATH, "-e", "cpu-clock", "-o", dir / "l.data", "--",
                                 "/bin/sh", "-c", "ulimit -n > " + ShellQuote(out)},
                                dir);
  setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  std::ifstream in(out);
  std::string limit;
  in >> limit;
  EXPECT_EQ(limit, "512");
}

}  // namespace
}  // namespace sample::e2e
