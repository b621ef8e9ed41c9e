// End to end: tracepoints as data (their payload decoded by the recorded
// format in --script, text and JSON; --filter), and kprobes.
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kHits = WORKLOAD_HITS_PATH;

// `hits sizes N M` writes 512 bytes N times, then 100 bytes M times.
constexpr int kBig = 30;
constexpr int kSmall = 20;

class TraceEventsTest : public ::testing::Test {
 protected:
  // Why this machine has no sys_enter_write to record, or "": asked of
  // tracefs and the kernel, never read from the recorder's messages (a
  // regression saying "tracepoint" would pass as a skip).
  static std::string WritesUnavailable() {
    return TracepointUnavailable("syscalls", "sys_enter_write");
  }

  // Records sys_enter_write (with `extra` arguments after the -e) on the
  // sizes workload.
  RunResult RecordWrites(const std::vector<std::string>& extra, const std::string& data) {
    std::vector<std::string> argv = {kRecord, "-q", "-e", "syscalls:sys_enter_write"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const std::string& a :
         {std::string("-o"), data, std::string("--"), kHits, std::string("sizes"),
          std::to_string(kBig), std::to_string(kSmall)}) {
      argv.push_back(a);
    }
    return RunTool(argv, dir_);
  }

  static int Count(const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }

  ScratchDir dir_;
};

TEST_F(TraceEventsTest, ScriptPrintsTheFieldsByName) {
  if (const std::string why = WritesUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string data = dir_ / "writes.data";
  const RunResult rec = RecordWrites({}, data);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--script"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  // Every write, with its fd (the workload puts /dev/null on 42), a
  // pointer in hex and the count in decimal.
  const std::regex big(
      R"(syscalls:sys_enter_write: __syscall_nr=[0-9]+ fd=42 buf=0x[0-9a-f]+ count=512( |\n))");
  const std::regex small(
      R"(syscalls:sys_enter_write: __syscall_nr=[0-9]+ fd=42 buf=0x[0-9a-f]+ count=100( |\n))");
  auto matches = [&](const std::regex& re) {
    return std::distance(std::sregex_iterator(rep.out.begin(), rep.out.end(), re),
                         std::sregex_iterator());
  };
  EXPECT_EQ(matches(big), kBig) << rep.out;
  EXPECT_EQ(matches(small), kSmall) << rep.out;
  // The header names the fields the format gave.
  const RunResult header = RunTool({kReport, "-i", data, "--header-only"}, dir_);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  EXPECT_NE(header.out.find("fields = __syscall_nr fd buf count"), std::string::npos) << header.out;
}

TEST_F(TraceEventsTest, ScriptJsonHasTheFieldsAsAnObject) {
  if (const std::string why = WritesUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string data = dir_ / "writes.data";
  const RunResult rec = RecordWrites({}, data);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::string json = dir_ / "script.json";
  const RunResult rep = RunTool({"/bin/sh", "-c",
                                 ShellQuote(kReport) + " -i " + ShellQuote(data) +
                                     " --script --format json > " + ShellQuote(json)},
                                dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  // Python's parser says whether it is JSON, and counts the samples by
  // their decoded count field.
  const std::string check =
      "import json, sys\n"
      "d = json.load(open(sys.argv[1]))\n"
      "f = [s['fields'] for s in d['script'] if s['event'] == 'syscalls:sys_enter_write']\n"
      "assert all(isinstance(x['buf'], str) and x['buf'].startswith('0x') for x in f)\n"
      "assert all(x['fd'] == 42 for x in f)\n"
      "print(sum(x['count'] == 512 for x in f), sum(x['count'] == 100 for x in f))\n";
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 to parse JSON";
  const RunResult parsed = RunTool({"/usr/bin/python3", "-c", check, json}, dir_);
  ASSERT_EQ(parsed.exit_code, 0) << parsed.err;
  EXPECT_EQ(parsed.out, std::to_string(kBig) + " " + std::to_string(kSmall) + "\n");
}

TEST_F(TraceEventsTest, FilterKeepsOnlyMatchingHits) {
  if (const std::string why = WritesUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string data = dir_ / "filtered.data";
  const RunResult rec = RecordWrites({"--filter", "count == 512"}, data);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--script"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_EQ(Count(rep.out, "count=512"), kBig) << rep.out;
  EXPECT_EQ(Count(rep.out, "count="), kBig) << rep.out;
  const RunResult header = RunTool({kReport, "-i", data, "--header-only"}, dir_);
  EXPECT_NE(header.out.find("filter = 'count == 512'"), std::string::npos) << header.out;
}

TEST_F(TraceEventsTest, BadFilterNamesTheFields) {
  if (const std::string why = WritesUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const RunResult rec = RecordWrites({"--filter", "bytes == 512"}, dir_ / "bad.data");
  EXPECT_NE(rec.exit_code, 0);
  EXPECT_NE(rec.err.find("refused the filter 'bytes == 512'"), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("its fields: __syscall_nr, fd, buf, count"), std::string::npos) << rec.err;
}

TEST_F(TraceEventsTest, FilterNeedsATracepointBeforeIt) {
  const RunResult alone =
      RunTool({kRecord, "--filter", "count == 1", "-e", "cpu-clock", "--", "/bin/true"}, dir_);
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--filter 'count == 1' needs a tracepoint before it"), std::string::npos)
      << alone.err;
  const RunResult after_clock =
      RunTool({kRecord, "-e", "cpu-clock", "--filter", "count == 1", "--", "/bin/true"}, dir_);
  EXPECT_EQ(after_clock.exit_code, 1);
  EXPECT_NE(after_clock.err.find("follows 'cpu-clock', which is not a tracepoint"),
            std::string::npos)
      << after_clock.err;
}

// The kernel function behind write(2) on this machine, from kallsyms.
std::string WriteFunction() {
  std::ifstream in("/proc/kallsyms");
  std::string line;
  std::string found;
  while (std::getline(in, line)) {
    for (const char* name : {"__x64_sys_write", "__arm64_sys_write"}) {
      if (line.size() > std::strlen(name) && line.ends_with(std::string(" ") + name)) return name;
    }
  }
  return "";
}

TEST_F(TraceEventsTest, KprobeCountsEveryCall) {
  if (access("/sys/bus/event_source/devices/kprobe/type", R_OK) != 0) {
    GTEST_SKIP() << "this kernel has no kprobe PMU (/sys/bus/event_source/devices/kprobe: "
                    "CONFIG_KPROBE_EVENTS, Linux 4.17+)";
  }
  const std::string function = WriteFunction();
  if (function.empty()) GTEST_SKIP() << "no write(2) entry function in /proc/kallsyms";
  for (const std::string kind : {"kprobe", "kretprobe"}) {
    const std::string data = dir_ / (kind + ".data");
    const std::string event = kind + ":" + function;
    const RunResult rec =
        RunTool({kRecord, "-q", "-e", event, "-o", data, "--", kHits, "sizes", "0", "250"}, dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    const RunResult rep = RunTool({kReport, "-i", data, "--sort", "sym"}, dir_);
    ASSERT_EQ(rep.exit_code, 0) << rep.err;
    EXPECT_EQ(SampleCount(rep.out), 250) << event << "\n" << rep.out;
  }
}

TEST_F(TraceEventsTest, UnknownKernelFunctionIsNamed) {
  if (access("/sys/bus/event_source/devices/kprobe/type", R_OK) != 0) {
    GTEST_SKIP() << "this kernel has no kprobe PMU";
  }
  const RunResult rec =
      RunTool({kRecord, "-e", "kprobe:no_such_function_xyz", "--", "/bin/true"}, dir_);
  EXPECT_EQ(rec.exit_code, 1);
  EXPECT_NE(rec.err.find("'no_such_function_xyz' a kernel function"), std::string::npos) << rec.err;
}

TEST_F(TraceEventsTest, KprobeWithoutThePmuSaysSo) {
  if (access("/sys/bus/event_source/devices/kprobe/type", R_OK) == 0) {
    GTEST_SKIP() << "this kernel has a kprobe PMU";
  }
  const RunResult rec = RunTool({kRecord, "-e", "kprobe:ksys_write", "--", "/bin/true"}, dir_);
  EXPECT_EQ(rec.exit_code, 1);
  EXPECT_NE(rec.err.find("CONFIG_KPROBE_EVENTS"), std::string::npos) << rec.err;
}

}  // namespace
}  // namespace sample::e2e
