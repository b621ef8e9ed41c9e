#include "libsample/byte_reader.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace sample {
namespace {

std::vector<std::byte> BytesOf(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(ByteReaderTest, ReadsLittleEndianValuesAndAdvances) {
  const auto data =
      BytesOf({0x01, 0x02, 0x03, 0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xaa});
  ByteReader in(data);
  uint32_t a = 0;
  ASSERT_TRUE(in.Read(&a));
  EXPECT_EQ(a, 0x04030201u);
  EXPECT_EQ(in.position(), 4u);
  EXPECT_EQ(in.remaining(), 9u);
  uint64_t b = 0;
  ASSERT_TRUE(in.Read(&b));
  EXPECT_EQ(b, 0x8877665544332211u);
  uint8_t c = 0;
  ASSERT_TRUE(in.Read(&c));
  EXPECT_EQ(c, 0xaa);
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(in.remaining(), 0u);
}

TEST(ByteReaderTest, ReadsUnalignedValues) {
  // A u64 at offset 3 of a buffer: memcpy, not a misaligned load.
  alignas(8) std::array<std::byte, 16> storage{};
  const uint64_t value = 0x0123456789abcdefu;
  std::memcpy(storage.data() + 3, &value, sizeof(value));
  ByteReader in(std::span<const std::byte>(storage).subspan(3));
  uint64_t out = 0;
  ASSERT_TRUE(in.Read(&out));
  EXPECT_EQ(out, value);
}

TEST(ByteReaderTest, FailedReadLeavesCursorAndOutputUntouched) {
  const auto data = BytesOf({1, 2, 3, 4, 5, 6, 7});
  ByteReader in(data);
  ASSERT_TRUE(in.Skip(2));
  uint64_t out = 0xdeadbeef;
  EXPECT_FALSE(in.Read(&out));  // 5 bytes left, 8 wanted
  EXPECT_EQ(out, 0xdeadbeefu);
  EXPECT_EQ(in.position(), 2u);
  uint32_t small = 0;
  ASSERT_TRUE(in.Read(&small));  // the cursor still works after a failure
  EXPECT_EQ(small, 0x06050403u);
}

TEST(ByteReaderTest, ReadExactlyToTheEnd) {
  const auto data = BytesOf({1, 0, 0, 0});
  ByteReader in(data);
  uint32_t out = 0;
  ASSERT_TRUE(in.Read(&out));
  EXPECT_EQ(out, 1u);
  EXPECT_FALSE(in.Read(&out));
  uint8_t byte;
  EXPECT_FALSE(in.Read(&byte));
}

TEST(ByteReaderTest, EmptySpan) {
  ByteReader in(std::span<const std::byte>{});
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(in.remaining(), 0u);
  uint8_t byte;
  EXPECT_FALSE(in.Read(&byte));
  std::span<const std::byte> bytes;
  EXPECT_TRUE(in.ReadBytes(0, &bytes));
  EXPECT_TRUE(bytes.empty());
  EXPECT_TRUE(in.Skip(0));
  EXPECT_FALSE(in.Skip(1));
  EXPECT_TRUE(in.Seek(0));
  EXPECT_FALSE(in.Seek(1));
}

TEST(ByteReaderTest, ReadBytesPointsIntoTheData) {
  const auto data = BytesOf({10, 20, 30, 40, 50});
  ByteReader in(data);
  ASSERT_TRUE(in.Skip(1));
  std::span<const std::byte> out;
  ASSERT_TRUE(in.ReadBytes(3, &out));
  EXPECT_EQ(out.data(), data.data() + 1);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2], std::byte{40});
  EXPECT_EQ(in.position(), 4u);

  std::span<const std::byte> untouched = out;
  EXPECT_FALSE(in.ReadBytes(2, &untouched));
  EXPECT_EQ(untouched.data(), out.data());
  EXPECT_EQ(in.position(), 4u);
}

TEST(ByteReaderTest, HugeSizesDoNotOverflow) {
  // position + size would wrap to a small number; the reader must refuse.
  const auto data = BytesOf({1, 2, 3, 4, 5, 6, 7, 8});
  ByteReader in(data);
  ASSERT_TRUE(in.Skip(3));
  constexpr size_t kHuge = std::numeric_limits<size_t>::max();
  std::span<const std::byte> out;
  EXPECT_FALSE(in.ReadBytes(kHuge, &out));
  EXPECT_FALSE(in.ReadBytes(kHuge - 2, &out));
  EXPECT_FALSE(in.Skip(kHuge));
  EXPECT_FALSE(in.Skip(kHuge - 2));
  std::string_view s;
  EXPECT_FALSE(in.ReadString(kHuge, &s));
  EXPECT_FALSE(in.Seek(kHuge));
  EXPECT_EQ(in.position(), 3u);
  EXPECT_EQ(in.remaining(), 5u);
}

TEST(ByteReaderTest, ReadStringStopsAtFirstNul) {
  const std::string text("comm\0pad", 8);
  std::span<const std::byte> data = std::as_bytes(std::span(text.data(), text.size()));
  ByteReader in(data);
  std::string_view s;
  ASSERT_TRUE(in.ReadString(8, &s));
  EXPECT_EQ(s, "comm");
  EXPECT_EQ(in.position(), 8u);  // the whole field is consumed, not just the string
}

TEST(ByteReaderTest, ReadStringWithoutNulTakesTheWholeField) {
  const std::string text = "abcdefgh";
  ByteReader in(std::as_bytes(std::span(text.data(), text.size())));
  std::string_view s;
  ASSERT_TRUE(in.ReadString(5, &s));
  EXPECT_EQ(s, "abcde");  // never reads past the field looking for a NUL
  EXPECT_FALSE(in.ReadString(4, &s));
  EXPECT_EQ(s, "abcde");
  EXPECT_EQ(in.position(), 5u);
  ASSERT_TRUE(in.ReadString(3, &s));
  EXPECT_EQ(s, "fgh");
  ASSERT_TRUE(in.ReadString(0, &s));
  EXPECT_EQ(s, "");
}

TEST(ByteReaderTest, SkipAndSeek) {
  const auto data = BytesOf({0, 1, 2, 3, 4, 5});
  ByteReader in(data);
  ASSERT_TRUE(in.Skip(6));
  EXPECT_TRUE(in.empty());
  EXPECT_FALSE(in.Skip(1));
  ASSERT_TRUE(in.Seek(2));
  uint8_t byte = 0;
  ASSERT_TRUE(in.Read(&byte));
  EXPECT_EQ(byte, 2);
  ASSERT_TRUE(in.Seek(6));  // seeking to the end is allowed
  EXPECT_TRUE(in.empty());
  EXPECT_FALSE(in.Seek(7));
  EXPECT_EQ(in.position(), 6u);
}

TEST(ByteReaderTest, FileOffsetAddsBaseOffset) {
  const auto data = BytesOf({0, 1, 2, 3, 4, 5, 6, 7});
  ByteReader in(data, 4096);
  EXPECT_EQ(in.file_offset(), 4096u);
  ASSERT_TRUE(in.Skip(5));
  EXPECT_EQ(in.file_offset(), 4101u);
  uint64_t too_big;
  EXPECT_FALSE(in.Read(&too_big));
  EXPECT_EQ(in.file_offset(), 4101u);
}

TEST(ByteReaderTest, ReadsPackedStructs) {
#pragma pack(push, 1)
  struct Packed {
    uint8_t a;
    uint32_t b;
    uint16_t c;
  };
#pragma pack(pop)
  static_assert(sizeof(Packed) == 7);
  const auto data = BytesOf({9, 0x78, 0x56, 0x34, 0x12, 0xcd, 0xab, 0xff});
  ByteReader in(data);
  Packed p{};
  ASSERT_TRUE(in.Read(&p));
  // Copied out first: EXPECT_EQ binds references, and a reference to a
  // packed member is misaligned (UBSan stops there).
  const uint8_t a = p.a;
  const uint32_t b = p.b;
  const uint16_t c = p.c;
  EXPECT_EQ(a, 9);
  EXPECT_EQ(b, 0x12345678u);
  EXPECT_EQ(c, 0xabcdu);
  EXPECT_EQ(in.remaining(), 1u);
}

}  // namespace
}  // namespace sample
