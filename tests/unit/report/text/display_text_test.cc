#include "report/text/display_text.h"
#include "report/text/text_table.h"

#include <string>

#include <gtest/gtest.h>

#include "report/json/json_writer.h"

namespace sample::report {
namespace {

TEST(DisplayTextTest, ValidUtf8AndPlainTextPassUnchanged) {
  for (const std::string text : {"", "compute_sixty", "café", "日本語", "𝄞 clef"}) {
    EXPECT_EQ(ShowableText(text, false), text);
  }
  EXPECT_EQ(ShowableText("two\nlines\n", true), "two\nlines\n");
}

TEST(DisplayTextTest, ControlCharactersAreShownAsHex) {
  EXPECT_EQ(ShowableText("\x1b[31mred", true), "\\x1b[31mred");
  EXPECT_EQ(ShowableText("over\rwrite", true), "over\\x0dwrite");
  EXPECT_EQ(ShowableText("bell\a del\x7f", true), "bell\\x07 del\\x7f");
  EXPECT_EQ(ShowableText("one\nline", false), "one\\x0aline");
  EXPECT_EQ(ShowableText("c1\xc2\x9b" "31m", true), "c1\\xc2\\x9b31m");  // CSI as C1
  EXPECT_EQ(ShowableText("nbsp\xc2\xa0", true), "nbsp\xc2\xa0");         // U+00A0 is text
}

TEST(DisplayTextTest, InvalidUtf8IsShownByteByByte) {
  EXPECT_EQ(ShowableText("caf\xe9", true), "caf\\xe9");                  // Latin-1
  EXPECT_EQ(ShowableText("\x80 stray", true), "\\x80 stray");            // continuation
  EXPECT_EQ(ShowableText("cut \xe6\x97", true), "cut \\xe6\\x97");        // truncated
  EXPECT_EQ(ShowableText("\xc0\xaf", true), "\\xc0\\xaf");               // overlong '/'
  EXPECT_EQ(ShowableText("\xe0\x80\xaf", true), "\\xe0\\x80\\xaf");       // overlong
  EXPECT_EQ(ShowableText("\xed\xa0\x80", true), "\\xed\\xa0\\x80");       // surrogate
  EXPECT_EQ(ShowableText("\xf4\x90\x80\x80", true), "\\xf4\\x90\\x80\\x80");  // > U+10FFFF
}

TEST(DisplayTextTest, JsonStringsAreValidForAnyBytes) {
  EXPECT_EQ(JsonQuoted("caf\xe9"), "\"caf\\\\xe9\"");
  EXPECT_EQ(JsonQuoted("café"), "\"café\"");
  EXPECT_EQ(JsonQuoted("\x1b[0m"), "\"\\u001b[0m\"");
  EXPECT_EQ(JsonQuoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
}

TEST(DisplayTextTest, OneLineKeepsNoTabOrLineFeed) {
  EXPECT_EQ(OneLine("a\tb\nc"), "a\\x09b\\x0ac");
  EXPECT_EQ(ShowableText("a\tb\nc", true), "a\tb\nc");
  EXPECT_EQ(OneLine("plain"), "plain");
}

TEST(DisplayTextTest, WidthCountsCharactersNotBytes) {
  EXPECT_EQ(DisplayWidth(""), 0u);
  EXPECT_EQ(DisplayWidth("abc"), 3u);
  EXPECT_EQ(DisplayWidth("caf\xc3\xa9"), 4u);           // é is two bytes
  EXPECT_EQ(DisplayWidth("\xe6\x97\xa5\xe6\x9c\xac"), 2u);  // 日本
  EXPECT_EQ(DisplayWidth("caf\xe9"), 4u);               // an invalid byte counts one
}

TEST(TextTableTest, ColumnsLineUpByCharacters) {
  const TextTable table({{"Overhead", true, 8, {"50.00%", "5.00%"}},
                         {"Command", false, 0, {"caf\xc3\xa9", "sh"}},
                         {"Symbol", false, 0, {"[.] main", "[k] x"}}});
  EXPECT_EQ(table.Heading(),
            "# Overhead  Command  Symbol\n"
            "# ........  .......  ........\n"
            "#\n");
  EXPECT_EQ(table.Row(0), "    50.00%  caf\xc3\xa9     [.] main\n");
  EXPECT_EQ(table.Row(1), "     5.00%  sh       [k] x\n");
}

}  // namespace
}  // namespace sample::report
