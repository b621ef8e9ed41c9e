// InternLocationFunctions: a location's frames become Profile functions;
// an inline chain deeper than kMaxInlineDepth (a crafted recording's, from
// any symbol source) is cut to its innermost calls and the function
// holding them, counted for --stats and said once.
#include "report/load/profile_building.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libsample/symbols/address_frames.h"

namespace sample::report {
namespace {

// Locations 0 and 2 with `depth` frames each (inlined calls, then "holder"),
// location 1 with one frame.
SymbolizeResult Frames(size_t depth) {
  SymbolizeResult result;
  for (size_t location = 0; location < 3; ++location) {
    result.frames_begin.push_back(static_cast<uint32_t>(result.frames.size()));
    const size_t count = location == 1 ? 1 : depth;
    for (size_t i = 0; i + 1 < count; ++i) {
      ResolvedFrame frame;
      frame.name = "inl" + std::to_string(i);
      frame.inlined = true;
      result.frames.push_back(frame);
    }
    ResolvedFrame holder;
    holder.name = location == 1 ? "alone" : "holder";
    result.frames.push_back(holder);
    result.frames_count.push_back(static_cast<uint32_t>(count));
  }
  return result;
}

std::vector<std::string> Names(const LocationFunctions& functions, const Profile& profile,
                               size_t location) {
  std::vector<std::string> names;
  for (uint32_t i = 0; i < functions.count[location]; ++i) {
    names.push_back(profile.function(functions.functions[functions.begin[location] + i]).name);
  }
  return names;
}

TEST(ProfileBuildingTest, DeepInlineChainsAreCutCountedAndSaidOnce) {
  const std::vector<Location> locations = {{1, 0x10}, {1, 0x20}, {1, 0x30}};
  const std::vector<std::string> dso_paths = {"[unknown]", "/lib/crafted.so"};
  const std::vector<uint64_t> uses = {1, 1, 1};
  Recording out;
  const size_t depth = 100000;
  LocationFunctions functions =
      InternLocationFunctions(Frames(depth), locations, dso_paths, uses, true, out);
  for (size_t location : {0u, 2u}) {
    const std::vector<std::string> names = Names(functions, out.profile, location);
    ASSERT_EQ(names.size(), kMaxInlineDepth);
    EXPECT_EQ(names.front(), "inl0");
    EXPECT_EQ(names[kMaxInlineDepth - 2], "inl" + std::to_string(kMaxInlineDepth - 2));
    EXPECT_EQ(names.back(), "holder");
  }
  EXPECT_EQ(Names(functions, out.profile, 1), std::vector<std::string>{"alone"});
  EXPECT_EQ(out.stats.cut_inline_chains, 2u);
  ASSERT_EQ(out.warnings.size(), 1u);
  EXPECT_NE(out.warnings[0].find("more than 256 frames of inlined calls"), std::string::npos)
      << out.warnings[0];

  // As deep as shown: nothing cut, nothing said.
  Recording exact;
  functions =
      InternLocationFunctions(Frames(kMaxInlineDepth), locations, dso_paths, uses, true, exact);
  EXPECT_EQ(Names(functions, exact.profile, 0).size(), kMaxInlineDepth);
  EXPECT_EQ(exact.stats.cut_inline_chains, 0u);
  EXPECT_TRUE(exact.warnings.empty());
}

}  // namespace
}  // namespace sample::report
