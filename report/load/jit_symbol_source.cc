#include "report/load/jit_symbol_source.h"

#include <fmt/format.h>

#include "libsample/string_parts.h"

namespace sample::report {

JitDumpSymbolSource::JitDumpSymbolSource(const JitCode& code, const std::string& origin,
                                         bool srclines)
    : code_(code), srclines_(srclines) {
  const size_t functions = code.functions().size();
  facts_.source = fmt::format("{} ({} function{})", origin, functions, functions == 1 ? "" : "s");
}

std::vector<std::vector<ResolvedFrame>> JitDumpSymbolSource::Symbolize(
    std::span<const uint64_t> offsets) {
  std::vector<std::vector<ResolvedFrame>> out;
  out.reserve(offsets.size());
  for (uint64_t offset : offsets) out.push_back(FramesAt(offset));
  return out;
}

std::vector<ResolvedFrame> JitDumpSymbolSource::FramesAt(uint64_t offset) const {
  const JitFunction* function = code_.FunctionAt(offset);
  if (function == nullptr) return {UnknownFrame(offset)};
  ResolvedFrame frame;
  frame.name =
      function->name.empty() ? fmt::format("[jit] {:#x}", function->address) : function->name;
  frame.symbol_offset = offset - function->offset;
  if (srclines_) {
    if (const JitLine* line = JitCode::LineAt(*function, offset); line) {
      const std::string& file = function->FileOf(*line);
      if (!file.empty()) frame.srcline = fmt::format("{}:{}", Basename(file), line->line);
    }
  }
  return {std::move(frame)};
}

}  // namespace sample::report
