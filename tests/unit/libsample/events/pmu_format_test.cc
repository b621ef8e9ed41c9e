// Tests for the sysfs PMU format parser, the term list parser and Pmu::Load
// against a fake sysfs tree built in a temporary directory.
#include "libsample/events/pmu_format.h"

#include <linux/perf_event.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/temp_dir.h"

namespace sample {
namespace {

namespace fs = std::filesystem;
using sample::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

PmuFormat MustParse(std::string_view name, std::string_view text) {
  auto format = PmuFormat::Parse(name, text);
  EXPECT_TRUE(format) << text << ": " << format.error().message;
  return *format;
}

std::string ParseError(std::string_view text) {
  auto format = PmuFormat::Parse("f", text);
  EXPECT_FALSE(format) << text << " parsed";
  return format ? std::string() : format.error().message;
}

TEST(PmuFormatTest, SingleBit) {
  const PmuFormat format = MustParse("edge", "config:21\n");
  EXPECT_EQ(format.field(), PmuFormat::Field::kConfig);
  EXPECT_EQ(format.mask(), uint64_t{1} << 21);
  EXPECT_EQ(format.width(), 1);
  EXPECT_EQ(format.ToString(), "config:21");
  perf_event_attr attr{};
  ASSERT_TRUE(format.Apply(1, &attr));
  EXPECT_EQ(attr.config, uint64_t{1} << 21);
  EXPECT_EQ(attr.config1, 0u);
  auto too_big = format.Apply(2, &attr);
  ASSERT_FALSE(too_big);
  EXPECT_THAT(too_big.error().message, HasSubstr("edge"));
  EXPECT_THAT(too_big.error().message, HasSubstr("1 bits"));
}

TEST(PmuFormatTest, RangeFillsFromItsLowBit) {
  const PmuFormat format = MustParse("umask", "config:8-15");
  EXPECT_EQ(format.mask(), 0xff00u);
  EXPECT_EQ(format.width(), 8);
  perf_event_attr attr{};
  ASSERT_TRUE(format.Apply(0x41, &attr));
  EXPECT_EQ(attr.config, 0x4100u);
  ASSERT_TRUE(format.Apply(0xff, &attr));
  EXPECT_EQ(attr.config, 0xff00u);
  auto too_big = format.Apply(0x100, &attr);
  ASSERT_FALSE(too_big);
  EXPECT_THAT(too_big.error().message, HasSubstr("0x100"));
  EXPECT_THAT(too_big.error().message, HasSubstr("umask"));
  EXPECT_THAT(too_big.error().message, HasSubstr("config:8-15"));
  // A failed Apply leaves the attr alone.
  EXPECT_EQ(attr.config, 0xff00u);
}

TEST(PmuFormatTest, SplitRangesInConfig1) {
  const PmuFormat format = MustParse("ldlat", "config1:0-15,32-47");
  EXPECT_EQ(format.field(), PmuFormat::Field::kConfig1);
  EXPECT_EQ(format.width(), 32);
  EXPECT_EQ(format.ToString(), "config1:0-15,32-47");
  perf_event_attr attr{};
  ASSERT_TRUE(format.Apply(0x12345678, &attr));
  EXPECT_EQ(attr.config1, 0x0000123400005678u);
  EXPECT_EQ(attr.config, 0u);
  ASSERT_TRUE(format.Apply(0xffffffff, &attr));
  EXPECT_EQ(attr.config1, 0x0000ffff0000ffffu);
  EXPECT_FALSE(format.Apply(0x100000000, &attr));
}

TEST(PmuFormatTest, RangesWrittenOutOfOrderStillFillLowBitsFirst) {
  // perf keeps formats as bitmaps: value bits go to the lowest format bits
  // first, whatever order the file lists the ranges in.
  const PmuFormat format = MustParse("event", "config:32-35,0-7");
  EXPECT_EQ(format.ToString(), "config:0-7,32-35");
  perf_event_attr attr{};
  ASSERT_TRUE(format.Apply(0xabc, &attr));
  EXPECT_EQ(attr.config, (uint64_t{0xa} << 32) | 0xbc);
}

TEST(PmuFormatTest, Config2AndWholeWord) {
  const PmuFormat format = MustParse("all", "config2:0-63");
  EXPECT_EQ(format.width(), 64);
  perf_event_attr attr{};
  ASSERT_TRUE(format.Apply(~uint64_t{0}, &attr));
  EXPECT_EQ(attr.config2, ~uint64_t{0});
  EXPECT_EQ(attr.config, 0u);
}

TEST(PmuFormatTest, ApplyReplacesOnlyItsOwnBits) {
  const PmuFormat format = MustParse("event", "config:0-7");
  perf_event_attr attr{};
  attr.config = ~uint64_t{0};
  ASSERT_TRUE(format.Apply(0x3c, &attr));
  EXPECT_EQ(attr.config, 0xffffffffffffff3cu);
}

TEST(PmuFormatTest, MalformedFormats) {
  EXPECT_THAT(ParseError("config3:0-7"), HasSubstr("config3"));
  EXPECT_THAT(ParseError("config:64"), HasSubstr("64"));
  EXPECT_THAT(ParseError("config:7-0"), HasSubstr("backwards"));
  EXPECT_THAT(ParseError("config:"), HasSubstr("no bits"));
  EXPECT_THAT(ParseError("config0-7"), HasSubstr("FIELD:BITS"));
  EXPECT_THAT(ParseError("config:a"), HasSubstr("'a'"));
  EXPECT_THAT(ParseError("config:1,"), HasSubstr("comma"));
  EXPECT_THAT(ParseError("config:1-2-3"), HasSubstr("bad bit"));
}

TEST(PmuFormatTest, TermNumbers) {
  EXPECT_EQ(ParseTermNumber("0x3c"), 0x3cu);
  EXPECT_EQ(ParseTermNumber("0X3C"), 0x3cu);
  EXPECT_EQ(ParseTermNumber("42"), 42u);
  EXPECT_EQ(ParseTermNumber("0"), 0u);
  EXPECT_EQ(ParseTermNumber("0xffffffffffffffff"), ~uint64_t{0});
  EXPECT_FALSE(ParseTermNumber(""));
  EXPECT_FALSE(ParseTermNumber("0x"));
  EXPECT_FALSE(ParseTermNumber("12a"));
  EXPECT_FALSE(ParseTermNumber("-1"));
  auto overflow = ParseTermNumber("0x10000000000000000");
  ASSERT_FALSE(overflow);
  EXPECT_THAT(overflow.error().message, HasSubstr("64 bits"));
}

TEST(PmuFormatTest, TermLists) {
  auto terms = ParsePmuTerms("event=0x3c,umask=1,edge");
  ASSERT_TRUE(terms) << terms.error().message;
  ASSERT_EQ(terms->size(), 3u);
  EXPECT_EQ((*terms)[0].key, "event");
  EXPECT_EQ((*terms)[0].value, "0x3c");
  EXPECT_EQ((*terms)[1].key, "umask");
  EXPECT_EQ((*terms)[1].value, "1");
  EXPECT_EQ((*terms)[2].key, "edge");
  EXPECT_FALSE((*terms)[2].value);
  auto empty = ParsePmuTerms("");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  EXPECT_THAT(ParsePmuTerms("a,,b").error().message, HasSubstr("empty term"));
  EXPECT_THAT(ParsePmuTerms("a,").error().message, HasSubstr("empty term"));
  EXPECT_THAT(ParsePmuTerms("=3").error().message, HasSubstr("no name"));
}

TEST(PmuFormatTest, LoadsPmuFromSysfs) {
  TempDir sysfs;
  const fs::path dir = "bus/event_source/devices/fakepmu";
  sysfs.Write(dir / "type", "42\n");
  sysfs.Write(dir / "format/event", "config:0-7\n");
  sysfs.Write(dir / "format/umask", "config:8-15\n");
  sysfs.Write(dir / "format/future", "config3:0-7\n");
  sysfs.Write(dir / "events/cache-misses", "event=0x2e,umask=0x41\n");
  sysfs.Write(dir / "events/cache-misses.scale", "1\n");
  sysfs.Write(dir / "events/cache-misses.unit", "events\n");
  sysfs.Write(dir / "events/needs-umask", "event=0x10,umask=?\n");
  sysfs.Write("bus/event_source/devices/another/type", "7");

  EXPECT_THAT(Pmu::List(sysfs.path().string()), ElementsAre("another", "fakepmu"));
  auto pmu = Pmu::Load(sysfs.path().string(), "fakepmu");
  ASSERT_TRUE(pmu) << pmu.error().message;
  EXPECT_EQ(pmu->name(), "fakepmu");
  EXPECT_EQ(pmu->type(), 42u);
  EXPECT_THAT(pmu->FormatNames(), ElementsAre("event", "umask"));
  EXPECT_THAT(pmu->EventNames(), ElementsAre("cache-misses", "needs-umask"));
  ASSERT_NE(pmu->FindFormat("umask"), nullptr);
  EXPECT_EQ(pmu->FindFormat("umask")->mask(), 0xff00u);
  EXPECT_EQ(pmu->FindFormat("future"), nullptr);
  ASSERT_NE(pmu->BrokenFormat("future"), nullptr);
  EXPECT_THAT(*pmu->BrokenFormat("future"), HasSubstr("config3"));
  ASSERT_NE(pmu->FindEvent("cache-misses"), nullptr);
  EXPECT_EQ(*pmu->FindEvent("cache-misses"), "event=0x2e,umask=0x41");

  // Event names expand in place; keys with values and format names do not.
  std::vector<PmuTerm> terms = {{"cache-misses", std::nullopt}, {"umask", "2"}};
  auto required = pmu->ExpandEvents(&terms);
  ASSERT_TRUE(required) << required.error().message;
  EXPECT_TRUE(required->empty());
  ASSERT_EQ(terms.size(), 3u);
  EXPECT_EQ(terms[0].key, "event");
  EXPECT_EQ(terms[1].key, "umask");
  EXPECT_EQ(terms[1].value, "0x41");
  EXPECT_EQ(terms[2].value, "2");

  terms = {{"needs-umask", std::nullopt}};
  required = pmu->ExpandEvents(&terms);
  ASSERT_TRUE(required);
  EXPECT_THAT(*required, ElementsAre("umask"));
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(terms[0].key, "event");
}

TEST(PmuFormatTest, LoadErrors) {
  TempDir sysfs;
  auto missing = Pmu::Load(sysfs.path().string(), "nopmu");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
  EXPECT_THAT(missing.error().message, HasSubstr("nopmu"));

  sysfs.Write("bus/event_source/devices/badtype/type", "seven\n");
  auto bad_type = Pmu::Load(sysfs.path().string(), "badtype");
  ASSERT_FALSE(bad_type);
  EXPECT_THAT(bad_type.error().message, HasSubstr("seven"));

  sysfs.Write("bus/event_source/devices/notype/format/event", "config:0-7");
  auto no_type = Pmu::Load(sysfs.path().string(), "notype");
  ASSERT_FALSE(no_type);
  EXPECT_THAT(no_type.error().message, HasSubstr("notype/type"));

  EXPECT_FALSE(Pmu::Load(sysfs.path().string(), "../devices"));
  EXPECT_FALSE(Pmu::Load(sysfs.path().string(), ""));
}

}  // namespace
}  // namespace sample
