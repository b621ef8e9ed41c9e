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
#include <optional>
#include <string>
#include <vector>

#include "libsample/disasm/disassembler.h"
#include "libsample/model/sample_filter.h"
#include "libsample/result.h"
#include "libsample/symbols/recorded_binary.h"
#include "report/load/recording.h"

namespace sample::report {

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
  std::vector<AnnotatedInstruction> instructions;
  // Samples at addresses that start no instruction of the decoded code.
  uint64_t unplaced_samples = 0;
};

struct AnnotateView {
  std::string event;
  uint64_t event_samples = 0;
  std::vector<AnnotatedFunction> functions;  // hottest first
  std::vector<std::string> warnings;
};

// `binaries`: how the report finds binaries (LoadOptions::binaries); the
// recording's embedded binaries are used when one is missing.
Result<AnnotateView> BuildAnnotateView(const Recording& recording, const AnnotateOptions& options,
                                       const SampleFilter& filter,
                                       const BinaryLocatorOptions& binaries);

}  // namespace sample::report
