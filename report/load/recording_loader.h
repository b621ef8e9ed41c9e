// LoadRecording: a recording in (sample.data or perf.data, read through
// formats/recording_file.h), a symbolized Profile out (the loader of
// sample-report).
//
// Reads every record chunk, orders records by time across CPUs
// (ordered_records.h), applies COMM/FORK/EXIT/MMAP2 to a ProcessTable so
// each sample resolves against the mappings live when it was taken
// (unresolved_stacks.h), unwinds the samples that carry a user stack
// (stack_unwinding.h), symbolizes each distinct (DSO, offset) location once
// (symbolization.h), and builds the Profile. Problems in the data are
// counted in LoadStats, never fatal past the file header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/recording_file.h"
#include "libsample/perf/event_table.h"
#include "libsample/result.h"
#include "libsample/symbols/kallsyms.h"
#include "libsample/symbols/recorded_binary.h"
#include "report/load/recording.h"

namespace sample::report {

struct LoadOptions {
  // How binaries are found: --symfs (perf's: a binary recorded as /P is
  // read from symfs + /P, and only from there, so a directory of copies
  // stands in for the recording machine's files), --force (use a binary
  // whose build-id differs from the recorded one) and debuginfod (asked for
  // missing files when DEBUGINFOD_URLS is set). The loader adds the
  // recording's vDSO image and embedded binaries (and gives symbolization
  // its perf maps) and passes it whole to unwinding and symbolization.
  BinaryLocatorOptions binaries;
  // Threads for decompressing and indexing chunks; 0 = one per core.
  unsigned jobs = 0;
  // Load source lines (for --sort srcline); they cost DWARF line tables.
  bool srclines = false;
  // Inlined calls as frames of their own in chains (perf's default);
  // --no-inline keeps only the function holding each address.
  bool inline_frames = true;
  // Show debuginfod downloads as a progress line on stderr.
  bool show_progress = false;
  // Unwind --call-graph dwarf samples' user stacks (and check fp,leaf
  // leaves). A view without call chains (flat --no-children -g none) turns
  // it off: its samples keep the kernel's chain, whose user part is the
  // sampled ip.
  bool unwind = true;
  // Keep each sample's call chain. --annotate, which reads only each
  // sample's own address, turns it off: a sample is then its leaf frame
  // (with `unwind` off too), and nothing interns or names its callers.
  bool chains = true;
  // Without chains, a sample's frame is its chain's first address, as the
  // views with chains take it (a flat report: the same rows as its
  // children view's Self); else its ip (--annotate: a precise event's
  // own instruction).
  bool chain_leaf = false;
  // Keep the samples that differ only in time as one entry (counted in
  // ProfileSample::samples, their periods summed): for views that read no
  // sample's time, order or raw payload (all but --script, --time, the
  // speedscope and gecko exports, the browser and --stats). Memory then
  // grows with distinct samples (stacks by thread and CPU), not samples.
  // A recording whose samples are paired later by their place (--alloc's
  // calls, off-CPU switches, the wall event, --script's sideband) is not
  // merged, nor is a sample with group reads.
  bool merge_samples = false;
  // Keep a toggled event's samples only inside its on..off windows;
  // --no-toggle keeps them all (the windows are still counted).
  bool apply_toggles = true;
  // Name frames (read binaries, debug files, kallsyms). --header-only,
  // which prints no frames, turns it off.
  bool symbolize = true;
  // Build the "wall" pseudo-event (Recording::wall_event).
  bool wall = false;
  // Name C++ functions by their full signatures (--full-signature), not
  // only the overloads that need them (Profile::ChooseNames).
  bool full_signatures = false;
  KeepSideband sideband = KeepSideband::kNone;
  // Files read with the one LoadRecording names, as one recording
  // (formats/recording_set.h): -i A B C, or a glob of rotated files.
  std::vector<std::string> more_inputs;
  // A live view's kernel symbols (LiveLoader only): the symbols covering
  // each refresh's new kernel addresses, each with its successor, asked of
  // this instead of parsing the source's kallsyms text whole (sample-top:
  // KallsymsFeed, the per-boot sorted cache the recorder keeps).
  std::function<std::vector<KernelSymbol>(const std::vector<uint64_t>&)> kernel_symbol_feed;
};

Result<Recording> LoadRecording(const std::string& path, const LoadOptions& options = {});

// The loader of a live view (sample-top). `source` is a RecordingFile whose
// record_chunks() are the chunks drained since the last call (its other
// facts, the events first, stay the same); each Next() applies them in time
// order to the state kept from the calls before (processes and their
// mappings, the unwinders, the distinct stacks and locations, each DSO's
// open symbol source: SymbolCache) and returns the Recording of their
// samples only, valid until the next call. A call costs its new samples
// and the locations first seen among them. Addresses in no mapping are one
// "[unknown]" location here (UnresolvedStacks::set_collapse_unknown), and
// the per-process chain caches go every 60 calls. LoadOptions::jobs is not used:
// everything runs on the calling thread.
class LiveLoader {
 public:
  LiveLoader(const format::RecordingFile& source, const LoadOptions& options);
  ~LiveLoader();
  LiveLoader(const LiveLoader&) = delete;
  LiveLoader& operator=(const LiveLoader&) = delete;
  const Recording& Next();
  // Distinct locations (DSO and offset) named so far: what the refreshes
  // have symbolized, each once.
  size_t locations() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sample::report
