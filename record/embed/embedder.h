// Embedding: at the close of a file, what the recording hit of each binary
// (CodeHits) is read from the binary as its process saw it (ProcessFiles:
// its mount namespace) and stored as a kEmbeddedBinary chunk, with the JIT
// perf maps (JitMaps) as kPerfMap chunks and their jitdumps (JitDumps) as
// kJitDump chunks, so the file reports the same
// where none of those files are (BuildEmbeddedBinary says what a chunk
// holds). A binary that cannot be read, or is not the file that was mapped
// (another inode at its path now), is left out with a note: it costs its
// names, not the recording.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/sample_file_writer.h"
#include "record/embed/code_hits.h"
#include "record/embed/jit_dumps.h"
#include "record/embed/jit_maps.h"
#include "record/embed/process_files.h"

namespace sample::record {

// What was embedded, for the closing line.
struct EmbedSummary {
  bool done = false;  // embedding ran (not --no-embed)
  size_t binaries = 0;
  size_t functions = 0;
  size_t addresses = 0;
  size_t perf_maps = 0;
  bool vdso = false;  // the [vdso]'s hit functions are among the binaries
  size_t jit_dumps = 0;
  // Functions with samples whose code was left out for its size (past
  // EmbeddingLimits' bounds; those with too few samples are not counted).
  uint64_t code_omitted = 0;
  uint64_t bytes = 0;         // chunk payloads, before compression
  double milliseconds = 0;
  std::vector<std::string> notes;  // binaries and maps left out, and why
};

// `binaries`: `hits`.Resolve()'s; a [vdso] among them is embedded from the
// recorder's own image (every 64-bit process maps the same).
EmbedSummary SubmitEmbedded(format::SampleFileWriter& writer, const CodeHits& hits,
                            std::vector<CodeHits::Binary> binaries, const ProcessFiles& files,
                            JitMaps& jit_maps, JitDumps& jit_dumps);

// "embedded 120 functions of 3 binaries and 1 perf map (48 KiB) in 12 ms".
std::string DescribeEmbedded(const EmbedSummary& summary);

}  // namespace sample::record
