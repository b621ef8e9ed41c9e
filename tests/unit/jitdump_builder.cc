#include "tests/unit/jitdump_builder.h"

#include <cstring>

namespace sample::testing {
namespace {

template <typename T>
void Put(std::vector<std::byte>& out, const T& value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

void PutString(std::vector<std::byte>& out, std::string_view s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  out.insert(out.end(), p, p + s.size());
  out.push_back(std::byte{0});
}

}  // namespace

JitDumpBuilder::JitDumpBuilder(uint32_t pid, uint64_t flags, uint32_t magic) {
  Put(bytes_, magic);
  Put(bytes_, uint32_t{1});                   // version
  Put(bytes_, uint32_t{kJitDumpHeaderSize});  // total_size
  Put(bytes_, uint32_t{62});                  // EM_X86_64
  Put(bytes_, uint32_t{0});
  Put(bytes_, pid);
  Put(bytes_, uint64_t{1000});  // timestamp
  Put(bytes_, flags);
}

JitDumpBuilder& JitDumpBuilder::Raw(uint32_t id, uint64_t time, std::span<const std::byte> body) {
  const size_t padded = (body.size() + 7) & ~size_t{7};
  Put(bytes_, id);
  Put(bytes_, static_cast<uint32_t>(kJitRecordHeaderSize + padded));
  Put(bytes_, time);
  bytes_.insert(bytes_.end(), body.begin(), body.end());
  bytes_.resize(bytes_.size() + padded - body.size(), std::byte{0});
  return *this;
}

JitDumpBuilder& JitDumpBuilder::Load(uint64_t time, uint64_t address, std::string_view name,
                                     std::span<const std::byte> code, uint64_t code_index) {
  std::vector<std::byte> body;
  Put(body, uint32_t{4242});  // pid
  Put(body, uint32_t{4243});  // tid
  Put(body, address);         // vma
  Put(body, address);
  Put(body, uint64_t{code.size()});
  Put(body, code_index);
  PutString(body, name);
  body.insert(body.end(), code.begin(), code.end());
  return Raw(kJitCodeLoad, time, body);
}

JitDumpBuilder& JitDumpBuilder::Load(uint64_t time, uint64_t address, std::string_view name,
                                     size_t size, uint64_t code_index) {
  std::vector<std::byte> code(size, std::byte{0x90});  // nop
  return Load(time, address, name, code, code_index);
}

JitDumpBuilder& JitDumpBuilder::Move(uint64_t time, uint64_t old_address, uint64_t new_address,
                                     uint64_t size, uint64_t code_index) {
  std::vector<std::byte> body;
  Put(body, uint32_t{4242});
  Put(body, uint32_t{4243});
  Put(body, new_address);  // vma
  Put(body, old_address);
  Put(body, new_address);
  Put(body, size);
  Put(body, code_index);
  return Raw(kJitCodeMove, time, body);
}

JitDumpBuilder& JitDumpBuilder::DebugInfo(uint64_t time, uint64_t address,
                                          const std::vector<Line>& lines) {
  std::vector<std::byte> body;
  Put(body, address);
  Put(body, uint64_t{lines.size()});
  for (const Line& line : lines) {
    Put(body, line.address);
    Put(body, line.line);
    Put(body, line.discriminator);
    PutString(body, line.file);
  }
  return Raw(kJitCodeDebugInfo, time, body);
}

JitDumpBuilder& JitDumpBuilder::Close(uint64_t time) { return Raw(kJitCodeClose, time, {}); }

}  // namespace sample::testing
