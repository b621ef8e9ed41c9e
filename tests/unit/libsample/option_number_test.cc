#include "libsample/option_number.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace sample {
namespace {

std::string WholeError(const char* text, WholeRange range) {
  auto value = ParseWholeOption("-D", text, "milliseconds", range);
  EXPECT_FALSE(value.has_value()) << text;
  return value ? "" : value.error().message;
}

TEST(OptionNumberTest, WholeNumbersInRange) {
  EXPECT_EQ(ParseWholeOption("-c", "1", "events", {1, 10}).value(), 1u);
  EXPECT_EQ(ParseWholeOption("-c", "10", "events", {1, 10}).value(), 10u);
  EXPECT_EQ(ParseWholeOption("-D", "0", "ms", {0, 5}).value(), 0u);
  EXPECT_EQ(ParseWholeOption("-c", "18446744073709551615", "events", {}).value(), UINT64_MAX);
}

TEST(OptionNumberTest, WholeNumbersRefusedWithTheOptionAndTheRange) {
  EXPECT_EQ(WholeError("-1", {0, 100}),
            "-D '-1' is negative: -D takes a whole number from 0 to 100 (milliseconds)");
  EXPECT_EQ(WholeError("0", {1, 100}),
            "-D '0' is zero: -D takes a whole number from 1 to 100 (milliseconds)");
  EXPECT_EQ(WholeError("2", {3, 100}),
            "-D '2' is too small: -D takes a whole number from 3 to 100 (milliseconds)");
  EXPECT_EQ(WholeError("101", {0, 100}),
            "-D '101' is too large: -D takes a whole number from 0 to 100 (milliseconds)");
  // Past what 64 bits hold: not wrapped around.
  EXPECT_EQ(WholeError("18446744073709551616", {}),
            "-D '18446744073709551616' is too large: -D takes a whole number from 0 to "
            "18446744073709551615 (milliseconds)");
  for (const char* bad : {"", " 1", "1 ", "+1", "1.5", "0x10", "1e3", "abc", "--1", "-"}) {
    EXPECT_NE(WholeError(bad, {0, 100}).find("is not a whole number"), std::string::npos) << bad;
  }
}

TEST(OptionNumberTest, DecimalNumbers) {
  EXPECT_DOUBLE_EQ(ParseDecimalOption("--duration", "1.5", "s", {0, 10, true}).value(), 1.5);
  EXPECT_DOUBLE_EQ(ParseDecimalOption("--duration", ".5", "s", {0, 10, true}).value(), 0.5);
  EXPECT_DOUBLE_EQ(ParseDecimalOption("--duration", "2.", "s", {0, 10, true}).value(), 2.0);
  EXPECT_DOUBLE_EQ(ParseDecimalOption("--percent-limit", "0", "%", {0, 100}).value(), 0.0);
  EXPECT_DOUBLE_EQ(ParseDecimalOption("--percent-limit", "100", "%", {0, 100}).value(), 100.0);
}

TEST(OptionNumberTest, DecimalNumbersRefused) {
  auto error = [](const char* text, DecimalRange range) {
    auto value = ParseDecimalOption("--duration", text, "seconds", range);
    EXPECT_FALSE(value.has_value()) << text;
    return value ? "" : value.error().message;
  };
  EXPECT_EQ(error("0", {0, 10, true}),
            "--duration '0' is zero: --duration takes a number above 0 and at most 10 (seconds)");
  EXPECT_EQ(error("-1", {0, 10}),
            "--duration '-1' is negative: --duration takes a number from 0 to 10 (seconds)");
  EXPECT_EQ(error("10.5", {0, 10}),
            "--duration '10.5' is too large: --duration takes a number from 0 to 10 (seconds)");
  for (const char* bad : {"", ".", "nan", "inf", "1e3", "1,5", "1.2.3", "+1", " 1", "0.5x"}) {
    EXPECT_NE(error(bad, {0, 10}).find("is not a number"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace sample
