#include "libsample/symbols/jit_code.h"

#include <algorithm>
#include <unordered_map>

namespace sample {

void JitCode::Add(JitDump&& dump) {
  dump_counts_ += dump.counts();
  const bool timed = (dump.header().flags & kJitDumpArchTimestamp) == 0;
  if (!timed) ++counts_.untimed_dumps;
  // code_index -> index in functions_, as the dump's loads come.
  std::unordered_map<uint64_t, size_t> by_index;
  size_t loads_done = 0;
  auto add_loads = [&](size_t until) {
    for (; loads_done < until; ++loads_done) {
      JitCodeLoad& load = dump.mutable_loads()[loads_done];
      if (load.code.empty()) {
        ++counts_.empty_loads;
        by_index.erase(load.code_index);
        continue;
      }
      JitFunction function;
      function.offset = next_offset_;
      function.address = load.code_address;
      function.code_index = load.code_index;
      function.name = std::move(load.name);
      function.code = std::move(load.code);
      function.lines = std::move(load.lines);
      function.files = std::move(load.files);
      std::stable_sort(function.lines.begin(), function.lines.end(),
                       [](const JitLine& a, const JitLine& b) { return a.address < b.address; });
      next_offset_ += function.size();
      changes_.push_back(JitCodeChange{timed ? load.time : 0, function.address, function.size(),
                                       function.offset, false, 0});
      by_index[load.code_index] = functions_.size();
      functions_.push_back(std::move(function));
    }
  };
  for (size_t i = 0; i < dump.moves().size(); ++i) {
    add_loads(dump.loads_before_move()[i]);
    const JitCodeMove& move = dump.moves()[i];
    auto it = by_index.find(move.code_index);
    if (it == by_index.end()) {
      ++counts_.unmatched_moves;
      continue;
    }
    const JitFunction& function = functions_[it->second];
    // The move's own size, no more than the code it moves.
    const uint64_t size =
        move.code_size == 0 ? function.size() : std::min(move.code_size, function.size());
    changes_.push_back(JitCodeChange{timed ? move.time : 0, move.new_address, size, function.offset,
                                     true, move.old_address});
  }
  add_loads(dump.loads().size());
}

const JitFunction* JitCode::FunctionAt(uint64_t offset) const {
  auto it = std::upper_bound(
      functions_.begin(), functions_.end(), offset,
      [](uint64_t value, const JitFunction& function) { return value < function.offset; });
  if (it == functions_.begin()) return nullptr;
  --it;
  return offset - it->offset < it->size() ? &*it : nullptr;
}

const JitLine* JitCode::LineAt(const JitFunction& function, uint64_t offset) {
  if (offset < function.offset || offset - function.offset >= function.size()) return nullptr;
  const uint64_t address = function.address + (offset - function.offset);
  auto it =
      std::upper_bound(function.lines.begin(), function.lines.end(), address,
                       [](uint64_t value, const JitLine& line) { return value < line.address; });
  if (it == function.lines.begin()) return nullptr;
  --it;
  return it->line != 0 ? &*it : nullptr;
}

}  // namespace sample
