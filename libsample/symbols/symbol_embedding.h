// BuildEmbeddedBinary: what a recording carries of one binary
// (EmbeddedBinary, embedded_binary.h), read from the binary at the end of
// the recording, for the addresses the recording hit.
//
// For each distinct lookup offset: its frames exactly as
// FramesAtFileOffset gives them (the report's own function, so the report
// shows the same frames with or without the file); the function holding
// it (its ELF symbol with the extent ElfSymbols::Find gives it, else its
// FDE, named "<basename>+0x<start>" as FramesAtFileOffset names it); the
// CFI row holding it, read as the unwinder reads rules (CfiRows); and for
// the sampled pcs (leaves), the machine code of their functions, within
// EmbeddingLimits.
//
// CFI rows are x86_64's only (X86FrameRule): other machines' binaries get
// frames, functions and code but no rows.
//
// With KnownFrames (EmbeddingRequest::known) holding every lookup offset,
// the frames come from them and the DWARF is not opened (ELF symbols, FDEs
// and CFI rows are still read: cheap); otherwise the offsets they lack are
// symbolized, and their functions then the rest of their compilation
// units (or all of a binary's code, up to EmbeddingLimits::max_learnt_binary)
// are learnt into them (KnownFrames::Learn: 0.13-0.5 us a byte, once per
// build), within EmbeddingLimits::learn_budget.
//
// Cost: each reader opens its file once per call (the symbolizer's ELF
// symbols and DWARF, the FDE table, the CFI rows), never per offset;
// offsets are visited in order so that one FDE or CFI row found serves
// every later offset inside it. Runs at the end of every recording.
// Measured (one core, CPU time, whole call): libc 1 ms for 22 offsets,
// 110 ms for 200,000 (1.8 M offsets/s); /bin/true's three binaries about
// 1.2 ms together; cc1plus (34 MB, stripped: every function an FDE) 26 ms
// for 340 offsets spread over it, 47 ms for 5,400, 156 ms for 43,000, of
// which 25 ms was the symbolizer's open, most of it ElfSymbols demangling
// its 31,000 .dynsym names (now demangled only when asked for).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libsample/result.h"
#include "libsample/symbols/embedded_binary.h"
#include "libsample/symbols/known_frames.h"

namespace sample {

// `samples` samples of event `event` (its index in the recording's events)
// at file offset `offset`.
struct LeafSamples {
  uint64_t offset = 0;
  uint32_t event = 0;
  uint64_t samples = 0;
  bool operator==(const LeafSamples&) const = default;
};

struct EmbeddingRequest {
  // As recorded: the key of the embedded binary and, through its
  // Basename, the name of functions only an FDE delimits.
  std::string path;
  // The file to read: may be /proc/PID/root/..., /proc/self/fd/N.
  std::string binary;
  // A separate debug file for it (same build-id), or empty.
  std::string debug;
  // Lookup file offsets: the exact sampled pc for leaves, pc - 1 for
  // return addresses. Unsorted; may repeat.
  std::vector<uint64_t> offsets;
  // The offsets of sampled pcs (leaves): their functions' machine code is
  // embedded (within EmbeddingLimits). Treated as lookup offsets too,
  // should `offsets` lack one.
  std::vector<uint64_t> leaf_offsets;
  // Lookup offsets of words a stack scan found (CodeHits), most of them
  // no return address: each is looked up only where a call ends at the
  // word (EndsAfterCall, libsample/symbols/call_sites.h), a sigreturn
  // trampoline starts there (StartsSigreturn: a signal frame's), or the
  // word is an ELF symbol's start or one byte past it (Go's goexit + 1
  // under every goroutine). Unsorted; may repeat.
  std::vector<uint64_t> scanned_offsets;
  // The samples each event took at leaf offsets, which
  // EmbeddingLimits::min_event_samples compares a function's sums with.
  std::vector<LeafSamples> leaf_samples;
  // Frames learnt by earlier embeddings of this build (same file, debug
  // file and display name), or nullptr. When they hold every lookup offset
  // the DWARF is not read at all; else the functions holding the offsets
  // they lack are learnt into it, within EmbeddingLimits::learn_budget.
  KnownFrames* known = nullptr;
  // The binary's identity as the recording stores it (file_identity.h);
  // empty: its GNU build-id.
  std::string identity;
};

// Bounds on the machine code embedded. With `min_event_samples` (by event
// index) a function is left out unless, for some event, its samples at
// its leaf offsets reach that event's figure (its code is what annotation
// shows, and annotating a function with a sample or two tells nothing: the
// recorder asks for one in a thousand of each event's samples,
// MinCodeSamples); an event past the vector, or whose figure is
// UINT64_MAX, lets none in. Left out too: a function larger than
// `max_function_code`,
// and each one that no longer fits in `code_budget`, which is shared by
// the binaries of a recording: BuildEmbeddedBinary takes what it embeds
// from it, so the caller passes the same limits to every call. What is
// left out is counted, per function, in EmbeddedBinary::code_omitted, and
// those with too few samples also in `cold_functions`; frames, functions
// and CFI rows are never bounded (they are what the report cannot do
// without).
struct EmbeddingLimits {
  uint64_t max_function_code = uint64_t{64} << 10;
  uint64_t code_budget = uint64_t{16} << 20;
  std::vector<uint64_t> min_event_samples;  // empty: samples do not matter
  uint64_t cold_functions = 0;              // out: left out for their samples
  // Bytes KnownFrames::Learn may still look up (shared like code_budget);
  // functions over max_learnt_function are learnt at their lookup offsets
  // alone; a binary whose code is at most max_learnt_binary is learnt
  // whole.
  uint64_t learn_budget = uint64_t{1} << 20;
  uint64_t max_learnt_function = uint64_t{64} << 10;
  uint64_t max_learnt_binary = uint64_t{1} << 20;
};

// The share of an event's samples a function needs for its code to be
// embedded: samples * kMinCodeShareDivisor >= the event's samples. The report's
// default choice of functions to annotate (report/views/annotate_view.h)
// leaves out the same ones, so that it annotates the same functions with
// the binaries or without them.
inline constexpr uint64_t kMinCodeShareDivisor = 1000;
inline constexpr uint64_t MinCodeSamples(uint64_t all_samples) {
  return (all_samples + kMinCodeShareDivisor - 1) / kMinCodeShareDivisor;
}

// The embedded tables of `request.binary` (Normalize()d). Fails only if
// the binary (or a given debug file) cannot be read as ELF.
Result<EmbeddedBinary> BuildEmbeddedBinary(const EmbeddingRequest& request,
                                           EmbeddingLimits& limits);

}  // namespace sample
