#include "libsample/perf/event_table.h"

#include <cstring>

namespace sample {

EventTable::EventTable(std::vector<EventDesc> events) : events_(std::move(events)) {
  for (size_t i = 0; i < events_.size(); ++i) {
    for (uint64_t id : events_[i].ids) index_by_id_.emplace(id, i);
    if (events_[i].attr.sample_type != events_[0].attr.sample_type ||
        events_[i].attr.sample_id_all != events_[0].attr.sample_id_all) {
      uniform_ = false;
    }
  }
}

std::optional<size_t> EventTable::EventIndexForId(uint64_t id) const {
  auto it = index_by_id_.find(id);
  if (it == index_by_id_.end()) return std::nullopt;
  return it->second;
}

std::optional<size_t> EventTable::EventIndexFor(std::span<const std::byte> record) const {
  if (events_.empty()) return std::nullopt;
  if (events_.size() == 1) return 0;
  // Several events: the identifier position is the same for all of them
  // when PERF_SAMPLE_IDENTIFIER is set, which the recorder guarantees.
  const uint64_t sample_type = events_[0].attr.sample_type;
  if (!(sample_type & PERF_SAMPLE_IDENTIFIER)) {
    if (uniform_) return 0;
    return std::nullopt;
  }
  perf_event_header header;
  if (record.size() < sizeof(header) + sizeof(uint64_t)) return std::nullopt;
  std::memcpy(&header, record.data(), sizeof(header));
  uint64_t id;
  if (header.type == PERF_RECORD_SAMPLE) {
    std::memcpy(&id, record.data() + sizeof(header), sizeof(id));
  } else {
    if (!events_[0].attr.sample_id_all) return uniform_ ? std::optional<size_t>(0) : std::nullopt;
    std::memcpy(&id, record.data() + record.size() - sizeof(id), sizeof(id));
  }
  return EventIndexForId(id);
}

}  // namespace sample
