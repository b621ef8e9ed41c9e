#include "libsample/unwind/binary_rules.h"

#include <cerrno>

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
      auto binary = std::make_unique<Binary>();
      binary->binary = module.binary;
      binary->debug = module.debug;
      if (auto rows = CfiRows::Open(module.binary, module.debug)) {
        binary->rows.emplace(std::move(*rows));
      } else if (rows.error().sys_errno == EMFILE || rows.error().sys_errno == ENFILE) {
        // Out of descriptors for now, not a file without CFI: not kept.
        static const X86FrameRule kNone;
        last_ = nullptr;
        return kNone;
      }
      // Full: one goes (whichever), not all (each would be reopened).
      if (binaries_.size() >= kMaxBinaries) binaries_.erase(binaries_.begin());
      found = binaries_.emplace(std::move(key), std::move(binary)).first;
    }
    last_ = found->second.get();
  }
  Binary& binary = *last_;
  // Samples repeat their pcs (and return addresses): a direct-mapped memo
  // by pc first, with no tree or hash walk.
  Binary::Memo& memo = binary.memo[(vaddr ^ (vaddr >> 12)) % binary.memo.size()];
  if (memo.rule != nullptr && memo.vaddr == vaddr) return *memo.rule;
  memo.vaddr = vaddr;
  memo.rule = &Lookup(binary, vaddr);
  return *memo.rule;
}

const X86FrameRule& BinaryRules::Lookup(Binary& binary, uint64_t vaddr) {
  // An .eh_frame row holds for its whole range: one lookup serves every pc
  // in it. (A .debug_frame row's range may hold pcs .eh_frame covers: those
  // are kept by pc.)
  if (auto next = binary.eh_rows.upper_bound(vaddr); next != binary.eh_rows.begin()) {
    const CfiRow& row = std::prev(next)->second;
    if (vaddr < row.end) return row.rule;
  }
  auto [rule, inserted] = binary.rules.try_emplace(vaddr);
  if (!inserted || !binary.rows) return rule->second;
  CfiSource source = CfiSource::kEhFrame;
  const std::optional<CfiRow> row = binary.rows->RowAt(vaddr, &source);
  if (!row) return rule->second;
  if (source == CfiSource::kEhFrame && row->start <= vaddr && vaddr < row->end) {
    binary.rules.erase(rule);
    return binary.eh_rows.insert_or_assign(row->start, *row).first->second.rule;
  }
  rule->second = row->rule;
  return rule->second;
}

}  // namespace sample
