// StackUnwinding: the reporter's unwinding stage, between the time-ordered
// records and the stacks of frames.
//
// Samples recorded with --call-graph dwarf carry user registers and a copy
// of the user stack instead of a user call chain: their user frames are
// unwound here with DWARF CFI and joined below the kernel frames of the
// kernel's chain, as perf shows them. Samples recorded with -g
// (--call-graph fp,leaf) carry a frame-pointer chain plus the registers and
// a small stack copy: CFI steps from the sampled pc find the frames the
// chain skipped, those that had not set up rbp as their frame pointer (a
// leaf without frame set-up, as gcc and Go make them; under --off-cpu,
// libc's syscall wrappers between the syscall and the function that
// called them), and insert them where the chain goes on (see
// DwarfUnwinder::SkippedCallers). Once a check found the sampled function
// had set up its frame, the samples at the same pc (until the process's
// mappings change) are not queued: their chain stands. When the
// kernel cut such a chain at its frame limit (kernel.perf_event_max_stack),
// the copy is walked with CFI as far as it goes, and where that walk
// agrees with the kernel's frames and goes further, it replaces them: a
// deep recursion then reaches main without raising the sysctl, given a copy
// large enough (fp,leaf,60000 holds about 200 frames of 256 bytes).
//
// Samples are queued while records are applied and unwound together by
// Flush() on `jobs` threads (each with its own DwarfUnwinder: a Dwfl per
// process per thread for DWARF walks; -g's leaf checks read each binary's
// CFI once per thread, BinaryRules). Module lists are derived from the process
// table's mappings and follow their changes by themselves (each sample
// keeps the list of its moment); the caller must still flush before a
// record changes the mappings of a process with queued samples
// (HasQueuedFor), because it resolves the unwound frames against the
// process table as it is when Flush calls back.
//
// A binary with no usable file that the recording embedded is a module
// all the same: its load bias from the embedded segments, its CFI from the
// embedded rows (DwarfUnwinder steps it with its cached rules; libdw's own
// walk cannot, and a walk that needs it there ends: embedded_cut_walks).
//
// Owns the unwinders, the per-process module lists and the binary lookups
// (BinaryLocator: build-id checked, never debuginfod: that is the
// symbolizer's job).
#pragma once

#include <linux/perf_event.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/model/process_table.h"
#include "libsample/perf/perf_record.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/recorded_binary.h"
#include "libsample/unwind/dwarf_unwinder.h"

namespace sample::report {

enum class StackMode {
  kKernelChain,  // the kernel's call chain (or just the ip) as recorded
  kDwarf,        // user frames unwound from the copied stack
  kLeafFix,      // a frame-pointer chain checked against the leaf's CFI
};
StackMode StackModeOf(const perf_event_attr& attr);

// Complete dwarf walks are counted by how many bytes of their stack copy
// the walk read (DwarfUnwinder::last_stack_reach), in steps of this many
// bytes; the last step holds everything beyond.
inline constexpr size_t kStackReachStep = 64;
inline constexpr size_t kStackReachSteps = 1024;  // up to 64 KiB, the largest copy

// The leaf check's steps are counted the same way, finer: a few words of
// stack is what they read.
inline constexpr size_t kLeafReachStep = 8;
inline constexpr size_t kLeafReachSteps = 512;  // up to 4 KiB

// At most this many frames are stepped from the sampled pc to where the
// frame-pointer chain goes on: a leaf, or libc's two or three wrappers
// around a system call, and a caller.
inline constexpr size_t kMaxSkippedFrames = 8;

struct UnwindStats {
  uint64_t dwarf_samples = 0;                      // samples whose user stack was unwound
  std::array<uint64_t, kUnwindStopCount> stops{};  // why each of those walks ended
  uint64_t dwarf_frames = 0;                       // user frames they gave
  uint64_t leaf_samples = 0;                       // fp,leaf samples checked
  uint64_t leaf_callers_inserted = 0;              // samples whose fp chain had skipped frames
  uint64_t leaf_frames_inserted = 0;               // the frames put back in them
  uint64_t leaf_steps_joined = 0;                  // checks that reached where the chain goes on
  uint64_t leaf_stack_too_small = 0;               // checks that needed more of the copy
  uint64_t cut_chains_completed = 0;               // cut fp chains the stack copy went past
  uint64_t missing_binaries = 0;                   // binaries not found for unwinding
  uint64_t embedded_binaries = 0;                  // binaries unwound with the CFI recorded
  uint64_t cached_walks = 0;                       // x86_64 walks done with cached CFI rules alone
  uint64_t libdw_walks = 0;                        // walks done (or finished) by libdw
  uint64_t unopened_modules = 0;                   // binary files libdw could not open
  // Walks that needed libdw in a binary known only by its embedded CFI
  // (which libdw cannot read), ended there.
  uint64_t embedded_cut_walks = 0;
  // Of the complete walks: how many read up to (i + 1) * kStackReachStep
  // bytes of the copy; and the largest copy asked for (sample_stack_user).
  std::array<uint64_t, kStackReachSteps> stack_reach{};
  uint32_t stack_copy_size = 0;
  // Of the leaf checks that put frames back: how many read up to
  // (i + 1) * kLeafReachStep bytes of the copy to find them (not counting a
  // last read that only confirmed the chain's caller); the largest copy.
  std::array<uint64_t, kLeafReachSteps> leaf_reach{};
  uint32_t leaf_copy_size = 0;
};

// The stack copy size that `fraction` of the complete walks stayed within
// (a multiple of kStackReachStep); 0 when there were none.
uint64_t StackReachWithin(const UnwindStats& stats, double fraction);

// The same for the leaf checks' steps (a multiple of kLeafReachStep).
uint64_t LeafReachWithin(const UnwindStats& stats, double fraction);

// A stack copy size worth suggesting: when at least 1,000 walks completed
// and 99% of them read a quarter of the copy or less, that much with a
// quarter more, rounded up to 512 bytes; nullopt otherwise.
std::optional<uint32_t> SmallerStackCopy(const UnwindStats& stats);

struct StackUnwindingOptions {
  unsigned jobs = 1;
  Arch arch = Arch::kUnknown;  // of the recording host
  // How binaries are found (the user's options). Unwinding never asks
  // debuginfod (use_debuginfod is ignored): a walk must not wait on the
  // network.
  BinaryLocatorOptions binaries;
  // The recording's own code: its [vdso] image (whose CFI unwinds frames
  // in the vDSO) and embedded binaries.
  RecordedCode recorded;
};

class StackUnwinding {
 public:
  StackUnwinding(const StackUnwindingOptions& options, const ProcessTable& processes,
                 const format::Metadata& build_ids);
  ~StackUnwinding();

  // Queues sample `index` (the caller's numbering), written by an event
  // with `attr`, for unwinding; false if it needs none (not a dwarf or
  // fp,leaf event, or no user registers: then the recorded chain stands).
  // `cut`: the kernel's chain reached its frame limit.
  bool Queue(size_t index, const SampleRecord& sample, const perf_event_attr& attr,
             bool cut = false);
  bool empty() const { return queue_.empty(); }
  bool HasQueuedFor(uint32_t pid) const { return queued_pids_.contains(pid); }

  // Unwinds every queued sample, then calls `done` in queue order with each
  // sample's index and its full chain: kernel frames, PERF_CONTEXT_USER,
  // then user frames (the same shape as a kernel call chain). The sample
  // bytes given to Queue must live until then.
  void Flush(const std::function<void(size_t, std::span<const uint64_t>)>& done);

  // Forgets the pcs found framed (kept per process, exited ones too): for
  // a loader that lives on (sample-top), now and then.
  void ClearFramedPcs() { framed_.clear(); }

  const UnwindStats& stats() const { return stats_; }
  // Said about binaries used all the same (a build-id mismatch under
  // --force), once per binary.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Item {
    size_t index;
    StackMode mode;
    uint32_t pid;
    uint32_t tid;
    uint64_t ip;
    std::shared_ptr<const UnwindSpace> space;
    DwarfRegisters regs;
    std::span<const std::byte> stack;
    U64List callchain;
    // Filled by the workers.
    std::vector<uint64_t> chain;
    size_t user_frames = 0;    // dwarf: the unwound frames at the end of `chain`
    uint64_t stack_reach = 0;  // bytes of the copy the walk (fp,leaf: that found frames) read
    UnwindStop stop = UnwindStop::kComplete;
    size_t skipped_frames = 0;     // fp,leaf: frames the fp chain skipped, put back
    bool joined = false;           // fp,leaf: the steps reached where the chain goes on
    bool stack_too_small = false;  // fp,leaf: a step needed more of the copy
    bool framed_at_pc = false;     // fp,leaf: the sampled function had set up rbp
    bool cut = false;              // the kernel's chain reached its frame limit
    bool completed = false;        // fp,leaf: ... and the copy's walk went past it
  };
  struct ResolvedBinary {
    std::string binary;
    std::string debug;
    const EmbeddedBinary* embedded = nullptr;  // when no file is usable
    // The binary's segments, read on its first mapping's bias (each
    // process maps it elsewhere; the file is read once).
    std::optional<ElfLoadLayout> layout;
    bool layout_read = false;
  };

  std::shared_ptr<const UnwindSpace> SpaceOf(uint32_t pid);
  // fp,leaf: whether an earlier check found that the function at `pc` of
  // process `pid`, as mapped now, had set up its frame (then a sample
  // there needs no check: its chain stands as the kernel gave it).
  bool FramedAt(uint32_t pid, uint64_t pc) const;
  ResolvedBinary& Resolve(uint32_t dso);
  // The load bias of `mapping` of `files` (from the binary's segments, read
  // once: ResolvedBinary::layout); nullopt when the file is unreadable or
  // no segment holds the mapping's offset.
  std::optional<uint64_t> BiasOf(const Mapping& mapping, ResolvedBinary& files);
  void Work(DwarfUnwinder& unwinder, Item& item) const;
  // fp,leaf, a chain the kernel cut: extends item.chain (user frames from
  // `user_start`) with the frames the stack copy's CFI walk finds past it.
  void CompleteCutChain(DwarfUnwinder& unwinder, const UnwindRequest& request, size_t user_start,
                        Item& item) const;

  StackUnwindingOptions options_;
  const ProcessTable& processes_;
  const format::Metadata& build_ids_;
  BinaryLocator locator_;                 // owns the [vdso] image's file, which libdw reads
  std::vector<DwarfUnwinder> unwinders_;  // one per job
  std::vector<Item> queue_;
  std::unordered_set<uint32_t> queued_pids_;
  // By pid: the modules for the mappings of ProcessTable::MappingsVersion,
  // which is the space's version (rebuilt when the table's moves on).
  std::unordered_map<uint32_t, std::shared_ptr<const UnwindSpace>> spaces_;
  std::unordered_map<uint32_t, ResolvedBinary> binaries_;  // by dso id
  // By pid: the pcs of FramedAt for the mappings of `version`.
  struct FramedPcs {
    uint64_t version = 0;
    std::unordered_set<uint64_t> pcs;
  };
  std::unordered_map<uint32_t, FramedPcs> framed_;
  UnwindStats stats_;
  std::vector<std::string> warnings_;
};

}  // namespace sample::report
