// JitDumpSymbolSource: names the JIT code a jitdump described, in the
// pseudo-DSO "[jitted-PID]" of its process (JitTimeline lays the code out):
// an offset is in the function whose code load holds it, named as the JIT
// named it, with the source line of its debug-info record when asked for.
// The offsets are those of the pseudo-DSO, so (DSO, offset) also finds the
// function's code bytes (JitCode::FunctionAt). Reads `code`, which must
// outlive the source.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "libsample/symbols/jit_code.h"
#include "report/load/symbol_sources.h"

namespace sample::report {

class JitDumpSymbolSource final : public SymbolSource {
 public:
  // `origin`: where the dump came from ("embedded jitdump").
  JitDumpSymbolSource(const JitCode& code, const std::string& origin, bool srclines);
  std::vector<std::vector<ResolvedFrame>> Symbolize(std::span<const uint64_t> offsets) override;
  const SourceFacts& facts() const override { return facts_; }

 private:
  std::vector<ResolvedFrame> FramesAt(uint64_t offset) const;

  const JitCode& code_;
  SourceFacts facts_;
  bool srclines_ = false;
};

}  // namespace sample::report
