// Tests for the counting mode's output (record/counting/count_table.h): the count
// column, units, derived ratios, multiplexing scaled and marked, -r's
// spread, and the CSV-like (-x) and JSON (-j) lines, with exact text. The
// hardware ratios (IPC, miss rates) are tested here because this machine
// has no PMU to count them.
#include "record/counting/count_table.h"

#include <gtest/gtest.h>

namespace sample::record {
namespace {

CountedEvent Count(const std::string& name, uint64_t count, uint64_t enabled = 1'000'000,
                   uint64_t running = 1'000'000) {
  CountedEvent c;
  c.name = name;
  c.count = count;
  c.enabled = enabled;
  c.running = running;
  return c;
}

CountedEvent Unsupported(const std::string& name) {
  CountedEvent c;
  c.name = name;
  c.supported = false;
  return c;
}

TEST(CountTable, ThousandsSeparators) {
  EXPECT_EQ(WithThousands(0), "0");
  EXPECT_EQ(WithThousands(999), "999");
  EXPECT_EQ(WithThousands(1000), "1,000");
  EXPECT_EQ(WithThousands(1234567), "1,234,567");
  EXPECT_EQ(WithThousands(18446744073709551615u), "18,446,744,073,709,551,615");
}

TEST(CountTable, ScalingByTimeRunning) {
  // Ran 5/8 of the time it was enabled: 1000 seen stands for 1600.
  EXPECT_DOUBLE_EQ(*ScaledCount(Count("cycles", 1000, 800, 500)), 1600);
  EXPECT_DOUBLE_EQ(*ScaledCount(Count("cycles", 1000, 800, 800)), 1000);
  EXPECT_FALSE(ScaledCount(Count("cycles", 0, 800, 0)));  // never ran: <not counted>
  EXPECT_FALSE(ScaledCount(Unsupported("cycles")));
  // count * enabled would overflow 64 bits.
  EXPECT_DOUBLE_EQ(*ScaledCount(Count("cycles", 1ull << 62, 1ull << 40, 1ull << 39)), 0x1p63);
}

TEST(CountTable, Units) {
  EXPECT_EQ(CountUnit("task-clock"), "msec");
  EXPECT_EQ(CountUnit("cpu-clock:u"), "msec");
  EXPECT_EQ(CountUnit("page-faults"), "");
  EXPECT_EQ(CountUnit("sched:sched_switch"), "");
}

TEST(CountTable, TaskClockAndRates) {
  const std::vector<CountedEvent> events = {
      Count("task-clock", 301'270'000), Count("page-faults", 52), Count("cpu-clock", 2'000'000)};
  EXPECT_EQ(FormatCounts(events, 805'567'185, {}),
            "            301.27 msec task-clock                       #    0.374 CPUs utilized\n"
            "                52      page-faults                      #  172.603 /sec\n"
            "              2.00 msec cpu-clock\n");
}

TEST(CountTable, RateSteps) {
  const std::vector<CountedEvent> events = {Count("task-clock", 1'220'000),
                                            Count("page-faults", 75),
                                            Count("context-switches", 5'000'000)};
  EXPECT_EQ(MetricOf(events, 1, 0)->unit, "K/sec");
  EXPECT_NEAR(MetricOf(events, 1, 0)->value, 61.475, 0.001);
  EXPECT_EQ(MetricOf(events, 2, 0)->unit, "G/sec");
  EXPECT_NEAR(MetricOf(events, 2, 0)->value, 4.098, 0.001);
}

TEST(CountTable, HardwareRatiosAndMultiplexing) {
  const std::vector<CountedEvent> events = {
      Count("cycles", 1'000'000),
      Count("instructions", 1'000'000, 800, 500),  // scaled: 1,600,000
      Count("branches", 200'000),
      Count("branch-misses", 10'000),
      Count("cache-references", 4'000),
      Count("cache-misses", 1'000, 1000, 250),  // scaled: 4,000
  };
  EXPECT_EQ(FormatCounts(events, 0, {}),
            "         1,000,000      cycles\n"
            "         1,600,000      instructions                     #    1.600 insn per cycle"
            "           (62.50%)\n"
            "           200,000      branches\n"
            "            10,000      branch-misses                    #     5.00% of all branches\n"
            "             4,000      cache-references\n"
            "             4,000      cache-misses                     #   100.00% of all cache refs"
            "       (25.00%)\n");
}

TEST(CountTable, CyclesPerTaskClockIsGhz) {
  const std::vector<CountedEvent> events = {Count("task-clock", 2'000'000),
                                            Count("cycles", 5'000'000)};
  EXPECT_EQ(MetricOf(events, 1, 0)->unit, "GHz");
  EXPECT_DOUBLE_EQ(MetricOf(events, 1, 0)->value, 2.5);
}

TEST(CountTable, NoRatioWithoutItsPartner) {
  const std::vector<CountedEvent> events = {Count("instructions", 5), Count("branch-misses", 1),
                                            Unsupported("branches")};
  EXPECT_FALSE(MetricOf(events, 0, 1'000'000));
  EXPECT_FALSE(MetricOf(events, 1, 1'000'000));
}

TEST(CountTable, NotCountedAndNotSupported) {
  const std::vector<CountedEvent> events = {Count("task-clock", 0, 1000, 0), Unsupported("cycles")};
  EXPECT_EQ(FormatCounts(events, 1'000'000, {}),
            "     <not counted> msec task-clock\n"
            "   <not supported>      cycles\n");
}

TEST(CountTable, SpreadIsOfTheMean) {
  // Mean 10, sample variance 1, of the mean 1/3: 5.7735%.
  EXPECT_NEAR(SpreadPercent({9, 10, 11}), 5.7735, 0.0001);
  EXPECT_EQ(SpreadPercent({10}), 0);
  EXPECT_EQ(SpreadPercent({0, 0}), 0);
}

TEST(CountTable, SpreadColumn) {
  CountedEvent clock = Count("task-clock", 100'850'000);
  clock.spread_pct = 0.05;
  CountedEvent faults = Count("page-faults", 54);
  faults.spread_pct = 10.5;
  EXPECT_EQ(FormatCounts({clock, faults}, 155'950'000, {}),
            "            100.85 msec task-clock                       #    0.647 CPUs utilized"
            "            ( +-  0.05% )\n"
            "                54      page-faults                      #  535.449 /sec"
            "                     ( +- 10.50% )\n");
}

TEST(CountTable, SeparatedLines) {
  CountedEvent clock = Count("task-clock", 1'162'237, 1'162'237, 1'162'237);
  CountedEvent faults = Count("page-faults", 73, 1'162'237, 1'162'237);
  const std::vector<CountedEvent> events = {clock, faults, Unsupported("cycles"),
                                            Count("context-switches", 3, 1000, 0)};
  const CountLayout layout{CountFormat::kSeparated, ";"};
  EXPECT_EQ(FormatCounts(events, 100'000'000, layout),
            "1.16;msec;task-clock;1162237;100.00;0.012;CPUs utilized\n"
            "73;;page-faults;1162237;100.00;62.810;K/sec\n"
            "<not supported>;;cycles;0;100.00;;\n"
            "<not counted>;;context-switches;0;0.00;;\n");
  EXPECT_EQ(FormatCounts({clock}, 100'000'000, {CountFormat::kSeparated, ","}, 0.1),
            "     0.100000000,1.16,msec,task-clock,1162237,100.00,0.012,CPUs utilized\n");
  clock.spread_pct = 8.47;
  EXPECT_EQ(FormatCounts({clock}, 100'000'000, {CountFormat::kSeparated, ","}),
            "1.16,msec,task-clock,8.47%,1162237,100.00,0.012,CPUs utilized\n");
}

TEST(CountTable, MultiplexedPercentInMachineOutput) {
  const std::vector<CountedEvent> events = {Count("cycles", 1000, 800, 500)};
  EXPECT_EQ(FormatCounts(events, 0, {CountFormat::kSeparated, ","}), "1600,,cycles,500,62.50,,\n");
}

TEST(CountTable, JsonLines) {
  CountedEvent clock = Count("task-clock", 1'344'437, 1'344'437, 1'344'437);
  const std::vector<CountedEvent> events = {clock, Unsupported("cycles")};
  EXPECT_EQ(FormatCounts(events, 100'000'000, {CountFormat::kJson, ","}),
            "{\"counter-value\" : \"1.344437\", \"unit\" : \"msec\", \"event\" : \"task-clock\", "
            "\"event-runtime\" : 1344437, \"pcnt-running\" : 100.00, \"metric-value\" : 0.013444, "
            "\"metric-unit\" : \"CPUs utilized\"}\n"
            "{\"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"cycles\", "
            "\"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, "
            "\"metric-unit\" : \"\"}\n");
  CountedEvent faults = Count("page-faults", 74);
  faults.spread_pct = 4.4;
  EXPECT_EQ(FormatCounts({faults}, 0, {CountFormat::kJson, ","}, 0.25),
            "{\"interval\" : 0.250000000, \"counter-value\" : \"74.000000\", \"unit\" : \"\", "
            "\"event\" : \"page-faults\", \"variance\" : 4.40, \"event-runtime\" : 1000000, "
            "\"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"\"}\n");
}

TEST(CountTable, JsonEscapesNames) {
  const std::vector<CountedEvent> events = {Count("a\"b\\c", 1)};
  const std::string line = FormatCounts(events, 0, {CountFormat::kJson, ","});
  EXPECT_NE(line.find("\"event\" : \"a\\\"b\\\\c\""), std::string::npos) << line;
}

TEST(CountTable, IntervalTableLines) {
  EXPECT_EQ(FormatCounts({Count("page-faults", 75)}, 100'000'000, {}, 0.104418055),
            "     0.104418055                 75      page-faults\n");
}

TEST(CountTable, WholeTable) {
  CountTimes times;
  times.elapsed_s = 0.5;
  times.user_s = 0.25;
  times.sys_s = 0.125;
  EXPECT_EQ(FormatCountTable("'split 0.3'", {Count("task-clock", 250'000'000)}, times, 1),
            "\n Performance counter stats for 'split 0.3':\n\n"
            "            250.00 msec task-clock                       #    0.500 CPUs utilized\n"
            "\n       0.500000000 seconds time elapsed\n"
            "\n       0.250000000 seconds user\n       0.125000000 seconds sys\n\n");
  CountTimes repeated;
  repeated.elapsed_s = 0.5;
  repeated.elapsed_spread_s = 0.01;
  EXPECT_EQ(FormatCountTable("'system wide'", {Count("page-faults", 1234)}, repeated, 3),
            "\n Performance counter stats for 'system wide' (3 runs):\n\n"
            "             1,234      page-faults\n"
            "\n           0.50000 +- 0.01000 seconds time elapsed  ( +-  2.00% )\n\n");
}

TEST(CountTable, MillisecondsCarryAndSeparators) {
  EXPECT_EQ(FormatCounts({Count("cpu-clock", 1'234'999'000)}, 0, {}),
            "          1,235.00 msec cpu-clock\n");
  EXPECT_EQ(FormatCounts({Count("cpu-clock", 12'345'678'900)}, 0, {}),
            "         12,345.68 msec cpu-clock\n");
}

}  // namespace
}  // namespace sample::record
