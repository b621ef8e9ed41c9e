// PerfDataReader on synthetic perf.data files (perf_data_builder.h): the
// facts and records perf writes, in file and pipe mode, compressed or not,
// and damaged files.
#include "formats/perf_data_reader.h"

#include <unistd.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "formats/perf_data_format.h"
#include "libsample/memory_file.h"
#include "libsample/perf/record_walker.h"
#include "tests/unit/perf_data_builder.h"

namespace sample::format {
namespace {

using testing::Bytes;
using testing::PerfDataContents;
namespace pd = perf_data;

PerfDataHost NoHost() {
  PerfDataHost host;
  host.use_host = false;
  return host;
}

struct Opened {
  MemoryFile file;
  std::unique_ptr<PerfDataReader> reader;
};

Result<Opened> Open(const Bytes& bytes, const PerfDataHost& host = NoHost()) {
  TRY_ASSIGN(auto file, MemoryFile::Create("perf-data-test", bytes));
  TRY_ASSIGN(auto mapped, MappedFile::Open(file.path()));
  TRY_ASSIGN(auto reader, PerfDataReader::Open(file.path(), std::move(mapped), host));
  return Opened{std::move(file), std::move(reader)};
}

// Every chunk's records, decoded, one after another.
Bytes AllRecords(const PerfDataReader& reader) {
  Bytes all;
  Payload payload;
  for (const ChunkRef& chunk : reader.record_chunks()) {
    auto read = reader.ReadPayloadInto(chunk, payload);
    EXPECT_TRUE(read.has_value()) << read.error().message;
    all.insert(all.end(), payload.bytes().begin(), payload.bytes().end());
  }
  return all;
}

Bytes Concat(const std::vector<Bytes>& records) {
  Bytes out;
  for (const Bytes& r : records) out.insert(out.end(), r.begin(), r.end());
  return out;
}

uint64_t OtherCount(const PerfDataReader& reader, const std::string& name) {
  for (const auto& [what, n] : reader.other_records()) {
    if (what == name) return n;
  }
  return 0;
}

// Two events as perf 6.1 writes them: PERF_SAMPLE_ID (not IDENTIFIER),
// sample_id_all, and the records of a short run: the COMM perf synthesized
// for the running command (id 0, time 0), a map, samples of both events.
class PerfDataReaderTest : public ::testing::Test {
 protected:
  PerfDataReaderTest() {
    const uint64_t type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                          PERF_SAMPLE_PERIOD;
    testing::PerfDataEvent clock{testing::MakeAttr(type, true), "cpu-clock", {4451, 4452}};
    clock.attr.type = PERF_TYPE_SOFTWARE;
    clock.attr.config = PERF_COUNT_SW_CPU_CLOCK;
    testing::PerfDataEvent task{testing::MakeAttr(type, true), "task-clock", {4453, 4454}};
    task.attr.type = PERF_TYPE_SOFTWARE;
    task.attr.config = PERF_COUNT_SW_TASK_CLOCK;
    contents_.events = {clock, task};
    contents_.strings = {{pd::kHostname, "builder"},
                         {pd::kOsRelease, "6.1.0-test"},
                         {pd::kVersion, "6.1.187"},
                         {pd::kArch, "x86_64"}};
    contents_.cmdline = {"/usr/bin/perf", "record", "-e", "cpu-clock,task-clock", "./split"};
    contents_.build_ids = {{"/usr/bin/split", "873933f32d9c0000c5af17944221312eba9668ca"},
                           {"[kernel.kallsyms]", "e4f18d9dc1d0e6fc2b17e93e885a647b3c0a6fc1"}};
    kernel_.push_back(testing::MakeComm(clock.attr, 100, 100, "split", false));
    testing::SampleIdFields sid;
    sid.pid = sid.tid = 100;
    sid.time = 1000;
    sid.id = 4451;
    kernel_.push_back(testing::MakeMmap2(
        clock.attr, testing::MakeMmap2Fields("/usr/bin/split", 100, 100, 0x400000, 0x1000), sid));
    for (uint64_t i = 0; i < 40; ++i) {
      testing::SampleFields f;
      f.ip = 0x400100 + i;
      f.pid = f.tid = 100;
      f.time = 2000 + i * 10;
      f.id = i % 2 == 0 ? 4452 : 4453;
      f.period = 1000000;
      kernel_.push_back(testing::MakeSample(i % 2 == 0 ? clock.attr : task.attr, f));
    }
    contents_.records = kernel_;
    contents_.records.insert(contents_.records.begin() + 2, testing::PerfFinishedRound());
    contents_.records.push_back(testing::PerfFinishedRound());
  }

  PerfDataContents contents_;
  std::vector<Bytes> kernel_;  // the kernel records, in order
};

TEST_F(PerfDataReaderTest, FileModeGivesEventsFactsAndKernelRecords) {
  auto opened = Open(testing::BuildPerfDataFile(contents_));
  ASSERT_TRUE(opened) << opened.error().message;
  const PerfDataReader& r = *opened->reader;
  EXPECT_EQ(r.format_name(), "perf.data");
  EXPECT_TRUE(r.finalized());
  EXPECT_TRUE(r.warnings().empty()) << r.warnings().front();
  ASSERT_EQ(r.events().events().size(), 2u);
  EXPECT_EQ(r.events().events()[0].name, "cpu-clock");
  EXPECT_EQ(r.events().events()[1].name, "task-clock");
  EXPECT_EQ(r.events().events()[1].ids, (std::vector<uint64_t>{4453, 4454}));
  EXPECT_EQ(FindMetadata(r.metadata(), "hostname"), "builder");
  EXPECT_EQ(FindMetadata(r.metadata(), "os_release"), "6.1.0-test");
  EXPECT_EQ(FindMetadata(r.metadata(), "recorder_version"), "perf 6.1.187");
  EXPECT_EQ(FindMetadata(r.metadata(), "arch"), "x86_64");
  EXPECT_EQ(FindMetadata(r.metadata(), "cmdline"),
            "/usr/bin/perf record -e cpu-clock,task-clock ./split");
  EXPECT_EQ(r.build_ids(), contents_.build_ids);
  EXPECT_EQ(AllRecords(r), Concat(kernel_)) << "perf's own records are left out";
  EXPECT_EQ(OtherCount(r, "FINISHED_ROUND"), 2u);
  ASSERT_EQ(r.record_chunks().size(), 1u);
  EXPECT_EQ(r.record_chunks()[0].header.record_count, kernel_.size());
  EXPECT_EQ(r.record_chunks()[0].header.time_min, 1000u) << "the synthesized COMM has no time";
  EXPECT_EQ(r.record_chunks()[0].header.time_max, 2390u);
  // The samples name their events through PERF_SAMPLE_ID; the COMM's id 0
  // is the first event's.
  const Bytes records = AllRecords(r);
  std::vector<size_t> events;
  ForEachRecord(std::span(records), [&](const perf_event_header&, std::span<const std::byte> rec) {
    events.push_back(r.events().EventIndexFor(rec).value_or(99));
  });
  ASSERT_EQ(events.size(), kernel_.size());
  EXPECT_EQ(events[0], 0u);
  EXPECT_EQ(events[2], 0u);
  EXPECT_EQ(events[3], 1u);
}

TEST_F(PerfDataReaderTest, PipeModeGivesTheSameFacts) {
  auto file = Open(testing::BuildPerfDataFile(contents_));
  auto pipe = Open(testing::BuildPerfDataPipe(contents_));
  ASSERT_TRUE(file && pipe) << (pipe ? file.error().message : pipe.error().message);
  const PerfDataReader& p = *pipe->reader;
  EXPECT_EQ(p.format_name(), "perf.data (pipe mode)");
  EXPECT_TRUE(p.warnings().empty()) << p.warnings().front();
  ASSERT_EQ(p.events().events().size(), 2u);
  EXPECT_EQ(p.events().events()[1].name, "task-clock");
  EXPECT_EQ(p.events().events()[1].ids, (std::vector<uint64_t>{4453, 4454}));
  EXPECT_EQ(p.metadata(), file->reader->metadata());
  EXPECT_EQ(p.build_ids(), file->reader->build_ids());
  EXPECT_EQ(AllRecords(p), Concat(kernel_));
  EXPECT_EQ(OtherCount(p, "HEADER_ATTR"), 2u);
  EXPECT_EQ(OtherCount(p, "HEADER_BUILD_ID"), 2u);
}

// A name perf sends later (EVENT_UPDATE, kind NAME) wins over none.
TEST_F(PerfDataReaderTest, PipeModeNamesFromEventUpdate) {
  contents_.event_desc = false;
  Bytes update;
  for (uint64_t word : {pd::kEventUpdateName, uint64_t{4453}}) {
    const auto* p = reinterpret_cast<const std::byte*>(&word);
    update.insert(update.end(), p, p + 8);
  }
  const std::string name = "renamed";
  for (char c : name) update.push_back(static_cast<std::byte>(c));
  update.resize(update.size() + 8 - name.size() % 8);
  contents_.records.insert(contents_.records.begin(), testing::PerfUserRecord(pd::kEventUpdate, update));
  auto pipe = Open(testing::BuildPerfDataPipe(contents_));
  ASSERT_TRUE(pipe) << pipe.error().message;
  EXPECT_EQ(pipe->reader->events().events()[0].name, "cpu-clock") << "from type and config";
  EXPECT_EQ(pipe->reader->events().events()[1].name, "renamed");
}

TEST_F(PerfDataReaderTest, CompressedRecordsAcrossFramesAndRecords) {
  for (const bool compressed2 : {false, true}) {
    PerfDataContents c = contents_;
    // Frames of 100 bytes split records; records of 50 bytes split frames.
    c.records = testing::PerfCompressed(kernel_, 100, 50, compressed2);
    c.records.push_back(testing::PerfFinishedRound());
    auto opened = Open(testing::BuildPerfDataFile(c));
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_TRUE(opened->reader->warnings().empty()) << opened->reader->warnings().front();
    EXPECT_EQ(AllRecords(*opened->reader), Concat(kernel_)) << "COMPRESSED2: " << compressed2;
  }
}

// Large files are cut into chunks of about 1 MiB at points a fresh zstd
// stream can start from; each chunk's time range is exact.
TEST_F(PerfDataReaderTest, LargeFilesAreCutIntoChunksThatDecodeAlone) {
  std::vector<Bytes> many;
  const perf_event_attr& attr = contents_.events[0].attr;
  for (uint64_t i = 0; i < 60000; ++i) {
    testing::SampleFields f;
    f.ip = 0x400100 + i % 64;
    f.pid = f.tid = 100;
    f.time = 5000 + i;
    f.id = 4451;
    f.period = 1;
    many.push_back(testing::MakeSample(attr, f));
  }
  for (const bool compressed : {false, true}) {
    PerfDataContents c = contents_;
    c.records = compressed ? testing::PerfCompressed(many, 40000, 30000) : many;
    auto opened = Open(testing::BuildPerfDataFile(c));
    ASSERT_TRUE(opened) << opened.error().message;
    const auto& chunks = opened->reader->record_chunks();
    EXPECT_GE(chunks.size(), 2u) << Concat(many).size() << " bytes";
    uint64_t next_time = 5000;
    for (const ChunkRef& chunk : chunks) {
      EXPECT_EQ(chunk.header.time_min, next_time);
      next_time = chunk.header.time_max + 1;
    }
    EXPECT_EQ(next_time, 5000u + many.size());
    EXPECT_EQ(AllRecords(*opened->reader), Concat(many)) << "compressed: " << compressed;
  }
}

TEST_F(PerfDataReaderTest, AKilledPerfLeavesDataSizeZeroAndIsReadToTheEnd) {
  auto opened = Open(testing::BuildPerfDataFile(contents_, /*data_size_zero=*/true));
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_FALSE(opened->reader->finalized());
  ASSERT_EQ(opened->reader->warnings().size(), 1u);
  EXPECT_NE(opened->reader->warnings()[0].find("data size in the header is 0"), std::string::npos);
  EXPECT_EQ(AllRecords(*opened->reader), Concat(kernel_));
  // No EVENT_DESC (features come last): names from type and config.
  EXPECT_EQ(opened->reader->events().events()[1].name, "task-clock");
}

TEST_F(PerfDataReaderTest, ATornRecordKeepsWhatCameBefore) {
  contents_.records.pop_back();  // the last record is now a sample
  Bytes bytes = testing::BuildPerfDataFile(contents_, /*data_size_zero=*/true);
  bytes.resize(bytes.size() - 12);  // into the last sample
  auto opened = Open(bytes);
  ASSERT_TRUE(opened) << opened.error().message;
  const auto& warnings = opened->reader->warnings();
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[1].find("a record of type 9 claims 48 bytes, 36 are left"), std::string::npos)
      << warnings[1];
  EXPECT_NE(warnings[1].find(fmt::format("offset {}:", bytes.size() - 36)), std::string::npos)
      << warnings[1];
  kernel_.pop_back();
  EXPECT_EQ(AllRecords(*opened->reader), Concat(kernel_));
  EXPECT_EQ(opened->reader->valid_end(), bytes.size() - 36);
}

// A compressed record that expands past 8192 times its size is damage.
TEST_F(PerfDataReaderTest, ACompressionBombIsRefusedWithItsOffset) {
  // 64 MiB of FINISHED_ROUND records, a few KB compressed.
  Bytes rounds;
  for (int i = 0; i < (8 << 20); ++i) {
    const Bytes round = testing::PerfFinishedRound();
    rounds.insert(rounds.end(), round.begin(), round.end());
  }
  Bytes frame(ZSTD_compressBound(rounds.size()));
  frame.resize(ZSTD_compress(frame.data(), frame.size(), rounds.data(), rounds.size(), 19));
  ASSERT_LT(frame.size(), 8000u);
  PerfDataContents c = contents_;
  c.records = {testing::PerfUserRecord(pd::kCompressedRecord, frame)};
  auto opened = Open(testing::BuildPerfDataFile(c));
  ASSERT_TRUE(opened) << opened.error().message;
  ASSERT_FALSE(opened->reader->warnings().empty());
  EXPECT_NE(opened->reader->warnings()[0].find("expand to more than 8192 times"),
            std::string::npos)
      << opened->reader->warnings()[0];
}

TEST_F(PerfDataReaderTest, AuxtraceDataAndUnknownRecordsAreSkippedAndCounted) {
  Bytes aux_header(32);  // size, offset, reference, idx/tid/cpu/reserved
  const uint64_t aux_size = 24;
  std::memcpy(aux_header.data(), &aux_size, 8);
  Bytes aux = testing::PerfUserRecord(pd::kAuxtraceRecord, aux_header);
  aux.resize(aux.size() + aux_size, std::byte{0xff});  // the trace data
  contents_.records.insert(contents_.records.begin() + 1, aux);
  contents_.records.insert(contents_.records.begin() + 1, testing::PerfUserRecord(99, Bytes(5)));
  auto opened = Open(testing::BuildPerfDataFile(contents_));
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_TRUE(opened->reader->warnings().empty()) << opened->reader->warnings().front();
  EXPECT_EQ(AllRecords(*opened->reader), Concat(kernel_));
  EXPECT_EQ(OtherCount(*opened->reader, "AUXTRACE (skipped)"), 1u);
  EXPECT_EQ(OtherCount(*opened->reader, "unknown record type 99 (skipped)"), 1u);
}

TEST_F(PerfDataReaderTest, KernelSymbolsFromPerfsBuildIdCache) {
  namespace fs = std::filesystem;
  const fs::path cache = fs::temp_directory_path() / ("perf-cache-" + std::to_string(getpid()));
  const std::string id = "e4f18d9dc1d0e6fc2b17e93e885a647b3c0a6fc1";
  fs::create_directories(cache / "[kernel.kallsyms]" / id);
  std::ofstream(cache / "[kernel.kallsyms]" / id / "kallsyms") << "ffffffff81000000 T _text\n";
  PerfDataHost host;
  host.buildid_cache = cache;
  host.kernel_build_id = "0000";  // not the recorded kernel
  auto opened = Open(testing::BuildPerfDataFile(contents_), host);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(opened->reader->kernel_symbols(), "ffffffff81000000 T _text\n");
  EXPECT_NE(FindMetadata(opened->reader->metadata(), "kernel_symbols")->find("build-id cache"),
            std::string::npos);

  // Not cached, and the running kernel is another: none, and why.
  fs::remove_all(cache);
  auto none = Open(testing::BuildPerfDataFile(contents_), host);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->reader->kernel_symbols().empty());
  EXPECT_NE(FindMetadata(none->reader->metadata(), "kernel_symbols")->find("not the running"),
            std::string::npos);
}

// On the running kernel (its build-id the recorded one), with nothing in
// perf's cache: the host's table, read later for the sampled addresses
// alone (RecordingFile::host_kallsyms), not now.
TEST_F(PerfDataReaderTest, TheRunningKernelsSymbolsAreLookedUpLater) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("perf-host-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string kallsyms = dir / "kallsyms";
  std::ofstream(kallsyms) << "ffffffff81000000 T _text\n";
  PerfDataHost host;
  host.buildid_cache = dir / "empty cache";
  host.kallsyms = kallsyms;
  host.kernel_build_id = "e4f18d9dc1d0e6fc2b17e93e885a647b3c0a6fc1";  // the recorded one
  auto opened = Open(testing::BuildPerfDataFile(contents_), host);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_TRUE(opened->reader->kernel_symbols().empty());
  EXPECT_EQ(opened->reader->host_kallsyms(), kallsyms);
  EXPECT_EQ(*FindMetadata(opened->reader->metadata(), "kernel_symbols"),
            kallsyms + " (this host runs the recorded kernel)");
  // Another kernel: none.
  host.kernel_build_id = "0000";
  auto other = Open(testing::BuildPerfDataFile(contents_), host);
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_TRUE(other->reader->host_kallsyms().empty());
  fs::remove_all(dir);
}

// A crafted pipe file may declare events without end: the table stops at
// 4096 and says so, and the records after each attribute cost no rebuild.
TEST_F(PerfDataReaderTest, EventsAreBoundedInNumber) {
  PerfDataContents c = contents_;
  c.event_desc = false;
  c.events.clear();
  c.records.clear();
  for (uint64_t i = 0; i < 5000; ++i) {
    c.events.push_back({contents_.events[0].attr, "", {1000 + i}});
  }
  Bytes pipe = testing::BuildPerfDataPipe(c);
  for (int i = 0; i < 100; ++i) {
    for (const Bytes& r : kernel_) pipe.insert(pipe.end(), r.begin(), r.end());
  }
  auto opened = Open(pipe);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(opened->reader->events().events().size(), 4096u);
  ASSERT_FALSE(opened->reader->warnings().empty());
  EXPECT_NE(opened->reader->warnings()[0].find("more than 4096 events"), std::string::npos);
}

TEST(OpenRecordingTest, RefusesBigEndianAndVersionOnePerfData) {
  Bytes big(104);
  const uint64_t magic = pd::kMagicBigEndian;
  std::memcpy(big.data(), &magic, 8);
  auto file = MemoryFile::Create("big-endian", big);
  ASSERT_TRUE(file);
  auto opened = OpenRecording(file->path());
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message.find("offset 0: a perf.data file from a big-endian machine"),
            std::string::npos)
      << opened.error().message;
  std::memcpy(big.data(), "PERFFILE", 8);
  ASSERT_TRUE(file->Assign(big));
  opened = OpenRecording(file->path());
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message.find("version 1 perf.data"), std::string::npos);
}

TEST(OpenRecordingTest, AShortOrAttributeLessPerfDataIsRefusedByName) {
  Bytes header(104);
  const uint64_t magic = pd::kMagic, size = 104;
  std::memcpy(header.data(), &magic, 8);
  std::memcpy(header.data() + 8, &size, 8);
  auto file = MemoryFile::Create("no-attrs", Bytes(header.begin(), header.begin() + 50));
  ASSERT_TRUE(file);
  auto opened = OpenRecording(file->path());
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message.find("offset 0: 50 bytes, fewer than perf.data's 104-byte "
                                        "header"),
            std::string::npos)
      << opened.error().message;
  ASSERT_TRUE(file->Assign(header));
  opened = OpenRecording(file->path());
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message.find("offset 16: attr size 0"), std::string::npos)
      << opened.error().message;
}

}  // namespace
}  // namespace sample::format
