#include "libsample/unwind/binary_rules.h"

namespace sample {

const X86FrameRule& BinaryRules::RuleAt(const UnwindModule& module, uint64_t vaddr) {
  // Steps mostly stay in one binary: the last one is checked first, with
  // no key to build.
  if (last_ == nullptr || last_->binary != module.binary || last_->debug != module.debug) {
    std::string key = module.binary;
    key.push_back('\0');
    key += module.debug;
    auto found = binaries_.find(key);
    if (found == binaries_.end()) {
      if (binaries_.size() >= kMaxBinaries) binaries_.clear();
      auto binary = std::make_unique<Binary>();
      binary->binary = module.binary;
      binary->debug = module.debug;
      if (auto rows = CfiRows::Open(module.binary, module.debug)) {
        binary->rows.emplace(std::move(*rows));
      }
      found = binaries_.emplace(std::move(key), std::move(binary)).first;
    }
    last_ = found->second.get();
  }
  Binary& binary = *last_;
  auto [rule, inserted] = binary.rules.try_emplace(vaddr);
  if (inserted && binary.rows) {
    if (const std::optional<CfiRow> row = binary.rows->RowAt(vaddr)) rule->second = row->rule;
  }
  return rule->second;
}

}  // namespace sample
