// The annotate view (--annotate): where inside a function the samples fell,
// by instruction, with the source line and inlined calls each instruction
// came from, as perf annotate shows it.
//
// A sample counts toward the function symbol holding its sampled address
// (the row the flat profile shows it in: HolderIndex) and toward the
// instruction at that address. Percentages are of the function's period
// (perf's default "local period"). The code comes from the binary the
// report symbolized from, or what the recording embedded of it
// (function_code.h); a function whose code is not at hand is still listed,
// with why.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libsample/disasm/disassembler.h"
#include "libsample/model/sample_filter.h"
#include "libsample/result.h"
#include "libsample/symbols/jit_code.h"
#include "libsample/symbols/recorded_binary.h"
#include "report/load/recording.h"
#include "report/views/source_owners.h"

namespace sample::report {

// Bounds on the annotator's work, whatever the code it is handed claims: a
// jitdump or a recording's embedded tables can hold megabytes of code in a
// few kilobytes of file (zstd packs 8 MiB of nops into a kilobyte), and
// each instruction shown costs some 200 bytes and a line of output. Real
// functions stay far inside them; measured (objdump -d): cc1plus 12's
// biggest function (an FDE of 311,460 bytes) has 68,634 instructions,
// glibc 2.36's 35,675 bytes, python3.11's _PyEval_EvalFrameDefault 55,644
// bytes.
struct AnnotateBounds {
  // A function over this is not annotated (no real function is as large;
  // a symbol without a size in a crafted or stripped file can seem to be).
  size_t max_function_bytes = size_t{8} << 20;
  // A function of more instructions shows only those within `near_sampled`
  // of a sampled one, each run left out as one row: 3.8 times cc1plus's
  // biggest.
  size_t whole_function = size_t{1} << 18;
  size_t near_sampled = 16;
  // Over the whole view: once this many rows are shown, every further
  // function is cut as above; once this much code is decoded, further
  // functions are not annotated (a view of 50 functions as big as
  // cc1plus's biggest decodes 15 MiB; Capstone decodes about 3.7 million
  // instructions a second here, the nops of a crafted recording included).
  size_t view_rows = size_t{1} << 20;
  uint64_t view_code_bytes = uint64_t{32} << 20;
};

struct AnnotateOptions {
  bool on = false;
  // Functions to annotate, by name as the report prints them (or full
  // signature); empty: the hottest `max_functions`, but for those under
  // one sample in a thousand of the event's (MinCodeSamples: a recording
  // holds no code of them), the hottest always.
  std::vector<std::string> symbols;
  size_t max_functions = 10;
  // Without `symbols`: also no more of the hottest than hold this share
  // (0-1] of the period counted toward functions (the HTML page: 0.95).
  double coverage = 1.0;
  // The event to annotate (an index into the profile's events); unset: the
  // first with samples.
  std::optional<uint32_t> event;
  AsmSyntax syntax = AsmSyntax::kAtt;
  bool source_only = false;  // --annotate-source: source lines, no instructions
  AnnotateBounds bounds;
};

struct AnnotatedInstruction {
  uint64_t address = 0;
  std::vector<std::byte> bytes;
  std::string text;  // "jne    12d8 <func_a+0x58>", objdump's layout
  uint64_t samples = 0;
  uint64_t period = 0;
  std::string file;  // the innermost source line, as DWARF names it; may be empty
  uint32_t line = 0;
  // The inlined calls the instruction came from, innermost first; empty
  // for the function's own code.
  std::vector<std::string> inlined;
  // Not 0: no instruction but a run of this many without samples, from
  // `address` on, left out of a function too big to show whole
  // (AnnotateBounds); the row has no bytes, text or source line.
  uint64_t left_out = 0;
};

struct AnnotatedFunction {
  uint32_t function = 0;  // the profile's id of the function (Function::symbol)
  std::string name;
  std::string dso;  // the DSO's path, as the recording names it
  uint64_t samples = 0;
  uint64_t period = 0;
  uint64_t start = 0;  // ELF virtual addresses (JIT: pseudo-DSO offsets)
  uint64_t end = 0;
  std::string origin;  // where the code came from
  std::string note;    // why there are no instructions; empty when there are
  // Why runs of instructions are left out (rows with `left_out`); empty
  // when none are.
  std::string cut;
  // Whose source files the printers may read the text of, of those the
  // instructions name (report/views/source_owners.h): only for code from a
  // binary found on this machine, and then by the owners of that binary
  // and of the debug file its DWARF came from. A recording's own tables
  // (embedded binaries, jitdumps, the vDSO image) may name any file of the
  // machine the report runs on, and showing its lines would hand that file
  // to whoever wrote the recording: they get none. `source_readable`: some
  // owner's files may be read. `source_note` says, in one line, what is
  // not shown and why (empty when any file may be read).
  SourceOwners source_owners;
  bool source_readable = false;
  std::string source_note;
  std::vector<AnnotatedInstruction> instructions;
  // Samples at addresses that start no instruction of the decoded code.
  uint64_t unplaced_samples = 0;
};

struct AnnotateView {
  std::string event;
  uint64_t event_samples = 0;
  std::vector<AnnotatedFunction> functions;  // hottest first
  std::vector<std::string> warnings;
  // AnnotateCode::files_only: some function's code is not in a file (the
  // view is not complete; read the recording).
  bool needs_recording = false;
};

// The samples the view annotates, before any code is read: the chosen
// event's functions (every one with samples, hottest first) with their
// samples by the file offset of the sampled address. BuildAnnotateView is
// AnnotateFromIndex of BuildAnnotateIndex; the annotate cache
// (report/annotate_cache.h) keeps an index so that a later --annotate of
// the same recording with the same options reads no sample.
struct OffsetHits {
  uint64_t offset = 0;
  uint64_t samples = 0;
  uint64_t period = 0;
  bool operator==(const OffsetHits&) const = default;
};

struct IndexedDso {
  std::string path;      // as the recording names it
  std::string build_id;  // as recorded (hex); empty when none
  bool jit = false;      // a jitdump's pseudo-DSO, whose code the recording holds
  bool operator==(const IndexedDso&) const = default;
};

struct IndexedFunction {
  uint32_t function = 0;  // the profile's id of the function (Function::symbol)
  std::string name;       // Function::name, short_name and signature
  std::string short_name;
  std::string signature;
  uint32_t dso = 0;  // into AnnotateIndex::dsos
  bool kernel = false;
  // The file offset of one of its samples (its code is looked up there);
  // FrameAddress::kNoOffset for kernel code and a perf map's.
  uint64_t some_offset = 0;
  uint64_t samples = 0;
  uint64_t period = 0;
  std::vector<OffsetHits> by_offset;  // by offset, ascending
  bool operator==(const IndexedFunction&) const = default;
};

struct AnnotateIndex {
  std::string event;  // empty: no event with samples (an empty view)
  uint64_t event_samples = 0;
  std::vector<IndexedDso> dsos;
  std::vector<IndexedFunction> functions;  // hottest first
  bool operator==(const AnnotateIndex&) const = default;
};

// Only options.event is read: the event (else the first with samples).
AnnotateIndex BuildAnnotateIndex(const Recording& recording, const AnnotateOptions& options,
                                 const SampleFilter& filter);

// Where the view reads code: binaries found as `binaries` says (with the
// recording's own code, `recorded`), and the recording's JIT code.
struct AnnotateCode {
  BinaryLocatorOptions binaries;
  RecordedCode recorded;
  const std::map<std::string, std::shared_ptr<const JitCode>>* jit_code = nullptr;
  // Files on disk only (the annotate cache, which read no recording): a
  // function whose code would come from the recording (a jitdump's, or an
  // embedded binary's: `recorded.embedded` may then hold stand-ins, entries
  // without code, so that binaries are looked for as the recording's load
  // looked for them) makes the view say `needs_recording` instead.
  bool files_only = false;
};

// The functions `options` asks for (by name, else the hottest) of `index`,
// annotated. Fails when none of the names asked for has samples.
Result<AnnotateView> AnnotateFromIndex(const AnnotateIndex& index, const AnnotateOptions& options,
                                       const AnnotateCode& code);

// `binaries`: how the report finds binaries (LoadOptions::binaries); the
// recording's embedded binaries are used when one is missing.
Result<AnnotateView> BuildAnnotateView(const Recording& recording, const AnnotateOptions& options,
                                       const SampleFilter& filter,
                                       const BinaryLocatorOptions& binaries);

}  // namespace sample::report
