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
#include <optional>
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
  // The user whose code the map names (the JIT process's). Only a map that
  // user owns is read (root's only for root's processes; perf's rule, the
  // reader or root, let root copy a root-only file a user bind-mounted over
  // the path in a mount namespace of theirs), unless `force`.
  uid_t user = 0;
  // When `user` is only a file's claim (a report reading this host's map
  // for a recording without a copy: its "jit_uid PID" is whatever the
  // recording says): the user the names are shown to, the report's. The
  // map must then also be theirs or readable by everyone, or a crafted
  // recording claiming root's or carol's process would have a rendering
  // service run as root print their 0600 map to whoever uploaded it.
  std::optional<uid_t> shown_to;
  bool force = false;
  // Read up to this many bytes, at a line's end (a map is text a JIT
  // appends to; a larger one is cut, with `cut` set).
  uint64_t max_bytes = uint64_t{64} << 20;
};

// Whether a JIT's file found by its name (a perf map, a jitdump), `st` of
// the open file, may name `options.user`'s code: a file the process's own
// user could have written and no one else: owned by that user, readable by
// its owner, writable by no one else (WritableOnlyByOwner), and, with
// `options.shown_to`, that user's or readable by everyone (unless `force`;
// the caller opened it as a regular file, not through a link). The error
// says why not.
Result<void> CheckPerfMapFile(const std::string& path, const struct stat& st,
                              const PerfMapOptions& options);

// The real uid of process `pid` (the Uid: line of PROC/PID/status, which
// its owner cannot hide as it can /proc/PID's owner by turning dumpable
// off); nullopt when the process is gone.
std::optional<uid_t> ProcessUid(uint32_t pid, const std::string& proc = "/proc");

// This boot's id (/proc/sys/kernel/random/boot_id, without its newline),
// "" when unreadable: a pid names the same process, and so a perf map in
// /tmp the same JIT, only within one boot.
std::string BootId();

class PerfMap {
 public:
  // Never fails: bad lines only bump malformed_lines().
  static PerfMap Parse(std::string_view text);

  // Reads and parses `path` (up to options.max_bytes: cut() says so). The
  // error, if any, is a note for the report ("ignored: owned by uid 1000,
  // not by the process's user, uid 0"; "cannot open"), and the caller goes
  // on without JIT symbols.
  static Result<PerfMap> Load(const std::string& path, const PerfMapOptions& options);

  // The symbol containing absolute address `addr`, or nullptr.
  const PerfMapSymbol* Find(uint64_t addr) const;

  // Sorted by start, in file order among equal starts.
  const std::vector<PerfMapSymbol>& symbols() const { return symbols_; }
  size_t malformed_lines() const { return malformed_lines_; }
  size_t blank_lines() const { return blank_lines_; }
  // Load() read only the first max_bytes of the file.
  bool cut() const { return cut_; }

 private:
  PerfMap() = default;

  std::vector<PerfMapSymbol> symbols_;
  std::vector<size_t> order_;      // order_[i]: line order of symbols_[i]; later wins
  std::vector<uint64_t> max_end_;  // max_end_[i]: the largest end of symbols_[0..i]
  size_t malformed_lines_ = 0;
  size_t blank_lines_ = 0;
  bool cut_ = false;
};

}  // namespace sample
