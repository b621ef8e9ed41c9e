// symbolize_bench: how much source lines and inline frames cost.
//
//   symbolize_bench BINARY [DEBUG_FILE]
//
// Looks up two addresses of every function symbol of BINARY (its start and
// its middle), three ways, and prints the time of each:
//   elf      ElfSymbols::Load + Find: what a report without lines does today
//   dwarf    BinarySymbolizer::Open + SymbolizeVaddr, first pass (units are
//            indexed as they are first touched) and second pass (all cached)
//   getscopes  libdw per address (dwarf_addrdie + dwarf_getscopes +
//            dwarf_getsrc_die): the uncached way, for comparison
// Run by hand (bench/RESULTS.md); never a timed test.
#include <dwarf.h>
#include <elfutils/libdw.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/dwarf_file.h"
#include "libsample/symbols/elf_symbols.h"

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The uncached libdw way; returns the number of frames found.
size_t GetScopesPass(Dwarf* dwarf, const std::vector<uint64_t>& addresses) {
  size_t frames = 0;
  for (uint64_t addr : addresses) {
    Dwarf_Die cu;
    if (dwarf_addrdie(dwarf, addr, &cu) == nullptr) continue;
    Dwarf_Die* scopes = nullptr;
    const int n = dwarf_getscopes(&cu, addr, &scopes);
    for (int i = 0; i < n; ++i) {
      const int tag = dwarf_tag(&scopes[i]);
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
        Dwarf_Attribute attr;
        if (dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr)) != nullptr) {
          ++frames;
        }
      }
    }
    free(scopes);
    Dwarf_Line* line = dwarf_getsrc_die(&cu, addr);
    if (line != nullptr) dwarf_linesrc(line, nullptr, nullptr);
  }
  return frames;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s BINARY [DEBUG_FILE]\n", argv[0]);
    return 2;
  }
  const std::string binary = argv[1];
  const std::string debug = argc > 2 ? argv[2] : "";

  auto start = Clock::now();
  auto elf = sample::ElfSymbols::Load(binary);
  if (!elf) {
    std::fprintf(stderr, "%s\n", elf.error().message.c_str());
    return 1;
  }
  if (!debug.empty()) {
    auto debug_symbols = sample::ElfSymbols::Load(debug);
    if (debug_symbols) elf->MergeDebugSymbols(*debug_symbols);
  }
  const double elf_open_ms = MsSince(start);
  std::vector<uint64_t> addresses;
  for (const sample::ElfSymbol& symbol : elf->symbols()) {
    addresses.push_back(symbol.start);
    if (symbol.size > 1) addresses.push_back(symbol.start + symbol.size / 2);
  }
  start = Clock::now();
  size_t elf_found = 0;
  for (uint64_t addr : addresses) elf_found += elf->Find(addr) != nullptr;
  const double elf_lookup_ms = MsSince(start);

  start = Clock::now();
  auto symbolizer = sample::BinarySymbolizer::Open(binary, debug);
  if (!symbolizer) {
    std::fprintf(stderr, "%s\n", symbolizer.error().message.c_str());
    return 1;
  }
  const double dwarf_open_ms = MsSince(start);
  size_t frames = 0;
  size_t inlined = 0;
  size_t with_line = 0;
  double pass_ms[2] = {0, 0};
  for (double& ms : pass_ms) {
    frames = inlined = with_line = 0;
    start = Clock::now();
    for (uint64_t addr : addresses) {
      for (const sample::SymbolFrame& frame : symbolizer->SymbolizeVaddr(addr)) {
        ++frames;
        inlined += frame.inlined;
        with_line += frame.line != 0;
      }
    }
    ms = MsSince(start);
  }

  // A sparse report: every 50th address, on a fresh symbolizer, so that the
  // cost of indexing each touched unit shows.
  std::vector<uint64_t> sparse;
  for (size_t i = 0; i < addresses.size(); i += 50) sparse.push_back(addresses[i]);
  start = Clock::now();
  auto fresh = sample::BinarySymbolizer::Open(binary, debug);
  const double sparse_open_ms = MsSince(start);
  start = Clock::now();
  for (uint64_t addr : sparse) fresh->SymbolizeVaddr(addr);
  const double sparse_ms = MsSince(start);

  double getscopes_ms = -1;
  size_t getscopes_frames = 0;
  if (!symbolizer->dwarf_path().empty()) {
    auto dwarf = sample::DwarfFile::Open(symbolizer->dwarf_path());
    if (dwarf) {
      start = Clock::now();
      getscopes_frames = GetScopesPass(dwarf->get(), addresses);
      getscopes_ms = MsSince(start);
    }
  }

  std::printf("binary     %s\n", binary.c_str());
  std::printf("dwarf      %s\n", symbolizer->dwarf_path().empty()
                                     ? symbolizer->dwarf_error().c_str()
                                     : symbolizer->dwarf_path().c_str());
  std::printf("addresses  %zu (%zu named by ELF symbols)\n", addresses.size(), elf_found);
  std::printf("units      %zu, %zu indexed\n", symbolizer->unit_count(),
              symbolizer->indexed_unit_count());
  std::printf("frames     %zu (%zu inlined, %zu with a line)\n", frames, inlined, with_line);
  std::printf("elf        load %.1f ms, lookups %.2f ms (%.3f us/address)\n", elf_open_ms,
              elf_lookup_ms, 1000 * elf_lookup_ms / addresses.size());
  std::printf(
      "dwarf      open %.1f ms, first pass %.1f ms (%.2f us/address), second %.1f ms "
      "(%.2f us/address)\n",
      dwarf_open_ms, pass_ms[0], 1000 * pass_ms[0] / addresses.size(), pass_ms[1],
      1000 * pass_ms[1] / addresses.size());
  std::printf("total      elf %.1f ms, dwarf %.1f ms: %.2fx\n", elf_open_ms + elf_lookup_ms,
              dwarf_open_ms + pass_ms[0],
              (dwarf_open_ms + pass_ms[0]) / (elf_open_ms + elf_lookup_ms));
  std::printf(
      "sparse     %zu addresses: open %.1f ms, lookups %.1f ms (%zu of %zu units indexed)\n",
      sparse.size(), sparse_open_ms, sparse_ms, fresh->indexed_unit_count(), fresh->unit_count());
  if (getscopes_ms >= 0) {
    std::printf("getscopes  %.1f ms (%.2f us/address, %zu frames), uncached libdw\n", getscopes_ms,
                1000 * getscopes_ms / addresses.size(), getscopes_frames);
  }
  return 0;
}
