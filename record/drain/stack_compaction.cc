#include "record/drain/stack_compaction.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>

#include "libsample/perf/perf_record.h"

namespace sample::record {
namespace {

// The bytes [at, at + n) of the stream `first` + `second`, in place when
// they lie in one of them, else assembled in `scratch`.
std::span<const std::byte> Slice(std::span<const std::byte> first,
                                 std::span<const std::byte> second, size_t at, size_t n,
                                 std::vector<std::byte>& scratch) {
  if (at + n <= first.size()) return first.subspan(at, n);
  if (at >= first.size()) return second.subspan(at - first.size(), n);
  const size_t head = first.size() - at;
  scratch.assign(first.begin() + static_cast<std::ptrdiff_t>(at), first.end());
  scratch.insert(scratch.end(), second.begin(),
                 second.begin() + static_cast<std::ptrdiff_t>(n - head));
  return scratch;
}

void Append(std::vector<std::byte>& out, std::span<const std::byte> bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// Appends one whole record, its stack copy cut to the live part.
void AppendRecord(std::span<const std::byte> record, const perf_event_header& h,
                  const EventTable& table, std::vector<std::byte>& out) {
  if (h.type == PERF_RECORD_SAMPLE) {
    const auto event = table.EventIndexFor(record);
    const perf_event_attr* attr = event ? &table.events()[*event].attr : nullptr;
    const auto sample = attr != nullptr && (attr->sample_type & PERF_SAMPLE_STACK_USER) != 0
                            ? ParseSample(record, *attr)
                            : std::nullopt;
    if (sample && !sample->user_stack.empty()) {
      // size, data[size], dyn_size: data keeps its dyn_size bytes and what
      // follows (dyn_size and any later fields) moves up behind them.
      const size_t data = static_cast<size_t>(sample->user_stack.data() - record.data());
      uint64_t copied = 0;
      std::memcpy(&copied, record.data() + data - 8, 8);
      const uint64_t live = (sample->user_stack.size() + 7) & ~uint64_t{7};
      if (live < copied && copied <= record.size() - data) {
        const size_t start = out.size();
        Append(out, record.first(data - 8));
        const auto* size_bytes = reinterpret_cast<const std::byte*>(&live);
        out.insert(out.end(), size_bytes, size_bytes + 8);
        Append(out, record.subspan(data, live));
        Append(out, record.subspan(data + copied));
        perf_event_header kept = h;
        kept.size = static_cast<uint16_t>(out.size() - start);
        std::memcpy(out.data() + start, &kept, sizeof(kept));
        return;
      }
    }
  }
  Append(out, record);
}

}  // namespace

size_t AppendCompactingStacks(std::span<const std::byte> first, std::span<const std::byte> second,
                              const EventTable& table, std::vector<std::byte>& out) {
  const size_t before = out.size();
  const size_t total = first.size() + second.size();
  std::vector<std::byte> scratch;  // only for a record that wraps
  size_t at = 0;
  while (total - at >= sizeof(perf_event_header)) {
    perf_event_header h;
    std::memcpy(&h, Slice(first, second, at, sizeof(h), scratch).data(), sizeof(h));
    if (h.size < sizeof(h) || h.size > total - at) break;  // the rest goes on as it is
    AppendRecord(Slice(first, second, at, h.size, scratch), h, table, out);
    at += h.size;
  }
  if (at < total) {
    if (at < first.size()) Append(out, first.subspan(at));
    Append(out, second.subspan(at > first.size() ? at - first.size() : 0));
  }
  return out.size() - before;
}

}  // namespace sample::record
