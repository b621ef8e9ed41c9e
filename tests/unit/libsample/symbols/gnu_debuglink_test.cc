// Tests for the .gnu_debuglink reader and its CRC-32, against the link
// objcopy --add-gnu-debuglink wrote into the stripped symbolizer fixture.
#include "libsample/symbols/gnu_debuglink.h"

#include <cstring>
#include <span>
#include <string_view>

#include <gtest/gtest.h>

#include "libsample/crc32.h"
#include "libsample/symbols/elf_file.h"

namespace sample {
namespace {

std::span<const std::byte> Bytes(std::string_view s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

TEST(GnuDebugLinkTest, CrcIsTheZlibCrc32) {
  // .gnu_debuglink's CRC is the one chunks and cache files use.
  // The standard check value of CRC-32/ISO-HDLC.
  EXPECT_EQ(Crc32(Bytes("123456789")), 0xcbf43926u);
  EXPECT_EQ(Crc32(Bytes("")), 0u);
  // Summed in pieces, the same.
  EXPECT_EQ(Crc32(Bytes("6789"), Crc32(Bytes("12345"))), 0xcbf43926u);
  // Nothing added, null or not, leaves the value as it was (a chunk with
  // an empty payload: its header's CRC).
  EXPECT_EQ(Crc32(std::span<const std::byte>(), 0x1234), 0x1234u);
  EXPECT_EQ(Crc32(Bytes("12345").first(0), 0x1234), 0x1234u);
}

TEST(GnuDebugLinkTest, ReadsTheLinkObjcopyWrote) {
  auto file = ElfFile::Open(FIXTURE_SYMBOLIZER_STRIPPED_PATH);
  ASSERT_TRUE(file) << file.error().message;
  const auto link = ReadGnuDebugLink(file->get());
  ASSERT_TRUE(link);
  EXPECT_EQ(link->file_name, "fixture_symbolizer.debug");
  auto crc = DebugLinkFileCrc(FIXTURE_SYMBOLIZER_DEBUG_PATH);
  ASSERT_TRUE(crc) << crc.error().message;
  EXPECT_EQ(link->crc, *crc);
}

TEST(GnuDebugLinkTest, FilesWithoutALinkHaveNone) {
  auto file = ElfFile::Open(FIXTURE_SYMBOLIZER_PATH);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_FALSE(ReadGnuDebugLink(file->get()));
}

TEST(GnuDebugLinkTest, MissingFileCrcIsAnErrorNamingIt) {
  auto crc = DebugLinkFileCrc("/nonexistent/file.debug");
  ASSERT_FALSE(crc);
  EXPECT_NE(crc.error().message.find("/nonexistent/file.debug"), std::string::npos);
}

}  // namespace
}  // namespace sample
