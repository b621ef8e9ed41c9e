// EventTable: the events of one recording and the sample ids that belong to
// each.
//
// Every kernel record is parsed against the perf_event_attr of the event that
// produced it. With several events the record names its event through
// PERF_SAMPLE_IDENTIFIER (first u64 of a sample, last u64 of any other record
// with sample_id_all), which is why the recorder always sets it; files of
// other recorders (perf with several events) may have only PERF_SAMPLE_ID,
// whose place depends on sample_type and is used when every event puts it
// in the same place. Owns copies of the attributes.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sample {

struct EventDesc {
  perf_event_attr attr{};
  std::string name;
  std::vector<uint64_t> ids;  // one per opened fd (per CPU, per thread)
};

class EventTable {
 public:
  EventTable() = default;
  explicit EventTable(std::vector<EventDesc> events);

  // One more event (a reader that meets them one at a time: perf.data's
  // pipe mode); the same as building the table with it, in O(ids)
  // plus sorting its own.
  void Add(EventDesc event);
  // Renames event `index` (names may arrive after the records).
  void SetName(size_t index, std::string name) { events_.at(index).name = std::move(name); }

  const std::vector<EventDesc>& events() const { return events_; }
  bool empty() const { return events_.empty(); }

  // The index of the event that wrote `record` (header included). With one
  // event that is always 0 (no id is read); with several, nullopt when the
  // record's id is unknown or the record is too short to hold it.
  std::optional<size_t> EventIndexFor(std::span<const std::byte> record) const;
  // The event of `id`; id 0 (a record a tool wrote, not the kernel) is
  // the first event's.
  std::optional<size_t> EventIndexForId(uint64_t id) const;

 private:
  std::vector<EventDesc> events_;
  // (id, event index) sorted by id: a few ids per CPU and event, searched
  // for every record (a hash map's lookup was 6% of a perf.data load).
  std::vector<std::pair<uint64_t, size_t>> index_by_id_;
  bool uniform_ = true;  // all events share sample_type: no id needed
  // Where the id is, in u64 words: after the header of a sample, and
  // before the end of another record's sample_id trailer (1: the last
  // word); -1 when the events disagree or carry no id.
  int sample_id_word_ = -1;
  int trailer_id_word_from_end_ = -1;
  bool trailer_ids_ = false;  // every event has sample_id_all
};

}  // namespace sample
