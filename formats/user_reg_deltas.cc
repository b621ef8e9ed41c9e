#include "formats/user_reg_deltas.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "formats/frame_regs.h"
#include "libsample/count_bits.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"

namespace sample::format {
namespace {

bool Eligible(const perf_event_attr& attr) {
  return (attr.sample_type & PERF_SAMPLE_REGS_USER) != 0 &&
         (attr.sample_regs_user & kFrameRegsMask) == kFrameRegsMask;
}

// The slot of perf register `reg` among the values of `mask`.
size_t Slot(uint64_t mask, int reg) { return CountBits(mask & ((uint64_t{1} << reg) - 1)); }

// The user pc the record holds elsewhere: the chain's first user entry, or
// the sample's ip.
uint64_t UserPc(const SampleRecord& sample) {
  for (size_t i = 0; i + 1 < sample.callchain.size(); ++i) {
    if (sample.callchain[i] == PERF_CONTEXT_USER) return sample.callchain[i + 1];
  }
  return sample.ip;
}

struct RegSlots {
  std::byte* bp;
  std::byte* sp;
  std::byte* ip;
};

// Calls fn(sample, slots) for each sample whose three registers are there.
template <typename Fn>
void ForEachRegSample(std::span<std::byte> records, const EventTable& events, Fn&& fn) {
  ForEachRecord(records, [&](const perf_event_header& header, std::span<const std::byte> record) {
    if (header.type != PERF_RECORD_SAMPLE) return;
    const auto index = events.EventIndexFor(record);
    if (!index) return;
    const perf_event_attr& attr = events.events()[*index].attr;
    if (!Eligible(attr)) return;
    const auto sample = ParseSample(record, attr);
    if (!sample || sample->user_regs.empty()) return;
    // The walker hands out const views of our own mutable bytes.
    auto* regs = const_cast<std::byte*>(sample->user_regs.bytes().data());
    const uint64_t mask = attr.sample_regs_user;
    fn(*sample, RegSlots{regs + 8 * Slot(mask, kPerfRegBp), regs + 8 * Slot(mask, kPerfRegSp),
                         regs + 8 * Slot(mask, kPerfRegIp)});
  });
}

}  // namespace

bool HasUserRegDeltas(const EventTable& events) {
  for (const EventDesc& event : events.events()) {
    if (Eligible(event.attr)) return true;
  }
  return false;
}

void EncodeUserRegDeltas(std::span<std::byte> records, const EventTable& events) {
  std::unordered_map<uint32_t, uint64_t> last_sp;  // by tid
  ForEachRegSample(records, events, [&](const SampleRecord& sample, RegSlots slots) {
    const uint64_t sp = LoadWord(slots.sp), bp = LoadWord(slots.bp), ip = LoadWord(slots.ip);
    uint64_t& last = last_sp[sample.tid];
    StoreWord(slots.ip, ip - UserPc(sample));
    StoreWord(slots.bp, bp - sp);
    StoreWord(slots.sp, sp - last);
    last = sp;
  });
}

void DecodeUserRegDeltas(std::span<std::byte> records, const EventTable& events) {
  std::unordered_map<uint32_t, uint64_t> last_sp;
  ForEachRegSample(records, events, [&](const SampleRecord& sample, RegSlots slots) {
    uint64_t& last = last_sp[sample.tid];
    const uint64_t sp = LoadWord(slots.sp) + last;
    StoreWord(slots.sp, sp);
    StoreWord(slots.bp, LoadWord(slots.bp) + sp);
    StoreWord(slots.ip, LoadWord(slots.ip) + UserPc(sample));
    last = sp;
  });
}

}  // namespace sample::format
