// How the recorder captures each sample's call chain, spelled as perf's
// --call-graph, and the perf_event_attr settings each way needs. Named
// "chain capture" (after the kernel's PERF_SAMPLE_CALLCHAIN) so that "call
// graph" keeps one meaning: how the reporter draws chains
// (report/views/call_graph_spec.h). The option, the header's "call-graph = ..."
// text and the JSON key keep perf's spelling.
//
//   fp              the kernel walks frame pointers (PERF_SAMPLE_CALLCHAIN)
//   fp,leaf[,SIZE]  fp, plus the stack, frame and instruction pointers and
//                   the top SIZE bytes of the user stack (default
//                   kDefaultLeafStackSize), from which the reporter recovers
//                   the callers the chain skips: of a leaf that set up no
//                   frame (gcc and Go omit it in leaves needing no stack),
//                   of libc's system call wrappers (built without frame
//                   pointers) in an off-CPU sample. What -g records.
//   dwarf[,SIZE]    kernel frames from the kernel; user frames unwound later
//                   with CFI from every general register and a copy of SIZE
//                   bytes of user stack (default 8192)
//   no              no call chains
//
// The kernel takes stack sizes that are multiples of 8 below 65535 (the
// whole sample must fit a u16 size); sizes are rounded up to a multiple of 8
// and capped at 65528, as perf does. A recorded attr says which way it was
// made (ChainCaptureFromAttr), for the reporter and the header view.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "libsample/perf/user_regs.h"
#include "libsample/result.h"

namespace sample {

enum class ChainCapture { kNone, kFramePointer, kDwarf };

inline constexpr uint32_t kDefaultDwarfStackSize = 8192;
// -g's copy: what the reporter's CFI steps read, measured on C leaves at
// -O2, Go leaves and libc's sleep wrappers under --off-cpu (bench/RESULTS.md,
// "Issue 29"), with room to spare.
inline constexpr uint32_t kDefaultLeafStackSize = 192;
// The largest multiple of 8 below 65535 (USHRT_MAX), the kernel's bound.
inline constexpr uint32_t kMaxStackSize = 65528;

struct ChainCaptureOptions {
  ChainCapture mode = ChainCapture::kNone;
  bool leaf = false;        // fp only: also the registers and stack the leaf fix needs
  uint32_t stack_size = 0;  // bytes of user stack per sample (dwarf, fp,leaf); else 0

  bool operator==(const ChainCaptureOptions&) const = default;
};

// The defaults of a mode: fp without leaf, dwarf with 8192 bytes.
ChainCaptureOptions DefaultChainCapture(ChainCapture mode);

// What -g records: fp,leaf with the default copy. perf's -g is fp: the
// kernel's chain skips the caller of every frameless leaf, and that of the
// libc wrapper a thread blocked in; --call-graph fp keeps perf's exactly.
ChainCaptureOptions DefaultCallGraph();

// Parses "fp", "fp,leaf", "fp,leaf,SIZE", "dwarf", "dwarf,SIZE" or "no".
// Errors say what was expected; callers prefix the option's name.
Result<ChainCaptureOptions> ParseChainCapture(std::string_view text);

// A user stack size in bytes: at least 1, rounded up to a multiple of 8, at
// most kMaxStackSize. `text` is decimal; errors quote it.
Result<uint32_t> ParseStackSize(std::string_view text);
Result<uint32_t> CheckStackSize(uint64_t bytes);

// Sets sample_type bits, sample_regs_user, sample_stack_user and
// exclude_callchain_user for `options` on `attr` (clearing them for kNone).
// Fails for dwarf and fp,leaf when `arch` has no register mask.
Result<void> ApplyChainCapture(const ChainCaptureOptions& options, Arch arch,
                               perf_event_attr* attr);

// What a recorded attr asked for: CALLCHAIN with REGS_USER and STACK_USER
// is dwarf when user call chains were excluded, fp,leaf when they were not.
ChainCaptureOptions ChainCaptureFromAttr(const perf_event_attr& attr);

// "no", "fp", "fp,leaf" or "dwarf".
std::string_view ChainCaptureName(const ChainCaptureOptions& options);
// The name, with " (N bytes of user stack)" for the modes that copy it.
std::string DescribeChainCapture(const ChainCaptureOptions& options);

}  // namespace sample
