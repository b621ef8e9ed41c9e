// PostmortemFacts: what the recorder notices while draining so the file can
// be reported on another machine: the binaries mapped by profiled
// processes (their build-ids are read at close) and the kernel addresses
// that were sampled (the kallsyms symbols covering them are stored at
// close), and whether the [vdso] was mapped (its image is stored at close).
// Observing costs one comparison per user frame.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "formats/sample_file_writer.h"
#include "record/facts/kallsyms_snapshot.h"

namespace sample::record {

class PostmortemFacts {
 public:
  // Looks at one record (sample or MMAP2) written for `attr`.
  void Observe(const perf_event_header& header, std::span<const std::byte> record,
               const perf_event_attr& attr);
  // Records the path of a mapping (for synthesized MMAP2s).
  void AddBinary(std::string_view path);

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

  // Submits the chunks above to `writer` as a file ends: the build-ids,
  // and the vDSO image and the kernel symbols when there are any (the
  // notes say why not, as above).
  void SubmitTo(format::SampleFileWriter& writer, std::string* kernel_note,
                std::string* vdso_note) const;

 private:
  std::unordered_set<std::string> binaries_;
  bool saw_vdso_ = false;
  std::unordered_set<uint64_t> kernel_addresses_;
};

}  // namespace sample::record
