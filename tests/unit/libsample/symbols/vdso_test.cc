// The [vdso] from end to end of the code, without a recording: the
// recorder's copy of its own vDSO (record/vdso_image.h), and the report's
// symbolization of [vdso] frames from such a copy, with its build-id check.
#include <sys/auxv.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/memory_file.h"
#include "libsample/model/process_table.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/vdso_image.h"
#include "report/load/symbolization.h"

namespace sample {
namespace {

using ::testing::HasSubstr;

// The [vdso] line of /proc/self/maps, as "start-end".
std::string VdsoRange() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.ends_with("[vdso]")) return line.substr(0, line.find(' '));
  }
  return "";
}

class VdsoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getauxval(AT_SYSINFO_EHDR) == 0) GTEST_SKIP() << "this kernel maps no vDSO";
    auto image = ReadOwnVdsoImage();
    ASSERT_TRUE(image) << image.error().message;
    image_ = std::move(*image);
    auto file = MemoryFile::Create("vdso-test", image_);
    ASSERT_TRUE(file) << file.error().message;
    auto symbols = ElfSymbols::Load(file->path());
    ASSERT_TRUE(symbols) << symbols.error().message;
    symbols_.emplace(std::move(*symbols));
  }

  std::vector<std::byte> image_;
  std::optional<ElfSymbols> symbols_;
};

TEST_F(VdsoTest, TheImageIsTheWholeMappingAndAnElfFileWithBuildIdAndSymbols) {
  const std::string range = VdsoRange();
  ASSERT_FALSE(range.empty());
  const uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
  const uint64_t end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
  EXPECT_EQ(start, getauxval(AT_SYSINFO_EHDR));
  EXPECT_EQ(image_.size(), end - start);
  EXPECT_FALSE(symbols_->build_id().empty());
  EXPECT_FALSE(symbols_->symbols().empty());
#if defined(__x86_64__)
  EXPECT_TRUE(std::ranges::any_of(
      symbols_->symbols(), [](const ElfSymbol& s) { return s.name() == "__vdso_clock_gettime"; }));
#endif
}

class VdsoSymbolizationTest : public VdsoTest {
 protected:
  // Dso ids as the ProcessTable gives them: the two pseudo DSOs, then [vdso].
  const std::vector<std::string> dso_paths_ = {"[unknown]", "[kernel.kallsyms]", "[vdso]"};
  static constexpr uint32_t kVdsoDso = 2;

  // A location inside each function symbol of the image (at most 8).
  std::vector<report::Location> Locations(std::vector<std::string>* names) const {
    std::vector<report::Location> locations;
    for (const ElfSymbol& symbol : symbols_->symbols()) {
      if (locations.size() == 8) break;
      const auto offset = symbols_->VaddrToFileOffset(symbol.start + symbol.size / 2);
      if (!offset) continue;
      locations.push_back({kVdsoDso, *offset});
      names->push_back(symbol.name());
    }
    return locations;
  }

  report::SymbolizeResult Symbolize(const std::vector<report::Location>& locations,
                                    const format::Metadata& build_ids, bool force = false) {
    report::SymbolizeOptions options;
    options.recorded.vdso_image = image_;
    options.binaries.force = force;
    options.binaries.files.use_debuginfod = false;
    return report::SymbolizeLocations(locations, dso_paths_, build_ids, "", options);
  }

  std::string Source(const report::SymbolizeResult& result) {
    auto source = format::FindMetadata(result.symbol_sources, "[vdso]");
    return source ? *source : "(none)";
  }
};

TEST_F(VdsoSymbolizationTest, FramesAreNamedFromTheRecordedImage) {
  static_assert(kVdsoDso > ProcessTable::kKernelDso);
  std::vector<std::string> names;
  const auto locations = Locations(&names);
  ASSERT_FALSE(locations.empty());
  const auto result = Symbolize(locations, {{"[vdso]", symbols_->build_id()}});
  for (size_t i = 0; i < locations.size(); ++i) {
    ASSERT_EQ(result.frames_count[i], 1u);
    const report::ResolvedFrame& frame = result.frames[result.frames_begin[i]];
    EXPECT_TRUE(frame.known);
    EXPECT_EQ(frame.name, names[i]);
    EXPECT_NE(frame.symbol_offset, UINT64_MAX);
  }
  EXPECT_EQ(Source(result), "recorded image");
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();
  EXPECT_EQ(result.mismatched_binaries, 0u);
  EXPECT_EQ(result.missing_binaries, 0u);

  // A recording without a build-id for it (none recorded) still uses it.
  EXPECT_TRUE(Symbolize(locations, {}).frames[0].known);
}

TEST_F(VdsoSymbolizationTest, AnImageOfAnotherBuildIdIsNotUsedUnlessForced) {
  std::vector<std::string> names;
  const auto locations = Locations(&names);
  ASSERT_FALSE(locations.empty());
  const format::Metadata other = {{"[vdso]", std::string(40, 'f')}};
  const auto refused = Symbolize(locations, other);
  EXPECT_FALSE(refused.frames[0].known);
  EXPECT_THAT(refused.frames[0].name, HasSubstr("[unknown]"));
  EXPECT_EQ(refused.mismatched_binaries, 1u);
  EXPECT_EQ(Source(refused), "none: build-id differs");
  ASSERT_EQ(refused.warnings.size(), 1u);
  EXPECT_THAT(refused.warnings[0], HasSubstr(std::string(40, 'f')));
  EXPECT_THAT(refused.warnings[0], HasSubstr("--force"));

  const auto forced = Symbolize(locations, other, /*force=*/true);
  EXPECT_TRUE(forced.frames[0].known);
  EXPECT_EQ(forced.frames[0].name, names[0]);
}

TEST_F(VdsoSymbolizationTest, WithoutAUsableImageFramesAreUnknown) {
  std::vector<std::string> names;
  const auto locations = Locations(&names);
  ASSERT_FALSE(locations.empty());
  image_.clear();  // a recording from before the image was stored
  const auto missing = Symbolize(locations, {});
  EXPECT_FALSE(missing.frames[0].known);
  EXPECT_EQ(Source(missing), "none: not in the recording");
  EXPECT_EQ(missing.missing_binaries, 0u);  // nothing the user could supply

  image_.assign(64, std::byte{0x7f});  // not ELF
  const auto broken = Symbolize(locations, {});
  EXPECT_FALSE(broken.frames[0].known);
  EXPECT_EQ(Source(broken), "none: unreadable image");
  ASSERT_EQ(broken.warnings.size(), 1u);
  EXPECT_THAT(broken.warnings[0], HasSubstr("[vdso] image"));
}

}  // namespace
}  // namespace sample
