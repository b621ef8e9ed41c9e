// Describes processes that already run when recording starts, as the kernel
// would have had it seen them start: a COMM record per thread and an MMAP2
// record per executable mapping (per mapping, data too, for -d), read from
// /proc. Used for -p, -t and -a, whose targets' earlier history the kernel
// never reported.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "formats/chunk_codec.h"
#include "record/facts/postmortem_facts.h"
#include "record/target/record_target.h"

namespace sample::record {

struct SynthesisCounts {
  size_t processes = 0;
  size_t threads = 0;
  size_t mappings = 0;
};

class ProcSynthesizer {
 public:
  // Records are laid out for `attr` and name event `id`; `time` stamps them.
  // `data_mappings`: every mapping, not only the executable ones (-d).
  ProcSynthesizer(const perf_event_attr& attr, uint64_t id, uint64_t time, bool data_mappings)
      : attr_(attr), id_(id), time_(time), data_mappings_(data_mappings) {}

  // Appends one process's threads and mappings; a process that vanished
  // meanwhile is skipped silently (it raced with us, nothing to report).
  void AddProcess(pid_t pid, std::vector<std::byte>& out);
  // Every process in /proc.
  void AddAllProcesses(std::vector<std::byte>& out);

  const SynthesisCounts& counts() const { return counts_; }

 private:
  perf_event_attr attr_;
  uint64_t id_;
  uint64_t time_;
  bool data_mappings_;
  SynthesisCounts counts_;
  std::vector<char> buffer_;  // reused for reading /proc files
};

// The records describing the processes of `target` that run already (its
// -p/-t processes, or every process for -a/-C; none for a command, whose
// start the kernel reports), laid out for `attr`, naming event `id` and
// stamped `time`, as one chunk: on CPU 0, as perf's synthesized records.
// `facts` sees each record, as it sees the drained ones.
format::RecordsChunk SynthesizeRunningTargets(const RecordTarget& target,
                                              const perf_event_attr& attr, uint64_t id,
                                              uint64_t time, bool data_mappings,
                                              PostmortemFacts& facts);

}  // namespace sample::record
