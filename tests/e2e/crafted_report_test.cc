// End to end: recordings crafted to attack whoever reports them (issue 56,
// items 3 and 4). A recording's own tables (an embedded binary's, a
// jitdump's debug info) name a 0600 file as the source of the sampled
// functions: --annotate, --annotate-source and the HTML page must not
// show a line of it, and must say why in one line; a recording of a real
// program with its binary present still shows its source lines. A
// jitdump of two code loads of ~7.9 MiB of nops, a few kilobytes on disk,
// must annotate in memory and output far below the 4.5 GB and 446 MB the
// report once took. A binary found here shows the source files its owner
// vouches for (report/views/source_owners.h), with or without a build-id.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/chunk_codec.h"
#include "formats/embedded_codec.h"
#include "formats/sample_file_writer.h"
#include "libsample/symbols/embedded_binary.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/jitdump_builder.h"
#include "tests/unit/synthetic_records.h"

namespace sample::e2e {
namespace {

namespace st = sample::testing;

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSharedInline = WORKLOAD_SHARED_INLINE_PATH;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
constexpr uint32_t kPid = 4321;
constexpr uint64_t kId = 7;
// The crafted binary: one segment maps file offset kOffset at kVaddr; it is
// on no disk, so the report uses what the recording embedded of it.
const std::string kAppPath = "/nonexistent/crafted/app";
const std::string kAppBuildId = "00112233445566778899aabbccddeeff00112233";
constexpr uint64_t kVaddr = 0x401000, kOffset = 0x1000;
// The JIT's code heap: anonymous executable memory.
constexpr uint64_t kHeap = 0x7f0000000000, kHeapSize = uint64_t{64} << 20;
const std::string kMarker = "SECRET-MARKER-d41d8cd98f00b204";

// A recording built record by record, written with the file writer.
class CraftedRecording {
 public:
  CraftedRecording() : attr_(st::MakeAttr(kSampleType, true)) {}

  void Mmap(const std::string& path, uint64_t addr, uint64_t len, uint64_t pgoff) {
    st::Mmap2Fields m = st::MakeMmap2Fields(path, kPid, kPid, addr, len, pgoff);
    m.prot = PROT_READ_EXEC;
    Add(st::MakeMmap2(attr_, m, st::SampleIdFields{kPid, kPid, 1, kId, 0, 0}));
  }
  void Sample(uint64_t ip, uint64_t time) {
    st::SampleFields f;
    f.id = kId;
    f.ip = ip;
    f.pid = f.tid = kPid;
    f.time = time;
    f.period = 1000000;
    Add(st::MakeSample(attr_, f));
  }
  void Embed(const EmbeddedBinary& binary) { embedded_.push_back(binary); }
  void JitDump(const std::vector<std::byte>& dump) { jitdump_ = dump; }

  bool Write(const std::string& path) {
    auto writer = format::SampleFileWriter::Create(path, {});
    if (!writer) {
      ADD_FAILURE() << writer.error().message;
      return false;
    }
    EventDesc event;
    event.attr = attr_;
    event.name = "cpu-clock";
    event.ids = {kId};
    (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents({event}));
    format::RecordsChunk chunk;
    chunk.records = records_;
    chunk.record_count = count_;
    chunk.time_min = 1;
    chunk.time_max = 1000;
    (*writer)->SubmitRecords(std::move(chunk));
    format::Metadata ids;
    for (const EmbeddedBinary& binary : embedded_) ids.emplace_back(binary.path, binary.build_id);
    (*writer)->Submit(format::ChunkType::kBuildIds, format::EncodeMetadata(ids));
    for (const EmbeddedBinary& binary : embedded_) {
      (*writer)->Submit(format::ChunkType::kEmbeddedBinary, format::EncodeEmbeddedBinary(binary));
    }
    if (!jitdump_.empty()) {
      (*writer)->Submit(format::ChunkType::kJitDump, format::EncodeJitDumpPart(kPid, 0, jitdump_));
    }
    const auto finished = (*writer)->Finish(format::Trailer{});
    EXPECT_TRUE(finished.has_value()) << finished.error().message;
    return finished.has_value();
  }

 private:
  static constexpr uint32_t PROT_READ_EXEC = 5;
  void Add(const st::Bytes& record) {
    st::Append(records_, record);
    ++count_;
  }

  perf_event_attr attr_;
  st::Bytes records_;
  uint64_t count_ = 0;
  std::vector<EmbeddedBinary> embedded_;
  std::vector<std::byte> jitdump_;
};

std::vector<std::byte> Nops(size_t n) { return std::vector<std::byte>(n, std::byte{0x90}); }

// What a run of the report cost: its exit, output and peak memory.
struct Measured {
  int exit_code = -1;
  uint64_t output_bytes = 0;
  long max_rss_kib = 0;
  std::string err;
};

// Runs argv with its standard output in `out` and its error in `err`, and
// reads its own peak RSS from wait4(2) (RUSAGE_CHILDREN would be the peak
// of every child this test binary ever waited for).
Measured RunMeasured(const std::vector<std::string>& argv, const std::string& out,
                     const std::string& err) {
  Measured m;
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(126);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  if (pid < 0) return m;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return m;
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  m.max_rss_kib = usage.ru_maxrss;
  std::error_code ec;
  m.output_bytes = std::filesystem::file_size(out, ec);
  m.err = ReadFile(err);
  return m;
}

class CraftedReportTest : public ::testing::Test {
 protected:
  RunResult Report(std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/env", "XDG_CACHE_HOME=" + (dir_ / "cache"), kReport});
    return RunTool(args, dir_);
  }
  ScratchDir dir_;
};

// The embedded binary's function `leak` and a jitdump's `jit_leak` both
// name `secret` (mode 0600, the marker on its first lines) as their
// source: what the report shows of them holds no line of it, and says in
// one line that the text is not shown and why. (Before: the text annotate
// printed "1    SECRET-MARKER-..." above the sampled instructions, and the
// HTML page embedded the line.)
TEST_F(CraftedReportTest, SourceFilesARecordingsTablesNameAreNeverShown) {
  const std::string secret = dir_ / "secret.c";
  {
    std::ofstream out(secret);
    for (int i = 0; i < 8; ++i) out << kMarker << " line " << i + 1 << "\n";
  }
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  ASSERT_NE(ReadFile(secret).find(kMarker), std::string::npos);  // readable to the report

  EmbeddedBinary app;
  app.path = kAppPath;
  app.build_id = kAppBuildId;
  app.segments = {{kOffset, 0x1000, kVaddr, 0x1000, true}};
  app.functions = {{kVaddr, 0x40, "leak"}};
  app.code = {{kVaddr, Nops(0x40)}};
  for (uint64_t at : {0x4, 0x8}) {
    app.addresses.push_back(
        {kOffset + at, {AddressFrame{"leak", secret, static_cast<uint32_t>(at / 4), false, at}}});
  }
  app.Normalize();

  st::JitDumpBuilder dump(kPid);
  dump.DebugInfo(10, kHeap, {{kHeap, 2, 0, secret}, {kHeap + 0x20, 3, 0, secret}})
      .Load(10, kHeap, "jit_leak", Nops(0x40), 1);

  CraftedRecording recording;
  recording.Mmap(kAppPath, kVaddr, 0x1000, kOffset);
  recording.Mmap("//anon", kHeap, kHeapSize, 0);
  for (uint64_t t = 20; t < 60; t += 2) {
    recording.Sample(kVaddr + (t % 4 == 0 ? 0x4 : 0x8), t);
    recording.Sample(kHeap + 0x24, t + 1);
  }
  recording.Embed(app);
  recording.JitDump(dump.bytes());
  const std::string data = dir_ / "crafted.data";
  ASSERT_TRUE(recording.Write(data));

  for (const std::vector<std::string>& view :
       {std::vector<std::string>{"--annotate", "--no-cache"},
        std::vector<std::string>{"--annotate", "--annotate-source", "--no-cache"},
        std::vector<std::string>{"--annotate", "--format", "json", "--no-cache"}}) {
    std::vector<std::string> args = {"-i", data};
    args.insert(args.end(), view.begin(), view.end());
    const RunResult r = Report(args);
    const std::string what = view.size() > 2 ? view[1] + " " + view[2] : view[0];
    ASSERT_EQ(r.exit_code, 0) << what << "\n" << r.err;
    EXPECT_EQ(r.out.find(kMarker), std::string::npos) << what << "\n" << r.out;
    EXPECT_EQ(r.err.find(kMarker), std::string::npos) << what << "\n" << r.err;
    // Both functions annotated, each saying why its text is not shown.
    EXPECT_NE(r.out.find("leak"), std::string::npos) << what << "\n" << r.out;
    EXPECT_NE(r.out.find("jit_leak"), std::string::npos) << what << "\n" << r.out;
    EXPECT_NE(r.out.find("source text not shown: the recording's embedded tables name them"),
              std::string::npos)
        << what << "\n"
        << r.out;
    EXPECT_NE(r.out.find("source text not shown: the recording's jitdump names them"),
              std::string::npos)
        << what << "\n"
        << r.out;
  }
  // The text annotate still says which line each instruction came from.
  const RunResult text = Report({"-i", data, "--annotate", "leak", "--no-cache"});
  EXPECT_NE(text.out.find("secret.c:1"), std::string::npos) << text.out;

  const std::string page = dir_ / "crafted.html";
  const RunResult html = Report({"-i", data, "-o", page});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string bytes = ReadFile(page);
  ASSERT_NE(bytes.find("\"annotate\":"), std::string::npos);
  EXPECT_EQ(bytes.find(kMarker), std::string::npos);
  EXPECT_NE(bytes.find("\"source_note\":\"source text not shown: the recording's embedded"),
            std::string::npos);
  EXPECT_NE(bytes.find("\"text\":[]"), std::string::npos);  // no source text embedded at all
}

// The same rule on a real program: its binary present (found by path, with
// the recorded build-id), the annotation shows its source lines; the
// binary gone, the code the recording embedded is annotated without them.
TEST_F(CraftedReportTest, ARealBinarysSourceLinesAreShownOnlyWhileItIsHere) {
  const std::filesystem::path copy = dir_ / "shared_inline";
  std::filesystem::copy_file(kSharedInline, copy);
  const std::string data = dir_ / "real.data";
  const RunResult rec = RunTool(
      {kRecord, "-e", "cpu-clock", "-F", "2000", "-o", data, "--", copy.string(), "0.5"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  const RunResult with = Report({"-i", data, "--annotate", "func_a", "--annotate-source"});
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_NE(with.out.find("SPIN LINE"), std::string::npos) << with.out;
  EXPECT_EQ(with.out.find("source text not shown"), std::string::npos) << with.out;
  const std::string page = dir_ / "real.html";
  ASSERT_EQ(Report({"-i", data, "-o", page}).exit_code, 0);
  EXPECT_NE(ReadFile(page).find("SPIN LINE"), std::string::npos);

  std::filesystem::remove(copy);
  const RunResult without =
      Report({"-i", data, "--annotate", "func_a", "--annotate-source", "--no-cache"});
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(without.out.find("SPIN LINE"), std::string::npos) << without.out;
  EXPECT_NE(without.out.find("source text not shown: the recording's embedded tables name them"),
            std::string::npos)
      << without.out;
  ASSERT_EQ(Report({"-i", data, "-o", page}).exit_code, 0);
  EXPECT_EQ(ReadFile(page).find("SPIN LINE"), std::string::npos);
}

// `binary` (a copy of a workload) with the source directory its DWARF
// names ("../tests/workloads" or wherever the build put it) made `dir`,
// padded with slashes to the same length: a build of someone else's whose
// DWARF names the files they choose. False when there is none to change.
bool RedirectSourceDirectory(const std::string& binary, const std::string& dir) {
  std::string bytes = ReadFile(binary);
  const std::string tail = std::string("tests/workloads") + '\0';
  size_t changed = 0;
  for (size_t at = bytes.find(tail); at != std::string::npos; at = bytes.find(tail, at + 1)) {
    const size_t end = at + tail.size() - 1;
    const size_t begin = bytes.rfind('\0', at) + 1;
    if (end - begin < dir.size()) continue;
    bytes.replace(begin, end - begin, dir + std::string(end - begin - dir.size(), '/'));
    ++changed;
  }
  std::ofstream(binary, std::ios::binary | std::ios::trunc) << bytes;
  return changed != 0;
}

// `binary` without its GNU build-id note (its type and name changed): as a
// Go binary or an old build has none. False when it had none.
bool DropBuildId(const std::string& binary) {
  std::string bytes = ReadFile(binary);
  const std::string note("\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16);
  const size_t at = bytes.find(note);
  if (at == std::string::npos) return false;
  bytes.replace(at + 8, 8, std::string("\x7f\0\0\0XNU\0", 8));
  std::ofstream(binary, std::ios::binary | std::ios::trunc) << bytes;
  return true;
}

// Alice (user nobody) builds a program whose DWARF names a root-only 0600
// file as its source; root records it and annotates it with its source
// lines, as text and on the HTML page: no line of the file is shown, and
// the report says that only nobody's files are. The same file made
// nobody's is shown (her own sources), and so is root's file once the
// binary is root's (a binary root or the reporter owns vouches for any
// file it names). Before: the build-id matched, so root printed the file.
TEST_F(CraftedReportTest, AnotherUsersBinaryShowsOnlyThatUsersSourceFiles) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root: the binary is given to user nobody, and root annotates it";
  }
  // A short directory: the DWARF's own is rewritten in place to name it.
  char pattern[] = "/tmp/sXXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string sources = pattern;
  const std::string secret = sources + "/shared_inline.c";
  {
    std::ofstream out(secret);
    for (int i = 0; i < 200; ++i) out << kMarker << " line " << i + 1 << "\n";
  }
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  const std::string app = dir_ / "alice_app";
  std::filesystem::copy_file(kSharedInline, app);
  ASSERT_TRUE(RedirectSourceDirectory(app, sources)) << "no source directory in " << app;
  ASSERT_EQ(chown(app.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(app.c_str(), 0755), 0);
  const std::string data = dir_ / "alice.data";
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "-F", "2000", "-o", data, "--", app, "0.5"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  const std::vector<std::string> annotate = {"-i", data, "--annotate", "func_a",
                                             "--annotate-source"};
  const RunResult root = Report(annotate);
  ASSERT_EQ(root.exit_code, 0) << root.err;
  EXPECT_NE(root.out.find("func_a"), std::string::npos) << root.out;
  EXPECT_EQ(root.out.find(kMarker), std::string::npos) << root.out;
  EXPECT_NE(root.out.find("source text shown only from files of user 65534, the owner of " + app),
            std::string::npos)
      << root.out;
  EXPECT_NE(root.out.find("shared_inline.c:"), std::string::npos) << root.out;  // the place
  const std::string page = dir_ / "alice.html";
  ASSERT_EQ(Report({"-i", data, "-o", page}).exit_code, 0);
  EXPECT_NE(ReadFile(page).find("\"annotate\":"), std::string::npos);
  EXPECT_EQ(ReadFile(page).find(kMarker), std::string::npos);

  // Her own file: shown.
  ASSERT_EQ(chown(secret.c_str(), 65534, 65534), 0);
  const RunResult own = Report(annotate);
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(own.out.find(kMarker), std::string::npos) << own.out;
  ASSERT_EQ(Report({"-i", data, "-o", page}).exit_code, 0);
  EXPECT_NE(ReadFile(page).find(kMarker), std::string::npos);

  // Root's binary: any file it names, root's too.
  ASSERT_EQ(chown(secret.c_str(), 0, 0), 0);
  ASSERT_EQ(chown(app.c_str(), 0, 0), 0);
  const RunResult roots = Report(annotate);
  ASSERT_EQ(roots.exit_code, 0) << roots.err;
  EXPECT_NE(roots.out.find(kMarker), std::string::npos) << roots.out;
  EXPECT_EQ(roots.out.find("source text"), std::string::npos) << roots.out;
  std::filesystem::remove_all(sources);
}

// A binary without a GNU build-id (a Go binary, an old build), found here
// by its path: its source lines are shown (the owner rule holds, and a
// build-id proves nothing of who wrote a file). Before: "the recording
// holds no build-id of it", and no line.
TEST_F(CraftedReportTest, ABinaryWithoutABuildIdFoundHereShowsItsSourceLines) {
  const std::string app = dir_ / "no_build_id";
  std::filesystem::copy_file(kSharedInline, app);
  ASSERT_TRUE(DropBuildId(app)) << "no build-id note in " << app;
  const std::string data = dir_ / "no_id.data";
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "-F", "2000", "-o", data, "--", app, "0.5"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult r = Report({"-i", data, "--annotate", "func_a", "--annotate-source"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("SPIN LINE"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("source text"), std::string::npos) << r.out;
}

// Two jitdump code loads of 7.9 MiB of nops each, sampled a few times:
// the file is a few kilobytes. Annotated (10 functions at most) and on the
// HTML page (50), each shows only the instructions near its samples, and
// says so; the report's peak memory and output stay far below the 4.55 GB
// and 446 MB they were (about 280 bytes of memory per nop shown).
TEST_F(CraftedReportTest, MegabytesOfJitCodeInAFewKilobytesCostWhatIsShown) {
  constexpr uint64_t kLoad = (uint64_t{79} << 20) / 10;  // 7.9 MiB
  // Bytes that do not compress, so that the chunk stays within the
  // reader's 8192:1 ratio, as the 25,057-byte file did.
  std::vector<std::byte> noise(8 << 10);
  std::mt19937 random(56);
  for (std::byte& b : noise) b = static_cast<std::byte>(random());
  st::JitDumpBuilder dump(kPid);
  dump.Load(10, kHeap, "jit_bomb_a", Nops(kLoad), 1)
      .Load(11, kHeap + (uint64_t{16} << 20), "jit_bomb_b", Nops(kLoad), 2)
      .Load(12, kHeap + (uint64_t{32} << 20), "jit_noise", noise, 3);
  CraftedRecording recording;
  recording.Mmap("//anon", kHeap, kHeapSize, 0);
  for (uint64_t t = 20; t < 120; ++t) {
    const uint64_t base = t % 2 == 0 ? kHeap : kHeap + (uint64_t{16} << 20);
    recording.Sample(base + (t * 104729) % kLoad, t);
  }
  recording.JitDump(dump.bytes());
  const std::string data = dir_ / "bomb.data";
  ASSERT_TRUE(recording.Write(data));
  const uint64_t file_size = std::filesystem::file_size(data);
  EXPECT_LT(file_size, uint64_t{64} << 10);

  const std::string env = "XDG_CACHE_HOME=" + (dir_ / "cache");
  const Measured text =
      RunMeasured({"/usr/bin/env", env, kReport, "-i", data, "--annotate", "--no-cache"},
                  dir_ / "annotate.txt", dir_ / "annotate.err");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string out = ReadFile(dir_ / "annotate.txt");
  EXPECT_NE(out.find("<jit_bomb_a>:"), std::string::npos);
  EXPECT_NE(out.find("<jit_bomb_b>:"), std::string::npos);
  EXPECT_NE(out.find(std::to_string(kLoad) + " instructions, over the 262144 shown whole"),
            std::string::npos)
      << out.substr(0, 4000);
  EXPECT_NE(out.find("instructions without samples left out"), std::string::npos);
  // 50 sampled nops a function, 33 rows each at most, ~60 bytes a row.
  EXPECT_LT(text.output_bytes, uint64_t{1} << 20);

  const std::string page = dir_ / "bomb.html";
  const Measured html = RunMeasured({"/usr/bin/env", env, kReport, "-i", data, "-o", page},
                                    dir_ / "html.out", dir_ / "html.err");
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const uint64_t page_size = std::filesystem::file_size(page);
  EXPECT_LT(page_size, uint64_t{4} << 20);
  EXPECT_NE(ReadFile(page).find("\"cut\":\"" + std::to_string(kLoad) + " instructions"),
            std::string::npos);

  if (kSanitized) {
    GTEST_SKIP() << "peak memory is ASan's under a sanitizer (output sizes checked above)";
  }
  // The recording's own 16 MiB of code, decoded and loaded, and little more.
  EXPECT_LT(text.max_rss_kib, 256 * 1024) << "KiB";
  EXPECT_LT(html.max_rss_kib, 256 * 1024) << "KiB";
  RecordProperty("annotate_max_rss_kib", std::to_string(text.max_rss_kib));
  RecordProperty("html_max_rss_kib", std::to_string(html.max_rss_kib));
  std::printf(
      "file %lu bytes; --annotate: %lu bytes out, %ld KiB peak; -o html: %lu bytes, %ld "
      "KiB peak\n",
      static_cast<unsigned long>(file_size), static_cast<unsigned long>(text.output_bytes),
      text.max_rss_kib, static_cast<unsigned long>(page_size), html.max_rss_kib);
}

}  // namespace
}  // namespace sample::e2e
