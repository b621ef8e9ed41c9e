// SymbolSource: where the names of one DSO's code come from. Every kind of
// DSO a recording names has one implementation, and symbolization asks it
// once for all the offsets the recording saw in that DSO:
//   KernelSymbolSource   [kernel.kallsyms]: the kallsyms the file stores
//                        (offsets are absolute addresses);
//   PerfMapSymbolSource  /tmp/perf-PID.map: a JIT's own map of names
//                        (absolute addresses);
//   BinarySymbolSource   an ELF file found by BinaryLocator, the [vdso]
//                        image stored in the file included (file offsets;
//                        DWARF names with inline frames and source lines,
//                        ELF symbols otherwise);
//   EmbeddedSymbolSource a binary the locator found only in the recording
//                        (file offsets; the frames the recorder stored for
//                        each address it hit, which are what the binary
//                        source would give, else the function holding it);
//   NoSymbolSource       what nothing names ([unknown], names off).
// Each source also says where its names came from (for --header and
// --stats) and what the user should be told about it.
//
// A source holds its tables (a binary source its open DWARF file, which
// libdw does not let two threads read): use one source on one thread at a
// time. Sources of different DSOs share nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libsample/symbols/address_frames.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/embedded_binary.h"
#include "libsample/symbols/kallsyms.h"
#include "libsample/symbols/perf_map.h"
#include "libsample/symbols/recorded_binary.h"

namespace sample::report {

// One frame of a location, innermost first: inlined calls, then the function.
struct ResolvedFrame {
  // Demangled; "[unknown] 0x..." when nothing names it. A C++ name from a
  // binary without its parameter list (WithoutParameters), the full one in
  // `signature`; empty there when the two are the same.
  std::string name;
  std::string signature;
  std::string srcline;  // "file.c:12" (basename), "" when unknown or not asked for
  bool inlined = false;
  bool known = true;
  // Offset of the location in the (outer) function, for --script; UINT64_MAX
  // when unknown.
  uint64_t symbol_offset = UINT64_MAX;
};

// A binary's frames of `offset` as the report shows them: unknown ones
// named "[unknown] 0x...", C++ names without their parameter lists (which
// go to `signature`), source lines (basename:line) only if `srclines`.
// Only names of ELF binaries (their symbols, their DWARF, the [vdso], what a
// recording embedded of them) are shortened: a JIT's own names (perf maps)
// may end in "(...)" and are shown as the JIT wrote them.
std::vector<ResolvedFrame> ToResolvedFrames(const std::vector<AddressFrame>& frames,
                                            uint64_t offset, bool srclines);

// The frame of an offset nothing names: "[unknown] 0x...".
ResolvedFrame UnknownFrame(uint64_t offset);

// What a source tells the report about itself.
struct SourceFacts {
  // Where the names come from, for --header and --stats: "recorded
  // kallsyms (N symbols)", "perf map", "recorded path, DWARF", ... or
  // "none: <why>". Empty: the source is not worth listing.
  std::string source;
  std::vector<std::string> warnings;
  bool missing = false;     // a file the user could supply was not found
  bool mismatched = false;  // a file was found with another build-id
};

class SymbolSource {
 public:
  virtual ~SymbolSource() = default;
  // The frames at each of `offsets`, innermost first; at least one per
  // offset (UnknownFrame when nothing is known of it).
  virtual std::vector<std::vector<ResolvedFrame>> Symbolize(std::span<const uint64_t> offsets) = 0;
  virtual const SourceFacts& facts() const = 0;
};

// Names nothing: every offset gets an [unknown] frame. `facts` as given.
class NoSymbolSource final : public SymbolSource {
 public:
  explicit NoSymbolSource(SourceFacts facts = {}) : facts_(std::move(facts)) {}
  std::vector<std::vector<ResolvedFrame>> Symbolize(std::span<const uint64_t> offsets) override;
  const SourceFacts& facts() const override { return facts_; }

 private:
  SourceFacts facts_;
};

// The kernel, by absolute address, from symbols sorted as ParseKallsyms
// gives them.
class KernelSymbolSource final : public SymbolSource {
 public:
  // `origin` names where the symbols came from ("recorded kallsyms").
  KernelSymbolSource(std::vector<KernelSymbol> sorted, const std::string& origin);
  std::vector<std::vector<ResolvedFrame>> Symbolize(std::span<const uint64_t> offsets) override;
  const SourceFacts& facts() const override { return facts_; }

 private:
  std::vector<KernelSymbol> symbols_;
  SourceFacts facts_;
};

// JIT code, by absolute address, from a map PerfMap::Load read (or the
// text the recording holds), or the error that kept it from being read
// (then a warning, and no names).
class PerfMapSymbolSource final : public SymbolSource {
 public:
  // `origin`: where the map came from, for --header and --stats.
  explicit PerfMapSymbolSource(Result<PerfMap> map, std::string origin = "perf map");
  std::vector<std::vector<ResolvedFrame>> Symbolize(std::span<const uint64_t> offsets) override;
  const SourceFacts& facts() const override { return facts_; }

 private:
  std::optional<PerfMap> map_;
  SourceFacts facts_;
};

// A binary (or the [vdso] image), by file offset.
class BinarySymbolSource final : public SymbolSource {
 public:
  // Finds `path` (recorded with `recorded_build_id`, hex or empty) with
  // `locator` and opens what it found: the file, or an EmbeddedSymbolSource
  // when the locator found the binary only in the recording. The locator
  // must outlive the source when the path is the [vdso] (its image is the
  // locator's file), and the embedded binaries it was given must too.
  static std::unique_ptr<SymbolSource> Open(BinaryLocator& locator, const std::string& path,
                                            const std::string& recorded_build_id, bool srclines);
  std::vector<std::vector<ResolvedFrame>> Symbolize(std::span<const uint64_t> offsets) override;
  const SourceFacts& facts() const override { return facts_; }

 private:
  BinarySymbolSource(std::optional<BinarySymbolizer> symbolizer, SourceFacts facts, bool srclines,
                     std::string display_name)
      : symbolizer_(std::move(symbolizer)),
        facts_(std::move(facts)),
        srclines_(srclines),
        display_name_(std::move(display_name)) {}
  std::vector<ResolvedFrame> FramesAt(uint64_t offset);

  std::optional<BinarySymbolizer> symbolizer_;  // nullopt: nothing usable was found
  SourceFacts facts_;
  bool srclines_ = false;
  std::string display_name_;  // the recorded path's last part: "liblzma.so.5", "[vdso]"
};

// A binary as the recording embedded it (BinaryLocator found no usable
// file), by file offset: the frames stored for an offset, as FramesAtFileOffset
// gave them on the recording machine; an offset not stored (the report
// looked up an address the recorder did not) gets the function holding it,
// without inline frames or a source line; else an [unknown] frame. Reads
// `binary`, which must outlive the source.
class EmbeddedSymbolSource final : public SymbolSource {
 public:
  // `located`: what the locator said (its source, "embedded ...").
  EmbeddedSymbolSource(const EmbeddedBinary& binary, const LocatedBinary& located, bool srclines);
  std::vector<std::vector<ResolvedFrame>> Symbolize(std::span<const uint64_t> offsets) override;
  const SourceFacts& facts() const override { return facts_; }

 private:
  std::vector<ResolvedFrame> FramesAt(uint64_t offset) const;

  const EmbeddedBinary& binary_;
  SourceFacts facts_;
  bool srclines_ = false;
};

}  // namespace sample::report
