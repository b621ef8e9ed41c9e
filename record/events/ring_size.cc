#include "record/events/ring_size.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "libsample/string_parts.h"

namespace sample::record {

uint64_t StackCopyBytesPerSecond(const std::vector<perf_event_attr>& attrs) {
  uint64_t rate = 0;
  for (const perf_event_attr& attr : attrs) {
    if (!attr.freq || (attr.sample_type & PERF_SAMPLE_STACK_USER) == 0) continue;
    uint64_t bytes = attr.sample_stack_user + 256;  // header, fields, a kernel chain
    if (attr.sample_type & PERF_SAMPLE_REGS_USER) {
      bytes += 8 * static_cast<uint64_t>(__builtin_popcountll(attr.sample_regs_user));
    }
    rate += attr.sample_freq * bytes;
  }
  return rate;
}

size_t ChooseRingPages(uint64_t bytes_per_second, const RingLimits& limits) {
  if (!limits.may_lock_more || limits.page_size == 0) return kDefaultRingPages;
  const uint64_t wanted = bytes_per_second * kRingStallBudgetMs / 1000;
  size_t pages = kDefaultRingPages;
  while (pages * limits.page_size < wanted && pages * limits.page_size < kLargestChosenRingBytes) {
    pages *= 2;
  }
  uint64_t total_cap = kLargestChosenTotalBytes;
  if (limits.memory_bytes != 0) total_cap = std::min(total_cap, limits.memory_bytes / 16);
  const uint64_t rings = std::max<size_t>(limits.rings, 1);
  while (pages > kDefaultRingPages && pages * limits.page_size * rings > total_cap) pages /= 2;
  return pages;
}

std::string ChosenRingNote(size_t pages, const std::vector<perf_event_attr>& attrs) {
  if (pages == kDefaultRingPages) return "";
  return fmt::format(
      "sample-record: ring buffers of {} per CPU (-m {}) for {} of stack copies a second per "
      "CPU; -m sets another size.\n",
      HumanBytes(pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE))), pages,
      HumanBytes(StackCopyBytesPerSecond(attrs)));
}

}  // namespace sample::record
