// Fuzz target: a jitdump file (jit-PID.dump), which any JIT writes and a
// recording carries (kJitDump). Besides not crashing: every function JitCode
// lays out is found at its own offsets and nowhere past its end, a whole
// prefix ends on a record (parses without a torn record) within its limit,
// and the report's timeline applies every change to a process table, after
// which each change's code is found at its address, and the file names
// kept for source lines are no more bytes than the dump. Input: the dump.
#include <cstdlib>

#include "libsample/model/process_table.h"
#include "libsample/symbols/jit_code.h"
#include "libsample/symbols/jitdump.h"
#include "report/load/jit_timeline.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(jitdump)(std::span<const std::byte> input) {
  using namespace sample;
  const size_t prefix = JitDumpWholePrefix(input, input.size() / 2, true);
  if (prefix > input.size() / 2) std::abort();
  if (prefix != 0) {
    auto cut = JitDump::Parse(input.first(prefix), "fuzz");
    if (!cut || cut->counts().torn) std::abort();
  }
  auto dump = JitDump::Parse(input, "fuzz");
  if (!dump) return 0;
  size_t name_bytes = 0;
  for (const JitCodeLoad& load : dump->loads()) {
    for (const std::string& file : load.files) name_bytes += file.size();
  }
  if (name_bytes > input.size()) std::abort();
  JitCode code;
  code.Add(std::move(*dump));
  for (const JitFunction& f : code.functions()) {
    if (code.FunctionAt(f.offset) != &f) std::abort();
    if (code.FunctionAt(f.offset + f.size() - 1) != &f) std::abort();
    const JitFunction* after = code.FunctionAt(f.offset + f.size());
    if (after == &f) std::abort();
    JitCode::LineAt(f, f.offset);
  }
  ProcessTable processes;
  const RecordedJitDump recorded{7, std::vector<std::byte>(input.begin(), input.end()), 1};
  report::JitTimeline timeline(std::span(&recorded, 1), processes);
  timeline.ApplyUntil(UINT64_MAX, processes, [](uint32_t) {});
  if (timeline.Due(UINT64_MAX)) std::abort();
  return 0;
}
