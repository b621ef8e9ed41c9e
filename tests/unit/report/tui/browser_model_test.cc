#include "report/tui/browser_model.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sample::report {
namespace {

// One process "app", two threads: thread 1 spends 6 samples in hot_a,
// thread 2 three in hot_b and one in libc's memcpy called from hot_b; all
// under run <- main. A second event has one sample in main.
Recording MakeRecording() {
  Recording recording;
  Profile& profile = recording.profile;
  profile.set_dso_names({"/bin/app", "/lib/libc.so.6"});
  profile.set_event_names({"cpu-clock", "page-faults"});
  const uint32_t comm = profile.InternComm("app");
  const uint32_t main = profile.InternFunction(0, "main", false, true);
  const uint32_t run = profile.InternFunction(0, "run", false, true);
  const uint32_t hot_a = profile.InternFunction(0, "hot_a", false, true);
  const uint32_t hot_b = profile.InternFunction(0, "hot_b", false, true);
  const uint32_t memcpy = profile.InternFunction(1, "memcpy", false, true);
  auto add = [&](uint32_t event, uint32_t tid, std::vector<uint32_t> frames, int count) {
    for (int i = 0; i < count; ++i) {
      ProfileSample s;
      s.event = event;
      s.comm = comm;
      s.pid = 1;
      s.tid = tid;
      s.period = 100;
      profile.AddSample(s, frames);
    }
  };
  add(0, 1, {hot_a, run, main}, 6);
  add(0, 2, {hot_b, run, main}, 3);
  add(0, 2, {memcpy, hot_b, run, main}, 1);
  add(1, 1, {main}, 1);
  return recording;
}

// Flat rows by function, each unfolding into its callers (perf's
// --no-children -g caller... callee order: the leaf, then who called it).
ViewOptions FlatBySymbol() {
  ViewOptions view;
  view.children = false;
  view.sort_keys = {SortKey::kSym};
  return view;
}

std::vector<std::string> Texts(const BrowserModel& model) {
  std::vector<std::string> out;
  for (const BrowserLine& line : model.lines()) out.push_back(line.text);
  return out;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(BrowserModelTest, RowsAreTheTextReportsAndUnfoldIntoCallers) {
  const Recording recording = MakeRecording();
  BrowserModel model(recording, FlatBySymbol(), {});
  EXPECT_TRUE(Has(model.Title(), "Samples: 10 of event 'cpu-clock'")) << model.Title();
  EXPECT_TRUE(Has(model.Heading(), "Overhead")) << model.Heading();
  const std::vector<std::string> rows = Texts(model);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(Has(rows[0], "60.00%") && Has(rows[0], "hot_a")) << rows[0];
  EXPECT_TRUE(Has(rows[1], "30.00%") && Has(rows[1], "hot_b")) << rows[1];
  EXPECT_TRUE(Has(rows[2], "10.00%") && Has(rows[2], "memcpy")) << rows[2];
  EXPECT_TRUE(model.lines()[0].foldable);

  // hot_a's callers: one chain (hot_a <- run <- main), unfolded whole.
  model.Toggle();
  std::vector<std::string> lines = Texts(model);
  ASSERT_EQ(lines.size(), 3u + 3u) << ::testing::PrintToString(lines);
  EXPECT_TRUE(Has(lines[1], "hot_a")) << lines[1];
  EXPECT_TRUE(Has(lines[2], "run")) << lines[2];
  EXPECT_TRUE(Has(lines[3], "main")) << lines[3];
  EXPECT_EQ(model.lines()[2].depth, 2u);
  EXPECT_TRUE(Has(lines[4], "hot_b")) << lines[4];

  // <- on a node goes to its parent; on the row, folds everything under it.
  model.Move(2);
  ASSERT_EQ(model.cursor(), 2u);
  EXPECT_EQ(model.CursorFunction(), "run");
  EXPECT_TRUE(model.Fold());  // run is unfolded: folds it (and main)
  EXPECT_EQ(model.lines().size(), 5u);
  EXPECT_TRUE(model.Fold());  // run, folded: to its parent
  EXPECT_EQ(model.cursor(), 1u);
  model.Home();
  EXPECT_TRUE(model.Fold());
  EXPECT_EQ(model.lines().size(), 3u);
  EXPECT_FALSE(model.Fold());  // a folded row has no parent
}

TEST(BrowserModelTest, SearchMovesToMatchesAndWraps) {
  const Recording recording = MakeRecording();
  BrowserModel model(recording, FlatBySymbol(), {});
  EXPECT_TRUE(model.Search("mem.py"));
  EXPECT_EQ(model.cursor(), 2u);
  EXPECT_TRUE(model.Search("hot_"));  // from the cursor on, wrapping
  EXPECT_EQ(model.cursor(), 0u);
  EXPECT_TRUE(model.SearchNext());
  EXPECT_EQ(model.cursor(), 1u);
  EXPECT_TRUE(model.SearchNext());
  EXPECT_EQ(model.cursor(), 0u);
  EXPECT_FALSE(model.Search("nothing_like_it"));
  EXPECT_TRUE(Has(model.message(), "no match")) << model.message();
  EXPECT_FALSE(model.Search("(unclosed"));
  EXPECT_TRUE(Has(model.message(), "not a regular expression")) << model.message();
}

TEST(BrowserModelTest, ZoomsFilterTheRowsAndBackOut) {
  const Recording recording = MakeRecording();
  BrowserModel model(recording, FlatBySymbol(), {});
  model.Move(1);  // hot_b: thread 2's
  ASSERT_TRUE(model.ZoomIn(BrowserModel::Zoom::kThread));
  EXPECT_TRUE(Has(model.Title(), "Thread: 2")) << model.Title();
  std::vector<std::string> rows = Texts(model);
  ASSERT_EQ(rows.size(), 2u) << ::testing::PrintToString(rows);
  EXPECT_TRUE(Has(rows[0], "75.00%") && Has(rows[0], "hot_b")) << rows[0];
  EXPECT_TRUE(Has(rows[1], "memcpy")) << rows[1];

  // Zooms stack: into libc within thread 2.
  model.Move(1);
  ASSERT_TRUE(model.ZoomIn(BrowserModel::Zoom::kDso));
  EXPECT_TRUE(Has(model.Title(), "DSO: libc.so.6")) << model.Title();
  rows = Texts(model);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(Has(rows[0], "100.00%") && Has(rows[0], "memcpy")) << rows[0];

  EXPECT_TRUE(model.ZoomOut());
  EXPECT_TRUE(model.ZoomOut());
  EXPECT_FALSE(model.zoomed());
  EXPECT_EQ(model.lines().size(), 3u);
  EXPECT_FALSE(model.ZoomOut());
  // The rows are not by command: nothing to zoom into, said so.
  EXPECT_FALSE(model.ZoomIn(BrowserModel::Zoom::kComm));
  EXPECT_FALSE(model.message().empty());
}

TEST(BrowserModelTest, EventsSwitchInTurn) {
  const Recording recording = MakeRecording();
  BrowserModel model(recording, FlatBySymbol(), {});
  ASSERT_TRUE(model.NextEvent());
  EXPECT_TRUE(Has(model.Title(), "'page-faults'")) << model.Title();
  ASSERT_EQ(model.lines().size(), 1u);
  EXPECT_TRUE(Has(model.lines()[0].text, "main"));
  ASSERT_TRUE(model.NextEvent());
  EXPECT_TRUE(Has(model.Title(), "'cpu-clock'")) << model.Title();
}

TEST(BrowserModelTest, AnEmptyRecordingHasNoLinesAndNothingBreaks) {
  Recording recording;
  recording.profile.set_event_names({"cpu-clock"});
  BrowserModel model(recording, FlatBySymbol(), {});
  EXPECT_TRUE(model.lines().empty());
  model.Move(5);
  model.Toggle();
  EXPECT_FALSE(model.Unfold());
  EXPECT_FALSE(model.Fold());
  EXPECT_FALSE(model.Search("x"));
  EXPECT_FALSE(model.SearchNext());
  EXPECT_FALSE(model.ZoomIn(BrowserModel::Zoom::kThread));
  EXPECT_EQ(model.CursorFunction(), std::nullopt);
}

// A live view's next interval: MakeRecording's recording refilled in
// place with other counts (thread 1's hot_a, thread 2's hot_b and memcpy
// called from hot_b, and page-faults in main), its functions keeping
// their ids.
void Refill(Recording& recording, int hot_a_count, int hot_b_count, int memcpy_count,
            int faults = 1) {
  Profile& profile = recording.profile;
  profile.ClearSamples();
  const uint32_t comm = profile.InternComm("app");
  const uint32_t main = profile.InternFunction(0, "main", false, true);
  const uint32_t run = profile.InternFunction(0, "run", false, true);
  const uint32_t hot_a = profile.InternFunction(0, "hot_a", false, true);
  const uint32_t hot_b = profile.InternFunction(0, "hot_b", false, true);
  const uint32_t memcpy = profile.InternFunction(1, "memcpy", false, true);
  auto add = [&](uint32_t event, uint32_t tid, std::vector<uint32_t> frames, int count) {
    for (int i = 0; i < count; ++i) {
      ProfileSample s;
      s.event = event;
      s.comm = comm;
      s.pid = 1;
      s.tid = tid;
      s.period = 100;
      profile.AddSample(s, frames);
    }
  };
  add(0, 1, {hot_a, run, main}, hot_a_count);
  add(0, 2, {hot_b, run, main}, hot_b_count);
  add(0, 2, {memcpy, hot_b, run, main}, memcpy_count);
  add(1, 1, {main}, faults);
}

TEST(BrowserModelTest, ReloadKeepsTheUnfoldedRowAndTheCursorByFunction) {
  Recording recording = MakeRecording();
  BrowserModel model(recording, FlatBySymbol(), {});
  model.Move(1);
  model.Toggle();  // hot_b <- run <- main
  model.Move(2);
  ASSERT_EQ(model.cursor(), 3u);
  ASSERT_EQ(model.CursorFunction(), "run");
  ASSERT_EQ(model.lines().size(), 6u) << ::testing::PrintToString(Texts(model));

  // hot_b first now, hot_a last.
  Refill(recording, 1, 6, 3);
  model.Reload();
  const std::vector<std::string> lines = Texts(model);
  ASSERT_EQ(lines.size(), 6u) << ::testing::PrintToString(lines);
  EXPECT_TRUE(Has(lines[0], "60.00%") && Has(lines[0], "hot_b")) << lines[0];
  EXPECT_TRUE(model.lines()[0].unfolded);
  EXPECT_TRUE(Has(lines[1], "hot_b")) << lines[1];
  EXPECT_TRUE(Has(lines[2], "run")) << lines[2];
  EXPECT_TRUE(Has(lines[3], "main")) << lines[3];
  EXPECT_TRUE(Has(lines[4], "30.00%") && Has(lines[4], "memcpy")) << lines[4];
  EXPECT_FALSE(model.lines()[4].unfolded);
  EXPECT_TRUE(Has(lines[5], "10.00%") && Has(lines[5], "hot_a")) << lines[5];
  EXPECT_FALSE(model.lines()[5].unfolded);
  EXPECT_EQ(model.cursor(), 2u);
  EXPECT_EQ(model.CursorFunction(), "run");
  EXPECT_TRUE(Has(model.Title(), "Samples: 10 of event 'cpu-clock'")) << model.Title();

  // The cursor on a row: the same row, wherever it went.
  model.End();
  ASSERT_EQ(model.CursorFunction(), "hot_a");
  Refill(recording, 5, 3, 1);
  model.Reload();
  EXPECT_EQ(model.cursor(), 0u);
  EXPECT_EQ(model.CursorFunction(), "hot_a");
  EXPECT_TRUE(Has(model.lines()[0].text, "55.56%")) << model.lines()[0].text;
  EXPECT_TRUE(model.lines()[1].unfolded);  // hot_b, second now, still unfolded
}

TEST(BrowserModelTest, ReloadKeepsTheZoomAndTheEvent) {
  Recording recording = MakeRecording();
  BrowserModel model(recording, FlatBySymbol(), {});
  model.Move(1);  // hot_b: thread 2's
  ASSERT_TRUE(model.ZoomIn(BrowserModel::Zoom::kThread));
  model.Move(1);
  ASSERT_EQ(model.CursorFunction(), "memcpy");

  // Thread 1 gets most samples; thread 2's now mostly memcpy.
  Refill(recording, 8, 1, 3);
  model.Reload();
  EXPECT_TRUE(model.zoomed());
  EXPECT_TRUE(Has(model.Title(), "Thread: 2")) << model.Title();
  EXPECT_TRUE(Has(model.Title(), "Samples: 4 of event 'cpu-clock'")) << model.Title();
  std::vector<std::string> rows = Texts(model);
  ASSERT_EQ(rows.size(), 2u) << ::testing::PrintToString(rows);
  EXPECT_TRUE(Has(rows[0], "75.00%") && Has(rows[0], "memcpy")) << rows[0];
  EXPECT_TRUE(Has(rows[1], "25.00%") && Has(rows[1], "hot_b")) << rows[1];
  EXPECT_EQ(model.cursor(), 0u);
  EXPECT_EQ(model.CursorFunction(), "memcpy");
  EXPECT_TRUE(model.ZoomOut());
  EXPECT_EQ(model.lines().size(), 3u);

  // The second event stays shown across a reload.
  ASSERT_TRUE(model.NextEvent());
  Refill(recording, 2, 2, 2, 4);
  model.Reload();
  EXPECT_TRUE(Has(model.Title(), "Samples: 4 of event 'page-faults'")) << model.Title();
  ASSERT_EQ(model.lines().size(), 1u);
  EXPECT_TRUE(Has(model.lines()[0].text, "main")) << model.lines()[0].text;
}

TEST(BrowserModelTest, ReloadWithoutTheCursorsRowClampsTheCursor) {
  Recording recording = MakeRecording();
  BrowserModel model(recording, FlatBySymbol(), {});
  model.End();
  model.Toggle();  // memcpy <- hot_b <- run <- main
  model.End();
  ASSERT_EQ(model.CursorFunction(), "main");
  ASSERT_EQ(model.cursor(), 6u);

  Refill(recording, 4, 2, 0);  // no memcpy this time
  model.Reload();
  const std::vector<std::string> rows = Texts(model);
  ASSERT_EQ(rows.size(), 2u) << ::testing::PrintToString(rows);
  EXPECT_TRUE(Has(rows[0], "hot_a") && Has(rows[1], "hot_b")) << ::testing::PrintToString(rows);
  EXPECT_FALSE(model.lines()[0].unfolded);
  EXPECT_FALSE(model.lines()[1].unfolded);
  EXPECT_EQ(model.cursor(), 1u);
  model.Toggle();  // the keys still work on the clamped line
  EXPECT_TRUE(model.lines()[1].unfolded);

  // Nothing at all, then samples again: nothing breaks.
  Refill(recording, 0, 0, 0, 0);
  model.Reload();
  EXPECT_TRUE(model.lines().empty());
  EXPECT_EQ(model.cursor(), 0u);
  EXPECT_EQ(model.CursorFunction(), std::nullopt);
  // Samples again: what was unfolded before the empty interval is again,
  // and the cursor is back on its line.
  Refill(recording, 1, 1, 1);
  model.Reload();
  EXPECT_GT(model.lines().size(), 3u);
  EXPECT_TRUE(model.lines()[model.cursor()].unfolded);
  EXPECT_EQ(model.CursorFunction(), "hot_b");
}

}  // namespace
}  // namespace sample::report
