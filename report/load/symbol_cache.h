// SymbolCache: symbolization for a live view (sample-top), where new
// locations arrive every refresh and the same DSOs are asked again and
// again. Where SymbolizeLocations (symbolization.h) opens each DSO's
// SymbolSource for one call, this keeps every binary's source (its open
// ELF and DWARF) and the kernel's parsed symbols from call to call, so a
// refresh reads only what it has not read before. JIT perf maps are read
// again for each call that has new locations in them (a JIT appends to its
// map as it compiles); jitdump code is not named live.
//
// One thread: the sources' libdw handles are not shared between threads,
// and a refresh's new locations are few once the first ones are named.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/symbols/recorded_binary.h"
#include "report/load/symbol_sources.h"
#include "report/load/symbolization.h"

namespace sample::report {

class SymbolCache {
 public:
  // `options` as SymbolizeLocations takes them (jobs aside); the kernel's
  // symbols as kallsyms text, parsed on the first kernel location, or,
  // when `kernel_feed` is set, asked of it for each call's new kernel
  // locations (the symbols covering them, each with its successor).
  using KernelFeed = std::function<std::vector<KernelSymbol>(const std::vector<uint64_t>&)>;
  SymbolCache(SymbolizeOptions options, format::Metadata build_ids, std::string kernel_symbols,
              KernelFeed kernel_feed = {});
  SymbolCache(const SymbolCache&) = delete;
  SymbolCache& operator=(const SymbolCache&) = delete;

  // The frames of `locations` as SymbolizeLocations gives them (indexed
  // like `locations`); `dso_paths` by DSO id. symbol_sources and the
  // warnings are of the DSOs first opened by this call.
  SymbolizeResult Symbolize(const std::vector<Location>& locations,
                            const std::vector<std::string>& dso_paths);

  // DSOs whose sources are held.
  size_t open_sources() const { return sources_.size(); }

 private:
  SymbolSource& SourceFor(uint32_t dso, const std::string& path, SymbolizeResult& result);

  SymbolizeOptions options_;
  format::Metadata build_ids_;
  std::string kernel_text_;
  KernelFeed kernel_feed_;
  BinaryLocator locator_;
  std::optional<KernelSymbolSource> kernel_;
  bool kernel_reported_ = false;  // the feed's source said, in the first call naming the kernel
  std::map<uint32_t, std::unique_ptr<SymbolSource>> sources_;  // by DSO id
};

}  // namespace sample::report
