// Writes the synthetic seeds of the fuzz corpus (tests/fuzz/corpus/NAME/
// seed-*): valid inputs for each target, in its input layout, made with the
// same builders the unit tests use. Run by tests/fuzz/make_seeds.sh, which
// adds seeds taken from real files (ELF fixtures, recordings). Seeds are
// checked in; this only makes them reproducible.
//
// Usage: fuzz_make_seeds CORPUS_DIR
#include <linux/perf_event.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/embedded_codec.h"
#include "formats/perf_data_format.h"
#include "formats/sample_columns.h"
#include "formats/sample_file_writer.h"
#include "tests/unit/go_pclntab_builder.h"
#include "tests/unit/jitdump_builder.h"
#include "tests/unit/perf_data_builder.h"
#include "tests/unit/synthetic_records.h"

namespace sample::testing {
namespace {

namespace fs = std::filesystem;

class SeedWriter {
 public:
  explicit SeedWriter(fs::path corpus) : corpus_(std::move(corpus)) {}

  void Write(const std::string& target, const std::string& name, const Bytes& bytes) {
    const fs::path dir = corpus_ / target;
    fs::create_directories(dir);
    std::ofstream out(dir / ("seed-" + name), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  void Write(const std::string& target, const std::string& name, std::string_view text) {
    const auto* p = reinterpret_cast<const std::byte*>(text.data());
    Write(target, name, Bytes(p, p + text.size()));
  }

 private:
  fs::path corpus_;
};

template <typename T>
void Put(Bytes& out, const T& value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

void PutBytes(Bytes& out, std::span<const std::byte> bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

void PutText(Bytes& out, std::string_view text) {
  PutBytes(out, std::as_bytes(std::span(text.data(), text.size())));
}

constexpr std::string_view kSysEnterWrite =
    "name: sys_enter_write\nID: 840\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n";

// perf_record's input: the attr fields it varies, then the record.
Bytes PerfRecordInput(const perf_event_attr& attr, const Bytes& record) {
  Bytes out;
  Put(out, uint64_t{attr.sample_type});
  Put(out, uint64_t{attr.read_format});
  Put(out, uint64_t{attr.sample_regs_user});
  Put(out, uint64_t{attr.branch_sample_type});
  Put(out, uint8_t(attr.sample_id_all ? 1 : 0));
  PutBytes(out, record);
  return out;
}

void PerfRecordSeeds(SeedWriter& w) {
  // The recorder's layout (record/events/event_opener.cc asks for these).
  constexpr uint64_t kRecorder = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                 PERF_SAMPLE_CALLCHAIN;
  const perf_event_attr attr = MakeAttr(kRecorder, true);
  const SampleIdFields sid{.pid = 41, .tid = 42, .time = 1000, .id = 7, .stream_id = 8, .cpu = 1};
  SampleFields s;
  s.id = 7;
  s.ip = 0x401000;
  s.pid = 41;
  s.tid = 42;
  s.time = 1000;
  s.cpu = 1;
  s.period = 250000;
  s.callchain = {PERF_CONTEXT_KERNEL, 0xffffffff81001234, PERF_CONTEXT_USER, 0x401000, 0x402000};
  w.Write("perf_record", "sample", PerfRecordInput(attr, MakeSample(attr, s)));
  w.Write("perf_record", "mmap2",
          PerfRecordInput(
              attr,
              MakeMmap2(attr, MakeMmap2Fields("/usr/bin/true", 41, 41, 0x400000, 0x1000, 0), sid)));
  Mmap2Fields with_id = MakeMmap2Fields("/lib/libc.so.6", 41, 41, 0x7f0000000000, 0x2000, 0x1000);
  with_id.build_id = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
                      7,    8,    9,    10,   11, 12, 13, 14, 15, 16};
  w.Write("perf_record", "mmap2_build_id", PerfRecordInput(attr, MakeMmap2(attr, with_id, sid)));
  w.Write("perf_record", "comm", PerfRecordInput(attr, MakeComm(attr, 41, 42, "split", true, sid)));
  w.Write("perf_record", "fork", PerfRecordInput(attr, MakeFork(attr, 43, 41, 43, 42, 1100, sid)));
  w.Write("perf_record", "exit", PerfRecordInput(attr, MakeExit(attr, 43, 41, 43, 42, 1200, sid)));
  w.Write("perf_record", "lost", PerfRecordInput(attr, MakeLost(attr, 7, 12, sid)));
  w.Write("perf_record", "lost_samples", PerfRecordInput(attr, MakeLostSamples(attr, 3, sid)));
  w.Write("perf_record", "throttle",
          PerfRecordInput(attr, MakeThrottle(attr, false, 1300, 7, 8, sid)));
  w.Write("perf_record", "switch", PerfRecordInput(attr, MakeSwitch(attr, true, sid, true)));
  w.Write("perf_record", "switch_cpu_wide",
          PerfRecordInput(attr, MakeSwitchCpuWide(attr, false, 41, 43, sid)));

  // A group read with every read_format bit, and the DWARF unwinding fields.
  perf_event_attr group =
      MakeAttr(kRecorder | PERF_SAMPLE_READ | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK |
                   PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_ADDR |
                   PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID,
               true,
               PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
                   PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
  group.sample_regs_user = 0x3;
  SampleFields g = s;
  g.read_values = {2, 5000, 4000, 100, 7, 0, 200, 9, 1};  // nr, times, {value, id, lost} x 2
  g.callchain = {PERF_CONTEXT_USER, 0x401000};
  Bytes extra;
  Put(extra, uint32_t{4});  // RAW: size, then 4 bytes: 8 in all
  Put(extra, uint32_t{0x01020304});
  Put(extra, uint64_t{1});  // BRANCH_STACK: nr = 1, one 24-byte entry
  Put(extra, uint64_t{0x401000});
  Put(extra, uint64_t{0x402000});
  Put(extra, uint64_t{0});
  PutBytes(extra, RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {0x7ffc0000, 0x401000}));
  const std::byte stack[16] = {std::byte{1}, std::byte{2}, std::byte{3}};
  PutBytes(extra, StackUserBlock(stack, 16));
  g.extra = extra;
  w.Write("perf_record", "sample_everything", PerfRecordInput(group, MakeSample(group, g)));
}

void ChunkCodecSeeds(SeedWriter& w) {
  EventDesc event;
  event.attr = MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, true);
  event.name = "cpu-clock";
  event.ids = {7, 8};
  Bytes events{std::byte{0}};
  PutBytes(events, format::EncodeEvents({event, event}));
  w.Write("chunk_codec", "events", events);

  Bytes metadata{std::byte{1}};
  PutBytes(metadata, format::EncodeMetadata({{"hostname", "box"}, {"arch", "x86_64"}}));
  w.Write("chunk_codec", "metadata", metadata);

  format::Trailer trailer;
  trailer.header.record_count = 10;
  trailer.header.sample_count = 8;
  trailer.cpus.resize(2);
  trailer.cpus[1].samples = 8;
  trailer.chunk_offsets = {64, 400, 900};
  Bytes encoded{std::byte{2}};
  PutBytes(encoded, format::EncodeTrailer(trailer));
  w.Write("chunk_codec", "trailer", encoded);

  format::Counts counts;
  counts.elapsed_ns = 300'000'000;
  format::EventCounts clock;
  clock.name = "task-clock";
  clock.attr.type = PERF_TYPE_SOFTWARE;
  clock.attr.config = PERF_COUNT_SW_TASK_CLOCK;
  clock.count = 250'000'000;
  clock.time_enabled = 300'000'000;
  clock.time_running = 200'000'000;
  clock.intervals = {{100'000'000, 90'000'000, 100'000'000, 70'000'000}};
  format::EventCounts cycles;
  cycles.name = "cycles";
  cycles.supported = false;
  counts.events = {clock, cycles};
  Bytes counts_seed{std::byte{3}};
  PutBytes(counts_seed, format::EncodeCounts(counts));
  w.Write("chunk_codec", "counts", counts_seed);

  Bytes control_seed{std::byte{4}};
  PutBytes(control_seed,
           format::EncodeControl({{100, format::kControlEnable, format::kControlAllEvents},
                                  {200, format::kControlDisable, 0}}));
  w.Write("chunk_codec", "control", control_seed);
  Bytes trace_formats{std::byte{6}};
  PutBytes(trace_formats, format::EncodeTraceFormats({{0, 840, std::string(kSysEnterWrite), ""},
                                                      {2, 840, "field:int x;", "count == 512"}}));
  w.Write("chunk_codec", "trace-formats", trace_formats);

  // trace_format: u16 text length, the format text, the raw payload.
  Bytes trace{};
  Put(trace, static_cast<uint16_t>(kSysEnterWrite.size()));
  PutText(trace, kSysEnterWrite);
  for (uint64_t word :
       {uint64_t{840}, uint64_t{1}, uint64_t{1}, uint64_t{0x7ffd0000}, uint64_t{512}}) {
    Put(trace, word);
  }
  w.Write("trace_format", "sys_enter_write", trace);
  Bytes dynamic{};
  constexpr std::string_view kDynamic =
      "name: d\nID: 9\nformat:\n\tfield:__data_loc char[] path;\toffset:8;\tsize:4;\tsigned:0;\n"
      "\tfield:char comm[4];\toffset:12;\tsize:4;\tsigned:0;\n"
      "\tfield:int v[2];\toffset:16;\tsize:8;\tsigned:1;\n";
  Put(dynamic, static_cast<uint16_t>(kDynamic.size()));
  PutText(dynamic, kDynamic);
  Put(dynamic, uint64_t{9});
  Put(dynamic, uint32_t{(4u << 16) | 24u});
  PutText(dynamic, "bashABCDEFGH/tmp");
  w.Write("trace_format", "data_loc", dynamic);
}

EmbeddedBinary SeedBinary() {
  EmbeddedBinary b;
  b.path = "/usr/lib/libseed.so.1";
  b.build_id = "0123456789abcdef0123456789abcdef01234567";
  b.code_omitted = 1;
  b.segments = {{0, 0x1000, 0, 0x1000, false}, {0x1000, 0x800, 0x1000, 0x800, true}};
  b.addresses = {{0x1010,
                  {{"std::vector<int>::push_back", "/usr/include/c++/12/bits/stl_vector.h", 1280,
                    true, UINT64_MAX},
                   {"work(int)", "/src/work.cc", 42, false, 0x10}}},
                 {0x1044, {{"work(int)", "/src/work.cc", 44, false, 0x44}}},
                 {0x1100, {{"libseed.so.1+0x1100", "", 0, false, 0}}},
                 {0x1200, {{"", "", 0, false, UINT64_MAX}}}};
  b.functions = {{0x1000, 0x80, "work(int)"}, {0x1100, 0, "libseed.so.1+0x1100"}};
  X86FrameRule entry;
  entry.usable = true;
  entry.cfa_offset = 8;
  entry.kind[X86FrameRule::kReturnAddress] = X86FrameRule::Kind::kAtCfa;
  entry.offset[X86FrameRule::kReturnAddress] = -8;
  X86FrameRule body = entry;
  body.cfa_base = X86FrameRule::CfaBase::kRbp;
  body.cfa_offset = 16;
  body.kind[X86FrameRule::kRbp] = X86FrameRule::Kind::kAtCfa;
  body.offset[X86FrameRule::kRbp] = -16;
  X86FrameRule unusable;
  unusable.kind[0] = X86FrameRule::Kind::kUndefined;
  b.cfi = {{0x1000, 0x1001, entry}, {0x1001, 0x1080, body}, {0x1100, 0x1140, unusable}};
  b.code = {{0x1000, Bytes(0x80, std::byte{0x90})}, {0x1100, {std::byte{0xc3}}}};
  return b;
}

void EmbeddedCodecSeeds(SeedWriter& w) {
  const EmbeddedBinary binary = SeedBinary();
  for (const uint8_t flags : {0, 2}) {
    Bytes seed{std::byte{flags}};
    PutBytes(seed, format::EncodeEmbeddedBinary(binary));
    w.Write("embedded_codec", flags == 0 ? "binary" : "binary-small-limit", seed);
  }
  Bytes empty{std::byte{0}};
  PutBytes(empty, format::EncodeEmbeddedBinary(EmbeddedBinary{}));
  w.Write("embedded_codec", "binary-empty", empty);
  Bytes map{std::byte{1}};
  PutBytes(map, format::EncodePerfMap({4242,
                                       "7f0000001000 40 jit_countdown\n"
                                       "7f0000001040 20 Interpreter::run(int) const\n"}));
  w.Write("embedded_codec", "perf-map", map);
}

// A dump with every record kind: debug info, loads, a move, an unknown
// record, a close.
Bytes SeedJitDump() {
  JitDumpBuilder b;
  const std::byte unknown[8] = {};
  b.DebugInfo(100, 0x7f0000001000,
              {{0x7f0000001000, 3, 0, "/src/a.js"}, {0x7f0000001010, 4, 0, "\xff"}})
      .Load(101, 0x7f0000001000, "JS:*hot /src/a.js:3:1", 0x40, 1)
      .Load(102, 0x7f0000002000, "JS:~cold /src/a.js:9:1", 0x20, 2)
      .Raw(77, 103, unknown)
      .Move(104, 0x7f0000001000, 0x7f0000003000, 0x40, 1)
      .Load(105, 0x7f0000001000, "reused", 0x10, 3)
      .Close(106);
  return b.bytes();
}

// go_pclntab: u64 .text address, u64 the table's address, u32 size and
// the table, in each layout; u32 size and a data section holding the
// module data, then the funcdata (Go 1.18+ layouts, with an inline tree).
void GoPclntabSeeds(SeedWriter& w) {
  std::vector<GoTableFunction> functions = {
      {"runtime.main", 0x401000, 0x401080, "/go/src/runtime/proc.go", 250},
      {"main.alpha", 0x401080, 0x401110, "/src/app/main.go", 25},
  };
  functions[1].inlined = GoInlinedCall{"main.mix", 40, 0x20};
  const std::pair<GoTableLayout, const char*> layouts[] = {{GoTableLayout::kGo12, "go12"},
                                                           {GoTableLayout::kGo116, "go116"},
                                                           {GoTableLayout::kGo118, "go118"},
                                                           {GoTableLayout::kGo120, "go120"}};
  const uint64_t table_address = 0x480000;
  for (const auto& [layout, name] : layouts) {
    Bytes seed;
    Put(seed, uint64_t{0x401000});
    Put(seed, table_address);
    GoModule module;
    if (layout == GoTableLayout::kGo118 || layout == GoTableLayout::kGo120) {
      module = BuildGoModule(layout, functions, 0x401000, table_address, 0x470000);
    } else {
      module.pclntab = BuildGoPclntab(layout, functions, 0x401000);
    }
    for (const std::vector<std::byte>* part : {&module.pclntab, &module.data}) {
      Put(seed, static_cast<uint32_t>(part->size()));
      seed.insert(seed.end(), part->begin(), part->end());
    }
    seed.insert(seed.end(), module.funcdata.begin(), module.funcdata.end());
    w.Write("go_pclntab", name, seed);
  }
}

void JitDumpSeeds(SeedWriter& w) {
  const Bytes dump = SeedJitDump();
  w.Write("jitdump", "dump", dump);
  // Cut in its last record, as a dump copied while its JIT ran.
  w.Write("jitdump", "torn", Bytes(dump.begin(), dump.end() - 12));
  w.Write("jitdump", "counter-clock",
          JitDumpBuilder(9, kJitDumpArchTimestamp).Load(5, 0x7000, "f", 0x10, 1).bytes());
  // One long file name, then "\xff" (same file) entries, for several
  // loads: a few KB that a copy of the name per entry made ~1 MB.
  std::vector<JitDumpBuilder::Line> lines{{0x7000, 1, 0, std::string(1500, 's')}};
  for (uint32_t i = 1; i < 120; ++i) lines.push_back({0x7000 + i, i + 1, 0, "\xff"});
  JitDumpBuilder same_file;
  for (uint64_t i = 0; i < 2; ++i) same_file.DebugInfo(1, 0x7000, lines).Load(2, 0x7000, "f", 8, i);
  w.Write("jitdump", "same-file", same_file.bytes());
}

// sample_file's input, a flags byte then a file: a file holding embedded
// chunks (until recordings made by make_seeds.sh hold them too).
void EmbeddedFileSeed(SeedWriter& w) {
  const fs::path path = fs::temp_directory_path() / ("fuzz-seed-" + std::to_string(getpid()));
  auto writer = format::SampleFileWriter::Create(path, format::WriterOptions{});
  if (!writer) return;
  EventDesc event;
  event.attr = MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, true);
  event.name = "cpu-clock";
  event.ids = {7};
  (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents({event}));
  (*writer)->Submit(format::ChunkType::kEmbeddedBinary, format::EncodeEmbeddedBinary(SeedBinary()));
  (*writer)->Submit(format::ChunkType::kPerfMap,
                    format::EncodePerfMap({4242, "7f0000001000 40 jit_countdown\n"}));
  // A jitdump in two parts, cut where a record ends.
  const Bytes dump = SeedJitDump();
  const size_t first = JitDumpWholePrefix(dump, dump.size() / 2, true);
  (*writer)->Submit(format::ChunkType::kJitDump,
                    format::EncodeJitDumpPart(4242, 0, std::span(dump).first(first)));
  (*writer)->Submit(format::ChunkType::kJitDump,
                    format::EncodeJitDumpPart(4242, 1, std::span(dump).subspan(first)));
  if (!(*writer)->Finish(format::Trailer{})) return;
  writer->reset();
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(path);
  Bytes seed{std::byte{0}};
  PutText(seed, text);
  // The creation time would change the seed at every run.
  format::FileHeader header;
  std::memcpy(&header, seed.data() + 1, sizeof(header));
  header.created_realtime_ns = 0;
  std::memcpy(seed.data() + 1, &header, sizeof(header));
  w.Write("sample_file", "synthetic-embedded", seed);
}

// report's input (selector 0x40: --annotate with source lines, in text):
// a recording whose embedded binary and jitdump each hold a function of
// hundreds of instructions, sampled in a few places, whose tables name
// files of the machine as their sources: the annotate view's bounds (small
// in report_fuzz.cc) cut them, and no source file is read.
void AnnotateReportSeed(SeedWriter& w) {
  constexpr uint32_t kPid = 4242;
  constexpr uint64_t kApp = 0x401000, kHeap = 0x7f0000000000;
  const perf_event_attr attr = MakeAttr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                            PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
                                        true);
  Bytes records;
  uint64_t count = 0;
  const SampleIdFields id{kPid, kPid, 1, 7, 0, 0};
  Mmap2Fields app = MakeMmap2Fields("/nonexistent/seed/app", kPid, kPid, kApp, 0x1000, 0x1000);
  app.prot = 5;
  Mmap2Fields heap = MakeMmap2Fields("//anon", kPid, kPid, kHeap, 0x10000, 0);
  heap.prot = 7;
  for (const Mmap2Fields& m : {app, heap}) {
    Append(records, MakeMmap2(attr, m, id));
    ++count;
  }
  for (uint64_t t = 20; t < 40; ++t) {
    SampleFields f;
    f.id = 7;
    f.ip = t % 2 == 0 ? kApp + (t * 37) % 0x400 : kHeap + (t * 53) % 0x400;
    f.pid = f.tid = kPid;
    f.time = t;
    f.period = 1000;
    Append(records, MakeSample(attr, f));
    ++count;
  }
  EmbeddedBinary binary;
  binary.path = "/nonexistent/seed/app";
  binary.build_id = "00112233445566778899aabbccddeeff00112233";
  binary.segments = {{0x1000, 0x1000, kApp, 0x1000, true}};
  binary.functions = {{kApp, 0x400, "big"}};
  // push %rbp; mov %rsp,%rbp; add $0x1,%rax; nop, over and over.
  const uint8_t pattern[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xc0, 0x01, 0x90};
  Bytes code(0x400);
  for (size_t i = 0; i < code.size(); ++i) code[i] = std::byte{pattern[i % sizeof(pattern)]};
  binary.code = {{kApp, code}};
  for (uint64_t at = 0; at < 0x400; at += 0x40) {
    binary.addresses.push_back(
        {0x1000 + at, {{"big", "/etc/shadow", static_cast<uint32_t>(1 + at / 0x40), false, at}}});
  }
  binary.Normalize();
  JitDumpBuilder dump(kPid);
  dump.DebugInfo(10, kHeap, {{kHeap, 1, 0, "/etc/passwd"}, {kHeap + 0x200, 2, 0, "\xff"}})
      .Load(10, kHeap, "jit_big", code, 1);

  const fs::path path = fs::temp_directory_path() / ("fuzz-seed-" + std::to_string(getpid()));
  auto writer = format::SampleFileWriter::Create(path, format::WriterOptions{});
  if (!writer) return;
  EventDesc event;
  event.attr = attr;
  event.name = "cpu-clock";
  event.ids = {7};
  (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents({event}));
  format::RecordsChunk chunk;
  chunk.records = records;
  chunk.record_count = count;
  chunk.time_min = 1;
  chunk.time_max = 40;
  (*writer)->SubmitRecords(std::move(chunk));
  (*writer)->Submit(format::ChunkType::kBuildIds,
                    format::EncodeMetadata({{binary.path, binary.build_id}}));
  (*writer)->Submit(format::ChunkType::kEmbeddedBinary, format::EncodeEmbeddedBinary(binary));
  (*writer)->Submit(format::ChunkType::kJitDump, format::EncodeJitDumpPart(kPid, 0, dump.bytes()));
  if (!(*writer)->Finish(format::Trailer{})) return;
  writer->reset();
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(path);
  Bytes seed{std::byte{0x40}};
  PutText(seed, text);
  // The creation time would change the seed at every run.
  format::FileHeader header;
  std::memcpy(&header, seed.data() + 1, sizeof(header));
  header.created_realtime_ns = 0;
  std::memcpy(seed.data() + 1, &header, sizeof(header));
  w.Write("report", "annotate-bounds-view64", seed);
}

void TextSeeds(SeedWriter& w) {
  // kallsyms: u8 address count, the addresses, then the text.
  Bytes kallsyms{std::byte{2}};
  Put(kallsyms, uint64_t{0xffffffff81000010});
  Put(kallsyms, uint64_t{0xffffffffc0001004});
  PutText(kallsyms,
          "ffffffff81000000 T _text\n"
          "ffffffff81000000 T startup_64\n"
          "ffffffff81000100 t secondary_startup_64\n"
          "ffffffff81000200 D some_data\n"
          "ffffffff81000300 W weak_function\n"
          "ffffffffc0001000 t module_function\t[e1000]\n"
          "ffffffffc0002000 t module_other\t[e1000]\n");
  w.Write("kallsyms", "text", kallsyms);
  Bytes restricted{std::byte{1}};
  Put(restricted, uint64_t{0x10});
  PutText(restricted, "0000000000000000 T _text\n0000000000000000 t other\n");
  w.Write("kallsyms", "kptr_restrict", restricted);

  w.Write("perf_map", "map",
          "7f0000001000 40 jit_countdown\n"
          "0x7f0000001040 0x20 Interpreter::run(int) const\n"
          "7f0000001000 10 reused\n"
          "\n"
          "not a line\n"
          "7f0000002000 0 empty\n");

  // pmu_format: u64 value, then a format file or a term list.
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{{"config", "config:0-7\n"},
                                                        {"config1_split", "config1:0-15,32-47"},
                                                        {"bit", "config:21"},
                                                        {"config2", "config2:0-63"},
                                                        {"terms", "event=0x3c,umask=0x00,edge"},
                                                        {"number", "0x1234"}}) {
    Bytes seed;
    Put(seed, uint64_t{0x5a});
    PutText(seed, text);
    w.Write("pmu_format", name, seed);
  }

  // gnu_debuglink: u8 (bit 0: big-endian), then the section contents.
  for (const uint8_t big : {0, 1}) {
    Bytes link{std::byte{big}};
    PutText(link, "split.debug");
    link.resize(link.size() + 1);  // NUL, already 4-aligned at 12 bytes
    Put(link, uint32_t{0x12345678});
    w.Write("gnu_debuglink", big ? "big_endian" : "little_endian", link);
  }
}

// perf.data in file and pipe mode, plain and compressed (frames that split
// records), and a killed perf's (data size 0): two events with
// PERF_SAMPLE_ID, a synthesized COMM, a map, samples with call chains.
void PerfDataSeeds(SeedWriter& w) {
  namespace pd = format::perf_data;
  const uint64_t type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                        PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
  PerfDataContents c;
  c.events = {{MakeAttr(type, true), "cpu-clock", {11, 12}},
              {MakeAttr(type, true), "task-clock", {13}}};
  c.events[1].attr.config = PERF_COUNT_SW_TASK_CLOCK;
  c.strings = {{pd::kHostname, "seed"},
               {pd::kOsRelease, "6.1.0"},
               {pd::kVersion, "6.1.187"},
               {pd::kArch, "x86_64"}};
  c.cmdline = {"perf", "record", "-g"};
  c.build_ids = {{"/bin/seed", "0123456789abcdef0123456789abcdef01234567"}};
  std::vector<Bytes> kernel;
  kernel.push_back(MakeComm(c.events[0].attr, 7, 7, "seed", false));
  SampleIdFields sid;
  sid.pid = sid.tid = 7;
  sid.time = 100;
  sid.id = 11;
  kernel.push_back(
      MakeMmap2(c.events[0].attr, MakeMmap2Fields("/bin/seed", 7, 7, 0x1000, 0x1000), sid));
  for (uint64_t i = 0; i < 8; ++i) {
    SampleFields f;
    f.ip = 0x1100 + i;
    f.pid = f.tid = 7;
    f.time = 200 + i;
    f.id = i % 2 ? 13 : 12;
    f.period = 1000;
    f.callchain = {PERF_CONTEXT_USER, 0x1100 + i, 0x1200};
    kernel.push_back(MakeSample(c.events[i % 2].attr, f));
  }
  c.records = kernel;
  c.records.push_back(PerfFinishedRound());
  w.Write("perf_data", "file", BuildPerfDataFile(c));
  w.Write("perf_data", "pipe", BuildPerfDataPipe(c));
  w.Write("perf_data", "killed", BuildPerfDataFile(c, true));
  PerfDataContents z = c;
  z.records = PerfCompressed(kernel, 200, 120);
  w.Write("perf_data", "compressed", BuildPerfDataFile(z));
  z.records = PerfCompressed(kernel, 200, 120, true);
  w.Write("perf_data", "compressed2-pipe", BuildPerfDataPipe(z));
}

// disasm: u8 flags (bit 0: i386, bit 1: Intel), u64 address, then code:
// a function with a prologue, branches and a call; a jump table; padding;
// bytes no decoder knows and AVX-512 ones Capstone 4 does not; a truncated
// last instruction.
void DisasmSeeds(SeedWriter& w) {
  const auto seed = [&](const std::string& name, uint8_t flags, uint64_t address,
                        std::initializer_list<uint8_t> code) {
    Bytes bytes{std::byte{flags}};
    Put(bytes, address);
    for (const uint8_t byte : code) bytes.push_back(std::byte{byte});
    w.Write("disasm", name, bytes);
  };
  const std::initializer_list<uint8_t> function = {
      0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0x89, 0x7d, 0xfc, 0x83,
      0x7d, 0xfc, 0x00, 0x75, 0x07, 0xb8, 0x00, 0x00, 0x00, 0x00, 0xeb, 0x0a,
      0x8b, 0x45, 0xfc, 0x89, 0xc7, 0xe8, 0xde, 0xff, 0xff, 0xff, 0xc9, 0xc3};
  seed("function", 0, 0x1000, function);
  seed("function-intel", 2, 0x1000, function);
  seed("jump-table", 0, 0x2000,
       {0x83, 0xff, 0x03, 0x77, 0x10, 0x48, 0x8d, 0x05, 0xf0, 0x0f, 0x00, 0x00, 0x48, 0x63,
        0x04, 0xb8, 0x48, 0x01, 0xc0, 0xff, 0xe0, 0x3e, 0xff, 0xe0, 0xff, 0x24, 0xc5, 0x00,
        0x20, 0x00, 0x00, 0xff, 0x15, 0x00, 0x10, 0x00, 0x00, 0xff, 0xd0, 0xc3});
  seed("padding", 0, 0x3000,
       {0xc3, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0x66, 0x66,
        0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f, 0x1f, 0x40, 0x00,
        0x0f, 0x1f, 0x44, 0x00, 0x00, 0x66, 0x90, 0x90, 0xcc, 0xcc, 0x00, 0x00});
  seed("bad-and-evex", 0, 0x4000,
       {0x90, 0x06, 0x0e, 0x27, 0x60, 0xd4, 0x0a, 0xc5, 0xfb, 0x93, 0xc0, 0xc4, 0xe1,
        0xfb, 0x92, 0xcb, 0x62, 0xf3, 0x7d, 0x40, 0x3f, 0x40, 0x3f, 0x00, 0x62, 0xe3,
        0x75, 0x20, 0x25, 0x54, 0x17, 0xff, 0xde, 0x0f, 0x01, 0xee, 0x48, 0x8b, 0x05});
  seed("i386", 1, 0x8000, {0x55, 0x89, 0xe5, 0x83, 0xec, 0x08, 0x8b, 0x45, 0x08, 0x89, 0x04, 0x24,
                           0xe8, 0xef, 0xff, 0xff, 0xff, 0xff, 0x24, 0x85, 0x00, 0x30, 0x00, 0x00,
                           0x8d, 0x74, 0x26, 0x00, 0xc4, 0x00, 0xd9, 0xc9, 0xdc, 0xc9, 0xc9, 0xc3});
  seed("x87-strings-intel", 3, 0xfffffff0,
       {0xd8, 0xc1, 0xde, 0xc9, 0xdf, 0xe9, 0x9b, 0xdf, 0xe0, 0xf3, 0xab, 0xa4, 0xa6,
        0x6c, 0x6f, 0x67, 0x8b, 0x00, 0xa1, 0x00, 0x00, 0x00, 0x00, 0xe8, 0x00, 0x00});
}

// sample_columns: u8 mode, the event's sample_type, sample_regs_user and
// sample_stack_user, then -g samples (rbp, rsp, rip and a stack copy) of two
// threads, one taken in the kernel; as records (mode 0) and encoded (mode 1).
void SampleColumnsSeeds(SeedWriter& w) {
  constexpr uint64_t kType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                             PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                             PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                             PERF_SAMPLE_STACK_USER;
  constexpr uint64_t kRegs = 1u << 6 | 1u << 7 | 1u << 8;
  constexpr uint32_t kStack = 32;
  perf_event_attr attr = MakeAttr(kType, true);
  attr.sample_regs_user = kRegs;
  attr.sample_stack_user = kStack;
  Bytes records;
  for (uint64_t i = 0; i < 6; ++i) {
    SampleFields s;
    s.id = 1;
    s.tid = s.pid = 40 + static_cast<uint32_t>(i % 2);
    s.ip = 0x401000 + 16 * i;
    s.time = 1'000'000 + 250'000 * i + i % 3;
    s.cpu = 1;
    s.period = 250'000;
    const uint64_t sp = 0x7ffd1000 - 64 * (i % 3);
    s.callchain = {PERF_CONTEXT_USER, s.ip, 0x402000};
    if (i == 3) {
      s.ip = 0xffffffff81001234;
      s.callchain = {PERF_CONTEXT_KERNEL, s.ip, PERF_CONTEXT_USER, 0x401030, 0x402000};
    }
    s.extra = RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {sp + 48, sp, 0x401000 + 16 * i});
    const Bytes stack = StackUserBlock(std::vector<std::byte>(kStack, std::byte{0x11}), kStack);
    s.extra.insert(s.extra.end(), stack.begin(), stack.end());
    const Bytes sample = MakeSample(attr, s);
    records.insert(records.end(), sample.begin(), sample.end());
  }
  auto input = [&](uint8_t mode, const Bytes& bytes) {
    Bytes out;
    Put(out, mode);
    Put(out, kType);
    Put(out, kRegs);
    Put(out, kStack);
    PutBytes(out, bytes);
    return out;
  };
  w.Write("sample_columns", "records", input(0, records));
  Bytes encoded = records;
  format::EncodeSampleColumns(encoded, EventTable({EventDesc{attr, "cpu-clock", {1}}}));
  w.Write("sample_columns", "encoded", input(1, encoded));
  // The time column split (mode bit 2), as kChunkFlagSplitTimeColumn chunks hold it.
  w.Write("sample_columns", "records-split", input(4, records));
  Bytes split = records;
  format::EncodeSampleColumns(split, EventTable({EventDesc{attr, "cpu-clock", {1}}}),
                              {.split_time = true});
  w.Write("sample_columns", "encoded-split", input(5, split));
  // And stack pointers as places among the recent ones (mode bit 3), as
  // the writer codes them.
  w.Write("sample_columns", "records-recent-sp", input(12, records));
  Bytes recent = records;
  format::EncodeSampleColumns(recent, EventTable({EventDesc{attr, "cpu-clock", {1}}}),
                              {.split_time = true, .recent_sp = true});
  w.Write("sample_columns", "encoded-recent-sp", input(13, recent));
}

}  // namespace
}  // namespace sample::testing

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  sample::testing::SeedWriter writer(argv[1]);
  sample::testing::PerfRecordSeeds(writer);
  sample::testing::ChunkCodecSeeds(writer);
  sample::testing::EmbeddedCodecSeeds(writer);
  sample::testing::EmbeddedFileSeed(writer);
  sample::testing::AnnotateReportSeed(writer);
  sample::testing::TextSeeds(writer);
  sample::testing::JitDumpSeeds(writer);
  sample::testing::GoPclntabSeeds(writer);
  sample::testing::PerfDataSeeds(writer);
  sample::testing::DisasmSeeds(writer);
  sample::testing::SampleColumnsSeeds(writer);
  return 0;
}
