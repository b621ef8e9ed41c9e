#include "libsample/symbols/function_code.h"

#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "libsample/mapped_file.h"
#include "libsample/regular_file.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/embedded_binary.h"
#include "libsample/symbols/function_names.h"
#include "libsample/symbols/jit_code.h"
#include "libsample/symbols/symbol_embedding.h"

namespace sample {

std::string NameWithOffset(const std::string& name, uint64_t offset) {
  // C++ names as the report prints them, without their parameter lists.
  const std::string shown = WithoutParameters(name);
  return offset == 0 ? shown : fmt::format("{}+{:#x}", shown, offset);
}

namespace {

class BinaryCode final : public CodeSource {
 public:
  BinaryCode(BinarySymbolizer symbolizer, MappedFile file, NamingFile binary,
             std::string display_name)
      : symbolizer_(std::move(symbolizer)),
        file_(std::move(file)),
        binary_(std::move(binary)),
        display_name_(std::move(display_name)) {}

  Result<FunctionCode> FunctionAt(uint64_t file_offset) override {
    const ElfSymbols& elf = symbolizer_.elf_symbols();
    const auto vaddr = elf.FileOffsetToVaddr(file_offset);
    if (!vaddr) return Fail(fmt::format("offset {:#x} is in no loaded segment", file_offset));
    FunctionCode code;
    uint64_t end = 0;
    if (const ElfSymbol* symbol = elf.Find(*vaddr, &end)) {
      code.name = symbolizer_.SymbolName(*symbol);
      code.start = symbol->start;
      code.end = end;
    } else if (const auto range = symbolizer_.CfiFunctionRange(*vaddr)) {
      code.name = fmt::format("{}+{:#x}", display_name_, range->start);
      code.start = range->start;
      code.end = range->end;
    } else {
      return Fail(fmt::format("no symbol or call-frame information covers {:#x}", *vaddr));
    }
    const auto start_offset = elf.VaddrToFileOffset(code.start);
    const std::span<const std::byte> bytes = file_.bytes();
    if (!start_offset || *start_offset >= bytes.size()) {
      code.missing_code = "the function's bytes are not in the file";
      return code;
    }
    code.file_offset_delta = *start_offset - code.start;
    const uint64_t size = std::min<uint64_t>(code.end - code.start, bytes.size() - *start_offset);
    code.bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(*start_offset),
                      bytes.begin() + static_cast<std::ptrdiff_t>(*start_offset + size));
    code.i386 = bytes.size() > EI_CLASS && bytes[EI_CLASS] == std::byte{ELFCLASS32};
    return code;
  }

  std::vector<AddressFrame> FramesAt(uint64_t address) override {
    const auto offset = symbolizer_.elf_symbols().VaddrToFileOffset(address);
    if (!offset) return {};
    return FramesAtFileOffset(symbolizer_, *offset, display_name_);
  }

  std::string NameOf(uint64_t address) override {
    const ElfSymbol* symbol = symbolizer_.elf_symbols().Find(address);
    return symbol ? NameWithOffset(symbolizer_.SymbolName(*symbol), address - symbol->start)
                  : std::string();
  }

  std::string origin() const override { return "the binary"; }

  std::vector<NamingFile> NamingFiles() const override {
    std::vector<NamingFile> files = {binary_};
    const int dwarf = symbolizer_.dwarf_fd();
    if (dwarf < 0) return files;
    NamingFile file{symbolizer_.dwarf_path(), {}};
    // Unknown: as a file anyone may write.
    if (fstat(dwarf, &file.st) != 0) file.st.st_mode = S_IFREG | 0666;
    files.push_back(std::move(file));
    return files;
  }

 private:
  BinarySymbolizer symbolizer_;
  MappedFile file_;
  NamingFile binary_;  // the file mapped as file_
  std::string display_name_;
};

class EmbeddedCodeSource final : public CodeSource {
 public:
  explicit EmbeddedCodeSource(const EmbeddedBinary& binary) : binary_(binary) {}

  Result<FunctionCode> FunctionAt(uint64_t file_offset) override {
    const auto vaddr = binary_.FileOffsetToVaddr(file_offset);
    if (!vaddr) return Fail(fmt::format("offset {:#x} is in no loaded segment", file_offset));
    const EmbeddedFunction* function = binary_.FunctionAt(*vaddr);
    if (function == nullptr) {
      return Fail(fmt::format("the recording names no function at {:#x}", *vaddr));
    }
    FunctionCode code;
    code.name = function->name;
    code.start = function->start;
    code.end = function->start + function->size;
    code.file_offset_delta = file_offset - *vaddr;
    // No recorder embeds the code of a larger function (EmbeddingLimits):
    // what a recording claims beyond that it does not honestly hold.
    if (function->size > EmbeddingLimits{}.max_function_code) {
      code.missing_code = fmt::format(
          "the recording claims {} bytes of code for it, more than a recording embeds of a "
          "function ({} KiB)",
          function->size, EmbeddingLimits{}.max_function_code >> 10);
      return code;
    }
    // The recorder stores each function's code whole, or not at all.
    const auto it = std::ranges::find_if(binary_.code, [&](const EmbeddedCode& c) {
      return c.vaddr <= code.start && code.start - c.vaddr < c.bytes.size();
    });
    if (it == binary_.code.end()) {
      code.missing_code =
          "the recording holds no code of it (left out when recorded: under one sample in a "
          "thousand, or over the size bounds)";
      return code;
    }
    const uint64_t from = code.start - it->vaddr;
    const uint64_t size = std::min<uint64_t>(code.end - code.start, it->bytes.size() - from);
    code.bytes.assign(it->bytes.begin() + static_cast<std::ptrdiff_t>(from),
                      it->bytes.begin() + static_cast<std::ptrdiff_t>(from + size));
    return code;
  }

  std::vector<AddressFrame> FramesAt(uint64_t address) override {
    // Stored for the hit addresses only (as lookup offsets).
    for (const EmbeddedSegment& segment : binary_.segments) {
      if (address >= segment.vaddr && address - segment.vaddr < segment.filesz) {
        const auto* frames = binary_.FramesAt(address - segment.vaddr + segment.offset);
        return frames ? *frames : std::vector<AddressFrame>{};
      }
    }
    return {};
  }

  std::string NameOf(uint64_t address) override {
    const EmbeddedFunction* function = binary_.FunctionAt(address);
    return function ? NameWithOffset(function->name, address - function->start) : std::string();
  }

  std::string origin() const override { return "the recording (embedded)"; }

 private:
  const EmbeddedBinary& binary_;
};

class JitCodeSource final : public CodeSource {
 public:
  explicit JitCodeSource(const JitCode& code) : code_(code) {}

  Result<FunctionCode> FunctionAt(uint64_t offset) override {
    const JitFunction* function = code_.FunctionAt(offset);
    if (function == nullptr) return Fail(fmt::format("no JIT code at offset {:#x}", offset));
    FunctionCode code;
    code.name = function->name;
    code.start = function->offset;
    code.end = function->offset + function->size();
    code.bytes = function->code;
    if (code.bytes.empty()) code.missing_code = "the jitdump holds no code of it";
    return code;
  }

  std::vector<AddressFrame> FramesAt(uint64_t offset) override {
    const JitFunction* function = code_.FunctionAt(offset);
    if (function == nullptr) return {};
    AddressFrame frame{function->name, "", 0, false, offset - function->offset};
    if (const JitLine* line = JitCode::LineAt(*function, offset)) {
      frame.file = function->FileOf(*line);
      frame.line = line->line;
    }
    return {frame};
  }

  std::string NameOf(uint64_t offset) override {
    const JitFunction* function = code_.FunctionAt(offset);
    return function ? NameWithOffset(function->name, offset - function->offset) : std::string();
  }

  std::string origin() const override { return "jitdump"; }

 private:
  const JitCode& code_;
};

}  // namespace

Result<std::unique_ptr<CodeSource>> OpenBinaryCode(const std::string& binary_path,
                                                   const std::string& debug_path,
                                                   const std::string& display_name) {
  TRY_ASSIGN(auto symbolizer, BinarySymbolizer::Open(binary_path, debug_path));
  // Mapped through the descriptor whose owner NamingFiles reports.
  auto fd = OpenRegularFile(binary_path);
  if (!fd) return Fail(fmt::format("cannot read {}", fd.error().message));
  struct stat st {};
  if (fstat(fd->get(), &st) != 0) {
    return Fail(fmt::format("{}: fstat: {}", binary_path, strerror(errno)));
  }
  TRY_ASSIGN(auto file, MappedFile::Map(fd->get(), binary_path));
  return std::unique_ptr<CodeSource>(std::make_unique<BinaryCode>(
      std::move(symbolizer), std::move(file), NamingFile{binary_path, st}, display_name));
}

std::unique_ptr<CodeSource> OpenEmbeddedCode(const EmbeddedBinary& binary) {
  return std::make_unique<EmbeddedCodeSource>(binary);
}

std::unique_ptr<CodeSource> OpenJitCode(const JitCode& code) {
  return std::make_unique<JitCodeSource>(code);
}

}  // namespace sample
