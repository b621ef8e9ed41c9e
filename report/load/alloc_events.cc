#include "report/load/alloc_events.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "libsample/events/trace_format.h"

namespace sample::report {
namespace {

constexpr std::string_view kPrefix = "alloc:";
constexpr std::string_view kReturn = ":return";

bool IsAllocEvent(const EventDesc& event) {
  return event.attr.type == PERF_TYPE_TRACEPOINT && event.name.starts_with(kPrefix);
}

// The payload offset of the 8-byte field `name`, if the format has one.
std::optional<uint32_t> FieldOffset(const TraceFormat& format, std::string_view name) {
  for (const TraceField& field : format.fields) {
    if (field.name == name && field.size == 8) return field.offset;
  }
  return std::nullopt;
}

std::optional<uint64_t> Read(std::span<const std::byte> raw, std::optional<uint32_t> offset) {
  if (!offset || *offset > raw.size() || raw.size() - *offset < 8) return std::nullopt;
  uint64_t value = 0;
  std::memcpy(&value, raw.data() + *offset, 8);
  return value;
}

// The calls a sample stands for: its period when it has one (the kernel
// writes every hit of a tracepoint with period 1 then), else the event's
// fixed period (--alloc -c N leaves the period out to keep every Nth).
uint64_t Weight(const SampleRecord& record, const perf_event_attr& attr) {
  if (attr.sample_type & PERF_SAMPLE_PERIOD) return std::max<uint64_t>(1, record.period);
  return attr.freq ? 1 : std::max<uint64_t>(1, attr.sample_period);
}

uint64_t Times(uint64_t size, uint64_t weight) {
  uint64_t product = 0;
  return __builtin_mul_overflow(size, weight, &product) ? UINT64_MAX : product;
}

}  // namespace

bool HasAllocEvents(const format::RecordingFile& reader) {
  const std::vector<EventDesc>& events = reader.events().events();
  for (const format::TraceFormatEntry& entry : reader.trace_formats()) {
    if (entry.event_index >= events.size() || !IsAllocEvent(events[entry.event_index])) continue;
    if (auto format = ParseTraceFormat(entry.format);
        format && (FieldOffset(*format, "size") || FieldOffset(*format, "ptr"))) {
      return true;
    }
  }
  return false;
}

std::optional<AllocEvents> AllocEvents::Of(const format::RecordingFile& reader,
                                           std::optional<uint32_t>& alloc_event) {
  const std::vector<EventDesc>& events = reader.events().events();
  if (!HasAllocEvents(reader)) return std::nullopt;
  alloc_event = static_cast<uint32_t>(events.size());
  const auto machine = format::FindMetadata(reader.metadata(), "arch");
  // Sampling is off before the first entry and after the last
  // (sample_file_format.h).
  const std::vector<format::ControlEntry>& control = reader.control();
  AllOn all_on;
  if (!control.empty() && control.front().action == format::kControlEnable) {
    all_on.from_ns = control.front().time_ns;
  }
  if (!control.empty() && control.back().action == format::kControlDisable &&
      control.back().event == format::kControlAllEvents &&
      control.back().time_ns > all_on.from_ns) {
    all_on.to_ns = control.back().time_ns;
  }
  return AllocEvents(events, reader.trace_formats(), *alloc_event,
                     machine ? ArchFromMachine(*machine) : HostArch(), all_on);
}

AllocEvents::AllocEvents(const std::vector<EventDesc>& events,
                         const std::vector<format::TraceFormatEntry>& formats, uint32_t first_event,
                         Arch arch, AllOn all_on)
    : events_(events.size()),
      first_event_(first_event),
      arch_(arch),
      calls_(events.size()),
      all_on_(all_on) {
  for (const format::TraceFormatEntry& entry : formats) {
    if (entry.event_index >= events.size() || !IsAllocEvent(events[entry.event_index])) continue;
    auto format = ParseTraceFormat(entry.format);
    if (!format) continue;
    Fields& f = events_[entry.event_index];
    f.size = FieldOffset(*format, "size");
    f.nmemb = FieldOffset(*format, "nmemb");
    f.ptr = FieldOffset(*format, "ptr");
    f.function = entry.event_index;
    const std::string& name = events[entry.event_index].name;
    if (name.ends_with(kReturn)) {
      // Its call's event: the same name without ":return".
      const std::string_view call(name.data(), name.size() - kReturn.size());
      for (uint32_t e = 0; e < events.size(); ++e) {
        if (events[e].name == call) f.function = e;
      }
      if (f.ptr) f.role = Role::kReturn;
    } else if (f.size && FieldOffset(*format, "memptr")) {
      f.role = Role::kUntracked;
    } else if (f.size) {
      f.role = f.ptr ? Role::kReallocate : Role::kAllocate;
    } else if (f.ptr) {
      f.role = FieldOffset(*format, "len") ? Role::kUnmap : Role::kFree;
    }
  }
}

bool AllocEvents::Keep(ProfileSample& sample, size_t index, const SampleRecord& record,
                       const perf_event_attr& attr, std::vector<ProfileSample>& samples) {
  const std::span<const std::byte> raw = record.raw;
  if (sample.event >= events_.size()) return true;
  const Fields& f = events_[sample.event];
  if (f.role == Role::kNone) return true;  // not an allocation function's
  ++calls_[sample.event];
  // A call's return is kept either way: without its call it pairs with
  // nothing, and a call just before the end keeps its block.
  if (f.role != Role::kReturn && (sample.time < all_on_.from_ns || sample.time >= all_on_.to_ns)) {
    ++outside_on_;
    return false;
  }
  const std::optional<uint64_t> ptr = Read(raw, f.ptr);
  std::optional<uint64_t> size = Read(raw, f.size);
  if (size && f.nmemb) {
    const std::optional<uint64_t> nmemb = Read(raw, f.nmemb);
    // calloc's product past 2^64 fails in the callee: NULL is returned.
    if (!nmemb || __builtin_mul_overflow(*size, *nmemb, &*size)) size = UINT64_MAX;
  }
  const uint64_t weight = Weight(record, attr);
  max_weight_ = std::max(max_weight_, weight);
  switch (f.role) {
    case Role::kAllocate:
    case Role::kReallocate:
    case Role::kUntracked:
      if (!size || (f.role == Role::kReallocate && !ptr)) break;
      sample.event = first_event_;
      if (weight != 1) weights_[index] = weight;
      if (f.role == Role::kUntracked) {
        sample.period = Times(*size, weight);
        untracked_ += weight;
        untracked_bytes_ += sample.period;
      } else {
        sample.period = 0;  // its size once the return says it succeeded
        AllocCall call{sample.pid, sample.tid, f.function, *size};
        if (f.role == Role::kReallocate) call.old_ptr = ptr;
        if (const auto regs = ToDwarfRegisters(arch_, attr.sample_regs_user, record.user_regs)) {
          call.sp = regs->sp;
        }
        call.weight = weight;
        call.handle = index;
        allocations_.Enter(call);
      }
      return true;
    case Role::kReturn:
      if (!ptr) break;
      // mmap fails with MAP_FAILED, (void*)-1, where malloc gives NULL.
      if (auto block = allocations_.Return(sample.pid, sample.tid, f.function, sample.time,
                                           *ptr == UINT64_MAX ? 0 : *ptr);
          block && block->handle < samples.size()) {
        samples[block->handle].period = Times(block->size, block->weight);
      }
      return false;
    case Role::kFree:
    case Role::kUnmap:
      if (!ptr) break;
      allocations_.Free(sample.pid, sample.tid, sample.time, *ptr, f.role == Role::kUnmap);
      return false;
    case Role::kNone:
      break;
  }
  ++malformed_;
  return false;
}

void AllocEvents::Finish(std::vector<ProfileSample>& samples, AllocLoadStats& stats) {
  for (size_t handle : allocations_.TakeDropped()) {
    if (handle < samples.size()) samples[handle].event = kDroppedEvent;
  }
  const size_t count = samples.size();
  for (size_t i = 0; i < count; ++i) {
    if (samples[i].event != first_event_) continue;
    ProfileSample call = samples[i];
    call.event = first_event_ + 1;
    const auto weight = weights_.find(i);
    call.period = weight == weights_.end() ? 1 : weight->second;
    samples.push_back(call);
  }
  for (uint32_t k = 2; k <= 3; ++k) {
    const std::vector<AllocBlock> blocks =
        k == 2 ? allocations_.LiveBlocks() : allocations_.PeakBlocks();
    for (const AllocBlock& block : blocks) {
      if (block.handle >= count) continue;
      ProfileSample kept = samples[block.handle];
      kept.event = first_event_ + k;
      kept.period = Times(block.size, block.weight);
      samples.push_back(kept);
    }
  }
  stats.pairs = allocations_.stats();
  stats.untracked = untracked_;
  stats.untracked_bytes = untracked_bytes_;
  stats.malformed = malformed_;
  stats.outside_on = outside_on_;
  stats.scale = max_weight_;
  stats.timeline = allocations_.timeline();
  stats.calls = calls_;
}

}  // namespace sample::report
