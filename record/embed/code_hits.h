// CodeHits: the code addresses a recording's samples hit, gathered from the
// records as the writer thread writes them, and resolved at the end into
// the binaries and file offsets the report will look up, so that the
// recorder can embed what names and unwinds them (record/embed/embedder.h).
//
// Call chains give their addresses as the report reads them: the first
// after each context marker as it is (a leaf), the others as return
// addresses, looked up at address - 1. A chain seen before in the same
// process costs one hash lookup. The user registers' pc is a leaf too,
// with a stack copy or without (the kernel copies none where the stack's
// page is not resident). User stack copies (--call-graph dwarf, fp,leaf)
// are scanned instead: the report's unwinder finds each caller's
// return address in the copy, so every aligned word that points into an
// executable file mapping of the process is kept as a candidate
// (Binary::scanned_offsets). That is a superset (stale slots, function
// pointers, data), which the embedding cuts to the words a call precedes
// (EmbeddingRequest::scanned_offsets): it costs bytes in the file, never a
// name. Mappings are kept for the whole recording (each file
// mapping a process ever had, and its parents' for a fork) and an address
// is resolved against every one that held it: a superset again, which
// covers a mapping that moved. A stack word is checked against the
// mappings known when its chunk is written: a sample drained in the same
// wakeup as, but before, the mapping it ran in (microseconds after an
// mmap) keeps its callers unnamed.
//
// Owns its tables. Observe runs on one thread (the writer's); Resolve and
// counts after it is done (SampleFileWriter::WaitUntilWritten).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "libsample/perf/event_table.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/user_regs.h"
#include "libsample/symbols/symbol_embedding.h"

namespace sample::record {

class CodeHits {
 public:
  // `events`: the recording's, to parse its samples; `arch`: the host's,
  // to read user registers; `host_max_stack`: kernel.perf_event_max_stack
  // as the events were opened (see Observe).
  CodeHits(EventTable events, Arch arch, uint32_t host_max_stack = 127);

  // Looks at a run of records as written to the file. The words of an
  // fp,leaf stack copy (-g) that point neither into the process's code nor
  // into its stack above the stack pointer become 0: the report's CFI
  // steps (DwarfUnwinder::SkippedCallers) read return addresses and saved
  // frame pointers only, and the rest (a leaf's pointers into its heap,
  // sizes, flags) differs from sample to sample: qsort's copies cost 19%
  // of its records (bench/RESULTS.md). A copy whose chain the kernel cut
  // at its frame limit stays whole (the report unwinds all of it), and so
  // do --call-graph dwarf copies, which libdw reads as it likes.
  void Observe(std::span<std::byte> records);

  // A file mapping with hits.
  struct Binary {
    std::string path;                    // as the mapping named it
    uint32_t pid = 0;                    // a process that mapped it (to open it as it did)
    uint64_t inode = 0;                  // as recorded (0: not known)
    std::vector<uint64_t> offsets;       // lookup file offsets: sorted, unique
    std::vector<uint64_t> leaf_offsets;  // of those, where samples were taken
    // Lookup offsets only a stack copy's words gave (none of the above).
    std::vector<uint64_t> scanned_offsets;
    // The samples each event took at each of its offsets (user samples
    // only: a kernel sample's user pc is where it entered the kernel),
    // since the last ResetSamples.
    std::vector<LeafSamples> leaf_samples;
  };
  // The binaries with hits, by (path, device, inode).
  std::vector<Binary> Resolve() const;

  // The samples of each event (by index) since the last ResetSamples,
  // kernel ones too.
  const std::vector<uint64_t>& event_samples() const { return event_samples_; }
  // Starts counting samples anew, for the next file (--switch-output, a
  // flight recorder's snapshot, which writes its window again): the
  // addresses stay, a superset.
  void ResetSamples();

  // Distinct (process, lookup address) pairs kept at most: about 60 MB.
  // Past it new addresses are counted, not kept (a long machine-wide
  // --call-graph dwarf recording of a great many processes).
  static constexpr size_t kMaxHits = size_t{1} << 20;

  struct Counts {
    uint64_t samples = 0;  // every sample, kernel ones too
    uint64_t stacks_scanned = 0;
    uint64_t hits = 0;          // distinct (process, lookup address)
    uint64_t hits_dropped = 0;  // addresses past kMaxHits
    uint64_t words_cleared = 0;  // fp,leaf copies' words that were no address
  };
  Counts counts() const;

 private:
  struct Mapping {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t pgoff = 0;
    uint32_t file = 0;  // index into files_
  };
  struct File {
    std::string path;
    uint32_t maj = 0;
    uint32_t min = 0;
    uint64_t inode = 0;
    bool operator==(const File&) const = default;
  };
  struct Process {
    std::vector<Mapping> mappings;
    uint32_t parent = 0;
    bool has_parent = false;
    uint64_t version = 0;                 // bumped when its mappings or parent change
    std::unordered_set<uint64_t> chains;  // hashes of chains already taken
    // The executable ranges of it and its parents, merged and sorted, as of
    // `ranges_version` (the sum of their versions).
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    uint64_t ranges_version = ~uint64_t{0};
  };
  // Where a hit came from: a sampled pc (a leaf), a call chain's return
  // address, a stack copy's word.
  enum class HitKind : uint8_t { kLeaf, kReturn, kScanned };
  struct Hit {
    uint32_t pid;
    HitKind kind;
    uint64_t address;  // the lookup address
    bool operator==(const Hit&) const = default;
  };
  struct HitHash {
    size_t operator()(const Hit& h) const;
  };

  void ObserveMapping(const Mmap2Record& m);
  void ObserveSample(const SampleRecord& s, uint32_t event, const perf_event_attr& attr,
                     std::span<std::byte> stack);
  // `stack`: the sample's copy, writable (Observe clears it), taken at
  // `regs`.
  void ScanStack(Process& process, uint32_t pid, const SampleRecord& s, const perf_event_attr& attr,
                 const PcAndSp& regs, std::span<std::byte> stack);
  const std::vector<std::pair<uint64_t, uint64_t>>& RangesOf(Process& process, uint32_t pid);
  bool ClearsCopy(const SampleRecord& s, const perf_event_attr& attr) const;
  void Add(uint32_t pid, uint64_t address, HitKind kind);

  EventTable events_;
  Arch arch_;
  uint32_t host_max_stack_;
  std::vector<File> files_;
  std::unordered_map<std::string, std::vector<uint32_t>> files_by_path_;
  std::unordered_map<uint32_t, Process> processes_;
  std::unordered_set<Hit, HitHash> hits_;
  // Samples by (pid, event, user pc) since the last ResetSamples.
  struct LeafKey {
    uint32_t pid;
    uint32_t event;
    uint64_t address;
    bool operator==(const LeafKey&) const = default;
  };
  struct LeafKeyHash {
    size_t operator()(const LeafKey& k) const;
  };
  std::unordered_map<LeafKey, uint64_t, LeafKeyHash> leaf_samples_;
  std::vector<uint64_t> event_samples_;
  Counts counts_;
};

}  // namespace sample::record
