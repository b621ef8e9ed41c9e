// JitCode: the JIT code of one process as its jitdumps (JitDump) describe
// it, laid out as one pseudo-DSO that the report resolves samples into.
//
// Every code load becomes a function at its own offset of the pseudo-DSO
// (one after another, in the order added), with its name, code bytes and
// source lines; every load and move becomes a JitCodeChange: from its time
// on, [address, address + size) of the process holds the code at `offset`.
// A move names its code by code_index, the load of that index before it in
// its dump; the moved code keeps its function (its offset), so a sample
// names the same function before and after a move, and an address the
// code left names whatever is loaded there later, not the function that
// moved away. This is what perf inject --jit does with an ELF file per
// load, without the files. Owns the functions; a plain value, safe to
// share read-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "libsample/symbols/jitdump.h"

namespace sample {

struct JitFunction {
  uint64_t offset = 0;   // in the pseudo-DSO
  uint64_t address = 0;  // where it was loaded
  uint64_t code_index = 0;
  std::string name;
  std::vector<std::byte> code;
  std::vector<JitLine> lines;      // sorted by address (absolute, as loaded)
  std::vector<std::string> files;  // the lines' file names (JitLine::file)
  uint64_t size() const { return code.size(); }
  const std::string& FileOf(const JitLine& line) const { return files[line.file]; }
};

// Where code lives from `time` on (the samples' clock).
struct JitCodeChange {
  uint64_t time = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t offset = 0;  // of the code in the pseudo-DSO
  // A move: the code left [old_address, old_address + size).
  bool moved = false;
  uint64_t old_address = 0;
};

// What adding dumps met besides their records' own counts.
struct JitCodeCounts {
  uint64_t empty_loads = 0;      // loads of no code: nothing to name
  uint64_t unmatched_moves = 0;  // moves of a code_index no load before them had
  uint64_t untimed_dumps = 0;    // timestamps of the CPU's counter: applied at the start
};

class JitCode {
 public:
  // Adds the code of `dump` (its names, code and lines moved here). A dump
  // whose timestamps are not a clock (kJitDumpArchTimestamp) has its
  // changes at time 0, in file order.
  void Add(JitDump&& dump);

  // The function holding `offset` of the pseudo-DSO, or nullptr.
  const JitFunction* FunctionAt(uint64_t offset) const;
  // The source line at `offset` (in `function`), or nullptr.
  static const JitLine* LineAt(const JitFunction& function, uint64_t offset);

  // Sorted by offset, which is the order added.
  const std::vector<JitFunction>& functions() const { return functions_; }
  // In the order added (file order within each dump).
  const std::vector<JitCodeChange>& changes() const { return changes_; }
  const JitDumpCounts& dump_counts() const { return dump_counts_; }
  const JitCodeCounts& counts() const { return counts_; }
  uint64_t code_bytes() const { return next_offset_; }

 private:
  std::vector<JitFunction> functions_;
  std::vector<JitCodeChange> changes_;
  JitDumpCounts dump_counts_;
  JitCodeCounts counts_;
  uint64_t next_offset_ = 0;
};

}  // namespace sample
