// AllocEvents: an --alloc recording's samples become the alloc pseudo-events;
// here, which of them count when the probes were switched on and off one by
// one (attaching to a running process).
#include "report/load/alloc_events.h"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sample::report {
namespace {

constexpr uint32_t kMalloc = 0, kMallocReturn = 1, kFree = 2;
constexpr uint32_t kFirst = 3;  // alloc-bytes; alloc-calls, leak-bytes, peak-bytes after
constexpr uint32_t kPid = 100, kTid = 101;

// A tracefs format with one 8-byte field at offset 8.
std::string Format(const std::string& field) {
  return "name: x\nID: 1\nformat:\n"
         "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
         "\tfield:u64 " +
         field + ";\toffset:8;\tsize:8;\tsigned:0;\n";
}

EventDesc Tracepoint(const std::string& name) {
  EventDesc event;
  event.attr.type = PERF_TYPE_TRACEPOINT;
  event.attr.sample_period = 1;
  event.name = name;
  return event;
}

class AllocWindowTest : public ::testing::Test {
 protected:
  // Probes all on from time 100 to 200.
  AllocWindowTest()
      : events_{Tracepoint("alloc:malloc"), Tracepoint("alloc:malloc:return"),
                Tracepoint("alloc:free")},
        alloc_(events_,
               {{kMalloc, 1, Format("size"), ""},
                {kMallocReturn, 2, Format("ptr"), ""},
                {kFree, 3, Format("ptr"), ""}},
               kFirst, Arch::kX86_64, {.from_ns = 100, .to_ns = 200}) {}

  void Add(uint32_t event, uint64_t time, uint64_t value) {
    std::vector<std::byte> raw(16);
    std::memcpy(raw.data() + 8, &value, 8);
    SampleRecord record;
    record.time = time;
    record.raw = raw;
    ProfileSample sample;
    sample.event = event;
    sample.pid = kPid;
    sample.tid = kTid;
    sample.time = time;
    if (alloc_.Keep(sample, samples_.size(), record, events_[event].attr, samples_)) {
      samples_.push_back(sample);
    }
  }

  // The summed periods of pseudo-event `event`.
  uint64_t Sum(uint32_t event) const {
    uint64_t sum = 0;
    for (const ProfileSample& s : samples_) sum += s.event == event ? s.period : 0;
    return sum;
  }

  std::vector<EventDesc> events_;
  AllocEvents alloc_;
  std::vector<ProfileSample> samples_;
};

TEST_F(AllocWindowTest, OnlyCallsAndFreesWhileEveryProbeWasOnCount) {
  Add(kMalloc, 50, 10);  // before: its block is unknown
  Add(kMallocReturn, 60, 0x1000);
  Add(kMalloc, 110, 20);  // inside, never freed: a leak
  Add(kMallocReturn, 120, 0x2000);
  Add(kMalloc, 130, 30);  // inside, freed inside
  Add(kMallocReturn, 140, 0x3000);
  Add(kFree, 150, 0x3000);
  Add(kFree, 160, 0x1000);  // a block from before: counted apart
  Add(kMalloc, 190, 40);    // called inside, returned after: kept
  Add(kMallocReturn, 210, 0x4000);
  Add(kFree, 220, 0x2000);  // after: the leak stays one
  Add(kMalloc, 230, 50);    // after: left out
  Add(kMallocReturn, 240, 0x5000);
  AllocLoadStats stats;
  alloc_.Finish(samples_, stats);
  EXPECT_EQ(Sum(kFirst), 20u + 30 + 40);
  EXPECT_EQ(Sum(kFirst + 1), 3u);
  EXPECT_EQ(Sum(kFirst + 2), 20u + 40);
  EXPECT_EQ(stats.pairs.allocations, 3u);
  EXPECT_EQ(stats.pairs.frees, 1u);
  EXPECT_EQ(stats.pairs.unknown_frees, 1u);
  EXPECT_EQ(stats.pairs.unpaired, 0u);
  EXPECT_EQ(stats.outside_on, 3u);  // two calls and a free; returns are never left out
  EXPECT_EQ(stats.calls[kMalloc], 5u);  // every sample of the event, as the header counts them
  EXPECT_EQ(stats.calls[kFree], 3u);
}

}  // namespace
}  // namespace sample::report
