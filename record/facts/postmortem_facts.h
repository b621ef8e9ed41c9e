// PostmortemFacts: what the recorder notices while draining so the file can
// be reported on another machine: the binaries mapped by profiled
// processes (their build-ids are read at close, through the process's
// mount namespace: ProcessFiles, which it owns and notes each process in),
// the kernel addresses that were sampled (the kallsyms symbols covering
// them are stored at close), whether the [vdso] was mapped (its image is
// stored at close), and the processes that run JIT code (their perf maps
// are copied when they exit or at close: JitMaps), and the jitdumps they
// map (opened when mapped, copied at close: JitDumps). Observing costs one
// comparison per user frame.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/symbols/kallsyms_snapshot.h"
#include "record/embed/code_hits.h"
#include "record/embed/embedder.h"
#include "record/embed/jit_dumps.h"
#include "record/embed/jit_maps.h"
#include "record/embed/process_files.h"

namespace sample::record {

// What closing a file had to say, for the closing lines.
struct ClosingNotes {
  std::string kernel;  // why kernel symbols are missing
  std::string vdso;    // why the [vdso] image is missing
  EmbedSummary embedded;
};

class PostmortemFacts {
 public:
  // Starts gathering the code addresses samples hit (CodeHits), for
  // embedding what names them at close: once the events are open, before
  // the first records are written. Without it nothing is embedded
  // (--no-embed).
  void CollectHits(EventTable events, Arch arch);
  // For WriterOptions::observe_records of every file's writer.
  std::function<void(std::span<std::byte>)> RecordsObserver();

  // Looks at one record (sample or MMAP2) written for `attr`.
  void Observe(const perf_event_header& header, std::span<const std::byte> record,
               const perf_event_attr& attr);
  // Records the path of a mapping of process `pid`.
  void AddBinary(uint32_t pid, std::string_view path);

  // kVdso payload: the recorder's own [vdso] image (the one every 64-bit
  // process maps) when a [vdso] mapping was seen; empty otherwise, or when
  // it cannot be read (then `note` says why).
  std::vector<std::byte> VdsoPayload(std::string* note) const;
  // kBuildIds payload (metadata layout): path -> build-id hex, for each
  // seen binary that has one, and "[vdso]" for the build-id of `vdso`
  // (a VdsoPayload) when it has one.
  std::vector<std::byte> BuildIdPayload(std::span<const std::byte> vdso = {}) const;
  // kKernelSymbols payload; empty when no kernel address was sampled or
  // kallsyms is unreadable (then `note` says why).
  std::vector<std::byte> KernelSymbolsPayload(const KallsymsSnapshotOptions& options,
                                              std::string* note) const;

  size_t binary_count() const { return binaries_.size(); }
  ProcessFiles& files() { return files_; }
  JitMaps& jit_maps() { return jit_maps_; }
  JitDumps& jit_dumps() { return jit_dumps_; }

  // Submits the chunks above to `writer` as a file ends, once it has
  // written every records chunk: the build-ids, the vDSO image and the
  // kernel symbols when there are any (the notes say why not, as above),
  // and what embedding stores. With embedding (CollectHits), the vDSO
  // image only when the samples hit it.
  void SubmitTo(format::SampleFileWriter& writer, ClosingNotes* notes);

 private:
  std::unique_ptr<CodeHits> hits_;  // set once, before any records are written
  ProcessFiles files_;
  JitMaps jit_maps_;
  JitDumps jit_dumps_;
  std::unordered_map<std::string, uint32_t> binaries_;  // path -> a process that mapped it
  bool saw_vdso_ = false;
  std::unordered_set<uint64_t> kernel_addresses_;
};

}  // namespace sample::record
