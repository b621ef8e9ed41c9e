// What the symbol embedding tests compare against, read from the real files
// without the code under test: CFI rules read through libdwfl exactly as
// the DWARF unwinder's RuleFor reads them (libsample/unwind/dwarf_unwinder.cc),
// this process's mappings, and lookup offsets of a binary (a stride over
// its executable segments, and the return addresses of its direct calls).
#pragma once

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/x86_frame_rule.h"

namespace sample::testing {

// One module reported to libdwfl at bias 0, with `debug` as its separate
// debug file, as the unwinder reports a mapping.
class DwflRules {
 public:
  struct Found {
    X86FrameRule rule;
    uint64_t start = 0;  // the row's range, from dwarf_frame_info
    uint64_t end = 0;
  };

  DwflRules(const std::string& binary, const std::string& debug) : debug_(debug) {
    dwfl_ = dwfl_begin(&kCallbacks);
    const int fd = open(binary.c_str(), O_RDONLY | O_CLOEXEC);
    dwfl_report_begin(dwfl_);
    module_ =
        fd >= 0 ? dwfl_report_elf(dwfl_, binary.c_str(), binary.c_str(), fd, 0, true) : nullptr;
    if (module_ == nullptr && fd >= 0) close(fd);
    if (module_ != nullptr) {
      void** userdata = nullptr;
      dwfl_module_info(module_, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
      *userdata = &debug_;
    }
    dwfl_report_end(dwfl_, nullptr, nullptr);
  }
  DwflRules(const DwflRules&) = delete;
  DwflRules& operator=(const DwflRules&) = delete;
  ~DwflRules() { dwfl_end(dwfl_); }

  bool ok() const { return module_ != nullptr; }

  // RuleFor's lookup: .eh_frame, else .debug_frame.
  std::optional<Found> At(uint64_t vaddr) const {
    for (int source = 0; source < 2; ++source) {
      Dwarf_Addr bias = 0;
      Dwarf_CFI* cfi =
          source == 0 ? dwfl_module_eh_cfi(module_, &bias) : dwfl_module_dwarf_cfi(module_, &bias);
      Dwarf_Frame* frame = nullptr;
      if (cfi == nullptr || dwarf_cfi_addrframe(cfi, vaddr - bias, &frame) != 0) continue;
      const std::unique_ptr<Dwarf_Frame, decltype(&free)> owned(frame, &free);
      Found found;
      found.rule = ReadX86FrameRule(frame);
      Dwarf_Addr start = 0, end = 0;
      bool signal_frame = false;
      dwarf_frame_info(frame, &start, &end, &signal_frame);
      found.start = start + bias;
      found.end = end + bias;
      return found;
    }
    return std::nullopt;
  }

 private:
  static int NoElf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) { return -1; }
  static int FindDebug(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*,
                       const char*, GElf_Word, char** name) {
    const auto* debug = static_cast<const std::string*>(*userdata);
    if (debug == nullptr || debug->empty()) return -1;
    const int fd = open(debug->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) *name = strdup(debug->c_str());
    return fd;
  }
  static constexpr Dwfl_Callbacks kCallbacks = {
      .find_elf = NoElf,
      .find_debuginfo = FindDebug,
      .section_address = dwfl_offline_section_address,
      .debuginfo_path = nullptr,
  };

  std::string debug_;
  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;
};

// One line of /proc/self/maps.
struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t pgoff = 0;
  bool executable = false;
  std::string path;
};

inline std::vector<Mapping> SelfMappings() {
  std::vector<Mapping> mappings;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    Mapping m;
    char perms[8] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*u %n", &m.start,
                    &m.end, perms, &m.pgoff, &path_at) != 4) {
      continue;
    }
    m.executable = perms[2] == 'x';
    if (path_at > 0 && static_cast<size_t>(path_at) < line.size()) m.path = line.substr(path_at);
    if (m.path.starts_with("/")) mappings.push_back(m);
  }
  return mappings;
}

inline std::vector<char> FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

// Every `stride`-th file offset of the executable segments.
inline std::vector<uint64_t> StrideOffsets(const ElfSymbols& elf, uint64_t stride) {
  std::vector<uint64_t> offsets;
  for (const ElfSymbols::LoadSegment& segment : elf.segments()) {
    if (!segment.executable) continue;
    for (uint64_t at = 0; at < segment.filesz; at += stride) offsets.push_back(segment.offset + at);
  }
  return offsets;
}

// Lookup offsets (return address - 1) of the direct calls (e8 rel32) in the
// executable segments whose target `is_function` accepts: real call sites,
// found without a disassembler. At most `limit`.
template <typename IsFunction>
std::vector<uint64_t> CallReturnOffsets(const ElfSymbols& elf, const std::vector<char>& file,
                                        IsFunction is_function, size_t limit) {
  std::vector<uint64_t> offsets;
  for (const ElfSymbols::LoadSegment& segment : elf.segments()) {
    if (!segment.executable || segment.offset + segment.filesz > file.size()) continue;
    for (uint64_t at = 0; at + 5 <= segment.filesz && offsets.size() < limit; ++at) {
      if (static_cast<uint8_t>(file[segment.offset + at]) != 0xe8) continue;
      int32_t rel = 0;
      std::memcpy(&rel, &file[segment.offset + at + 1], 4);
      const uint64_t target = segment.vaddr + at + 5 + static_cast<uint64_t>(int64_t{rel});
      if (is_function(target)) offsets.push_back(segment.offset + at + 4);
    }
  }
  return offsets;
}

}  // namespace sample::testing
