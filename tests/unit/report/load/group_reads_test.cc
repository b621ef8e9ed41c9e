// GroupReadDeltas: a member's count for a leader's sample is the increase
// of its running total since the previous read of the same id.
#include "report/load/group_reads.h"

#include <gtest/gtest.h>

#include <vector>

namespace sample::report {
namespace {

// A leader (event 0, id 100) and two members (events 1 and 2, ids 101 and
// 102).
EventTable Table() {
  std::vector<EventDesc> events(3);
  events[0].name = "cpu-clock";
  events[0].ids = {100};
  events[1].name = "task-clock";
  events[1].ids = {101};
  events[2].name = "page-faults";
  events[2].ids = {102};
  return EventTable(events);
}

// The PERF_FORMAT_GROUP | PERF_FORMAT_ID values of a sample: (value, id)
// pairs.
struct Read {
  explicit Read(std::vector<std::pair<uint64_t, uint64_t>> values) : count(values.size()) {
    for (auto [value, id] : values) {
      words.push_back(value);
      words.push_back(id);
    }
  }
  SampleRecord Sample() const {
    SampleRecord s;
    const U64List list(reinterpret_cast<const std::byte*>(words.data()), words.size());
    s.read = ReadValues(list, count, ReadValues::Layout{2, 1, 0});
    return s;
  }
  size_t count;
  std::vector<uint64_t> words;
};

TEST(GroupReadDeltasTest, MembersGetTheIncreaseSinceTheirLastRead) {
  const EventTable table = Table();
  GroupReadDeltas deltas(table);
  std::vector<MemberCount> out;
  EXPECT_EQ(deltas.Add(Read({{50, 100}, {1000, 101}, {3, 102}}).Sample(), 0, out), 0u);
  EXPECT_EQ(deltas.Add(Read({{90, 100}, {1800, 101}, {3, 102}}).Sample(), 0, out), 0u);
  ASSERT_EQ(out.size(), 4u);  // the leader's own value is skipped
  EXPECT_EQ(out[0].event, 1u);
  EXPECT_EQ(out[0].count, 1000u);
  EXPECT_EQ(out[1].event, 2u);
  EXPECT_EQ(out[1].count, 3u);
  EXPECT_EQ(out[2].count, 800u);
  EXPECT_EQ(out[3].count, 0u);
  EXPECT_EQ(deltas.MembersOf(0), (std::vector<uint32_t>{1, 2}));
  EXPECT_TRUE(deltas.MembersOf(1).empty());
}

TEST(GroupReadDeltasTest, SmallerTotalMeansAReusedIdAndUnknownIdsAreCounted) {
  const EventTable table = Table();
  GroupReadDeltas deltas(table);
  std::vector<MemberCount> out;
  deltas.Add(Read({{5000, 101}}).Sample(), 0, out);
  // A new fd reused the id: its total starts again.
  EXPECT_EQ(deltas.Add(Read({{70, 101}, {9, 999}}).Sample(), 0, out), 1u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].count, 70u);
}

TEST(GroupReadDeltasTest, MembersAreSortedAndTotalsCanBeReleased) {
  const EventTable table = Table();
  GroupReadDeltas deltas(table);
  std::vector<MemberCount> out;
  deltas.Add(Read({{1, 102}, {1, 101}}).Sample(), 0, out);
  deltas.ReleaseTotals();
  EXPECT_EQ(deltas.MembersOf(0), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(deltas.leaders(), 1u);
}

}  // namespace
}  // namespace sample::report
