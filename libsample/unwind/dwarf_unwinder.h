// DwarfUnwinder: walks a sampled user stack with DWARF CFI (libdw).
//
// A --call-graph dwarf sample carries the user registers and a copy of the
// user stack from the stack pointer up. The unwinder replays the call frame
// information of each function (.eh_frame, else .debug_frame from a
// separate debug file) over those bytes: registers come from the sample,
// memory reads from the stack copy or, for code and read-only data, from
// the mapped ELF files. Where a pc has no CFI, libdw's architecture backend
// follows the frame pointer (x86_64).
//
// A module whose binary is missing may come with what the recording
// embedded of it (EmbeddedBinary): its CFI rows, one X86FrameRule per
// address range. The cached x86_64 walk steps frames there from those rows
// as it would from the file's CFI, and every "is this pc in a module" check
// counts such modules. libdw's own walk (for frames the cached rules cannot
// step: DWARF expressions, signal frames; and for i386 or with the cache
// off) reads files only: a walk that needs it inside an embedded module
// ends there (counted: embedded_cut_walks) instead of guessing with frame
// pointers. Reads from memory outside the stack copy find no code in
// embedded modules either. These are the known differences from a walk
// with the binary at hand.
//
// One Dwfl per process, kept across samples and re-reported only when the
// process's executable mappings change (a new UnwindSpace version), so CFI
// parsed once serves every later sample. Not thread-safe: use one
// DwarfUnwinder per thread. Owns the Dwfl handles and the files they open.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "libsample/perf/user_regs.h"
#include "libsample/result.h"
#include "libsample/symbols/embedded_binary.h"

namespace sample {

class BinaryRules;

// One executable mapping of a process, with the files to read it from.
struct UnwindModule {
  uint64_t start = 0;  // the (first) executable mapping's start, as recorded
  uint64_t end = 0;    // the (last) executable mapping's end (exclusive)
  uint64_t bias = 0;   // load bias: runtime address = bias + ELF vaddr
  std::string binary;  // the file to read CFI and code from; empty: `embedded`
  std::string debug;   // a separate debug file (for .debug_frame), or empty
  // Without a file: what the recording embedded of the binary (its CFI
  // rows cover [start, end)); must outlive the unwinder's use of the space.
  const EmbeddedBinary* embedded = nullptr;
};

// A process's executable modules at one moment; immutable once built, so
// threads may share it.
struct UnwindSpace {
  uint64_t version = 0;  // unique per space: a new version means new modules
  std::vector<UnwindModule> modules;
};

// Why a walk ended.
enum class UnwindStop : uint8_t {
  kComplete,       // reached the outermost frame (its CFI ends the chain)
  kStackTooSmall,  // a caller's frame lies beyond the copied stack
  kNoCfi,          // a pc with no CFI and no usable frame pointer
  kNoModule,       // a pc outside every mapped file (or its file is missing)
  kBadMemory,      // a read outside the stack copy and the mapped files
  kMaxDepth,       // stopped at the frame limit
  kNoRegisters,    // the sample has no usable user registers
  kFailed,         // anything else libdw reported
  kLoop,           // a caller's frame no higher on the stack than its callee's
};
inline constexpr size_t kUnwindStopCount = 9;
// "complete", "stack copy too small", "no CFI", ...
const char* UnwindStopName(UnwindStop stop);

// What SkippedCallers found.
struct FramelessCallers {
  // Return addresses of the skipped frames, innermost first (none when the
  // sampled function had set up its frame).
  std::vector<uint64_t> callers;
  // The steps reached the frame the frame-pointer chain continues from;
  // else they stopped (no CFI, the copy too small, the step limit) and
  // `callers` are the first of the skipped frames.
  bool joined = false;
  bool stack_too_small = false;  // a step needed stack beyond the copy
  // The sampled function had made rbp its frame pointer: nothing was
  // skipped, and the chain joined, whatever the stack and registers hold
  // (the answer for every sample at this pc in these modules).
  bool framed_at_pc = false;
  uint64_t stack_reach = 0;  // bytes of the copy from sp that the steps read
  // Of those, the bytes that found `callers`: what a copy must hold to put
  // them back. Less than stack_reach where the last step only confirmed
  // the chain's caller (read its return address in a caller's frame).
  uint64_t callers_reach = 0;
};

struct UnwindRequest {
  uint32_t pid = 0;
  uint32_t tid = 0;
  const UnwindSpace* space = nullptr;
  DwarfRegisters regs;
  std::span<const std::byte> stack;  // the copy, starting at regs.sp
  size_t max_frames = 1024;          // the copy's size bounds the walk first, mostly
};

class DwarfUnwinder {
 public:
  // `use_rule_cache`: on x86_64, step frames with cached CFI rules and use
  // libdw's own walk only for the samples they cannot handle (tests turn it
  // off to compare the two).
  explicit DwarfUnwinder(bool use_rule_cache = true);
  ~DwarfUnwinder();
  DwarfUnwinder(DwarfUnwinder&&) noexcept;
  DwarfUnwinder& operator=(DwarfUnwinder&&) noexcept;

  // Appends the frames' pcs to `pcs`, innermost first: the sampled pc, then
  // return addresses. Returns why the walk ended; the frames found before a
  // failure are kept.
  UnwindStop Unwind(const UnwindRequest& request, std::vector<uint64_t>* pcs);
  // How many bytes of the last Unwind's stack copy, from the stack
  // pointer, its reads reached: a copy of that size gives the same walk.
  uint64_t last_stack_reach() const { return last_stack_reach_; }

  // For -g (--call-graph fp,leaf): the frames a frame-pointer chain taken
  // at the sample skipped. Such a chain is read from rbp, so it names the
  // caller of the innermost function that set rbp up, and skips every
  // function between the sampled pc and that one that had not (a leaf
  // without frame set-up, as gcc and Go make them; libc's syscall
  // wrappers, built without frame pointers, under --off-cpu). This steps
  // from the sampled pc with CFI, at most `max_steps` frames, through the
  // functions that have not made rbp their frame pointer, and ends where
  // the chain continues: at a return address equal to `chained_caller`
  // (the chain's first caller, 0 for none), or at a function whose CFA is
  // rbp-based with the rbp the chain was walked from (the chain's first
  // caller is then its caller, and it is the last skipped frame). x86_64
  // only (nothing elsewhere).
  FramelessCallers SkippedCallers(const UnwindRequest& request, uint64_t chained_caller,
                                  size_t max_steps);

  struct Counts {
    uint64_t cached_walks = 0;      // walked with cached CFI rules alone
    uint64_t libdw_walks = 0;       // walked by libdw
    uint64_t unopened_modules = 0;  // files libdw could not open
    // Walks (of either kind) ended in an embedded module where a frame
    // needed libdw's walk.
    uint64_t embedded_cut_walks = 0;
  };
  const Counts& counts() const { return counts_; }

  // At most this many processes keep a Dwfl (each holds an fd and a map of
  // every file it reported); the least recently unwound goes first.
  static constexpr size_t kMaxProcesses = 32;

  // One process's Dwfl and the sample it is unwinding (libdw's callbacks
  // see it); defined in the .cc.
  struct Process;

 private:
  Process* ProcessFor(const UnwindRequest& request);
  // SkippedCallers' rule of lookup pc `pc` in `space`: a file module's
  // from its binary's CFI (binary_rules_), an embedded one's from its rows.
  const X86FrameRule& LeafRuleAt(const UnwindSpace& space, uint64_t pc);
  UnwindStop Walk(Process* process, const UnwindRequest& request, std::vector<uint64_t>* pcs);

  bool use_rule_cache_ = true;
  Counts counts_;
  std::unordered_map<uint32_t, std::unique_ptr<Process>> processes_;
  std::unique_ptr<BinaryRules> binary_rules_;  // SkippedCallers' rules, by binary
  uint64_t uses_ = 0;                          // a clock for evicting the least recently used
  uint64_t last_stack_reach_ = 0;
};

}  // namespace sample
