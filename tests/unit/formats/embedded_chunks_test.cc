// kEmbeddedBinary and kPerfMap chunks in a sample.data file: written by
// the writer, read back by SampleFileReader and OpenRecording, a malformed
// one skipped with a warning while the good ones are kept.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "formats/decode_budget.h"
#include "formats/embedded_codec.h"
#include "formats/recording_file.h"
#include "formats/recording_set.h"
#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "tests/unit/synthetic_records.h"

namespace sample::format {
namespace {

namespace st = sample::testing;
using Bytes = std::vector<std::byte>;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

EmbeddedBinary Binary(const std::string& path, uint64_t base) {
  EmbeddedBinary b;
  b.path = path;
  b.build_id = "00112233445566778899aabbccddeeff00112233";
  b.segments = {{0, 0x2000, 0, 0x2000, true}};
  b.addresses = {
      {base + 0x10,
       {{"inner", "/src/a.h", 3, true, UINT64_MAX}, {"outer", "/src/a.cc", 9, false, 0x10}}},
      {base + 0x20, {{"outer", "/src/a.cc", 11, false, 0x20}}}};
  b.functions = {{base, 0x40, "outer"}};
  X86FrameRule rule;
  rule.usable = true;
  rule.cfa_offset = 8;
  rule.kind[X86FrameRule::kReturnAddress] = X86FrameRule::Kind::kAtCfa;
  rule.offset[X86FrameRule::kReturnAddress] = -8;
  b.cfi = {{base, base + 0x40, rule}};
  b.code = {{base, Bytes(0x40, std::byte{0x90})}};
  b.code_omitted = 1;
  return b;
}

class EmbeddedChunksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "embedded_chunks_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
};

TEST_F(EmbeddedChunksTest, ChunksReadBackEqualAndAMalformedOneCostsOnlyItself) {
  const EmbeddedBinary lib = Binary("/usr/lib/libwork.so", 0x1000);
  const EmbeddedBinary app = Binary("/usr/bin/app", 0x401000);
  const RecordedPerfMap jit{4242, "7f0000001000 40 jit_countdown\n"};
  const RecordedPerfMap other{7, "7f0000002000 10 other\n"};
  for (int level : {1, 0}) {
    const std::string path = dir_ + "/level" + std::to_string(level) + ".sample";
    auto writer = SampleFileWriter::Create(path, WriterOptions{.zstd_level = level});
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    EventDesc event;
    event.attr = st::MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TIME, true);
    event.name = "cpu-clock";
    (*writer)->Submit(ChunkType::kEvents, EncodeEvents({event}));
    (*writer)->Submit(ChunkType::kEmbeddedBinary, EncodeEmbeddedBinary(lib));
    (*writer)->Submit(ChunkType::kPerfMap, EncodePerfMap(jit));
    // A checksum-valid chunk whose tables are cut short, and a perf map
    // too short for its pid.
    Bytes cut = EncodeEmbeddedBinary(Binary("/usr/lib/libcut.so", 0));
    cut.resize(cut.size() - 3);
    (*writer)->Submit(ChunkType::kEmbeddedBinary, cut);
    (*writer)->Submit(ChunkType::kPerfMap, Bytes(2));
    (*writer)->Submit(ChunkType::kEmbeddedBinary, EncodeEmbeddedBinary(app));
    (*writer)->Submit(ChunkType::kPerfMap, EncodePerfMap(other));
    ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
    writer->reset();

    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    auto recording = OpenRecording(path);
    ASSERT_TRUE(recording.has_value()) << recording.error().message;
    for (const RecordingFile* file : {static_cast<const RecordingFile*>(&*reader),
                                      static_cast<const RecordingFile*>(recording->get())}) {
      const EmbeddedBinaries& binaries = file->embedded_binaries();
      ASSERT_EQ(binaries.size(), 2u);
      EXPECT_EQ(*binaries.all()[0], lib);
      EXPECT_EQ(*binaries.all()[1], app);
      EXPECT_EQ(binaries.Find("/usr/bin/app", app.build_id), binaries.all()[1].get());
      EXPECT_EQ(binaries.Find("/usr/lib/libcut.so", ""), nullptr);
      EXPECT_EQ(file->perf_maps(), (std::vector<RecordedPerfMap>{jit, other}));
      const auto& warnings = file->warnings();
      ASSERT_EQ(warnings.size(), 2u);
      EXPECT_TRUE(Contains(warnings[0], path + ": embedded binary skipped: '/usr/lib/libcut.so': "))
          << warnings[0];
      EXPECT_TRUE(Contains(warnings[0], "code range at offset ")) << warnings[0];
      EXPECT_TRUE(Contains(warnings[1], path + ": perf map skipped: perf map at offset "))
          << warnings[1];
      EXPECT_TRUE(file->finalized());
    }
  }
}

// kJitDump parts join into one dump per process, in part order; a part 0
// starts another dump of its pid; a part with no part 0 before it, or too
// short for its fields, is a warning. A part joins its pid's latest dump.
TEST_F(EmbeddedChunksTest, JitDumpPartsJoinPerProcess) {
  const std::string path = dir_ + "/jit.sample";
  auto writer = SampleFileWriter::Create(path, WriterOptions{});
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  EventDesc event;
  event.attr = st::MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TIME, true);
  (*writer)->Submit(ChunkType::kEvents, EncodeEvents({event}));
  const Bytes a(100, std::byte{1}), b(50, std::byte{2}), c(30, std::byte{3});
  (*writer)->Submit(ChunkType::kJitDump, EncodeJitDumpPart(10, 0, a));
  (*writer)->Submit(ChunkType::kJitDump, EncodeJitDumpPart(20, 0, c));
  (*writer)->Submit(ChunkType::kJitDump, EncodeJitDumpPart(10, 1, b));
  (*writer)->Submit(ChunkType::kJitDump, EncodeJitDumpPart(30, 1, b));  // no part 0
  (*writer)->Submit(ChunkType::kJitDump, Bytes(5));                     // too short
  (*writer)->Submit(ChunkType::kJitDump, EncodeJitDumpPart(10, 0, c));  // pid 10 again
  (*writer)->Submit(ChunkType::kJitDump, EncodeJitDumpPart(20, 1, a));
  (*writer)->Submit(ChunkType::kJitDump, EncodeJitDumpPart(10, 1, b));  // the second one's
  ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
  writer->reset();
  auto reader = SampleFileReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  Bytes ab = a, ca = c, cb = c;
  ab.insert(ab.end(), b.begin(), b.end());
  ca.insert(ca.end(), a.begin(), a.end());
  cb.insert(cb.end(), b.begin(), b.end());
  EXPECT_EQ(reader->jit_dumps(),
            (std::vector<RecordedJitDump>{{10, ab, 2}, {20, ca, 2}, {10, cb, 2}}));
  const auto& warnings = reader->warnings();
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_TRUE(Contains(warnings[0], "jitdump part 1 of pid 30 skipped: no part 0")) << warnings[0];
  EXPECT_TRUE(Contains(warnings[1], "jitdump skipped: jitdump at offset ")) << warnings[1];
}

// A file from before embedding (or a chunk type a reader does not know)
// reads as before: nothing embedded, no warning.
TEST_F(EmbeddedChunksTest, FilesWithoutThemHaveNone) {
  const std::string path = dir_ + "/none.sample";
  auto writer = SampleFileWriter::Create(path, WriterOptions{});
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  EventDesc event;
  event.attr = st::MakeAttr(PERF_SAMPLE_IP, true);
  (*writer)->Submit(ChunkType::kEvents, EncodeEvents({event}));
  ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
  writer->reset();
  auto reader = SampleFileReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  EXPECT_EQ(reader->embedded_binaries().size(), 0u);
  EXPECT_TRUE(reader->perf_maps().empty());
  EXPECT_TRUE(reader->warnings().empty());
}

// A binary whose tables decode to about `mib` MiB from a few KB of zstd:
// one 1 KiB name, a copy of it (and of its file) at every address.
EmbeddedBinary Heavy(const std::string& path, uint64_t mib) {
  EmbeddedBinary b;
  b.path = path;
  const std::string name(1024, 'n');
  for (uint64_t i = 0; i < mib * 512; ++i) b.addresses.push_back({i, {{name, name, 1, false, 0}}});
  return b;
}

// A file of the events and these embedded chunks.
std::string WriteEmbedded(const std::string& path, const std::vector<Bytes>& chunks) {
  auto writer = SampleFileWriter::Create(path, WriterOptions{});
  EXPECT_TRUE(writer.has_value()) << writer.error().message;
  EventDesc event;
  event.attr = st::MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TIME, true);
  event.name = "cpu-clock";
  (*writer)->Submit(ChunkType::kEvents, EncodeEvents({event}));
  for (const Bytes& chunk : chunks) (*writer)->Submit(ChunkType::kEmbeddedBinary, chunk);
  EXPECT_TRUE((*writer)->Finish(Trailer{}).has_value());
  return path;
}

size_t CountContaining(const std::vector<std::string>& warnings, const std::string& needle) {
  size_t n = 0;
  for (const std::string& w : warnings) n += Contains(w, needle) ? 1 : 0;
  return n;
}

// The decoded tables' budget is in proportion to the stored bytes, and one
// budget serves every file of a set: -i F F took twice what F alone may.
TEST_F(EmbeddedChunksTest, OneBudgetOverEveryFileOfASet) {
  DecodeBudget budget;
  EXPECT_EQ(budget.total(), kEmbeddedDecodedFloor);
  budget.AddFile(1000);
  EXPECT_EQ(budget.total(), kEmbeddedDecodedFloor + 1000 * kMaxEmbeddedDecodedRatio);
  budget.Charge(budget.total() + 5);
  EXPECT_EQ(budget.left(), 0u);
  budget.AddFile(uint64_t{1} << 40);  // never past the absolute bound
  EXPECT_EQ(budget.total(), kMaxEmbeddedTotalSize);

  const std::string path =
      WriteEmbedded(dir_ + "/heavy.sample", {EncodeEmbeddedBinary(Heavy("/lib/heavy.so", 10))});
  const uint64_t size = std::filesystem::file_size(path);
  ASSERT_LT(size * kMaxEmbeddedDecodedRatio, uint64_t{4} << 20) << "the chunk is no bomb";
  auto alone = OpenRecording(path);
  ASSERT_TRUE(alone.has_value()) << alone.error().message;
  EXPECT_EQ((*alone)->embedded_binaries().size(), 1u);
  EXPECT_TRUE((*alone)->warnings().empty());
  // Twice: the second file's 10 MiB are over what is left of the set's
  // 16 MiB and 64 times each file's stored bytes.
  auto twice = OpenRecordings({path, path});
  ASSERT_TRUE(twice.has_value()) << twice.error().message;
  EXPECT_EQ((*twice)->embedded_binaries().size(), 1u);
  EXPECT_EQ(CountContaining((*twice)->warnings(), "embedded binary skipped"), 1u);
  EXPECT_EQ(CountContaining((*twice)->warnings(), "bytes of memory allowed"), 1u);
}

// A chunk refused after it decoded much (here: a byte after its tables)
// costs the budget what it decoded: otherwise each of many such chunks
// could take the whole budget again, in time if not in memory.
TEST_F(EmbeddedChunksTest, RefusedChunksCostTheBudgetToo) {
  Bytes bad = EncodeEmbeddedBinary(Heavy("/lib/bad.so", 6));
  bad.push_back(std::byte{0});
  const std::string path = WriteEmbedded(dir_ + "/refused.sample", std::vector<Bytes>(8, bad));
  auto reader = SampleFileReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  EXPECT_EQ(reader->embedded_binaries().size(), 0u);
  const auto& warnings = reader->warnings();
  ASSERT_EQ(warnings.size(), 8u);
  // Two decode whole and are refused for the byte; the rest find the
  // budget spent, while decoding or (once less is left than a payload)
  // before they are decompressed.
  EXPECT_EQ(CountContaining(warnings, "more bytes in the chunk"), 2u);
  const size_t unread = CountContaining(warnings, "its payload claims uncompressed");
  EXPECT_GE(unread, 1u);
  EXPECT_EQ(CountContaining(warnings, "bytes of memory allowed") + unread, 6u);
}

// A chunk's payload is judged by the size its header claims before it is
// decompressed, and charged whether it decodes or not: eight chunks of
// 4 MiB of 0xff (a few bytes each once compressed) that fail at their
// first field took the budget nothing, and so were all inflated; now
// those past what is left are refused unread, naming their offset.
TEST_F(EmbeddedChunksTest, AChunkOverTheBudgetIsRefusedBeforeItIsDecompressed) {
  constexpr uint64_t kRaw = uint64_t{4} << 20;
  const Bytes junk(kRaw, std::byte{0xff});
  const std::string path = WriteEmbedded(dir_ + "/claims.sample", std::vector<Bytes>(8, junk));
  DecodeBudget budget;
  budget.AddFile(std::filesystem::file_size(path));
  const size_t inflated = std::min<uint64_t>(8, budget.total() / kRaw);
  ASSERT_LT(inflated, 8u) << "the chunks are not over the budget";
  auto reader = SampleFileReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  EXPECT_EQ(reader->embedded_binaries().size(), 0u);
  const auto& warnings = reader->warnings();
  ASSERT_EQ(warnings.size(), 8u);
  EXPECT_EQ(CountContaining(warnings, "the 4194304 bytes its payload claims uncompressed are over"),
            8 - inflated);
  size_t named = 0;
  for (const std::string& w : warnings)
    named += Contains(w, path + ": embedded binary skipped: offset ");
  EXPECT_EQ(named, 8 - inflated) << warnings.back();
}

}  // namespace
}  // namespace sample::format
