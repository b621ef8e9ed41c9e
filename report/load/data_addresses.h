// DataAddresses: where the data addresses of a -d recording were.
//
// Each sample's address (PERF_SAMPLE_ADDR) is placed when its sample is
// read, in the mapping that held it at that moment
// (ProcessTable::FindDataMapping: the data mappings first, then the code
// ones, which hold constants too); a kernel address in the kernel. Each
// distinct (mapping's DSO, address, file offset) is one location, the id
// the sample keeps (ProfileSample::data). Once the records are read,
// Resolve names the variable or function holding each address of a mapped
// ELF file, from the file's symbol table and its debug file's
// (ElfSymbols::LoadWithObjects), read once per file and only for files
// with locations; anonymous memory, the heap, the stack and files that are
// not ELF get no symbol, as in perf. The file is found as the code's
// binaries are (BinaryLocator: --symfs, the recorded build-id), never
// through debuginfod.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/model/process_table.h"
#include "libsample/model/profile.h"
#include "libsample/symbols/recorded_binary.h"

namespace sample::report {

class DataAddresses {
 public:
  // The location of `addr` in `pid`'s address space as it is now; never 0
  // (the id of "no data address").
  uint32_t Locate(const ProcessTable& processes, uint32_t pid, uint64_t addr);

  // Names the locations and hands them to `profile`
  // (Profile::set_data_locations). `processes` names the DSOs.
  void Resolve(const ProcessTable& processes, const BinaryLocatorOptions& binaries,
               const RecordedCode& recorded,
               const format::Metadata& build_ids, Profile& profile);

  size_t size() const { return locations_.size() - 1; }

 private:
  // The file offset too: one file mapped at one address with another
  // offset (another process, a remap) holds other variables there.
  struct Key {
    uint32_t dso;
    uint64_t address;
    uint64_t file_offset;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return static_cast<size_t>((k.address * 0x9E3779B97F4A7C15ull) ^
                                 (k.file_offset * 0xC2B2AE3D27D4EB4Full) ^ k.dso);
    }
  };
  static constexpr uint64_t kNoFileOffset = UINT64_MAX;
  std::vector<DataLocation> locations_ = {DataLocation{}};
  std::vector<uint64_t> file_offsets_ = {kNoFileOffset};  // parallel to locations_
  std::unordered_map<Key, uint32_t, KeyHash> ids_;
};

}  // namespace sample::report
