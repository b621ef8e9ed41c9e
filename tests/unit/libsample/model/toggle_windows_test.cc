// Tests for ToggleWindows: windows per thread and per CPU, depth for nested
// and recursive calls, unmatched offs, start=on, and the stats.
#include "libsample/model/toggle_windows.h"

#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace sample {
namespace {

// Events: 0 = cpu-clock (toggled), 1 = entry probe (on), 2 = return probe (off).
ToggleWindows EntryAndReturn(bool per_cpu, bool starts_on = false) {
  return ToggleWindows({{1, 0, true, per_cpu, starts_on}, {2, 0, false, per_cpu, starts_on}}, 3);
}

TEST(ToggleWindowsTest, KeepsSamplesInsideTheThreadsWindow) {
  ToggleWindows w = EntryAndReturn(false);
  EXPECT_TRUE(w.active());
  EXPECT_TRUE(w.IsTrigger(1));
  EXPECT_FALSE(w.IsTrigger(0));
  EXPECT_TRUE(w.IsToggled(0));
  EXPECT_FALSE(w.Inside(0, 10, 0));  // before any on
  w.Trigger(1, 10, 0);
  EXPECT_TRUE(w.Inside(0, 10, 1));   // same thread, another CPU
  EXPECT_FALSE(w.Inside(0, 11, 0));  // another thread, the same CPU
  EXPECT_TRUE(w.Inside(1, 11, 0));   // triggers themselves are not toggled
  w.Trigger(2, 10, 1);
  EXPECT_FALSE(w.Inside(0, 10, 1));
  const ToggleStats& s = w.stats()[0];
  EXPECT_EQ(s.windows, 1u);
  EXPECT_EQ(s.inside, 1u);
  EXPECT_EQ(s.outside, 3u);
  EXPECT_EQ(s.unmatched_off, 0u);
  EXPECT_FALSE(w.stats()[1].toggled);
}

TEST(ToggleWindowsTest, RecursionIsOneWindowUntilTheOutermostReturn) {
  ToggleWindows w = EntryAndReturn(false);
  std::vector<std::pair<uint32_t, ToggleChange>> changes;
  auto note = [&](uint32_t target, ToggleChange c) { changes.emplace_back(target, c); };
  for (int depth = 0; depth < 3; ++depth) w.Trigger(1, 7, 0, note);
  EXPECT_EQ(w.Depth(0, 7), 3u);
  w.Trigger(2, 7, 0, note);
  w.Trigger(2, 7, 0, note);
  EXPECT_TRUE(w.Inside(0, 7, 0));  // still in the outermost call
  w.Trigger(2, 7, 0, note);
  EXPECT_FALSE(w.Inside(0, 7, 0));
  w.Trigger(2, 7, 0, note);  // one return too many
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0], std::make_pair(0u, ToggleChange::kOpened));
  EXPECT_EQ(changes[1], std::make_pair(0u, ToggleChange::kClosed));
  EXPECT_EQ(w.stats()[0].windows, 1u);
  EXPECT_EQ(w.stats()[0].unmatched_off, 1u);
  EXPECT_EQ(w.Depth(0, 7), 0u);
}

TEST(ToggleWindowsTest, PerCpuAndStartOn) {
  ToggleWindows cpu = EntryAndReturn(true);
  cpu.Trigger(1, 10, 1);
  EXPECT_TRUE(cpu.Inside(0, 99, 1));  // any thread on CPU 1
  EXPECT_FALSE(cpu.Inside(0, 10, 0));

  ToggleWindows on = EntryAndReturn(false, /*starts_on=*/true);
  EXPECT_TRUE(on.Inside(0, 5, 0));  // open from the start, for every thread
  EXPECT_TRUE(on.Inside(0, 6, 0));
  on.Trigger(2, 5, 0);
  EXPECT_FALSE(on.Inside(0, 5, 0));
  EXPECT_TRUE(on.Inside(0, 6, 0));
  EXPECT_EQ(on.stats()[0].windows, 2u);  // threads 5 and 6 each started inside one
}

TEST(ToggleWindowsTest, NoRelationsKeepsEverything) {
  ToggleWindows none;
  EXPECT_FALSE(none.active());
  EXPECT_TRUE(none.Inside(0, 1, 0));
  EXPECT_FALSE(none.IsTrigger(0));
  // Relations naming events past the table are ignored, not indexed.
  ToggleWindows bad({{5, 0, true, false, false}}, 2);
  EXPECT_FALSE(bad.IsTrigger(5));
  EXPECT_TRUE(bad.Inside(0, 1, 0));
}

}  // namespace
}  // namespace sample
