#include "report/load/data_addresses.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "libsample/symbols/elf_symbols.h"

namespace sample::report {
namespace {

// The ELF virtual address of a file offset of a mapped file: in the
// file-backed part of a PT_LOAD segment, or past it in the segment's
// zero-filled tail (.bss) on the same page, which the file's mapping holds.
std::optional<uint64_t> VaddrOf(const ElfSymbols& elf, uint64_t file_offset) {
  if (auto vaddr = elf.FileOffsetToVaddr(file_offset)) return vaddr;
  for (const ElfSymbols::LoadSegment& segment : elf.segments()) {
    if (file_offset >= segment.offset && file_offset - segment.offset < segment.memsz) {
      return segment.vaddr + (file_offset - segment.offset);
    }
  }
  return std::nullopt;
}

}  // namespace

uint32_t DataAddresses::Locate(const ProcessTable& processes, uint32_t pid, uint64_t addr) {
  Key key{ProcessTable::kUnknownDso, addr, kNoFileOffset};
  if (IsKernelAddress(addr)) {
    key.dso = ProcessTable::kKernelDso;
  } else if (const Mapping* mapping = processes.FindDataMapping(pid, addr)) {
    key.dso = mapping->dso;
    key.file_offset = addr - mapping->start + mapping->pgoff;
  }
  auto [it, inserted] = ids_.try_emplace(key, static_cast<uint32_t>(locations_.size()));
  if (inserted) {
    DataLocation location;
    location.address = addr;
    location.dso = key.dso;
    locations_.push_back(location);
    file_offsets_.push_back(key.file_offset);
  }
  return it->second;
}

void DataAddresses::Resolve(const ProcessTable& processes, const BinaryLocatorOptions& binaries,
                            const RecordedCode& recorded,
                            const format::Metadata& build_ids, Profile& profile) {
  // The locations of each file, so that each is read once.
  std::map<uint32_t, std::vector<uint32_t>> by_dso;
  for (uint32_t id = 1; id < locations_.size(); ++id) {
    const std::string& path = processes.DsoPath(locations_[id].dso);
    if (file_offsets_[id] != kNoFileOffset && path.starts_with("/") && !IsAnonymousCode(path)) {
      by_dso[locations_[id].dso].push_back(id);
    }
  }
  std::vector<std::string> symbols = {""};
  std::unordered_map<std::string, uint32_t> symbol_ids;
  BinaryLocator locator(binaries, recorded, LocatorUse{.debuginfod = false});
  for (const auto& [dso, ids] : by_dso) {
    const std::string& path = processes.DsoPath(dso);
    const LocatedBinary located =
        locator.Locate(path, format::FindMetadata(build_ids, path).value_or(""));
    if (located.binary.empty()) continue;
    auto elf = ElfSymbols::LoadWithObjects(located.binary);
    if (!elf) continue;  // not ELF: a data file
    // A distribution's library keeps its variables' names in its debug
    // file (the binary has .dynsym's exported ones only).
    if (!located.debug.empty()) {
      if (auto debug = ElfSymbols::LoadWithObjects(located.debug);
          debug && (elf->build_id().empty() || debug->build_id() == elf->build_id())) {
        elf->MergeDebugSymbols(std::move(*debug));
      }
    }
    // Each symbol's id, so that its name is demangled once.
    std::unordered_map<const ElfSymbol*, uint32_t> ids_of_symbols;
    for (uint32_t id : ids) {
      const std::optional<uint64_t> vaddr = VaddrOf(*elf, file_offsets_[id]);
      const ElfSymbol* symbol = vaddr ? elf->Find(*vaddr) : nullptr;
      if (symbol == nullptr) continue;
      auto [known, added] = ids_of_symbols.try_emplace(symbol, 0);
      if (added) {
        std::string name = symbol->name();
        auto [it, inserted] = symbol_ids.try_emplace(name, static_cast<uint32_t>(symbols.size()));
        if (inserted) symbols.push_back(std::move(name));
        known->second = it->second;
      }
      locations_[id].symbol = known->second;
      locations_[id].symbol_offset = *vaddr - symbol->start;
      locations_[id].function = !symbol->object;
    }
  }
  profile.set_data_locations(std::move(locations_), std::move(symbols));
  locations_ = {DataLocation{}};
  file_offsets_ = {kNoFileOffset};
  ids_.clear();
}

}  // namespace sample::report
