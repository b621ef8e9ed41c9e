#include "record/drain/stack_compaction.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>

#include "libsample/perf/chain_capture.h"
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

// fp,leaf: how many bytes of `sample`'s live copy the report can read.
// Its CFI steps (DwarfUnwinder::SkippedCallers) go up from the stack
// pointer, reading return-address slots in rising order, and stop at the
// first one holding the chain's first user caller (or earlier, at a framed
// function): nothing past the first 8-byte slot holding that value is read.
// In a Go leaf that slot is the one the kernel's walk read it from, so a
// 192-byte copy keeps 16-80 bytes; the bytes past it differ in every
// sample and compressed worst. Kept whole: no such slot (deep frameless
// chains, recursion without frame pointers), and a chain cut at the
// kernel's frame limit, which the report completes from the whole copy
// (StackUnwinding::CompleteCutChain). At most 24 words are compared.
size_t LeafCopyEnd(const SampleRecord& sample, const perf_event_attr& attr,
                   uint32_t host_max_stack) {
  const size_t whole = sample.user_stack.size();
  const U64List& chain = sample.callchain;
  size_t user = chain.size();
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i] == static_cast<uint64_t>(PERF_CONTEXT_USER)) user = i + 1;
  }
  // chain[user] is the sampled pc; chain[user + 1] its first caller.
  if (user + 1 >= chain.size() || ChainAtFrameLimit(chain, ChainFrameLimit(attr, host_max_stack))) {
    return whole;
  }
  const uint64_t caller = chain[user + 1];
  if (caller >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) return whole;
  // A bounded scan on the draining thread, whatever the copy's size: the
  // default copy is 24 words; a larger one whose caller sits deeper stays
  // whole.
  constexpr size_t kScannedBytes = 24 * 8;
  for (size_t at = 0; at + 8 <= whole && at < kScannedBytes; at += 8) {
    uint64_t word;
    std::memcpy(&word, sample.user_stack.data() + at, 8);
    if (word == caller) return at + 8;
  }
  return whole;
}

// fp,leaf, a copy cut at LeafCopyEnd: the words below the caller's slot
// that cannot hold a user address become 0. The report's steps read only
// return addresses and the frame pointers a frameless function saved, all
// user addresses; what is cleared are a leaf's counters, sizes and flags,
// which differ in every sample and cost the compressed file more than the
// rest of the copy (Go's loop counters: 9.3 against 6.4 bytes a sample).
// A 64-bit word is kept from 64 KiB up to 2^56 (5-level paging's user
// space); an i386 process's word is two 4-byte slots, kept when either
// reaches 64 KiB (a return address beside a small saved register).
void ClearNonAddresses(std::span<std::byte> words, bool i386) {
  constexpr uint64_t kLowest = 0x10000, kUserEnd = uint64_t{1} << 56;
  for (size_t at = 0; at + 8 <= words.size(); at += 8) {
    uint64_t word;
    std::memcpy(&word, words.data() + at, 8);
    const bool address = i386 ? (word & 0xffffffff) >= kLowest || (word >> 32) >= kLowest
                              : word >= kLowest && word < kUserEnd;
    if (!address) std::memset(words.data() + at, 0, 8);
  }
}

void Append(std::vector<std::byte>& out, std::span<const std::byte> bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// Appends one whole record, its stack copy cut to the live part.
void AppendRecord(std::span<const std::byte> record, const perf_event_header& h,
                  const EventTable& table, uint32_t host_max_stack, std::vector<std::byte>& out) {
  if (h.type == PERF_RECORD_SAMPLE) {
    const auto event = table.EventIndexFor(record);
    const perf_event_attr* attr = event ? &table.events()[*event].attr : nullptr;
    const auto sample = attr != nullptr && (attr->sample_type & PERF_SAMPLE_STACK_USER) != 0
                            ? ParseSample(record, *attr)
                            : std::nullopt;
    if (sample && !sample->user_stack.empty()) {
      // size, data[size], dyn_size: data keeps its dyn_size bytes (fp,leaf:
      // at most up to LeafCopyEnd) and what follows (dyn_size and any later
      // fields) moves up behind them.
      const size_t data = static_cast<size_t>(sample->user_stack.data() - record.data());
      uint64_t copied = 0;
      std::memcpy(&copied, record.data() + data - 8, 8);
      uint64_t dyn_size = sample->user_stack.size();
      const bool leaf = ChainCaptureFromAttr(*attr).leaf;
      if (leaf) dyn_size = LeafCopyEnd(*sample, *attr, host_max_stack);
      const bool cut = leaf && dyn_size < sample->user_stack.size();
      const uint64_t live = (dyn_size + 7) & ~uint64_t{7};
      if (live < copied && copied <= record.size() - data) {
        const size_t start = out.size();
        Append(out, record.first(data - 8));
        const auto* size_bytes = reinterpret_cast<const std::byte*>(&live);
        out.insert(out.end(), size_bytes, size_bytes + 8);
        Append(out, record.subspan(data, live));
        // The caller's slot, the last word, is an address.
        if (cut) {
          ClearNonAddresses(std::span(out).subspan(out.size() - live, dyn_size - 8),
                            sample->regs_abi == PERF_SAMPLE_REGS_ABI_32);
        }
        // dyn_size never above size, as perf's parser requires.
        const auto* dyn_bytes = reinterpret_cast<const std::byte*>(&dyn_size);
        out.insert(out.end(), dyn_bytes, dyn_bytes + 8);
        Append(out, record.subspan(data + copied + 8));
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
                              const EventTable& table, uint32_t host_max_stack,
                              std::vector<std::byte>& out) {
  const size_t before = out.size();
  const size_t total = first.size() + second.size();
  std::vector<std::byte> scratch;  // only for a record that wraps
  size_t at = 0;
  while (total - at >= sizeof(perf_event_header)) {
    perf_event_header h;
    std::memcpy(&h, Slice(first, second, at, sizeof(h), scratch).data(), sizeof(h));
    if (h.size < sizeof(h) || h.size > total - at) break;  // the rest goes on as it is
    AppendRecord(Slice(first, second, at, h.size, scratch), h, table, host_max_stack, out);
    at += h.size;
  }
  if (at < total) {
    if (at < first.size()) Append(out, first.subspan(at));
    Append(out, second.subspan(at > first.size() ? at - first.size() : 0));
  }
  return out.size() - before;
}

}  // namespace sample::record
