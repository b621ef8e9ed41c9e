// The --stats table: every declared counter reaches both the text and the
// JSON output, sections are shown by their predicates, and keys are unique.
#include "report/views/stats_table.h"

#include <set>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/json/json_printer.h"
#include "report/report_options.h"
#include "report/text/text_stats.h"

namespace sample::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every counter of the table at a value of its own.
LoadStats DistinctStats() {
  LoadStats s;
  s.lost_samples = 1001;
  s.malformed_records = 1002;
  s.malformed_samples = 1003;
  s.saturated_periods = 1004;
  s.bad_chunks = 1005;
  s.unknown_event_records = 1006;
  s.unknown_group_reads = 1007;
  s.cut_chains = 1008;
  s.chain_limit = 1009;
  s.frames = 1010;
  s.unknown_frames = 1011;
  s.missing_binaries = 1012;
  s.mismatched_binaries = 1013;
  s.off_cpu.intervals = 1014;
  s.off_cpu.unmatched = 1015;
  s.unwind.dwarf_samples = 1016;
  s.unwind.dwarf_frames = 1017;
  for (size_t i = 0; i < s.unwind.stops.size(); ++i) s.unwind.stops[i] = 1100 + i;
  s.unwind.missing_binaries = 1018;
  s.unwind.unopened_modules = 1019;
  s.unwind.cached_walks = 1020;
  s.unwind.libdw_walks = 1021;
  s.unwind.leaf_samples = 1022;
  s.unwind.leaf_callers_inserted = 1023;
  s.unwind.cut_chains_completed = 1024;
  s.unwind.embedded_binaries = 1025;
  s.unwind.embedded_cut_walks = 1026;
  s.unwind.stack_copy_size = 8192;
  s.unwind.stack_reach[2] = 5;  // 99% and all of the walks within 3 steps
  s.jitdump.dumps = 1027;
  s.jitdump.torn_dumps = 1028;
  s.jitdump.functions = 1029;
  s.jitdump.records.moves = 1030;
  s.jitdump.records.debug_infos = 1031;
  s.jitdump.records.malformed = 1032;
  s.jitdump.records.unknown = 1033;
  s.jitdump.code.unmatched_moves = 1034;
  s.jitdump.records.unmatched_debug_infos = 1035;
  s.jitdump.code.untimed_dumps = 1036;
  s.unwind.leaf_frames_inserted = 1037;
  s.unwind.leaf_steps_joined = 1038;
  s.unwind.leaf_stack_too_small = 1039;
  s.unwind.leaf_copy_size = 256;
  s.unwind.leaf_reach[4] = 3;  // 99% and all of them within 40 bytes
  s.alloc.pairs.allocations = 1040;
  s.alloc.pairs.allocated_bytes = 1041;
  s.alloc.pairs.frees = 1042;
  s.alloc.pairs.unknown_frees = 1043;
  s.alloc.pairs.nested = 1044;
  s.alloc.pairs.failed = 1045;
  s.alloc.pairs.unpaired = 1046;
  s.alloc.pairs.live_blocks = 1047;
  s.alloc.pairs.live_bytes = 1048;
  s.alloc.pairs.peak_bytes = 1049;
  s.alloc.untracked = 1050;
  s.alloc.untracked_bytes = 1051;
  s.alloc.malformed = 1052;
  s.alloc.outside_on = 1053;
  s.cut_inline_chains = 1054;
  return s;
}

std::string Json(const LoadStats& stats) {
  Recording recording;
  const ViewOptions view;
  JsonPrinter printer(recording, view);
  printer.Stats(HeaderView{}, stats);
  return printer.Finish();
}

TEST(StatsTableTest, EveryCounterIsInTheTextAndTheJson) {
  const LoadStats stats = DistinctStats();
  const std::string text = FormatStatsText(HeaderView{}, stats);
  const std::string json = Json(stats);
  for (const StatsCounter& c : StatsCounters()) {
    if (c.entries != nullptr) {  // named counts: a row each, a JSON object
      EXPECT_THAT(json, HasSubstr(fmt::format("\"{}\": {{", c.key)));
      for (const auto& [name, n] : c.entries(stats)) {
        EXPECT_THAT(text, HasSubstr(fmt::format("{}: {}: {:>10}\n", c.label, name, n))) << name;
        EXPECT_THAT(json, HasSubstr(fmt::format("\"{}\": {}", name, n))) << name;
      }
      continue;
    }
    const uint64_t value = c.value(stats);
    EXPECT_THAT(text, HasSubstr(fmt::format("{}", value))) << c.key;
    if (!c.label.empty()) EXPECT_THAT(text, HasSubstr(StatsLabel(c, stats) + ":")) << c.key;
    EXPECT_THAT(json, HasSubstr(fmt::format("\"{}\": {}", c.key, value))) << c.key;
  }
  for (const StatsSectionInfo& section : StatsSections()) {
    EXPECT_THAT(text, HasSubstr(fmt::format("\n{}:\n", section.title)));
    if (!section.json_key.empty()) {
      EXPECT_THAT(json, HasSubstr(fmt::format("\"{}\": {{", section.json_key)));
    }
  }
}

TEST(StatsTableTest, OffCpuAndCutChainsOnlyWhenTheRecordingHasThem) {
  const LoadStats stats;
  const std::string text = FormatStatsText(HeaderView{}, stats);
  const std::string json = Json(stats);
  EXPECT_THAT(text, Not(HasSubstr("Off-CPU")));
  EXPECT_THAT(json, Not(HasSubstr("\"off_cpu\"")));
  EXPECT_THAT(text, Not(HasSubstr("chains cut")));
  EXPECT_THAT(json, Not(HasSubstr("\"cut_chains\"")));
  EXPECT_THAT(json, Not(HasSubstr("\"cut_inline_chains\"")));  // only a crafted file's
  EXPECT_THAT(text, HasSubstr("      unknown frames:          0 of 0 frames\n"));
  EXPECT_THAT(json, HasSubstr("\"malformed_samples\": 0"));
  // The unwinder's sections: in text only with samples, in JSON always.
  EXPECT_THAT(text, Not(HasSubstr("DWARF unwinding")));
  EXPECT_THAT(text, Not(HasSubstr("Leaf check")));
  EXPECT_THAT(json, HasSubstr("\"unwinding\": {"));
  EXPECT_THAT(json, HasSubstr("\"leaf_callers_inserted\": 0"));
}

TEST(StatsTableTest, KeysAreUniqueAndNotesTakeTheirCounters) {
  std::set<std::pair<StatsSection, std::string_view>> keys;
  for (const StatsCounter& c : StatsCounters()) {
    EXPECT_TRUE(keys.emplace(c.section, c.key).second) << c.key;
  }
  const LoadStats stats = DistinctStats();
  EXPECT_EQ(StatsLabel(StatsCounterByKey("cut_chains"), stats), "chains cut at 1009 frames");
  EXPECT_EQ(StatsNote(StatsCounterByKey("malformed_records"), stats), " (1003 of them samples)");
  EXPECT_EQ(StatsNote(StatsCounterByKey("cut_chains"), stats),
            " (1024 completed from the stack copy)");
  LoadStats none_completed = stats;
  none_completed.unwind.cut_chains_completed = 0;
  EXPECT_EQ(StatsNote(StatsCounterByKey("cut_chains"), none_completed),
            " (their callers are missing: sample-record --max-stack)");
  EXPECT_EQ(StatsNote(StatsCounterByKey("stack_read_p99"), stats),
            " bytes or less (all: 192 or less) of 8192-byte copies");
}

}  // namespace
}  // namespace sample::report
