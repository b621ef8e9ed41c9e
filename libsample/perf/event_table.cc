#include "libsample/perf/event_table.h"

#include <algorithm>
#include <cstring>

namespace sample {
namespace {

// The u64 word of a sample's body that holds its event id, or -1.
int SampleIdWord(uint64_t sample_type) {
  if (sample_type & PERF_SAMPLE_IDENTIFIER) return 0;
  if (!(sample_type & PERF_SAMPLE_ID)) return -1;
  int word = 0;
  for (uint64_t field : {PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR}) {
    word += (sample_type & field) != 0;
  }
  return word;
}

// The same in the sample_id trailer, counted from its end (1: last word).
int TrailerIdWordFromEnd(uint64_t sample_type) {
  if (sample_type & PERF_SAMPLE_IDENTIFIER) return 1;
  if (!(sample_type & PERF_SAMPLE_ID)) return -1;
  return 1 + ((sample_type & PERF_SAMPLE_STREAM_ID) != 0) + ((sample_type & PERF_SAMPLE_CPU) != 0);
}

}  // namespace

EventTable::EventTable(std::vector<EventDesc> events) {
  // The ids sorted once: Add's merge an event would be O(events x ids).
  std::vector<std::pair<uint64_t, size_t>> ids;
  for (EventDesc& event : events) {
    for (uint64_t id : event.ids) ids.emplace_back(id, events_.size());
    std::vector<uint64_t> own = std::move(event.ids);
    event.ids.clear();
    Add(std::move(event));
    events_.back().ids = std::move(own);
  }
  // (Here and below std::algorithms, not std::ranges: clang 14 rejects
  // libstdc++ 12's ranges, and the fuzz build is clang's.)
  std::stable_sort(ids.begin(), ids.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  ids.erase(std::unique(ids.begin(), ids.end(),
                        [](const auto& a, const auto& b) { return a.first == b.first; }),
            ids.end());
  index_by_id_ = std::move(ids);
}

void EventTable::Add(EventDesc event) {
  const perf_event_attr& attr = event.attr;
  const size_t index = events_.size();
  if (index == 0) {
    sample_id_word_ = SampleIdWord(attr.sample_type);
    trailer_id_word_from_end_ = TrailerIdWordFromEnd(attr.sample_type);
    trailer_ids_ = true;
  } else {
    const perf_event_attr& first = events_[0].attr;
    if (attr.sample_type != first.sample_type || attr.sample_id_all != first.sample_id_all) {
      uniform_ = false;
    }
    if (SampleIdWord(attr.sample_type) != sample_id_word_) sample_id_word_ = -1;
    if (TrailerIdWordFromEnd(attr.sample_type) != trailer_id_word_from_end_) {
      trailer_id_word_from_end_ = -1;
    }
  }
  trailer_ids_ &= attr.sample_id_all != 0;
  // Sorted by id, the first event to claim an id keeping it: the new ids
  // sorted and merged in after the old ones of the same id, in O(ids).
  const auto old_end = static_cast<std::ptrdiff_t>(index_by_id_.size());
  for (uint64_t id : event.ids) index_by_id_.emplace_back(id, index);
  const auto by_id = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::sort(index_by_id_.begin() + old_end, index_by_id_.end(), by_id);
  std::inplace_merge(index_by_id_.begin(), index_by_id_.begin() + old_end, index_by_id_.end(),
                     by_id);
  index_by_id_.erase(std::unique(index_by_id_.begin(), index_by_id_.end(),
                                 [](const auto& a, const auto& b) { return a.first == b.first; }),
                     index_by_id_.end());
  events_.push_back(std::move(event));
}

std::optional<size_t> EventTable::EventIndexForId(uint64_t id) const {
  const auto it = std::lower_bound(index_by_id_.begin(), index_by_id_.end(), id,
                                   [](const auto& entry, uint64_t v) { return entry.first < v; });
  if (it != index_by_id_.end() && it->first == id) return it->second;
  // The kernel numbers events from 1; id 0 is a record a tool wrote (perf
  // synthesizes the COMM and MMAP records of running processes with a
  // zeroed sample_id), parsed as the first event's, as perf does.
  if (id == 0 && !events_.empty()) return 0;
  return std::nullopt;
}

std::optional<size_t> EventTable::EventIndexFor(std::span<const std::byte> record) const {
  if (events_.empty()) return std::nullopt;
  if (events_.size() == 1) return 0;
  perf_event_header header;
  if (record.size() < sizeof(header) + sizeof(uint64_t)) return std::nullopt;
  std::memcpy(&header, record.data(), sizeof(header));
  uint64_t id;
  if (header.type == PERF_RECORD_SAMPLE) {
    // Several events: all put the id in the same place, or none can be told.
    if (sample_id_word_ < 0) return uniform_ ? std::optional<size_t>(0) : std::nullopt;
    const size_t at = sizeof(header) + size_t{8} * static_cast<size_t>(sample_id_word_);
    if (record.size() < at + sizeof(id)) return std::nullopt;
    std::memcpy(&id, record.data() + at, sizeof(id));
  } else {
    if (!trailer_ids_ || trailer_id_word_from_end_ < 0) {
      return uniform_ ? std::optional<size_t>(0) : std::nullopt;
    }
    const size_t back = size_t{8} * static_cast<size_t>(trailer_id_word_from_end_);
    if (record.size() < sizeof(header) + back) return std::nullopt;
    std::memcpy(&id, record.data() + record.size() - back, sizeof(id));
  }
  return EventIndexForId(id);
}

}  // namespace sample
