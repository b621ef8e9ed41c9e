#include "record/drain/ring_drainer.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "libsample/perf/perf_event_advice.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"
#include "record/drain/stack_compaction.h"

namespace sample::record {
namespace {

// A chunk goes to the writer when it reaches this size (or, the recorder's
// rule, half a second of age). 1 MiB, not more: on a full disk the chunk
// that does not fit is lost whole (a 4 MiB one once held every sample of a
// short --call-graph dwarf run). The cost is compression across fewer
// bytes: at -g -F 20000 (threads, split; 3 runs each) sizes were within
// the runs' spread, and --call-graph dwarf of `unwind-nofp deep 64` at
// -F 10000 came out about 5% larger (245 KB -> 254-261 KB).
constexpr size_t kChunkBytes = 1 << 20;

// Sample times are stored as deltas only where every event puts them at
// the same place (the writer rewrites them without looking events up).
uint32_t CommonSampleTimeOffset(const EventTable& table) {
  if (table.events().empty()) return 0;
  const uint32_t offset = SampleTimeOffset(table.events().front().attr);
  for (const EventDesc& e : table.events()) {
    if (SampleTimeOffset(e.attr) != offset) return 0;
  }
  return offset;
}

// A chunk is flushed once it reaches kChunkBytes after a DrainAll, which
// adds at most every ring's size: with room for that twice, a flush can be
// put off once (Flush without waiting) without reallocating; put off
// longer, the chunk grows (a copy on the draining thread, but nothing lost).
size_t ChunkCapacity(EventOpener& opener) {
  size_t capacity = kChunkBytes;
  for (size_t owner : opener.ring_owners()) capacity += 2 * opener.events()[owner].ring().size();
  return capacity;
}

// Whether any event copies user stacks (--call-graph dwarf, fp,leaf).
bool CopiesStacks(const EventTable& table) {
  for (const EventDesc& e : table.events()) {
    if ((e.attr.sample_type & PERF_SAMPLE_STACK_USER) && e.attr.sample_stack_user != 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

RingDrainer::RingDrainer(EventOpener& opener, std::vector<int> cpus,
                         RecordSink& sink, PostmortemFacts& facts)
    : opener_(opener),
      cpus_(std::move(cpus)),
      sink_(sink),
      facts_(facts),
      table_(opener.Describe()),
      attr_(opener.first_attr()),
      counters_(cpus_.size()),
      chunk_(ChunkCapacity(opener), opener.cpu_field(), CommonSampleTimeOffset(table_)),
      copies_stacks_(CopiesStacks(table_)),
      host_max_stack_(static_cast<uint32_t>(std::max(ReadPerfEventMaxStack().value_or(127), 1))) {}

void RingDrainer::Account(size_t ring, std::span<const std::byte> bytes) {
  CpuCounters& c = counters_[ring];
  ForEachRecord(bytes, [&](const perf_event_header& header, std::span<const std::byte> record) {
    chunk_.CountRecord(RecordTime(record, attr_));
    switch (header.type) {
      case PERF_RECORD_SAMPLE:
        ++c.samples;
        // Only kernel-mode samples hold kernel addresses worth noting; the
        // event lookup (layouts differ between events) is paid only for them.
        if ((header.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
          if (auto event = table_.EventIndexFor(record)) {
            facts_.Observe(header, record, table_.events()[*event].attr);
          }
        }
        break;
      case PERF_RECORD_MMAP2:
      case PERF_RECORD_COMM:
      case PERF_RECORD_EXIT:
        facts_.Observe(header, record, attr_);
        break;
      default:
        CountLossRecord(header, record, attr_, &c);
        break;
    }
  });
}

void RingDrainer::NoteExecs(RingBuffer& waker) {
  exec_records_.clear();
  waker.Drain(exec_records_);
  // The waker's records carry no sample_id trailer.
  static const perf_event_attr kPlain{};
  ForEachRecord(exec_records_, [&](const perf_event_header& header,
                                   std::span<const std::byte> record) {
    if (header.type != PERF_RECORD_COMM || (header.misc & PERF_RECORD_MISC_COMM_EXEC) == 0) {
      return;
    }
    if (auto comm = ParseComm(record, kPlain)) facts_.files().Renote(comm->pid);
  });
}

void RingDrainer::DrainAll() {
  auto& events = opener_.events();
  const auto& owners = opener_.ring_owners();
  for (size_t ring = 0; ring < owners.size(); ++ring) {
    std::vector<std::byte>& buffer = chunk_.buffer();
    const size_t before = buffer.size();
    RingBuffer& source = events[owners[ring]].ring();
    size_t drained = 0;
    if (copies_stacks_) {
      // Only the live part of each stack copy is copied out (see
      // stack_compaction.h).
      const RingBuffer::Unread unread = source.Peek();
      if (unread.size() != 0) {
        drained =
            AppendCompactingStacks(unread.first, unread.second, table_, host_max_stack_, buffer);
        source.Consume(unread.head);
      }
    } else {
      drained = source.Drain(buffer);
    }
    if (drained != 0) {
      Account(ring, std::span<const std::byte>(buffer).subspan(before));
      chunk_.Appended(before, static_cast<uint32_t>(cpus_[ring]));
    }
  }
}

bool RingDrainer::Flush(bool wait) {
  if (chunk_.empty()) return true;
  format::RecordsChunk chunk = chunk_.Take();
  std::vector<std::byte> spare;
  if (!sink_.AddRecords(chunk, wait, &spare)) {
    chunk_.Restore(std::move(chunk));
    return false;
  }
  if (auto range = chunk_.time_range()) {
    first_time_ = std::min(first_time_, range->first);
    last_time_ = std::max(last_time_, range->second);
  }
  records_written_ += chunk_.records();
  chunk_.Reset(std::move(spare));
  return true;
}

// The draining thread asks the scheduler for the shortest time slice
// (EEVDF, Linux 6.6+: sched_attr.sched_runtime of a SCHED_OTHER thread is
// its slice, clamped to 0.1-100 ms, and since 6.12 a shorter slice lets a
// waking thread preempt the running one). A ring-buffer wakeup then runs
// the drain at once instead of after the busy target's slice, which is
// what small buffers (-m 8: ~6 ms of samples at 50 kHz) need to lose
// nothing. Unprivileged; the policy stays as it was. Threads started
// later (a rotating output's writer) inherit both; the writer started
// earlier is given the nice by the caller. Older kernels reject or ignore
// it, which changes nothing.
constexpr int32_t kDrainNice = -10;

std::optional<int> RequestShortSlice() {
  struct SchedAttr {  // struct sched_attr, SCHED_ATTR_SIZE_VER0
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
  };
  SchedAttr attr{};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0) return std::nullopt;
  if (attr.sched_policy != SCHED_OTHER) return std::nullopt;  // leave batch, idle, RT alone
  attr.size = sizeof(attr);
  attr.sched_flags = 0;
  attr.sched_runtime = 100'000;
  // Where allowed (CAP_SYS_NICE), a larger share too: busy targets on
  // every CPU otherwise leave the drain a fair share only, less than a
  // high rate's copies need. Its work is bounded by the rings' data.
  const int32_t nice = attr.sched_nice;
  attr.sched_nice = std::min(nice, kDrainNice);
  if (attr.sched_nice != nice && syscall(SYS_sched_setattr, 0, &attr, 0) == 0) {
    return attr.sched_nice;
  }
  attr.sched_nice = nice;
  (void)syscall(SYS_sched_setattr, 0, &attr, 0);
  return std::nullopt;
}

bool RingDrainer::chunk_full() const { return chunk_.size() >= kChunkBytes; }

std::optional<std::pair<uint64_t, uint64_t>> RingDrainer::time_range() const {
  if (first_time_ == UINT64_MAX) return std::nullopt;
  return std::pair{first_time_, last_time_};
}

}  // namespace sample::record
