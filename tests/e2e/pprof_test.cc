// --format pprof read by pprof itself: Debian's `go tool pprof` (golang-go)
// over our export of tests/golden/split.data must show the flat profile
// `sample-report --no-children --sort sym` prints for the same recording,
// and the call chains leaf first with their labels. Skipped when go is not
// installed (scripts/setup.sh installs it with SAMPLE_SETUP_TESTS=1).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kGolden = GOLDEN_DIR;

// The go command found on $PATH, or "".
std::string GoPath() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && std::filesystem::exists(dir + "/go")) return dir + "/go";
  }
  return "";
}

// `go tool pprof ARGS`, with go's caches in `dir` (not in $HOME).
RunResult Pprof(const ScratchDir& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "HOME=" + dir.path(),
                                   "GOCACHE=" + dir / "gocache",
                                   "GOPATH=" + dir / "gopath",
                                   "GOFLAGS=",
                                   GoPath(),
                                   "tool",
                                   "pprof"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunTool(argv, dir);
}

// Name -> flat percent of the rows of `go tool pprof -top` with a nonzero
// flat figure ("  179ms 59.27% 59.27%  180ms 59.60%  compute_sixty").
std::map<std::string, double> PprofFlat(const std::string& top) {
  std::map<std::string, double> flat;
  bool rows = false;
  for (const std::string& line : Lines(top)) {
    if (!rows) {
      rows = line.find("flat%") != std::string::npos;
      continue;
    }
    std::istringstream in(line);
    std::string value, percent, sum, cum, cum_percent, name;
    in >> value >> percent >> sum >> cum >> cum_percent;
    std::getline(in >> std::ws, name);
    if (value == "0" || name.empty()) continue;
    flat[name] += std::stod(percent);
  }
  return flat;
}

// Name -> overhead of the rows of a flat profile ("    59.27%  [.] compute_sixty").
std::map<std::string, double> ReportFlat(const std::string& report) {
  std::map<std::string, double> flat;
  for (const std::string& line : Lines(report)) {
    const size_t mark = line.find("] ");
    if (line.empty() || line[0] == '#' || mark == std::string::npos) continue;
    flat[line.substr(mark + 2)] += std::stod(line);
  }
  return flat;
}

TEST(PprofTest, BinaryOutputIsRefusedOnATerminalButNotWhenRedirected) {
  if (!std::filesystem::exists("/usr/bin/script")) {
    GTEST_SKIP() << "no /usr/bin/script (bsdutils) to give the report a terminal";
  }
  ScratchDir dir;
  const std::string command = ShellQuote(SAMPLE_REPORT_PATH) + " -i " +
                              ShellQuote(kGolden + "/split.data") + " --symfs " +
                              ShellQuote(kGolden + "/symfs") + " --format pprof";
  // script(1) runs the command with a pseudo-terminal as its output.
  RunResult on_tty = RunTool({"/usr/bin/script", "-qec", command, "/dev/null"}, dir);
  EXPECT_EQ(on_tty.exit_code, 1) << on_tty.out << on_tty.err;
  EXPECT_NE(on_tty.out.find("--format pprof writes binary data; give -o FILE or redirect "
                            "standard output"),
            std::string::npos)
      << on_tty.out;
  const std::string file = dir / "out.pb.gz";
  RunResult redirected =
      RunTool({"/usr/bin/script", "-qec", command + " > " + ShellQuote(file), "/dev/null"}, dir);
  EXPECT_EQ(redirected.exit_code, 0) << redirected.out << redirected.err;
  std::ifstream in(file, std::ios::binary);
  unsigned char magic[2] = {};
  in.read(reinterpret_cast<char*>(magic), 2);
  EXPECT_EQ(magic[0], 0x1f);  // gzip
  EXPECT_EQ(magic[1], 0x8b);
}

TEST(PprofTest, GoToolPprofShowsTheFlatProfileOfTheSameRecording) {
  if (GoPath().empty()) GTEST_SKIP() << "go is not installed (golang-go): cannot run go tool pprof";
  ScratchDir dir;
  const std::vector<std::string> input = {SAMPLE_REPORT_PATH, "-i", kGolden + "/split.data",
                                          "--symfs", kGolden + "/symfs"};
  std::vector<std::string> argv = input;
  argv.insert(argv.end(), {"--format", "pprof", "-o", dir / "split.pb.gz"});
  RunResult exported = RunTool(argv, dir);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  argv = input;
  argv.insert(argv.end(), {"--no-children", "--sort", "sym"});
  RunResult report = RunTool(argv, dir);
  ASSERT_EQ(report.exit_code, 0) << report.err;

  RunResult top = Pprof(dir, {"-top", "-nodefraction=0", dir / "split.pb.gz"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const std::map<std::string, double> ours = ReportFlat(report.out);
  const std::map<std::string, double> theirs = PprofFlat(top.out);
  ASSERT_GE(ours.size(), 3u) << report.out;
  EXPECT_NEAR(ours.at("compute_sixty"), 59.27, 0.001);
  for (const auto& [name, percent] : ours) {
    ASSERT_TRUE(theirs.contains(name)) << name << " missing from\n" << top.out;
    EXPECT_NEAR(theirs.at(name), percent, 0.0101) << name;
  }
  EXPECT_EQ(theirs.size(), ours.size()) << top.out;
  EXPECT_NE(top.out.find("Type: cpu-clock"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("Build ID: f942cfaacf9f3449a7dff4b3f66b6a8f62e11506"), std::string::npos)
      << "the program's mapping comes first\n"
      << top.out;
}

TEST(PprofTest, GoToolPprofTracesAreLeafFirstWithTheirThreadLabels) {
  if (GoPath().empty()) GTEST_SKIP() << "go is not installed (golang-go): cannot run go tool pprof";
  ScratchDir dir;
  RunResult exported = RunTool({SAMPLE_REPORT_PATH, "-i", kGolden + "/split.data", "--symfs",
                                kGolden + "/symfs", "--pid", "2243", "-o", dir / "split.pprof"},
                               dir);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  RunResult traces = Pprof(dir, {"-traces", dir / "split.pprof"});
  ASSERT_EQ(traces.exit_code, 0) << traces.err;
  // A trace is its labels, then its frames, the first one with the value.
  std::vector<std::string> frames;
  bool labelled = false, found = false;
  for (const std::string& line : Lines(traces.out)) {
    if (line.starts_with("-----")) {
      const std::vector<std::string> sixty = {"compute_sixty", "run_round", "main"};
      found = found || (labelled && frames.size() >= sixty.size() &&
                        std::equal(sixty.begin(), sixty.end(), frames.begin()));
      frames.clear();
      labelled = false;
      continue;
    }
    if (line.find("pid:  2242") != std::string::npos) ADD_FAILURE() << "a filtered-out sample";
    if (line.find("comm:  split") != std::string::npos) labelled = true;
    std::istringstream in(line);
    std::string first;
    in >> first;
    if (first.ends_with("ms")) in >> first;  // the trace's value, then its leaf
    if (!first.empty() && line.find(':') == std::string::npos) frames.push_back(first);
  }
  EXPECT_TRUE(found) << traces.out;
}

}  // namespace
}  // namespace sample::e2e
