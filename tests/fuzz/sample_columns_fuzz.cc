// Fuzz target: the sample columns of a records chunk (formats/sample_columns.h).
// Input: u8 mode, u64 sample_type, u64 sample_regs_user, u32 sample_stack_user
// of the cpu-clock event (and, with mode bit 1, a cycles event of the same
// layout; with mode bit 2, the time column split as kChunkFlagSplitTimeColumn
// chunks hold it; with mode bit 3, stack pointers coded as
// kChunkFlagRecentStackPointers chunks hold them), then bytes.
//   - even mode: the bytes are records; encoding and decoding them must give
//     them back exactly, whatever they hold;
//   - odd mode: the bytes are an encoded payload, as a crafted file holds;
//     decoding must stay in bounds, and what decodes must encode and decode
//     to the same records again.
#include <linux/perf_event.h>

#include <cstdlib>
#include <vector>

#include "formats/sample_columns.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(sample_columns)(std::span<const std::byte> input) {
  using namespace sample;
  fuzz::InputTaker take(input);
  const uint8_t mode = take.Take<uint8_t>();
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_type = take.Take<uint64_t>() & (PERF_SAMPLE_MAX - 1);
  attr.sample_regs_user = take.Take<uint64_t>();
  attr.sample_stack_user = take.Take<uint32_t>();
  attr.sample_id_all = 1;
  // Mode bit 1: a second event of the same layout, counting cycles (no
  // period prediction), told apart by the sample id when there is one.
  std::vector<EventDesc> descs = {EventDesc{attr, "cpu-clock", {1}}};
  if ((mode & 2) != 0) {
    perf_event_attr cycles = attr;
    cycles.type = PERF_TYPE_HARDWARE;
    cycles.config = PERF_COUNT_HW_CPU_CYCLES;
    descs.push_back(EventDesc{cycles, "cycles", {2}});
  }
  const EventTable events(std::move(descs));
  const std::span<const std::byte> bytes = take.rest();

  // Mode bit 2: the time column split (kChunkFlagSplitTimeColumn); bit 3:
  // recent stack pointers (kChunkFlagRecentStackPointers).
  const format::ColumnCoding coding{.split_time = (mode & 4) != 0, .recent_sp = (mode & 8) != 0};
  auto round_trip = [&](const std::vector<std::byte>& records) {
    std::vector<std::byte> payload = records;
    if (!format::EncodeSampleColumns(payload, events, coding)) {
      if (payload != records) std::abort();
      return;
    }
    auto size = format::DecodeSampleColumns(payload, events, coding);
    if (!size) std::abort();
    payload.resize(*size);
    if (payload != records) std::abort();
  };
  if (mode % 2 == 0) {
    round_trip(std::vector<std::byte>(bytes.begin(), bytes.end()));
    return 0;
  }
  std::vector<std::byte> payload(bytes.begin(), bytes.end());
  auto size = format::DecodeSampleColumns(payload, events, coding);
  if (!size) return 0;
  payload.resize(*size);
  round_trip(payload);
  return 0;
}
