// JitDump: a parsed jitdump file, the record of the code a JIT compiler
// made that V8 (node --perf-prof), the JVM's perf agents, .NET
// (DOTNET_PerfMapEnabled), CPython 3.12+ (-X perf_jit), Wasmtime and others
// write to jit-PID.dump (the format: Linux
// tools/perf/Documentation/jitdump-specification.txt).
//
// Layout (the writer's byte order; only little-endian files are read, a
// byte-swapped magic is refused by name):
//   header   u32 magic 0x4A695444 ("JiTD" as a u32), u32 version, u32
//            total_size (records start there), u32 elf_mach, u32 pad,
//            u32 pid, u64 timestamp, u64 flags (bit 0: timestamps are the
//            CPU's own counter, not a clock)
//   records  u32 id, u32 total_size (this header included), u64 timestamp,
//            then by id:
//     0 CODE_LOAD   u32 pid, u32 tid, u64 vma, u64 code_addr, u64
//                   code_size, u64 code_index, NUL-terminated name, then
//                   code_size bytes of code
//     1 CODE_MOVE   u32 pid, u32 tid, u64 vma, u64 old_code_addr, u64
//                   new_code_addr, u64 code_size, u64 code_index
//     2 DEBUG_INFO  u64 code_addr, u64 nr_entry, then per entry: u64 addr,
//                   u32 line, u32 discriminator, NUL-terminated file name
//                   ("\xff" alone: the previous entry's); describes the
//                   code load that follows it
//     3 CODE_CLOSE  nothing: the writer closed the file
//     4 UNWINDING_INFO  u64 unwinding_size, u64 eh_frame_hdr_size, u64
//                   mapped_size, then the unwinding data (counted, not used)
//   Other ids are skipped by their total_size.
//
// Parsing is bounds-checked throughout and never fails on a record: a
// record too short for its fields, or with a size that cannot be a record,
// is counted as malformed (a size under a record header's ends the walk,
// since nothing after it can be found); a last record cut short by the end
// of the bytes is what a writer that was still running leaves, and only
// sets `torn`. Only a header that cannot be read fails. Owns copies of
// everything it read (names, code, lines); a plain value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

inline constexpr uint32_t kJitDumpMagic = 0x4A695444;
inline constexpr uint32_t kJitDumpMagicSwapped = 0x4454694A;
inline constexpr uint32_t kJitDumpHeaderSize = 40;
inline constexpr uint32_t kJitRecordHeaderSize = 16;
// JitDumpHeader::flags: timestamps are the CPU's counter (TSC), which the
// report cannot put on the samples' clock.
inline constexpr uint64_t kJitDumpArchTimestamp = 1;

enum JitRecordId : uint32_t {
  kJitCodeLoad = 0,
  kJitCodeMove = 1,
  kJitCodeDebugInfo = 2,
  kJitCodeClose = 3,
  kJitCodeUnwindingInfo = 4,
};

struct JitDumpHeader {
  uint32_t version = 0;
  uint32_t total_size = 0;
  uint32_t elf_mach = 0;
  uint32_t pid = 0;
  uint64_t timestamp = 0;
  uint64_t flags = 0;
};

// One source line of JIT code: from `address` (absolute, as the writer
// gave it) up to the next entry's. `file` indexes the file names of the
// load it belongs to (JitCodeLoad::files): a debug-info record names each
// file once however many entries repeat it ("\xff"), so that a crafted
// dump of many one-byte "same file" entries after one long name costs a
// few bytes per entry, not a copy of the name each.
struct JitLine {
  uint64_t address = 0;
  uint32_t line = 0;
  uint32_t discriminator = 0;
  uint32_t file = 0;
  bool operator==(const JitLine&) const = default;
};

struct JitCodeLoad {
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t vma = 0;
  uint64_t code_address = 0;
  uint64_t code_index = 0;
  std::string name;
  std::vector<std::byte> code;     // code_size bytes
  std::vector<JitLine> lines;      // from the DEBUG_INFO record before it
  std::vector<std::string> files;  // the lines' file names, each once
  const std::string& FileOf(const JitLine& line) const { return files[line.file]; }
};

struct JitCodeMove {
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t vma = 0;
  uint64_t old_address = 0;
  uint64_t new_address = 0;
  uint64_t code_size = 0;
  uint64_t code_index = 0;
};

// What a walk through a dump met, for --stats.
struct JitDumpCounts {
  uint64_t loads = 0;
  uint64_t moves = 0;
  uint64_t debug_infos = 0;
  uint64_t unwinding_infos = 0;
  uint64_t unknown = 0;    // records of ids this reader does not know
  uint64_t malformed = 0;  // records too short for their fields, impossible sizes
  // Debug-info records the next record was no code load of their address.
  uint64_t unmatched_debug_infos = 0;
  bool closed = false;  // a CODE_CLOSE was seen
  bool torn = false;    // the last record was cut short (the writer was running)
  JitDumpCounts& operator+=(const JitDumpCounts& other);
};

class JitDump {
 public:
  // Parses `bytes`; `name` (a path, "jitdump of pid 12") starts error
  // messages. Fails only when the header is missing, cut, of the other
  // byte order or not a jitdump.
  static Result<JitDump> Parse(std::span<const std::byte> bytes, std::string_view name);

  const JitDumpHeader& header() const { return header_; }
  // In file order.
  const std::vector<JitCodeLoad>& loads() const { return loads_; }
  // For a consumer that takes the loads' contents (JitCode::Add).
  std::vector<JitCodeLoad>& mutable_loads() { return loads_; }
  const std::vector<JitCodeMove>& moves() const { return moves_; }
  // For each move, how many loads came before it in the file (so a move
  // can find the load of its code_index as it was then).
  const std::vector<size_t>& loads_before_move() const { return loads_before_move_; }
  const JitDumpCounts& counts() const { return counts_; }

 private:
  void ParseRecord(uint32_t id, uint64_t time, std::span<const std::byte> body,
                   uint64_t body_offset);
  void ParseLoad(uint64_t time, std::span<const std::byte> body, uint64_t body_offset);
  void ParseMove(uint64_t time, std::span<const std::byte> body, uint64_t body_offset);
  void ParseDebugInfo(std::span<const std::byte> body, uint64_t body_offset);

  JitDumpHeader header_;
  std::vector<JitCodeLoad> loads_;
  std::vector<JitCodeMove> moves_;
  std::vector<size_t> loads_before_move_;
  JitDumpCounts counts_;
  // A DEBUG_INFO waiting for its code load.
  bool pending_lines_ = false;
  uint64_t pending_address_ = 0;
  std::vector<JitLine> pending_;
  std::vector<std::string> pending_files_;
};

// A JIT's jitdump as a recording holds it (kJitDump chunks, parts joined).
struct RecordedJitDump {
  uint32_t pid = 0;  // as the recording's records name the process
  std::vector<std::byte> bytes;
  uint32_t parts = 0;  // parts joined; the next one's number
  bool operator==(const RecordedJitDump&) const = default;
};

// The length of the longest prefix of `bytes` (a dump, its header first
// when `with_header`) that is at most `limit` bytes and ends where a
// record does, for cutting a dump into parts; 0 when not even the header
// or first record fits. Bytes that do not walk as records (a torn or bad
// size) end the prefix before them.
size_t JitDumpWholePrefix(std::span<const std::byte> bytes, size_t limit, bool with_header);

// Whether `path` names a jitdump as writers name them: jit-<digits>.dump.
bool IsJitDumpFileName(std::string_view path);

}  // namespace sample
