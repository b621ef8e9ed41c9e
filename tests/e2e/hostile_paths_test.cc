// End to end: what sits at a path the tools read or write is not trusted
// (issue 17). The reporter never blocks on a FIFO or opens a device, be it
// -i, a binary a recording names, or a perf map any local user can plant in
// /tmp; the recorder and the reporter's -o never rename a device, FIFO or
// directory out of the way (as root, `-o /dev/null` once renamed the real
// /dev/null), and never write through another user's symlink in a sticky
// world-writable directory. Every run that could hang goes through
// timeout(1), so a regression fails (exit 124) instead of hanging the suite.
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

namespace fs = std::filesystem;

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;
const std::string kJit = WORKLOAD_JIT_PATH;

std::vector<std::string> Bounded(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/bin/timeout", "20"});
  return argv;
}

bool IsCharDevice(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

class HostilePathsTest : public ::testing::Test {
 protected:
  // A short recording of `split` copied into the scratch directory, so the
  // binary it names can be replaced afterwards.
  void RecordCopy(const std::vector<std::string>& options) {
    fs::copy_file(kSplit, binary_);
    std::vector<std::string> argv = {kRecord, "-e", "cpu-clock", "-o", data_};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", binary_, "0.2"});
    const RunResult rec = RunTool(argv, dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
  }

  ScratchDir dir_;
  const std::string data_ = dir_ / "hostile.data";
  const std::string binary_ = dir_ / "split-copy";
};

TEST_F(HostilePathsTest, ReportRefusesAFifoOrDeviceAsInput) {
  const std::string fifo = dir_ / "input.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const RunResult r = RunTool(Bounded({kReport, "-i", fifo}), dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;  // 124: it blocked
  EXPECT_NE(r.err.find(fifo + ": it is a FIFO, not a regular file"), std::string::npos) << r.err;

  const RunResult zero = RunTool(Bounded({kReport, "-i", "/dev/zero"}), dir_);
  EXPECT_EQ(zero.exit_code, 1) << zero.err;
  EXPECT_NE(zero.err.find("/dev/zero: it is a character device"), std::string::npos) << zero.err;
}

// The recorded binary replaced by a FIFO: symbolization (ELF) and the DWARF
// unwinder (libdwfl, which opens by path unless handed a descriptor) must
// both pass it by (as a missing binary), and the report still comes out.
TEST_F(HostilePathsTest, ABinaryReplacedByAFifoIsPassedBy) {
  RecordCopy({"--call-graph", "dwarf"});
  ASSERT_EQ(unlink(binary_.c_str()), 0);
  ASSERT_EQ(mkfifo(binary_.c_str(), 0600), 0);
  for (const char* view : {"--no-children", "--children"}) {
    const RunResult r = RunTool(Bounded({kReport, "-i", data_, view, "--sort", "dso"}), dir_);
    EXPECT_EQ(r.exit_code, 0) << view << ": " << r.err;
    EXPECT_NE(r.out.find("# Samples:"), std::string::npos) << r.out;
  }
}

TEST_F(HostilePathsTest, PerfMapMustBeARegularFileOfOursNotWritableByOthers) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the fake JIT writes x86-64 machine code";
#endif
  // The report's own reading of the map (of a recording without one:
  // --no-embed, or from before embedding); the recorder's: portable_test.cc.
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "--no-embed", "-o", data_, "--", kJit, "0.2"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::string map = Lines(rec.out).at(0);
  ASSERT_TRUE(map.starts_with("/tmp/perf-")) << rec.out;
  struct Remover {
    std::string path;
    ~Remover() { unlink(path.c_str()); }
  } remove_map{map};
  const std::string saved = dir_ / "saved.map";
  fs::copy_file(map, saved);
  auto report = [&] { return RunTool(Bounded({kReport, "-i", data_, "--sort", "sym"}), dir_); };

  const RunResult good = report();
  ASSERT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("jit_countdown"), std::string::npos) << good.out;

  ASSERT_EQ(chmod(map.c_str(), 0666), 0);
  const RunResult writable = report();
  EXPECT_EQ(writable.exit_code, 0) << writable.err;
  EXPECT_EQ(writable.out.find("jit_countdown"), std::string::npos) << writable.out;
  EXPECT_NE(writable.err.find("writable by everyone"), std::string::npos) << writable.err;

  ASSERT_EQ(unlink(map.c_str()), 0);
  ASSERT_EQ(symlink(saved.c_str(), map.c_str()), 0);
  const RunResult linked = report();
  EXPECT_EQ(linked.exit_code, 0) << linked.err;
  EXPECT_EQ(linked.out.find("jit_countdown"), std::string::npos) << linked.out;
  EXPECT_NE(linked.err.find("it is a symbolic link"), std::string::npos) << linked.err;

  ASSERT_EQ(unlink(map.c_str()), 0);
  ASSERT_EQ(mkfifo(map.c_str(), 0600), 0);
  const RunResult fifo = report();
  EXPECT_EQ(fifo.exit_code, 0) << fifo.err;  // 124: it blocked on the FIFO
  EXPECT_NE(fifo.err.find("it is a FIFO"), std::string::npos) << fifo.err;
}

TEST_F(HostilePathsTest, RecorderWritesOnlyRegularFiles) {
  const std::string fifo = dir_ / "out.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string directory = dir_ / "out.dir";
  fs::create_directory(directory);
  for (const std::string& target : {fifo, directory, std::string("/dev/null")}) {
    for (const bool stat : {false, true}) {
      std::vector<std::string> argv = {kRecord, "-o", target};
      if (stat) argv.push_back("--stat");
      argv.insert(argv.end(), {"--", "true"});
      const RunResult r = RunTool(Bounded(argv), dir_);
      EXPECT_EQ(r.exit_code, 1) << target << ": " << r.err;
      EXPECT_NE(r.err.find("-o " + target + ": it is a"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(target + ".old")) << target;
    }
  }
  EXPECT_TRUE(IsCharDevice("/dev/null"));
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// The report's -o writes into a device or FIFO as a shell's > would, and
// replaces only regular files.
TEST_F(HostilePathsTest, ReportOutputIntoADeviceNeverReplacesIt) {
  RecordCopy({});
  const RunResult null = RunTool(Bounded({kReport, "-i", data_, "-o", "/dev/null"}), dir_);
  EXPECT_EQ(null.exit_code, 0) << null.err;
  EXPECT_TRUE(IsCharDevice("/dev/null"));
  EXPECT_FALSE(fs::exists("/dev/null.old"));
  const RunResult directory = RunTool(Bounded({kReport, "-i", data_, "-o", dir_.path()}), dir_);
  EXPECT_EQ(directory.exit_code, 1) << directory.err;
  EXPECT_NE(directory.err.find("it is a directory"), std::string::npos) << directory.err;
}

// Another user's symlink in a sticky world-writable directory (a /tmp of our
// own) is neither renamed to .old nor written through, by either tool.
TEST_F(HostilePathsTest, AnotherUsersSymlinkInAStickyDirectoryIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a symlink to another user needs root";
  const std::string sticky = dir_ / "sticky";
  fs::create_directory(sticky);
  ASSERT_EQ(chmod(sticky.c_str(), 01777), 0);
  const std::string victim = dir_ / "victim";
  std::ofstream(victim) << "precious\n";
  const std::string link = sticky + "/sample.data";
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
  ASSERT_EQ(lchown(link.c_str(), 65534, 65534), 0);

  const RunResult rec = RunTool(Bounded({kRecord, "-o", link, "--", "true"}), dir_);
  EXPECT_EQ(rec.exit_code, 1) << rec.err;
  EXPECT_NE(rec.err.find("a symbolic link owned by uid 65534"), std::string::npos) << rec.err;
  EXPECT_FALSE(fs::exists(link + ".old"));
  RecordCopy({});
  // The report's -o through such a link (named as a text report: -o
  // refuses an extension that names no format before it looks at the path).
  const std::string report_link = sticky + "/report.txt";
  ASSERT_EQ(symlink(victim.c_str(), report_link.c_str()), 0);
  ASSERT_EQ(lchown(report_link.c_str(), 65534, 65534), 0);
  const RunResult rep = RunTool(Bounded({kReport, "-i", data_, "-o", report_link}), dir_);
  EXPECT_EQ(rep.exit_code, 1) << rep.err;
  EXPECT_NE(rep.err.find("a symbolic link owned by uid 65534"), std::string::npos) << rep.err;
  std::ifstream in(victim);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "precious\n");
}

// A program whose name holds an escape sequence and a byte that is not
// UTF-8: its command name and path reach every view. Text shows them as
// \xNN (no raw ESC reaches the terminal), JSON stays valid, folded stacks
// stay one line each.
TEST_F(HostilePathsTest, NamesWithEscapesAndInvalidUtf8AreShownSafely) {
  const std::string name = "caf\xe9\x1b]0;owned\x07";
  const std::string binary = dir_ / name;
  fs::copy_file(kSplit, binary);
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "-o", data_, "--", binary, "0.2"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  const RunResult text =
      RunTool({kReport, "-i", data_, "--sort", "comm,dso,sym", "--header"}, dir_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.out.find('\x07'), std::string::npos);
  EXPECT_EQ(text.out.find("caf\xe9"), std::string::npos) << "raw Latin-1 byte";
  EXPECT_NE(text.out.find("caf\\xe9\\x1b]0;owned\\x07"), std::string::npos) << text.out;

  const std::string json_path = dir_ / "report.json";
  const RunResult json = RunTool({kReport, "-i", data_, "--format", "json", "-o", json_path}, dir_);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  // Python's json module decodes the bytes as UTF-8 and parses strictly.
  const RunResult parsed = RunTool(
      {"/usr/bin/python3", "-c", "import json,sys; json.load(open(sys.argv[1], 'rb'))", json_path},
      dir_);
  EXPECT_EQ(parsed.exit_code, 0) << parsed.err;

  const RunResult folded = RunTool({kReport, "-i", data_, "--format", "folded"}, dir_);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_EQ(folded.out.find('\x1b'), std::string::npos);
  for (const std::string& line : Lines(folded.out)) {
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(line.back()))) << line;
  }
}

// The characters a terminal counts: a UTF-8 sequence is one.
size_t Columns(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

// A name with a tab, a line feed and a two-byte character stays on its
// row, escaped, and the columns after it line up under their titles.
TEST_F(HostilePathsTest, NamesWithLineFeedsStayOnTheirRow) {
  const std::string name = "caf\xc3\xa9\tz\nq";
  const std::string shown = "caf\xc3\xa9\\x09z\\x0aq";
  fs::copy_file(kSplit, dir_ / name);
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "-o", data_, "--", dir_ / name, "0.2"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  const RunResult text = RunTool({kReport, "-i", data_, "--sort", "comm,dso"}, dir_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::vector<std::string> lines = Lines(text.out);
  size_t dso_column = std::string::npos;
  size_t rows = 0;
  for (const std::string& line : lines) {
    if (line.find("Shared Object") != std::string::npos) {
      dso_column = Columns(line.substr(0, line.find("Shared Object")));
    }
    const size_t at = line.find(shown);
    if (line.empty() || line[0] == '#' || at == std::string::npos) continue;
    ++rows;
    ASSERT_NE(dso_column, std::string::npos) << text.out;
    const size_t dso = line.find_first_not_of(' ', at + shown.size());
    ASSERT_NE(dso, std::string::npos) << line;
    EXPECT_EQ(Columns(line.substr(0, dso)), dso_column) << text.out;
  }
  EXPECT_GE(rows, 1u) << text.out;
  // No line is a stray piece of a name.
  for (const std::string& line : lines) {
    EXPECT_TRUE(line.empty() || line[0] == '#' || line.find('%') != std::string::npos) << line;
  }
  EXPECT_NE(text.out.find(shown + "  "), std::string::npos) << text.out;
}

}  // namespace
}  // namespace sample::e2e
