// Kernel symbols of this host for sampled addresses: the kallsyms symbols
// covering the kernel addresses a recording sampled (the recorder's file,
// sample-top's refreshes, a perf.data reported on its recording host).
//
// Producing /proc/kallsyms costs the kernel about 40 ms of system time per
// read (120k lines, 5.4 MB), more than the rest of a short recording. The
// core kernel's symbols cannot change while the machine stays up, so the
// text symbols of the last read are kept, sorted by address, in a per-user,
// per-boot cache file (`<cache_dir>/sorted-kallsyms-<boot_id>`) and reused
// when every sampled address lies in the core kernel text [_stext, _etext):
// the file is mapped and bisected for each address (SelectSortedKallsyms),
// never parsed whole. An address elsewhere
// (modules, BPF programs, trampolines: they come and go) means a fresh read,
// which also refreshes the cache. A cache file is only trusted when it is a
// regular file owned by this user and not writable by others.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libsample/symbols/kallsyms.h"

namespace sample {

struct KallsymsSnapshotOptions {
  std::string kallsyms_path = "/proc/kallsyms";
  // Directory of the cache; empty disables it.
  std::string cache_dir;
  // /proc/sys/kernel/random/boot_id; empty disables the cache.
  std::string boot_id;
  // KallsymsFeed: a table read this long ago is read again for an address
  // outside the core text (modules and BPF programs come and go).
  double reread_seconds = 30;
};

// The default options: $XDG_CACHE_HOME/sample (or ~/.cache/sample) and this
// boot's id; no cache when neither directory can be named.
KallsymsSnapshotOptions DefaultKallsymsSnapshotOptions();

struct KallsymsSnapshot {
  std::vector<KernelSymbol> symbols;  // sorted, as SelectKallsyms returns
  bool from_cache = false;
  // Why there are no symbols (unreadable, addresses hidden); empty otherwise.
  std::string note;
};

KallsymsSnapshot TakeKallsymsSnapshot(const std::vector<uint64_t>& addresses,
                                      const KallsymsSnapshotOptions& options);

// Kernel symbols for addresses that come over time (sample-top names each
// refresh's new ones): TakeKallsymsSnapshot's rules, with the cache mapped
// once and the table of a read kept, so that a live view never parses the
// whole table and reads it only for addresses outside the core text
// (modules, BPF), at most once per reread_seconds.
class KallsymsFeed {
 public:
  explicit KallsymsFeed(KallsymsSnapshotOptions options);
  ~KallsymsFeed();
  KallsymsFeed(const KallsymsFeed&) = delete;
  KallsymsFeed& operator=(const KallsymsFeed&) = delete;

  // The symbols covering `addresses`, each with its successor (sorted).
  KallsymsSnapshot Select(const std::vector<uint64_t>& addresses);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sample
