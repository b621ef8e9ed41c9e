#include "libsample/string_parts.h"

#include <span>

#include <gtest/gtest.h>

namespace sample {
namespace {

TEST(TrimTest, DropsBlanksAtBothEndsOnly) {
  EXPECT_EQ(Trim("  enable\tcpu-clock \r\n"), "enable\tcpu-clock");
  EXPECT_EQ(Trim("config:0-7\n"), "config:0-7");
  EXPECT_EQ(Trim("word"), "word");
  EXPECT_EQ(Trim(" \t\r\n"), "");
  EXPECT_EQ(Trim(""), "");
}

TEST(LowercaseTest, AsciiOnly) {
  EXPECT_EQ(Lowercase("ABCdef12-XYZ"), "abcdef12-xyz");
  EXPECT_EQ(Lowercase("caf\xc3\x89"), "caf\xc3\x89");  // bytes past ASCII as they are
}

TEST(HexBytesTest, TwoLowerCaseDigitsAByte) {
  const unsigned char bytes[] = {0x00, 0x0a, 0xb1, 0xff};
  EXPECT_EQ(HexBytes(std::as_bytes(std::span(bytes))), "000ab1ff");
  EXPECT_EQ(HexBytes({}), "");
}

TEST(BasenameTest, LastPartOfThePath) {
  EXPECT_EQ(Basename("/usr/lib/libc.so.6"), "libc.so.6");
  EXPECT_EQ(Basename("[kernel.kallsyms]"), "[kernel.kallsyms]");
  EXPECT_EQ(Basename("dir/"), "");
  EXPECT_EQ(Basename(""), "");
}

TEST(StringPartsTest, HumanBytesKeepsThreeOrMoreDigits) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(10239), "10239 B");
  EXPECT_EQ(HumanBytes(13000), "12.7 KiB");
  EXPECT_EQ(HumanBytes(1000000), "976.6 KiB");
  EXPECT_EQ(HumanBytes(11013000), "10.5 MiB");
  EXPECT_EQ(HumanBytes(20ull << 30), "20.0 GiB");
}

}  // namespace
}  // namespace sample
