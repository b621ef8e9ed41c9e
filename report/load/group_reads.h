// GroupReadDeltas: what each member of an event group counted between two
// samples of its leader.
//
// A leader's sample (PERF_SAMPLE_READ with PERF_FORMAT_GROUP) carries every
// member's running total on that CPU or thread, by the member's id; the
// member's count for the sample is the increase since the previous read of
// the same id, as perf reports it. Owns the last totals by id and the
// members seen per leader.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "libsample/model/profile.h"
#include "libsample/perf/event_table.h"
#include "libsample/perf/perf_record.h"

namespace sample::report {

class GroupReadDeltas {
 public:
  explicit GroupReadDeltas(const EventTable& events) : events_(events) {}

  // Appends to `out` the count of every member read in `sample` (of
  // `leader`), skipping the leader itself (its period is its count).
  // Returns how many values had an id of no known event.
  uint64_t Add(const SampleRecord& sample, uint32_t leader, std::vector<MemberCount>& out);

  // The members seen with `leader`, by event index, sorted.
  std::vector<uint32_t> MembersOf(uint32_t leader) const;
  // How many leaders Add saw (some may have no members).
  size_t leaders() const { return members_.size(); }
  // Frees the running totals once no more samples come (members stay).
  void ReleaseTotals() { last_ = {}; }

 private:
  const EventTable& events_;
  std::unordered_map<uint64_t, uint64_t> last_;  // by id: the last running total
  std::vector<std::vector<uint32_t>> members_;   // by leader event
};

}  // namespace sample::report
