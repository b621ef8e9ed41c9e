// JitDumpBuilder: the bytes of a jitdump file, record by record, for the
// tests of the jitdump reader, the report's JIT code and the fuzz seeds.
// Records are padded to 8 bytes as the JVM's agent pads them (readers must
// go by each record's total_size). Owns the bytes built so far.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/symbols/jitdump.h"

namespace sample::testing {

class JitDumpBuilder {
 public:
  explicit JitDumpBuilder(uint32_t pid = 4242, uint64_t flags = 0, uint32_t magic = kJitDumpMagic);

  // A code load of `code` at `address`.
  JitDumpBuilder& Load(uint64_t time, uint64_t address, std::string_view name,
                       std::span<const std::byte> code, uint64_t code_index);
  // A code load of `size` bytes of filler code.
  JitDumpBuilder& Load(uint64_t time, uint64_t address, std::string_view name, size_t size,
                       uint64_t code_index);
  JitDumpBuilder& Move(uint64_t time, uint64_t old_address, uint64_t new_address, uint64_t size,
                       uint64_t code_index);
  // One debug-info entry as the file has it ("\xff": the previous file).
  struct Line {
    uint64_t address = 0;
    uint32_t line = 0;
    uint32_t discriminator = 0;
    std::string file;
  };
  // Lines for the load of `address` that must follow.
  JitDumpBuilder& DebugInfo(uint64_t time, uint64_t address, const std::vector<Line>& lines);
  JitDumpBuilder& Close(uint64_t time);
  // Any record: its header, then `body`, padded to 8.
  JitDumpBuilder& Raw(uint32_t id, uint64_t time, std::span<const std::byte> body);

  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace sample::testing
