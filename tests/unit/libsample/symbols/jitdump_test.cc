// Tests for JitDump (the jitdump reader, over synthetic bytes) and JitCode
// (one process's JIT code laid out as a pseudo-DSO, loads and moves as
// timed changes).
#include "libsample/symbols/jitdump.h"

#include <cstring>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/symbols/jit_code.h"
#include "tests/unit/jitdump_builder.h"

namespace sample {
namespace {

using ::testing::HasSubstr;
using testing::JitDumpBuilder;

JitDump Parsed(const JitDumpBuilder& builder) {
  auto dump = JitDump::Parse(builder.bytes(), "test.dump");
  EXPECT_TRUE(dump.has_value()) << (dump ? "" : dump.error().message);
  return dump ? std::move(*dump) : JitDump();
}

TEST(JitDumpTest, ReadsHeaderLoadsMovesAndClose) {
  const std::byte code[] = {std::byte{0x55}, std::byte{0x48}, std::byte{0x89}, std::byte{0xe5}};
  JitDumpBuilder b(777);
  b.Load(10, 0x7000, "JS:*hot /a.js:3:1", code, 5).Move(20, 0x7000, 0x9000, 4, 5).Close(30);
  const JitDump dump = Parsed(b);
  EXPECT_EQ(dump.header().pid, 777u);
  EXPECT_EQ(dump.header().version, 1u);
  ASSERT_EQ(dump.loads().size(), 1u);
  const JitCodeLoad& load = dump.loads()[0];
  EXPECT_EQ(load.time, 10u);
  EXPECT_EQ(load.code_address, 0x7000u);
  EXPECT_EQ(load.code_index, 5u);
  EXPECT_EQ(load.name, "JS:*hot /a.js:3:1");
  ASSERT_EQ(load.code.size(), 4u);
  EXPECT_EQ(std::memcmp(load.code.data(), code, 4), 0);
  ASSERT_EQ(dump.moves().size(), 1u);
  EXPECT_EQ(dump.moves()[0].old_address, 0x7000u);
  EXPECT_EQ(dump.moves()[0].new_address, 0x9000u);
  EXPECT_EQ(dump.loads_before_move()[0], 1u);
  EXPECT_TRUE(dump.counts().closed);
  EXPECT_FALSE(dump.counts().torn);
  EXPECT_EQ(dump.counts().malformed, 0u);
}

TEST(JitDumpTest, DebugInfoGoesToTheLoadAfterIt) {
  JitDumpBuilder b;
  b.DebugInfo(1, 0x7000, {{0x7000, 3, 0, "/src/a.js"}, {0x7010, 4, 0, "\xff"}})
      .Load(2, 0x7000, "f", 32, 1)
      .DebugInfo(3, 0x8000, {{0x8000, 9, 0, "/src/b.js"}})
      .Load(4, 0x8800, "g", 16, 2);  // another address: the lines are not g's
  const JitDump dump = Parsed(b);
  ASSERT_EQ(dump.loads().size(), 2u);
  ASSERT_EQ(dump.loads()[0].lines.size(), 2u);
  const JitCodeLoad& f = dump.loads()[0];
  EXPECT_EQ(f.FileOf(f.lines[0]), "/src/a.js");
  EXPECT_EQ(f.FileOf(f.lines[1]), "/src/a.js");  // "\xff": the previous file
  EXPECT_EQ(f.files.size(), 1u);                 // stored once
  EXPECT_EQ(dump.loads()[0].lines[1].line, 4u);
  EXPECT_TRUE(dump.loads()[1].lines.empty());
  EXPECT_EQ(dump.counts().debug_infos, 2u);
  EXPECT_EQ(dump.counts().unmatched_debug_infos, 1u);
}

// V8 writes a load's debug info, then its unwinding info, then the load.
TEST(JitDumpTest, DebugInfoReachesItsLoadPastUnwindingInfo) {
  const std::byte unwinding[24] = {};
  JitDumpBuilder b;
  b.DebugInfo(1, 0x7000, {{0x7000, 3, 0, "/src/a.js"}})
      .Raw(kJitCodeUnwindingInfo, 2, unwinding)
      .Load(3, 0x7000, "f", 32, 1);
  const JitDump dump = Parsed(b);
  ASSERT_EQ(dump.loads().size(), 1u);
  ASSERT_EQ(dump.loads()[0].lines.size(), 1u);
  EXPECT_EQ(dump.loads()[0].lines[0].line, 3u);
  EXPECT_EQ(dump.counts().unmatched_debug_infos, 0u);
}

// A crafted dump of one long file name and many one-byte "\xff" (same
// file) entries once made each entry a copy of the name: a 460 KB dump
// took 1.9 GB. The names kept must stay within the dump's own bytes.
TEST(JitDumpTest, SameFileEntriesDoNotCopyTheName) {
  constexpr size_t kNameBytes = 4096, kEntries = 2000, kLoads = 8;
  JitDumpBuilder b;
  std::vector<JitDumpBuilder::Line> lines;
  lines.push_back({0x7000, 1, 0, "/src/" + std::string(kNameBytes, 'n')});
  for (size_t i = 1; i < kEntries; ++i) lines.push_back({0x7000 + i, uint32_t(i + 1), 0, "\xff"});
  for (size_t i = 0; i < kLoads; ++i) b.DebugInfo(1, 0x7000, lines).Load(2, 0x7000, "f", 0x10, i);
  const JitDump dump = Parsed(b);
  ASSERT_EQ(dump.loads().size(), kLoads);
  size_t name_bytes = 0, line_count = 0;
  for (const JitCodeLoad& load : dump.loads()) {
    for (const std::string& file : load.files) name_bytes += file.size();
    line_count += load.lines.size();
    ASSERT_EQ(load.lines.size(), kEntries);
    EXPECT_EQ(load.FileOf(load.lines.back()), lines[0].file);
    EXPECT_EQ(load.lines.back().line, kEntries);
  }
  EXPECT_EQ(line_count, kLoads * kEntries);
  // Each name once per record (the copies would be kLoads * kEntries of it).
  EXPECT_LE(name_bytes, b.bytes().size());
  EXPECT_LE(line_count * sizeof(JitLine), 4 * b.bytes().size());
  EXPECT_EQ(dump.counts().malformed, 0u);
}

TEST(JitDumpTest, UnknownRecordsAreSkippedBySize) {
  const std::byte body[24] = {};
  JitDumpBuilder b;
  b.Raw(99, 1, body).Raw(kJitCodeUnwindingInfo, 2, body).Load(3, 0x7000, "after", 8, 1);
  const JitDump dump = Parsed(b);
  EXPECT_EQ(dump.counts().unknown, 1u);
  EXPECT_EQ(dump.counts().unwinding_infos, 1u);
  ASSERT_EQ(dump.loads().size(), 1u);
  EXPECT_EQ(dump.loads()[0].name, "after");
}

TEST(JitDumpTest, TornLastRecordIsNotAnError) {
  JitDumpBuilder b;
  b.Load(1, 0x7000, "whole", 16, 1).Load(2, 0x8000, "cut", 64, 2);
  std::vector<std::byte> bytes = b.bytes();
  bytes.resize(bytes.size() - 20);  // the writer was still writing it
  auto dump = JitDump::Parse(bytes, "torn.dump");
  ASSERT_TRUE(dump.has_value());
  EXPECT_TRUE(dump->counts().torn);
  EXPECT_EQ(dump->counts().malformed, 0u);
  ASSERT_EQ(dump->loads().size(), 1u);
  EXPECT_EQ(dump->loads()[0].name, "whole");
}

TEST(JitDumpTest, MalformedRecordsAreCountedAndSkipped) {
  JitDumpBuilder b;
  // A load too short for its fields; one whose code_size passes its end;
  // one whose name has no NUL; then a good one.
  const std::byte short_body[8] = {};
  b.Raw(kJitCodeLoad, 1, short_body);
  std::vector<std::byte> body(40, std::byte{0});
  const uint64_t huge = 1ull << 40;
  std::memcpy(body.data() + 24, &huge, 8);  // code_size
  body.push_back(std::byte{'x'});
  body.push_back(std::byte{0});
  b.Raw(kJitCodeLoad, 2, body);
  std::vector<std::byte> no_nul(40, std::byte{0});
  no_nul.insert(no_nul.end(), 8, std::byte{'n'});
  // Padding adds NULs: make the record exactly 8-aligned so none follow.
  b.Raw(kJitCodeLoad, 3, no_nul);
  // A debug-info record claiming more entries than its bytes hold.
  std::vector<std::byte> debug(16, std::byte{0});
  const uint64_t many = 1ull << 60;
  std::memcpy(debug.data() + 8, &many, 8);
  b.Raw(kJitCodeDebugInfo, 4, debug);
  b.Load(5, 0x7000, "good", 8, 1);
  const JitDump dump = Parsed(b);
  EXPECT_EQ(dump.counts().malformed, 4u);
  ASSERT_EQ(dump.loads().size(), 1u);
  EXPECT_EQ(dump.loads()[0].name, "good");
}

TEST(JitDumpTest, ImpossibleRecordSizeEndsTheWalk) {
  JitDumpBuilder b;
  b.Load(1, 0x7000, "first", 8, 1);
  std::vector<std::byte> bytes = b.bytes();
  const uint32_t bad[4] = {kJitCodeLoad, 4, 0, 0};  // smaller than a record header
  const auto* p = reinterpret_cast<const std::byte*>(bad);
  bytes.insert(bytes.end(), p, p + sizeof(bad));
  auto dump = JitDump::Parse(bytes, "bad.dump");
  ASSERT_TRUE(dump.has_value());
  EXPECT_EQ(dump->loads().size(), 1u);
  EXPECT_EQ(dump->counts().malformed, 1u);
}

TEST(JitDumpTest, BadHeadersFailNamingTheFile) {
  auto too_short = JitDump::Parse(std::span(JitDumpBuilder().bytes()).first(20), "a.dump");
  ASSERT_FALSE(too_short.has_value());
  EXPECT_THAT(too_short.error().message, HasSubstr("a.dump: offset 0"));
  auto swapped = JitDump::Parse(JitDumpBuilder(1, 0, kJitDumpMagicSwapped).bytes(), "b.dump");
  ASSERT_FALSE(swapped.has_value());
  EXPECT_THAT(swapped.error().message, HasSubstr("other byte order"));
  auto other = JitDump::Parse(JitDumpBuilder(1, 0, 0x12345678).bytes(), "c.dump");
  ASSERT_FALSE(other.has_value());
  EXPECT_THAT(other.error().message, HasSubstr("not a jitdump"));
  std::vector<std::byte> big_header = JitDumpBuilder().bytes();
  const uint32_t size = 4096;
  std::memcpy(big_header.data() + 8, &size, 4);
  EXPECT_FALSE(JitDump::Parse(big_header, "d.dump").has_value());
}

TEST(JitDumpTest, WholePrefixEndsOnRecords) {
  JitDumpBuilder b;
  b.Load(1, 0x7000, "a", 100, 1).Load(2, 0x8000, "b", 100, 2).Close(3);
  const std::vector<std::byte>& bytes = b.bytes();
  const size_t all = JitDumpWholePrefix(bytes, bytes.size(), true);
  EXPECT_EQ(all, bytes.size());
  // The close (16 bytes) does not fit in all but 8.
  const size_t first = JitDumpWholePrefix(bytes, bytes.size() - 8, true);
  EXPECT_EQ(first, bytes.size() - 16);
  auto dump = JitDump::Parse(std::span(bytes).first(first), "cut");
  ASSERT_TRUE(dump.has_value());
  EXPECT_FALSE(dump->counts().torn);
  EXPECT_EQ(dump->loads().size(), 2u);
  EXPECT_FALSE(dump->counts().closed);
  EXPECT_EQ(JitDumpWholePrefix(bytes, 10, true), 0u);
  // Without the header: records from the start.
  const size_t records =
      JitDumpWholePrefix(std::span(bytes).subspan(kJitDumpHeaderSize), bytes.size(), false);
  EXPECT_EQ(records, bytes.size() - kJitDumpHeaderSize);
}

TEST(JitDumpTest, FileNamesAsWritersGiveThem) {
  EXPECT_TRUE(IsJitDumpFileName("/tmp/jit-1234.dump"));
  EXPECT_TRUE(IsJitDumpFileName("jit-1.dump"));
  EXPECT_FALSE(IsJitDumpFileName("/tmp/jit-.dump"));
  EXPECT_FALSE(IsJitDumpFileName("/tmp/jit-12a.dump"));
  EXPECT_FALSE(IsJitDumpFileName("/tmp/perf-12.map"));
  EXPECT_FALSE(IsJitDumpFileName("/tmp/jit-12.dump.bak"));
}

// Digits too many for a short string's inline buffer: the rule once read
// them from a destroyed temporary, whose heap block malloc had reused (its
// free list's pointers in the first bytes: false for a good name; ASan:
// heap-use-after-free).
TEST(JitDumpTest, FileNamesWithLongDigitRunsAreReadWhole) {
  const std::string digits(40, '7');
  EXPECT_TRUE(IsJitDumpFileName("/tmp/jit-" + digits + ".dump"));
  EXPECT_TRUE(IsJitDumpFileName("jit-" + digits + ".dump"));
  EXPECT_FALSE(IsJitDumpFileName("/tmp/jit-" + digits + "x.dump"));
  EXPECT_FALSE(IsJitDumpFileName("/tmp/jit-x" + digits + ".dump"));
  EXPECT_FALSE(IsJitDumpFileName("/tmp/jit-" + digits + ".dump/"));
}

TEST(JitCodeTest, LoadsGetOffsetsAndChangesInFileOrder) {
  JitDumpBuilder b;
  b.Load(10, 0x7000, "f", 0x40, 1).Load(11, 0x8000, "g", 0x20, 2).Load(12, 0x9000, "", 0, 3);
  JitCode code;
  code.Add(Parsed(b));
  ASSERT_EQ(code.functions().size(), 2u);
  EXPECT_EQ(code.functions()[0].offset, 0u);
  EXPECT_EQ(code.functions()[1].offset, 0x40u);
  EXPECT_EQ(code.counts().empty_loads, 1u);
  ASSERT_EQ(code.changes().size(), 2u);
  EXPECT_EQ(code.changes()[1].time, 11u);
  EXPECT_EQ(code.changes()[1].address, 0x8000u);
  EXPECT_EQ(code.changes()[1].offset, 0x40u);
  EXPECT_EQ(code.FunctionAt(0x3f)->name, "f");
  EXPECT_EQ(code.FunctionAt(0x40)->name, "g");
  EXPECT_EQ(code.FunctionAt(0x60), nullptr);
}

TEST(JitCodeTest, MovesKeepTheirFunctionAndIndexesAreReused) {
  JitDumpBuilder b;
  b.Load(10, 0x7000, "f", 0x40, 1)
      .Move(20, 0x7000, 0xa000, 0x40, 1)
      .Load(30, 0x7000, "h", 0x40, 1)      // index 1 reused, at the old place
      .Move(40, 0x7000, 0xb000, 0x40, 1)   // moves h, not f
      .Move(50, 0x1000, 0x2000, 0x40, 9);  // no load of index 9
  JitCode code;
  code.Add(Parsed(b));
  ASSERT_EQ(code.changes().size(), 4u);
  EXPECT_TRUE(code.changes()[1].moved);
  EXPECT_EQ(code.changes()[1].old_address, 0x7000u);
  EXPECT_EQ(code.changes()[1].offset, 0u);     // f's
  EXPECT_EQ(code.changes()[2].offset, 0x40u);  // h, loaded
  EXPECT_EQ(code.changes()[3].offset, 0x40u);  // h, moved
  EXPECT_EQ(code.counts().unmatched_moves, 1u);
}

TEST(JitCodeTest, LinesByOffset) {
  JitDumpBuilder b;
  b.DebugInfo(1, 0x7000, {{0x7010, 5, 0, "/src/a.js"}, {0x7000, 4, 0, "/src/a.js"}})
      .Load(2, 0x7000, "f", 0x40, 1);
  JitCode code;
  code.Add(Parsed(b));
  const JitFunction& f = code.functions()[0];
  ASSERT_NE(JitCode::LineAt(f, 0x0), nullptr);
  EXPECT_EQ(JitCode::LineAt(f, 0x0)->line, 4u);
  EXPECT_EQ(JitCode::LineAt(f, 0x20)->line, 5u);
  EXPECT_EQ(JitCode::LineAt(f, 0x40), nullptr);
}

TEST(JitCodeTest, CounterTimestampsApplyAtTheStart) {
  JitDumpBuilder b(1, kJitDumpArchTimestamp);
  b.Load(123456, 0x7000, "f", 8, 1);
  JitCode code;
  code.Add(Parsed(b));
  EXPECT_EQ(code.counts().untimed_dumps, 1u);
  EXPECT_EQ(code.changes()[0].time, 0u);
}

}  // namespace
}  // namespace sample
