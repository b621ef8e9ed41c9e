// Fuzz target: the decoders of our own chunk payloads (events, metadata and
// build-ids, trailer, counts, control, toggles, trace formats;
// formats/chunk_codec.h), fed directly so the fuzzer need not get through a
// file's checksums first. Whatever decodes must
// encode and decode again to the same values. Input: u8 selecting the
// decoder, then the payload.
#include <cstdlib>
#include <cstring>

#include "formats/chunk_codec.h"
#include "tests/fuzz/fuzz_target.h"

namespace sample::format {
namespace {

// memcmp, but an empty vector's data() may be null, which memcmp must not
// be given even for 0 bytes (UBSan stops the fuzzer there).
bool SameBytes(const void* a, const void* b, size_t size) {
  return size == 0 || std::memcmp(a, b, size) == 0;
}

bool SameEvents(const std::vector<EventDesc>& a, const std::vector<EventDesc>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i].attr, &b[i].attr, sizeof(a[i].attr)) != 0 || a[i].name != b[i].name ||
        a[i].ids != b[i].ids) {
      return false;
    }
  }
  return true;
}

bool SameTrailer(const Trailer& a, const Trailer& b) {
  return std::memcmp(&a.header, &b.header, sizeof(a.header)) == 0 &&
         a.cpus.size() == b.cpus.size() &&
         SameBytes(a.cpus.data(), b.cpus.data(), a.cpus.size() * sizeof(TrailerCpu)) &&
         a.chunk_offsets == b.chunk_offsets;
}

bool SameCounts(const Counts& a, const Counts& b) {
  if (a.source != b.source || a.elapsed_ns != b.elapsed_ns || a.events.size() != b.events.size()) {
    return false;
  }
  for (size_t i = 0; i < a.events.size(); ++i) {
    const EventCounts &x = a.events[i], &y = b.events[i];
    if (std::memcmp(&x.attr, &y.attr, sizeof(x.attr)) != 0 || x.name != y.name ||
        x.supported != y.supported || x.count != y.count || x.time_enabled != y.time_enabled ||
        x.time_running != y.time_running || x.intervals.size() != y.intervals.size() ||
        !SameBytes(x.intervals.data(), y.intervals.data(),
                   x.intervals.size() * sizeof(CountInterval))) {
      return false;
    }
  }
  return true;
}

}  // namespace
}  // namespace sample::format

SAMPLE_FUZZ_TARGET(chunk_codec)(std::span<const std::byte> input) {
  using namespace sample::format;
  sample::fuzz::InputTaker take(input);
  const uint8_t which = take.Take<uint8_t>() % 7;
  const std::span<const std::byte> payload = take.rest();
  constexpr uint64_t kOffset = 64 + 56;  // where a first chunk's payload sits
  if (which == 0) {
    auto events = DecodeEvents(payload, kOffset);
    if (!events) return 0;
    auto again = DecodeEvents(EncodeEvents(*events), kOffset);
    if (!again || !SameEvents(*events, *again)) std::abort();
  } else if (which == 1) {
    auto metadata = DecodeMetadata(payload, kOffset);
    if (!metadata) return 0;
    auto again = DecodeMetadata(EncodeMetadata(*metadata), kOffset);
    if (!again || *again != *metadata) std::abort();
  } else if (which == 5) {
    // Up to 8 events for the indices to name; the payload's first byte says how many.
    const size_t events = payload.empty() ? 0 : static_cast<size_t>(payload[0]) % 9;
    auto toggles = DecodeToggles(payload.empty() ? payload : payload.subspan(1), kOffset, events);
    if (!toggles) return 0;
    auto again = DecodeToggles(EncodeToggles(*toggles), kOffset, events);
    if (!again || again->size() != toggles->size() ||
        !SameBytes(again->data(), toggles->data(), toggles->size() * sizeof(ToggleEntry))) {
      std::abort();
    }
  } else if (which == 6) {
    auto formats = DecodeTraceFormats(payload, kOffset);
    if (!formats) return 0;
    auto again = DecodeTraceFormats(EncodeTraceFormats(*formats), kOffset);
    if (!again || again->size() != formats->size()) std::abort();
    for (size_t i = 0; i < formats->size(); ++i) {
      const TraceFormatEntry &x = (*formats)[i], &y = (*again)[i];
      if (x.event_index != y.event_index || x.tracepoint_id != y.tracepoint_id ||
          x.format != y.format || x.filter != y.filter) {
        std::abort();
      }
    }
  } else if (which == 3) {
    auto counts = DecodeCounts(payload, kOffset);
    if (!counts) return 0;
    auto again = DecodeCounts(EncodeCounts(*counts), kOffset);
    if (!again || !SameCounts(*counts, *again)) std::abort();
  } else if (which == 4) {
    auto control = DecodeControl(payload, kOffset);
    if (!control) return 0;
    auto again = DecodeControl(EncodeControl(*control), kOffset);
    if (!again || again->size() != control->size() ||
        !SameBytes(again->data(), control->data(), control->size() * sizeof(ControlEntry))) {
      std::abort();
    }
  } else {
    auto trailer = DecodeTrailer(payload, kOffset);
    if (!trailer) return 0;
    auto again = DecodeTrailer(EncodeTrailer(*trailer), kOffset);
    if (!again || !SameTrailer(*trailer, *again)) std::abort();
  }
  return 0;
}
