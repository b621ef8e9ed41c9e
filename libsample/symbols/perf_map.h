// PerfMap: the symbols a JIT compiler writes to /tmp/perf-PID.map.
//
// The format (Linux tools/perf/Documentation/jit-interface.txt) is one
// symbol per line, "START SIZE name": START and SIZE in hex (an optional 0x
// is accepted), then one space and the name, which runs to the end of the
// line and may contain spaces. Lines that do not parse are counted and
// skipped. JIT code lives in anonymous memory, so symbols are looked up by
// absolute address. Where two entries overlap (the JIT reused memory) the
// one written later wins.
//
// Owns its copies of the entries; a plain value, safe to share read-only.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

struct PerfMapSymbol {
  uint64_t start = 0;
  uint64_t size = 0;  // 0: covers its start address only
  std::string name;
};

struct PerfMapOptions {
  // The user reading the map. A map owned by someone else (other than root)
  // could be written by anyone to put names on our code, so it is ignored
  // unless `force` (perf does the same).
  uid_t user = 0;
  bool force = false;
};

// Whether a map file, `st` of the open file, may name `options.user`'s
// code: owned by that user or root, and writable by no one else (unless
// `force`); the error says why not.
Result<void> CheckPerfMapFile(const std::string& path, const struct stat& st,
                              const PerfMapOptions& options);

class PerfMap {
 public:
  // Never fails: bad lines only bump malformed_lines().
  static PerfMap Parse(std::string_view text);

  // Reads and parses `path`. The error, if any, is a note for the report
  // ("ignored: owned by uid 1000, not by uid 0 or root"; "cannot open"), and
  // the caller goes on without JIT symbols.
  static Result<PerfMap> Load(const std::string& path, const PerfMapOptions& options);

  // The symbol containing absolute address `addr`, or nullptr.
  const PerfMapSymbol* Find(uint64_t addr) const;

  // Sorted by start, in file order among equal starts.
  const std::vector<PerfMapSymbol>& symbols() const { return symbols_; }
  size_t malformed_lines() const { return malformed_lines_; }
  size_t blank_lines() const { return blank_lines_; }

 private:
  PerfMap() = default;

  std::vector<PerfMapSymbol> symbols_;
  std::vector<size_t> order_;      // order_[i]: line order of symbols_[i]; later wins
  std::vector<uint64_t> max_end_;  // max_end_[i]: the largest end of symbols_[0..i]
  size_t malformed_lines_ = 0;
  size_t blank_lines_ = 0;
};

}  // namespace sample
