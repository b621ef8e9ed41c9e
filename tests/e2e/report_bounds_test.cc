// End to end: crafted recordings of a few KB that made sample-report's
// memory and time grow far beyond the file (issue 56 item 4), each made
// here and reported by the built tool, whose peak memory is asserted:
//   - 100,000 inlined frames per address (every view quadratic in them,
//     killed at 120 s with 1.2 GB);
//   - perf-map names of 1 MiB printed at every frame by --script, which
//     built its whole output before writing a byte (`| head -c 100` too);
//   - embedded tables that decode to most of the 1 GiB a file was allowed,
//     allowed again for every file of -i F F.
// Each child runs with a CPU-time and an address-space limit, so that the
// unbounded behaviour fails the test (killed, or out of memory) rather than
// hanging it or exhausting the machine; neither limit is a measurement.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "formats/embedded_codec.h"
#include "formats/sample_file_format.h"
#include "formats/sample_file_writer.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/synthetic_records.h"

namespace sample::e2e {
namespace {

namespace st = sample::testing;

const std::string kReport = SAMPLE_REPORT_PATH;
constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CPU |
                                 PERF_SAMPLE_PERIOD;
constexpr uint32_t kPid = 100;

// What one run of the report gave.
struct ReportRun {
  int status = -1;         // shell style: 128 + signal when killed
  long peak_kib = 0;       // its peak resident set
  uint64_t out_bytes = 0;  // stdout read (all of it, or up to the limit)
  std::string out;         // the first 1 MiB of stdout
  std::string err;
};

// Runs argv with stdout into a pipe read here; after `read_limit` bytes the
// pipe is closed, as `| head -c N` does. The child gets 60 s of CPU and
// 4 GiB of address space (guards, see the top of the file).
ReportRun RunReport(const std::vector<std::string>& argv, const ScratchDir& dir,
                    uint64_t read_limit = UINT64_MAX) {
  ReportRun run;
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return run;
  const std::string err_path = dir / "report.err";
  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit cpu{60, 60};
    const rlimit space{rlim_t{4} << 30, rlim_t{4} << 30};
    setrlimit(RLIMIT_CPU, &cpu);
    if (!kSanitized) setrlimit(RLIMIT_AS, &space);  // ASan reserves terabytes
    signal(SIGPIPE, SIG_DFL);
    dup2(out[1], STDOUT_FILENO);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(err, STDERR_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  std::vector<char> buffer(size_t{64} << 10);
  while (run.out_bytes < read_limit) {
    const ssize_t n = read(out[0], buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (run.out.size() < (size_t{1} << 20)) run.out.append(buffer.data(), static_cast<size_t>(n));
    run.out_bytes += static_cast<uint64_t>(n);
  }
  close(out[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.peak_kib = usage.ru_maxrss;
  run.err = ReadFile(err_path);
  return run;
}

// A recording of process kPid ("crafted"): one executable mapping, then
// samples with user call chains; extra chunks (embedded tables) after.
class CraftedRecording {
 public:
  CraftedRecording() : attr_(st::MakeAttr(kSampleType, true)) {
    Add(st::MakeComm(attr_, kPid, kPid, "crafted", true, Id(1)));
  }

  void Map(const std::string& path, uint64_t start, uint64_t size) {
    Add(st::MakeMmap2(attr_, st::MakeMmap2Fields(path, kPid, kPid, start, size, 0), Id(2)));
  }
  // `samples` samples of this chain (leaf first), a microsecond apart.
  void Samples(size_t samples, const std::vector<uint64_t>& chain) {
    for (size_t i = 0; i < samples; ++i) {
      st::SampleFields f;
      f.id = 7;
      f.ip = chain.front();
      f.pid = f.tid = kPid;
      f.time = time_ += 1000;
      f.period = 1000;
      f.callchain = {PERF_CONTEXT_USER};
      f.callchain.insert(f.callchain.end(), chain.begin(), chain.end());
      Add(st::MakeSample(attr_, f));
    }
  }
  void Chunk(format::ChunkType type, std::vector<std::byte> payload) {
    chunks_.emplace_back(type, std::move(payload));
  }
  // Writes the file; its size, or 0 when it could not be written.
  uint64_t Write(const std::string& path) const {
    auto writer = format::SampleFileWriter::Create(path, format::WriterOptions{});
    if (!writer) return 0;
    EventDesc event;
    event.attr = attr_;
    event.name = "cpu-clock";
    event.ids = {7};
    (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents({event}));
    format::RecordsChunk chunk;
    chunk.records = records_;
    chunk.record_count = count_;
    chunk.time_min = 1;
    chunk.time_max = time_;
    (*writer)->SubmitRecords(std::move(chunk));
    for (const auto& [type, payload] : chunks_) (*writer)->Submit(type, payload);
    if (!(*writer)->Finish(format::Trailer{})) return 0;
    writer->reset();
    struct stat info {};
    return stat(path.c_str(), &info) == 0 ? static_cast<uint64_t>(info.st_size) : 0;
  }

 private:
  st::SampleIdFields Id(uint64_t time) { return st::SampleIdFields{kPid, kPid, time, 7, 0, 0}; }
  void Add(const st::Bytes& record) {
    st::Append(records_, record);
    ++count_;
  }

  perf_event_attr attr_;
  st::Bytes records_;
  uint64_t count_ = 0;
  uint64_t time_ = 10;
  std::vector<std::pair<format::ChunkType, std::vector<std::byte>>> chunks_;
};

// The text of `text`'s line that starts (after spaces) with `label`.
std::string LineOf(const std::string& text, const std::string& label) {
  for (const std::string& line : Lines(text)) {
    if (line.find_first_not_of(' ') != std::string::npos &&
        line.substr(line.find_first_not_of(' ')).starts_with(label)) {
      return line;
    }
  }
  return "";
}

// A kEmbeddedBinary payload written field by field (the layout in
// formats/sample_file_format.h), so that this test's own memory stays
// small: a child's peak resident set counts what its parent had at the
// fork, and the EmbeddedBinary these bytes stand for takes gigabytes.
class EmbeddedPayload {
 public:
  // The header and the string table; no segments.
  EmbeddedPayload(const std::string& path, const std::vector<std::string>& strings) {
    S(path).S("").V(0).V(0).V(strings.size());
    for (const std::string& text : strings) S(text);
    V(0);
  }
  EmbeddedPayload& V(uint64_t value) {
    for (; value >= 0x80; value >>= 7) bytes_.push_back(static_cast<std::byte>(value | 0x80));
    bytes_.push_back(static_cast<std::byte>(value));
    return *this;
  }
  EmbeddedPayload& S(const std::string& text) {
    V(text.size());
    for (char c : text) bytes_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  // A frame: string `name` (inlined or not), file string 0, line, offset.
  EmbeddedPayload& Frame(uint64_t name, bool inlined, uint64_t line, uint64_t symbol_offset) {
    return V(name << 1 | (inlined ? 1 : 0)).V(0).V(line).V(symbol_offset + 1);
  }
  // No functions, CFI rows or code after the addresses.
  std::vector<std::byte> Finish() {
    V(0).V(0).V(0);
    return std::move(bytes_);
  }

 private:
  std::vector<std::byte> bytes_;
};

// A binary the report cannot find on disk, whose embedded tables name two
// addresses (a leaf at 0x10 and a return address at 0x21) by 100,000
// inlined calls each and then the function holding them. 22 KB stored.
TEST(ReportBoundsTest, DeepInlineChainsAreCut) {
  ScratchDir dir;
  constexpr uint64_t kBase = 0x400000;
  constexpr size_t kDepth = 100000;
  const std::string binary = "/nonexistent/crafted-inline.so";
  // Strings: "" (every file), inl0 ... inl7, leaf, caller.
  std::vector<std::string> strings = {""};
  for (int i = 0; i < 8; ++i) strings.push_back("inl" + std::to_string(i));
  strings.insert(strings.end(), {"leaf", "caller"});
  EmbeddedPayload payload(binary, strings);
  payload.V(2);  // addresses: 0x10 and 0x20 (the gap from 0x10, minus 1)
  for (uint64_t gap : {0x10, 0xf}) {
    payload.V(gap).V(kDepth);
    for (size_t i = 0; i + 1 < kDepth; ++i) payload.Frame(1 + i % 8, true, 0, UINT64_MAX);
    payload.Frame(gap == 0x10 ? 9 : 10, false, kDepth, gap == 0x10 ? 0x10 : 0);
  }
  CraftedRecording crafted;
  crafted.Map(binary, kBase, 0x1000);
  crafted.Samples(2000, {kBase + 0x10, kBase + 0x21});
  crafted.Chunk(format::ChunkType::kEmbeddedBinary, payload.Finish());
  const std::string path = dir / "inline.data";
  const uint64_t size = crafted.Write(path);
  ASSERT_GT(size, 0u);
  ASSERT_LT(size, 64u << 10) << "a small file";

  // The flat profile, the children view with its call graph, one row per
  // inlined call (--sort inline), --script, the HTML page: each holds the
  // whole chain of every sample.
  const std::vector<std::vector<std::string>> views = {
      {"--stdio"},
      {"--stdio", "--children", "-g"},
      {"--stdio", "--children", "--sort", "inline"},
      {"--script"},
      {"--stats"},
      {"--format", "html", "-o", dir / "page.html"}};
  for (const std::vector<std::string>& view : views) {
    std::vector<std::string> argv = {kReport, "-i", path};
    argv.insert(argv.end(), view.begin(), view.end());
    const ReportRun run = RunReport(argv, dir);
    const std::string what = view[0] + (view.size() > 1 ? " " + view[1] : "");
    ASSERT_EQ(run.status, 0) << what << ": " << run.err;
    EXPECT_NE(run.err.find("more than 256 frames of inlined calls"), std::string::npos)
        << what << ": " << run.err;
    if (!kSanitized) {  // ASan's memory is its own
      EXPECT_LT(run.peak_kib, 300 * 1024) << what;
    }
    if (view[0] == "--stats") {
      EXPECT_NE(LineOf(run.out, "inline chains cut at 256 frames:").find(" 2 (addresses;"),
                std::string::npos)
          << run.out;
    } else if (view.size() == 1 && view[0] == "--stdio") {
      EXPECT_NE(LineOf(run.out, "100.00%").find("leaf"), std::string::npos) << run.out;
    } else if (view[0] == "--script") {
      // Each sample: both addresses' innermost 255 calls and their holders.
      EXPECT_NE(run.out.find(" leaf+0x10 (/nonexistent/crafted-inline.so)\n"), std::string::npos)
          << run.out.substr(0, 300);
      const size_t first_entry = run.out.find("\n\n");
      ASSERT_NE(first_entry, std::string::npos);
      EXPECT_EQ(Lines(run.out.substr(0, first_entry)).size(), 1 + 2 * 256u);
    }
  }
}

// A JIT's perf map names its function with 1 MiB (a map within the MiB a
// chunk may decompress to at any ratio, so 1 KB stored): --script prints
// the name cut at 4 KiB, streams the text as it goes (`| head -c 100`
// ends the run at once, its memory the recording's), and its whole output
// is in proportion to the samples and frames, not to the name.
TEST(ReportBoundsTest, ScriptStreamsAndCutsLongNames) {
  ScratchDir dir;
  constexpr uint64_t kJit = 0x7f0000000000;
  constexpr size_t kFrames = 64, kSamples = 600;
  const std::string name = "jit0_" + std::string((1 << 20) - 200, 'n');
  CraftedRecording crafted;
  crafted.Map("//anon", kJit, 0x10000);
  crafted.Samples(kSamples, std::vector<uint64_t>(kFrames, kJit + 0x11));
  crafted.Chunk(format::ChunkType::kPerfMap,
                format::EncodePerfMap({kPid, fmt::format("{:x} 100 {}\n", kJit, name)}));
  const std::string path = dir / "names.data";
  const uint64_t size = crafted.Write(path);
  ASSERT_GT(size, 0u);
  ASSERT_LT(size, 64u << 10) << "a small file";

  // The whole script: every frame's name cut, the text bounded by what
  // the samples print (an entry line, then a line per frame of at most
  // the 4 KiB name, its marker, address, offset and DSO).
  const ReportRun all = RunReport({kReport, "-i", path, "--script"}, dir);
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_LT(all.out_bytes, kSamples * (100 + kFrames * (4096 + 120)));
  EXPECT_GT(all.out_bytes, kSamples * kFrames * 4096);
  EXPECT_NE(all.out.find(fmt::format(" {}[... cut at 4096 of {} bytes]+0x11 (/tmp/perf-{}.map)\n",
                                     name.substr(0, 4096), name.size(), kPid)),
            std::string::npos)
      << all.out.substr(0, 300);
  // Streamed: before it wrote the first byte the report built all of it
  // (here 160 MB, with the names cut), and more as a copy made showable.
  if (!kSanitized) {  // ASan's memory is its own
    EXPECT_LT(all.peak_kib, 100 * 1024);
  }

  // A reader that goes away after 100 bytes ends the report: SIGPIPE (or,
  // where it is ignored, EPIPE and exit status 1, quietly).
  const ReportRun head = RunReport({kReport, "-i", path, "--script"}, dir, 100);
  EXPECT_TRUE(head.status == 128 + SIGPIPE || head.status == 1) << head.status << head.err;
  EXPECT_GE(head.out_bytes, 100u);
  EXPECT_EQ(head.err.find("writing"), std::string::npos) << head.err;
  if (!kSanitized) {  // ASan's memory is its own
    EXPECT_LT(head.peak_kib, 100 * 1024);
  }
}

// Embedded binaries whose frames name one 64 KiB string 2,000 times each:
// 4 chunks of 250 MiB decoded in a few KB. A file may decode what its
// size honestly holds (kEmbeddedDecodedFloor + kMaxEmbeddedDecodedRatio x
// its bytes), and -i F F shares that budget rather than taking it twice.
TEST(ReportBoundsTest, EmbeddedTablesAreBoundedOverTheSetOfFiles) {
  ScratchDir dir;
  CraftedRecording crafted;
  crafted.Map("/nonexistent/crafted-tables.so", 0x400000, 0x1000);
  crafted.Samples(10, {0x400010});
  const std::string name(64 << 10, 'n');
  for (int chunk = 0; chunk < 4; ++chunk) {
    EmbeddedPayload payload("/nonexistent/crafted-tables-" + std::to_string(chunk) + ".so", {name});
    payload.V(2000);
    for (uint64_t i = 0; i < 2000; ++i)
      payload.V(0).V(1).Frame(0, false, 1, 0);  // gap 0: the next offset
    crafted.Chunk(format::ChunkType::kEmbeddedBinary, payload.Finish());
  }
  const std::string path = dir / "tables.data";
  const uint64_t size = crafted.Write(path);
  ASSERT_GT(size, 0u);
  ASSERT_LT(size, 64u << 10) << "a small file";
  // Three of them, as a glob of rotated files would name them.
  std::vector<std::string> files = {path};
  for (const char* copy : {"tables.1.data", "tables.2.data"}) {
    files.push_back(dir / copy);
    ASSERT_EQ(RunTool({"/bin/cp", path, files.back()}, dir).exit_code, 0);
  }
  for (size_t count : {1, 3}) {
    std::vector<std::string> argv = {kReport, "--stats", "-i"};
    argv.insert(argv.end(), files.begin(), files.begin() + static_cast<ptrdiff_t>(count));
    const ReportRun run = RunReport(argv, dir);
    ASSERT_EQ(run.status, 0) << run.err;
    // Every chunk is over what the files' few KB may decode to.
    size_t skipped = 0;
    for (const std::string& line : Lines(run.err)) {
      skipped += line.find("embedded binary skipped") != std::string::npos ? 1 : 0;
    }
    EXPECT_EQ(skipped, 4 * count) << run.err;
    if (!kSanitized) {  // ASan's memory is its own
      EXPECT_LT(run.peak_kib, 150 * 1024) << count << " files";
    }
  }
}

}  // namespace
}  // namespace sample::e2e
