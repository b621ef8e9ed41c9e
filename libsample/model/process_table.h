// ProcessTable: processes, threads and their mappings as they were at a
// point in a recording.
//
// Sideband records (COMM, FORK, EXIT, MMAP2) must be applied in timestamp
// order; lookups then answer for the moment of the last applied record.
// Binaries are interned as DSO ids shared by all processes. Owns the
// process and DSO tables.
//
// Mappings of data (-d recordings: anonymous memory, the heap, the stack,
// files mapped without PROT_EXEC) are a layer of their own too
// (ApplyDataMmap, FindDataMapping): code is never looked up in them, and
// they leave MappingsVersion alone, so what is derived from the code
// mappings stays valid as data comes and goes.
//
// JIT code that a jitdump describes is kept apart from the mappings, as a
// layer over them (ApplyJitCode, FindJitCode): it lives inside anonymous
// mappings (or memory no record mapped), a load or move changes where
// one function is without splitting the mapping under it, and what the
// layer held at an address goes when other code is loaded there.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sample {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;    // exclusive
  uint64_t pgoff = 0;  // file offset of `start`
  uint32_t dso = 0;    // ProcessTable::Dso id
};

class ProcessTable {
 public:
  // Pseudo DSO for addresses outside any known mapping.
  static constexpr uint32_t kUnknownDso = 0;
  // Pseudo DSO for kernel addresses.
  static constexpr uint32_t kKernelDso = 1;

  ProcessTable();

  void ApplyComm(uint32_t pid, uint32_t tid, std::string_view comm, bool exec);
  void ApplyFork(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid);
  void ApplyExit(uint32_t pid, uint32_t tid);
  void ApplyMmap(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                 std::string_view filename);
  // A mapping without PROT_EXEC, into the data layer.
  void ApplyDataMmap(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                     std::string_view filename);
  // The mapping of `pid` holding the data address `addr`: its data layer's,
  // else its code mapping's (constants in a binary's text), or nullptr.
  const Mapping* FindDataMapping(uint32_t pid, uint64_t addr) const;

  // From now on [start, start + len) of `pid` holds the JIT code at
  // `offset` of pseudo-DSO `dso` (a load, or where moved code went), over
  // whatever JIT code was there.
  void ApplyJitCode(uint32_t pid, uint64_t start, uint64_t len, uint32_t dso, uint64_t offset);
  // JIT code left [start, start + len) of `pid` (it moved away).
  void RemoveJitCode(uint32_t pid, uint64_t start, uint64_t len);
  // The JIT code of `pid` at `addr` (its `pgoff` is the pseudo-DSO offset
  // of `start`), or nullptr.
  const Mapping* FindJitCode(uint32_t pid, uint64_t addr) const;

  // The command name of `tid` (falls back to the process's, then ":tid").
  std::string_view CommOf(uint32_t pid, uint32_t tid);
  // Changes whenever CommOf's answer for some thread may have (a COMM or
  // FORK applied): what is derived from names can be kept until then.
  uint64_t comms_version() const { return comms_version_; }
  // The mapping of `pid` containing `addr`, or nullptr.
  const Mapping* FindMapping(uint32_t pid, uint64_t addr) const;
  // Every mapping of `pid` by start address, or nullptr for an unknown pid.
  const std::map<uint64_t, Mapping>* MappingsOf(uint32_t pid) const;
  // Changes whenever `pid`'s mappings may have (a new process, an exec, an
  // mmap, JIT code), to a number no process had before; 0 for an unknown pid. What is
  // derived from a process's mappings (an unwinder's module list, cached
  // chain resolutions) is kept with the version it was derived from and is
  // stale once this differs.
  uint64_t MappingsVersion(uint32_t pid) const;
  // The latest number MappingsVersion handed out: while it stays, no
  // process's mappings changed.
  uint64_t last_mappings_version() const { return last_maps_version_; }

  const std::string& DsoPath(uint32_t dso) const { return dsos_[dso]; }
  size_t dso_count() const { return dsos_.size(); }
  // Every DSO's path, by DSO id.
  const std::vector<std::string>& dso_paths() const { return dsos_; }
  uint32_t InternDso(std::string_view path);

 private:
  struct Process {
    std::map<uint64_t, Mapping> maps;  // by start; non-overlapping
    std::map<uint64_t, Mapping> jit;   // JIT code, by start; non-overlapping
    std::map<uint64_t, Mapping> data;  // mappings without PROT_EXEC (-d)
    std::string comm;
    uint64_t maps_version = 0;
  };
  Process& GetProcess(uint32_t pid);
  static void RemoveRange(std::map<uint64_t, Mapping>& maps, uint64_t start, uint64_t end);
  static const Mapping* Find(const std::map<uint64_t, Mapping>& maps, uint64_t addr);

  std::unordered_map<uint32_t, Process> processes_;
  std::unordered_map<uint32_t, std::string> thread_comms_;
  std::vector<std::string> dsos_;
  std::unordered_map<std::string, uint32_t> dso_ids_;
  std::string scratch_;
  uint64_t last_maps_version_ = 0;
  uint64_t comms_version_ = 0;
};

// True for addresses in the upper half of the address space, where the
// kernel lives on x86_64 and aarch64.
inline bool IsKernelAddress(uint64_t addr) { return (addr >> 63) != 0; }

// Executable memory with no file behind it, where JITs put code (named by
// the process's /tmp/perf-PID.map): the recorder and the report agree.
inline bool IsAnonymousCode(std::string_view path) {
  return path == "//anon" || path.starts_with("[anon") || path.starts_with("/memfd:");
}

}  // namespace sample
