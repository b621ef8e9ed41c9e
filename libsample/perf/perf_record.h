// Typed views of the kernel's perf records (perf_event_open(2), "MMAP layout").
//
// Parse* functions read one record (header included) against the attributes
// of the event that wrote it and return nullopt when the record is shorter
// than its fields say: the caller counts it as malformed and moves on. The
// views point into the record bytes, which must outlive them; callchains are
// read through memcpy, so the bytes need no alignment.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace sample {

// Fields of the sample_id trailer that sample_id_all appends to non-sample
// records; zero when the event's sample_type does not include them.
struct SampleId {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint32_t cpu = 0;
};

// A list of u64 instruction pointers, possibly unaligned in memory.
class U64List {
 public:
  U64List() = default;
  U64List(const std::byte* data, size_t count) : data_(data), count_(count) {}
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // The raw little-endian words, e.g. to hash or compare a whole chain.
  std::span<const std::byte> bytes() const { return {data_, count_ * sizeof(uint64_t)}; }
  uint64_t operator[](size_t i) const {
    uint64_t value;
    std::memcpy(&value, data_ + i * sizeof(uint64_t), sizeof(value));
    return value;
  }

 private:
  const std::byte* data_ = nullptr;
  size_t count_ = 0;
};

// The read_format block of a PERF_SAMPLE_READ sample: one value (no
// PERF_FORMAT_GROUP) or one per group member, leader first. Ids and lost
// counts are 0 when read_format lacks PERF_FORMAT_ID / PERF_FORMAT_LOST.
class ReadValues {
 public:
  // Where, in each `stride`-word entry of `words`, the value, id and lost
  // count sit; an offset of 0 for id/lost means absent (the value is at 0).
  struct Layout {
    size_t stride = 1;
    size_t id = 0;
    size_t lost = 0;
  };
  ReadValues() = default;
  ReadValues(U64List words, size_t count, Layout layout)
      : words_(words), count_(count), layout_(layout) {}
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  uint64_t value(size_t i) const { return words_[i * layout_.stride]; }
  uint64_t id(size_t i) const { return layout_.id ? words_[i * layout_.stride + layout_.id] : 0; }
  uint64_t lost(size_t i) const {
    return layout_.lost ? words_[i * layout_.stride + layout_.lost] : 0;
  }

 private:
  U64List words_;
  size_t count_ = 0;
  Layout layout_;
};

struct SampleRecord {
  uint64_t id = 0;
  uint64_t ip = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint64_t addr = 0;
  uint32_t cpu = 0;
  // PERF_SAMPLE_PERIOD's; without it, the fixed sample_period (a sample
  // of every Nth hit stands for N), else 1.
  uint64_t period = 1;
  // PERF_SAMPLE_READ: time_enabled/time_running when read_format asks.
  uint64_t time_enabled = 0;
  uint64_t time_running = 0;
  ReadValues read;
  U64List callchain;               // includes PERF_CONTEXT_* markers, as the kernel wrote it
  std::span<const std::byte> raw;  // PERF_SAMPLE_RAW payload
  // PERF_SAMPLE_REGS_USER: the user registers at the sample, one per bit of
  // attr.sample_regs_user in increasing bit order; empty when regs_abi is
  // PERF_SAMPLE_REGS_ABI_NONE (a kernel thread: no user state).
  uint64_t regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
  U64List user_regs;
  // PERF_SAMPLE_STACK_USER: the copied user stack, from the stack pointer
  // up. Only the first stack_dyn_size bytes are valid; the kernel pads the
  // copy to the requested size.
  std::span<const std::byte> user_stack;
  // After the stack: PERF_SAMPLE_PHYS_ADDR (the data address's physical
  // address, -d --phys-data) and PERF_SAMPLE_DATA_PAGE_SIZE (the size of
  // the page holding it, --data-page-size); 0 when not asked for or not
  // known to the kernel. WEIGHT, DATA_SRC, TRANSACTION, REGS_INTR and
  // CGROUP before them are stepped over.
  uint64_t phys_addr = 0;
  uint64_t data_page_size = 0;
};

struct Mmap2Record {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t addr = 0;
  uint64_t len = 0;
  uint64_t pgoff = 0;
  uint32_t prot = 0;
  uint32_t flags = 0;
  // Only with PERF_RECORD_MISC_MMAP_BUILD_ID in the header's misc.
  std::span<const std::byte> build_id;
  // Without it: the mapped file's device and inode (0 when not known).
  uint32_t maj = 0;
  uint32_t min = 0;
  uint64_t ino = 0;
  std::string_view filename;
  SampleId sample_id;
};

struct CommRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string_view comm;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC
  SampleId sample_id;
};

// PERF_RECORD_FORK and PERF_RECORD_EXIT share one layout.
struct TaskRecord {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t tid = 0;
  uint32_t ptid = 0;
  uint64_t time = 0;
  SampleId sample_id;
};

struct LostRecord {
  uint64_t id = 0;
  uint64_t lost = 0;
  SampleId sample_id;
};

// PERF_RECORD_LOST_SAMPLES: samples the kernel dropped (e.g. too large).
struct LostSamplesRecord {
  uint64_t lost = 0;
  SampleId sample_id;
};

// PERF_RECORD_THROTTLE / UNTHROTTLE.
struct ThrottleRecord {
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  SampleId sample_id;
};

// PERF_RECORD_SWITCH (a per-task event's) and PERF_RECORD_SWITCH_CPU_WIDE
// (a CPU-wide event's, which also names the other task). Either way the
// sample_id is the task running when the record was written: the one
// leaving on a switch-out, the one coming back on a switch-in.
struct SwitchRecord {
  bool out = false;        // PERF_RECORD_MISC_SWITCH_OUT
  bool preempted = false;  // out while still runnable (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
  bool cpu_wide = false;
  uint32_t other_pid = 0;  // CPU-wide only: the next (out) or previous (in) task
  uint32_t other_tid = 0;
  SampleId sample_id;
};

perf_event_header ReadRecordHeader(std::span<const std::byte> record);

std::optional<SampleRecord> ParseSample(std::span<const std::byte> record,
                                        const perf_event_attr& attr);
std::optional<Mmap2Record> ParseMmap2(std::span<const std::byte> record,
                                      const perf_event_attr& attr);
// PERF_RECORD_MMAP (events without attr.mmap2; perf's own kernel and
// module maps) as an Mmap2Record: no device, inode or build-id; prot is
// read-execute, or read-only for a data mapping (PERF_RECORD_MISC_MMAP_DATA).
std::optional<Mmap2Record> ParseMmap(std::span<const std::byte> record,
                                     const perf_event_attr& attr);
std::optional<CommRecord> ParseComm(std::span<const std::byte> record, const perf_event_attr& attr);
std::optional<TaskRecord> ParseTask(std::span<const std::byte> record, const perf_event_attr& attr);
std::optional<LostRecord> ParseLost(std::span<const std::byte> record, const perf_event_attr& attr);
std::optional<LostSamplesRecord> ParseLostSamples(std::span<const std::byte> record,
                                                  const perf_event_attr& attr);
std::optional<ThrottleRecord> ParseThrottle(std::span<const std::byte> record,
                                            const perf_event_attr& attr);
// Either switch record type; nullopt for other types or short records.
std::optional<SwitchRecord> ParseSwitch(std::span<const std::byte> record,
                                        const perf_event_attr& attr);

// The sample_id trailer of a non-sample record (zeroes when absent).
std::optional<SampleId> ParseSampleIdTrailer(std::span<const std::byte> record,
                                             const perf_event_attr& attr);

// Where PERF_SAMPLE_TIME sits in a PERF_RECORD_SAMPLE of `attr`'s event
// (after the identifier, ip and tid when present); 0 without a time.
uint32_t SampleTimeOffset(const perf_event_attr& attr);

// Where PERF_SAMPLE_CPU's {u32 cpu, u32 res} sits in the records of an
// event whose sample_type has it: bytes from the start of a
// PERF_RECORD_SAMPLE, and bytes after it to the end of another record's
// sample_id trailer, whose size without the field is `trailer_size`
// (records have no trailer without sample_id_all).
struct CpuFieldPlace {
  uint32_t sample_offset = 0;
  bool trailers = false;
  uint32_t from_trailer_end = 0;
  uint32_t trailer_size = 0;
  bool operator==(const CpuFieldPlace&) const = default;
};
// `attr` must have PERF_SAMPLE_CPU.
CpuFieldPlace CpuFieldPlaceOf(const perf_event_attr& attr);

// Appends `records` to `out`, each with a {cpu, 0} field inserted where
// `place` says and its size grown by 8: the records as the kernel would
// have written them had the event's sample_type included PERF_SAMPLE_CPU.
// A record too short to hold the field's neighbours, and any bytes after
// the first malformed record, are appended unchanged.
void InsertCpuField(std::span<const std::byte> records, uint32_t cpu, const CpuFieldPlace& place,
                    std::vector<std::byte>& out);

// The timestamp used to order `record`: the sample's time, or the sample_id
// trailer's time for other records. 0 when the record carries none.
uint64_t RecordTime(std::span<const std::byte> record, const perf_event_attr& attr);

// Callchain entries at or above PERF_CONTEXT_MAX mark the context of the
// entries that follow (kernel, user, guest).
inline bool IsContextMarker(uint64_t ip) { return ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX); }

// The limit the kernel cut `attr`'s call chains at: the attr's
// sample_max_stack, else kernel.perf_event_max_stack (`host_max_stack`).
// The kernel stores at most that many frames, context markers aside, so a
// chain that long was cut.
uint32_t ChainFrameLimit(const perf_event_attr& attr, uint32_t host_max_stack);
bool ChainAtFrameLimit(const U64List& chain, uint32_t limit);

// A hash of a run of 8-byte words (a call chain), FNV-1a with a final mix
// per word; `seed` starts it.
inline uint64_t HashWords(std::span<const std::byte> words, uint64_t seed = 0) {
  uint64_t hash = 0xcbf29ce484222325ull ^ seed;
  for (size_t i = 0; i + 8 <= words.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, words.data() + i, 8);
    hash = (hash ^ word) * 0x100000001b3ull;
    hash ^= hash >> 29;
  }
  return hash;
}

// Calls `fn(address, return_address)` for each address of a kernel call
// chain, markers left out: the first address after each context marker is
// where that context was interrupted (looked up as it is); the others are
// return addresses (looked up at address - 1, the call).
template <typename Fn>
void ForEachChainAddress(const U64List& chain, Fn&& fn) {
  bool exact = true;
  for (size_t i = 0; i < chain.size(); ++i) {
    const uint64_t address = chain[i];
    if (IsContextMarker(address)) {
      exact = true;
      continue;
    }
    fn(address, !exact);
    exact = false;
  }
}

}  // namespace sample
