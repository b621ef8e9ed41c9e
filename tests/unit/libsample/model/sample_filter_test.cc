// Tests for SampleFilter's --symbols: a C++ function matches by its name
// with or without its parameter list, whichever the report prints.
#include "libsample/model/sample_filter.h"

#include <gtest/gtest.h>

namespace sample {
namespace {

TEST(SampleFilterTest, SymbolsMatchCxxNamesWithOrWithoutParameters) {
  Profile profile;
  profile.set_dso_names({"/bin/prog"});
  const uint32_t twice_int =
      profile.InternFunction(0, "twice", false, true, false, {}, "twice(int)");
  const uint32_t twice_double =
      profile.InternFunction(0, "twice", false, true, false, {}, "twice(double)");
  const uint32_t main_id = profile.InternFunction(0, "main", false, true);
  profile.ChooseNames(false);  // the overloads are named by their signatures
  for (uint32_t f : {twice_int, twice_double, main_id}) profile.AddSample({}, std::vector{f});
  const auto kept = [&](std::vector<std::string> symbols) {
    SampleFilterOptions options;
    options.symbols = std::move(symbols);
    const SampleFilter filter(options);
    std::vector<std::string> names;
    for (const ProfileSample& s : profile.samples()) {
      if (filter.Keeps(profile, s)) names.push_back(profile.function(profile.frames(s)[0]).name);
    }
    return names;
  };
  EXPECT_EQ(kept({"twice"}), (std::vector<std::string>{"twice(int)", "twice(double)"}));
  EXPECT_EQ(kept({"twice(double)"}), (std::vector<std::string>{"twice(double)"}));
  EXPECT_EQ(kept({"main"}), (std::vector<std::string>{"main"}));
  EXPECT_TRUE(kept({"main(int)"}).empty());
}

}  // namespace
}  // namespace sample
