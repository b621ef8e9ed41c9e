// Tests for `sample-report --diff`: the function-by-function comparison
// (matching by DSO basename and symbol, shares, deltas, one-sided
// functions, perf diff's order, filters and --max-stack on both sides,
// events matched by name), the per-path baseline weights a differential
// flame graph colours by, the table and JSON printers, and the refused
// option combinations.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/model/stack_tree.h"
#include "libsample/model/stack_tree_diff.h"
#include "report/diff/diff_printer.h"
#include "report/diff_runner.h"
#include "report/export/export_input.h"
#include "report/export/flame_diff.h"
#include "report/diff/profile_diff.h"

namespace sample::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A recording of one program: the baseline's binary at /old/prog, the new
// one's at /new/prog (a rebuild elsewhere), both with libc and the kernel.
struct Side {
  explicit Side(const std::string& prog_path, std::vector<std::string> events = {"cpu-clock"}) {
    Profile& p = recording.profile;
    p.set_event_names(std::move(events));
    p.set_dso_names({"[unknown]", "[kernel.kallsyms]", prog_path, "/usr/lib/libc.so.6"});
    main = p.InternFunction(2, "main", false, true);
    hot = p.InternFunction(2, "hot", false, true);
    cold = p.InternFunction(2, "cold", false, true);
    memcpy = p.InternFunction(3, "memcpy", false, true);
    sys = p.InternFunction(1, "do_syscall_64", true, true);
    prog = p.InternComm("prog");
    other = p.InternComm("other");
  }
  // `count` samples of `period` each, frames leaf first.
  void Add(uint32_t comm, uint64_t period, std::vector<uint32_t> frames, int count = 1,
           uint32_t event = 0) {
    for (int i = 0; i < count; ++i) {
      ProfileSample s;
      s.event = event;
      s.comm = comm;
      s.pid = s.tid = comm == prog ? 10 : 20;
      s.period = period;
      s.time = 1000 + recording.profile.samples().size();
      recording.profile.AddSample(s, frames);
    }
  }
  DiffInput Input(const SampleFilter* f = nullptr) const { return {&recording.profile, f}; }

  Recording recording;
  uint32_t main = 0, hot = 0, cold = 0, memcpy = 0, sys = 0, prog = 0, other = 0;
};

std::vector<DiffSection> Diff(const Side& before, const Side& after, DiffOptions options = {},
                              const SampleFilter* filter = nullptr,
                              std::vector<std::string>* warnings_out = nullptr) {
  std::vector<std::string> warnings;
  auto sections = DiffProfiles(before.Input(filter), after.Input(filter), options, warnings);
  EXPECT_TRUE(sections) << sections.error().message;
  if (warnings_out != nullptr) *warnings_out = warnings;
  return sections ? *sections : std::vector<DiffSection>{};
}

std::vector<std::string> Names(const DiffSection& section) {
  std::vector<std::string> names;
  for (const DiffEntry& e : section.entries) names.push_back(e.dso + " " + e.symbol);
  return names;
}

// Baseline: hot 50%, cold 30%, memcpy 20%. New: hot 70%, cold 10%, the
// kernel 20% (memcpy gone).
class ProfileDiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    before_.Add(before_.prog, 10, {before_.hot, before_.main}, 5);
    before_.Add(before_.prog, 10, {before_.cold, before_.main}, 3);
    before_.Add(before_.prog, 10, {before_.memcpy, before_.cold, before_.main}, 2);
    after_.Add(after_.prog, 10, {after_.hot, after_.main}, 7);
    after_.Add(after_.prog, 10, {after_.cold, after_.main}, 1);
    after_.Add(after_.prog, 20, {after_.sys, after_.cold, after_.main}, 1);
  }
  Side before_{"/old/prog"};
  Side after_{"/new/prog"};
};

TEST_F(ProfileDiffTest, FunctionsMatchByDsoBasenameAndSymbolWithSharesOfEachSidesPeriod) {
  auto sections = Diff(before_, after_);
  ASSERT_EQ(sections.size(), 1u);
  const DiffSection& s = sections[0];
  EXPECT_EQ(s.event, "cpu-clock");
  EXPECT_EQ(s.before.samples, 10u);
  EXPECT_EQ(s.before.period, 100u);
  EXPECT_EQ(s.after.samples, 9u);
  EXPECT_EQ(s.after.period, 100u);
  ASSERT_EQ(s.entries.size(), 4u);
  const DiffEntry& hot = s.entries[0];
  EXPECT_EQ(hot.dso, "prog");  // /old/prog and /new/prog are one DSO
  EXPECT_EQ(hot.symbol, "hot");
  EXPECT_TRUE(hot.before.present);
  EXPECT_TRUE(hot.after.present);
  EXPECT_EQ(hot.before.samples, 5u);
  EXPECT_EQ(hot.after.samples, 7u);
  EXPECT_EQ(hot.before.period, 50u);
  EXPECT_EQ(hot.after.period, 70u);
  EXPECT_DOUBLE_EQ(hot.before.share, 50.0);
  EXPECT_DOUBLE_EQ(hot.after.share, 70.0);
  EXPECT_DOUBLE_EQ(hot.delta, 20.0);
}

TEST_F(ProfileDiffTest, OneSidedFunctionsAndPerfDiffsOrder) {
  auto sections = Diff(before_, after_);
  ASSERT_EQ(sections.size(), 1u);
  // |delta| 20 for all three, ties by the larger baseline: hot +20 (50%),
  // cold -20 (30%), the kernel +20 (new only); then memcpy, only in the
  // baseline.
  EXPECT_THAT(
      Names(sections[0]),
      ElementsAre("prog hot", "prog cold", "[kernel.kallsyms] do_syscall_64", "libc.so.6 memcpy"));
  const DiffEntry& sys = sections[0].entries[2];
  EXPECT_FALSE(sys.before.present);
  EXPECT_TRUE(sys.kernel);
  EXPECT_DOUBLE_EQ(sys.after.share, 20.0);
  EXPECT_DOUBLE_EQ(sys.delta, 20.0);
  const DiffEntry& gone = sections[0].entries[3];
  EXPECT_TRUE(gone.before.present);
  EXPECT_FALSE(gone.after.present);
  EXPECT_EQ(gone.after.samples, 0u);
  EXPECT_DOUBLE_EQ(gone.delta, -20.0);
}

TEST_F(ProfileDiffTest, ARecordingAgainstItselfHasNoDeltaAndKeepsItsOwnOrder) {
  auto sections = Diff(before_, before_);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_THAT(Names(sections[0]), ElementsAre("prog hot", "prog cold", "libc.so.6 memcpy"));
  for (const DiffEntry& e : sections[0].entries) EXPECT_EQ(e.delta, 0.0) << e.symbol;
}

TEST_F(ProfileDiffTest, ADifferentBasenameIsADifferentFunction) {
  Side moved("/new/prog2");
  moved.Add(moved.prog, 10, {moved.hot, moved.main});
  auto sections = Diff(before_, moved);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_THAT(Names(sections[0]),
              ElementsAre("prog2 hot", "prog hot", "prog cold", "libc.so.6 memcpy"));
}

TEST_F(ProfileDiffTest, FiltersAndMaxStackApplyToBothSides) {
  before_.Add(before_.other, 10, {before_.hot, before_.main}, 10);
  after_.Add(after_.other, 10, {after_.cold, after_.main}, 10);
  SampleFilterOptions only_prog;
  only_prog.comms = {"prog"};
  const SampleFilter filter(only_prog);
  auto filtered = Diff(before_, after_, {}, &filter);
  ASSERT_EQ(filtered.size(), 1u);
  EXPECT_EQ(filtered[0].before.samples, 10u);  // not 20: "other" is filtered out of both
  EXPECT_EQ(filtered[0].after.samples, 9u);
  EXPECT_EQ(filtered[0].entries[0].symbol, "hot");
  EXPECT_DOUBLE_EQ(filtered[0].entries[0].before.share, 50.0);  // as unfiltered

  // Children: main holds everything on both sides; --max-stack 1 keeps only
  // the leaves, so main drops out and cold keeps only its own time.
  DiffOptions children;
  children.children = true;
  auto with_callers = Diff(before_, after_, children, &filter);
  ASSERT_EQ(with_callers.size(), 1u);
  EXPECT_EQ(with_callers[0].entries.size(), 5u);
  children.max_stack = 1;
  auto leaves = Diff(before_, after_, children, &filter);
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_THAT(Names(leaves[0]), ElementsAre("prog hot", "prog cold",
                                            "[kernel.kallsyms] do_syscall_64", "libc.so.6 memcpy"));
}

TEST_F(ProfileDiffTest, ChildrenSharesAddCallersTime) {
  DiffOptions children;
  children.children = true;
  auto sections = Diff(before_, after_, children);
  ASSERT_EQ(sections.size(), 1u);
  for (const DiffEntry& e : sections[0].entries) {
    if (e.symbol == "main") {
      EXPECT_DOUBLE_EQ(e.before.share, 100.0);
      EXPECT_DOUBLE_EQ(e.delta, 0.0);
    }
    if (e.symbol == "cold") {
      EXPECT_DOUBLE_EQ(e.before.share, 50.0);  // its own 30 and memcpy's 20
      EXPECT_DOUBLE_EQ(e.after.share, 30.0);   // its own 10 and the kernel's 20
    }
  }
}

TEST(ProfileDiffEventsTest, EventsMatchByNameAndOneSidedEventsAreNamed) {
  Side before("/p", {"cpu-clock", "page-faults"});
  Side after("/p", {"page-faults", "task-clock"});
  before.Add(before.prog, 1, {before.hot}, 1, 0);
  before.Add(before.prog, 1, {before.hot}, 2, 1);
  after.Add(after.prog, 1, {after.hot}, 3, 0);
  after.Add(after.prog, 1, {after.cold}, 1, 1);
  std::vector<std::string> warnings;
  auto sections = Diff(before, after, {}, nullptr, &warnings);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].event, "page-faults");
  EXPECT_EQ(sections[0].before.samples, 2u);
  EXPECT_EQ(sections[0].after.samples, 3u);  // event 0 of the new file
  EXPECT_THAT(warnings,
              ElementsAre("event 'cpu-clock' is only in the baseline recording: not compared",
                          "event 'task-clock' is only in the new recording: not compared"));

  DiffOptions only;
  only.event = "cpu-clock";
  auto missing = DiffProfiles(before.Input(), after.Input(), only, warnings);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "--event 'cpu-clock': the new recording has no such event");
  Side grouped("/p", {"cpu-clock", "page-faults"});
  grouped.recording.profile.set_group_members(0, {1});
  grouped.Add(grouped.prog, 1, {grouped.hot}, 1, 0);
  only.event = "page-faults";
  missing = DiffProfiles(before.Input(), grouped.Input(), only, warnings);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "--event 'page-faults': it has no samples of its own, its counts ride on "
            "cpu-clock's (--event cpu-clock)");
  Side unrelated("/p", {"cycles"});
  missing = DiffProfiles(before.Input(), unrelated.Input(), {}, warnings);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "the two recordings have no event in common");
}

TEST_F(ProfileDiffTest, TheTableShowsOneSidedFunctionsAsPerfDiff) {
  auto sections = Diff(before_, after_);
  const std::string text = DiffText({"old.data", "new.data", false}, sections, false);
  EXPECT_EQ(text,
            "# Data files:\n"
            "#  [0] old.data (Baseline)\n"
            "#  [1] new.data\n"
            "#\n"
            "# Event 'cpu-clock'\n"
            "#\n"
            "# Samples: 10 in the baseline, 9 in the new file\n"
            "# Event count (approx.): 100 in the baseline, 100 in the new file\n"
            "#\n"
            "# Baseline  Base samples    Delta  Samples  Shared Object      Symbol\n"
            "# ........  ............  .......  .......  .................  .................\n"
            "#\n"
            "    50.00%             5  +20.00%        7  prog               [.] hot\n"
            "    30.00%             3  -20.00%        1  prog               [.] cold\n"
            "                       0  +20.00%        1  [kernel.kallsyms]  [k] do_syscall_64\n"
            "    20.00%             2                    libc.so.6          [.] memcpy\n");
  const std::string periods = DiffText({"a", "b", true}, sections, true);
  EXPECT_THAT(periods, HasSubstr("# Children: each function's share includes its callees' time\n"));
  EXPECT_THAT(periods,
              HasSubstr("# Baseline  Base samples  Base period    Delta  Samples  Period"));
  EXPECT_THAT(periods, HasSubstr("                       0            0  +20.00%        1      20"
                                 "  [kernel.kallsyms]  [k] do_syscall_64\n"
                                 "    20.00%             2           20                          "
                                 "  libc.so.6          [.] memcpy\n"));
}

TEST_F(ProfileDiffTest, JsonGivesNullForTheMissingSide) {
  const std::string json = DiffJson({"old.data", "new.data", false}, Diff(before_, after_));
  EXPECT_THAT(json, HasSubstr("\"format\": \"sample-report-diff\""));
  EXPECT_THAT(json, HasSubstr("\"symbol\": \"do_syscall_64\",\n"
                              "          \"dso\": \"[kernel.kallsyms]\",\n"
                              "          \"kernel\": true,\n"
                              "          \"baseline\": null,"));
  EXPECT_THAT(json, HasSubstr("\"new\": null,\n          \"delta\": -20.00"));
}

// The new tree's paths with the baseline's weight on the same path: main
// and cold are on both sides, the kernel path only in the new one, memcpy
// only in the baseline (not drawable with the new widths: unmatched).
TEST_F(ProfileDiffTest, StackTreeDiffGivesEachNewPathItsBaselineWeight) {
  StackTree before(/*by_comm=*/true), after(/*by_comm=*/true);
  for (const ProfileSample& s : before_.recording.profile.samples()) {
    before.Add(s.comm, before_.recording.profile.frames(s), s.period);
  }
  for (const ProfileSample& s : after_.recording.profile.samples()) {
    after.Add(s.comm, after_.recording.profile.frames(s), s.period);
  }
  const StackTreeDiff diff(before, before_.recording.profile, after, after_.recording.profile);
  ASSERT_EQ(diff.baseline().size(), after.nodes().size());
  auto node_of = [&](uint32_t parent, uint32_t function) {
    for (uint32_t child : after.node(parent).children) {
      if (after.node(child).function == function) return child;
    }
    ADD_FAILURE() << "no child " << function;
    return StackTree::kRoot;
  };
  const uint32_t comm = after.node(StackTree::kRoot).children.at(0);
  const uint32_t main = node_of(comm, after_.main);
  const uint32_t cold = node_of(main, after_.cold);
  const uint32_t sys = node_of(cold, after_.sys);
  const uint32_t hot = node_of(main, after_.hot);
  EXPECT_EQ(diff.baseline(StackTree::kRoot).total_samples, 10u);
  EXPECT_EQ(diff.baseline(comm).total_samples, 10u);
  EXPECT_EQ(diff.baseline(cold).total_samples, 5u);  // with memcpy's 2 under it
  EXPECT_EQ(diff.baseline(cold).self_samples, 3u);
  EXPECT_EQ(diff.baseline(cold).total_period, 50u);
  EXPECT_EQ(diff.baseline(hot).total_samples, 5u);
  EXPECT_EQ(diff.baseline(sys).node, StackNode::kNone);
  EXPECT_EQ(diff.baseline(sys).total_samples, 0u);
  EXPECT_EQ(diff.unmatched_samples(), 2u);  // memcpy
  EXPECT_EQ(diff.unmatched_period(), 20u);
  // By samples: cold 5/10 -> 2/9; by period: 50/100 -> 30/100.
  EXPECT_NEAR(diff.Delta(after, cold, /*by_period=*/false), 100.0 * 2 / 9 - 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(diff.Delta(after, cold, /*by_period=*/true), -20.0);
  EXPECT_DOUBLE_EQ(diff.Delta(after, sys, /*by_period=*/true), 20.0);
  EXPECT_DOUBLE_EQ(diff.Delta(after, StackTree::kRoot, /*by_period=*/true), 0.0);
}

// What the SVG exporter gets: ExportInputs after the same filters and
// --max-stack, the new one pointing at the baseline's.
TEST_F(ProfileDiffTest, FlameDiffComparesTheSectionsOfTheSameEventAfterFiltersAndMaxStack) {
  before_.Add(before_.other, 10, {before_.hot, before_.main}, 10);
  SampleFilterOptions only_prog;
  only_prog.comms = {"prog"};
  const SampleFilter filter(only_prog);
  ExportOptions options;
  options.max_stack = 1;
  options.weight = ExportWeight::kPeriod;
  std::vector<std::string> warnings;
  auto base = BuildExportInput(before_.recording, filter, options, true, warnings);
  auto input = BuildExportInput(after_.recording, filter, options, true, warnings);
  ASSERT_TRUE(base && input);
  input->baseline = &*base;
  const FlameDiff flame(*input->baseline, *input, 0, /*by_comm=*/false);
  const StackTree& tree = flame.tree();
  // Leaves only, sorted by name: cold, do_syscall_64, hot.
  const std::vector<uint32_t>& roots = tree.node(StackTree::kRoot).children;
  ASSERT_EQ(roots.size(), 3u);
  EXPECT_EQ(tree.node(roots[0]).function, after_.cold);
  EXPECT_EQ(tree.node(roots[2]).function, after_.hot);
  EXPECT_EQ(flame.diff().baseline(StackTree::kRoot).total_samples, 10u);  // not "other"'s
  EXPECT_EQ(flame.diff().baseline(roots[0]).total_period, 30u);           // cold's own
  EXPECT_DOUBLE_EQ(flame.Delta(roots[0]), -20.0);
  EXPECT_DOUBLE_EQ(flame.Delta(roots[1]), 20.0);
  EXPECT_DOUBLE_EQ(flame.Delta(roots[2]), 20.0);
  EXPECT_DOUBLE_EQ(flame.max_abs_delta(), 20.0);
  // By samples (the default weight): cold 3/10 -> 1/9.
  options.weight = ExportWeight::kSamples;
  input = BuildExportInput(after_.recording, filter, options, true, warnings);
  ASSERT_TRUE(input);
  const FlameDiff by_samples(*base, *input, 0, /*by_comm=*/true);
  const uint32_t comm = by_samples.tree().node(StackTree::kRoot).children.at(0);
  const uint32_t cold = by_samples.tree().node(comm).children.at(0);
  EXPECT_EQ(by_samples.tree().node(cold).function, after_.cold);
  EXPECT_NEAR(by_samples.Delta(cold), 100.0 / 9 - 30.0, 1e-9);
  EXPECT_NEAR(by_samples.max_abs_delta(), 700.0 / 9 - 50.0, 1e-9);  // hot: 5/10 -> 7/9
}

TEST(DiffOptionsTest, ViewsOfOneRecordingAndOtherFormatsAreRefused) {
  ReportOptions options;
  options.diff_base = "base.data";
  EXPECT_TRUE(CheckDiffOptions(options));
  options.format = OutputFormat::kJson;
  EXPECT_TRUE(CheckDiffOptions(options));
  options.format = OutputFormat::kSvg;
  EXPECT_TRUE(CheckDiffOptions(options));
  options.format = OutputFormat::kPprof;
  auto refused = CheckDiffOptions(options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "--diff prints --format text or json, or draws svg; not pprof");
  options.format = OutputFormat::kText;
  for (bool ReportOptions::*view : {&ReportOptions::header, &ReportOptions::header_only,
                                    &ReportOptions::stats, &ReportOptions::script}) {
    ReportOptions one = options;
    one.*view = true;
    refused = CheckDiffOptions(one);
    ASSERT_FALSE(refused);
    EXPECT_THAT(refused.error().message, HasSubstr("show one recording"));
  }
  options.view.call_graph = CallGraphSpec{};
  refused = CheckDiffOptions(options);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("no call graph"));
}

}  // namespace
}  // namespace sample::report
