#include "report/load/jit_timeline.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

namespace sample::report {

std::string JitDumpDsoPath(uint32_t pid) { return fmt::format("[jitted-{}]", pid); }

bool IsJitDumpDsoPath(std::string_view path) {
  return path.starts_with("[jitted-") && path.ends_with("]");
}

JitTimeline::JitTimeline(std::span<const RecordedJitDump> dumps, ProcessTable& processes) {
  std::map<uint32_t, std::shared_ptr<JitCode>> by_pid;
  for (const RecordedJitDump& recorded : dumps) {
    auto dump = JitDump::Parse(recorded.bytes, fmt::format("jitdump of pid {}", recorded.pid));
    if (!dump) {
      warnings_.push_back(dump.error().message);
      continue;
    }
    ++stats_.dumps;
    stats_.torn_dumps += dump->counts().torn;
    auto& code = by_pid[recorded.pid];
    if (!code) code = std::make_shared<JitCode>();
    const size_t changes_before = code->changes().size();
    code->Add(std::move(*dump));
    const uint32_t dso = processes.InternDso(JitDumpDsoPath(recorded.pid));
    for (size_t i = changes_before; i < code->changes().size(); ++i) {
      const JitCodeChange& change = code->changes()[i];
      changes_.push_back(Change{change.time, recorded.pid, dso, change});
    }
  }
  for (auto& [pid, code] : by_pid) {
    stats_.functions += code->functions().size();
    stats_.records += code->dump_counts();
    const JitCodeCounts& counts = code->counts();
    stats_.code.empty_loads += counts.empty_loads;
    stats_.code.unmatched_moves += counts.unmatched_moves;
    stats_.code.untimed_dumps += counts.untimed_dumps;
    code_.emplace(JitDumpDsoPath(pid), std::move(code));
  }
  // Time order, each dump's file order among equal times.
  std::stable_sort(changes_.begin(), changes_.end(),
                   [](const Change& a, const Change& b) { return a.time < b.time; });
}

void JitTimeline::ApplyUntil(uint64_t time, ProcessTable& processes,
                             const std::function<void(uint32_t)>& before_change) {
  for (; Due(time); ++next_) {
    const Change& c = changes_[next_];
    before_change(c.pid);
    if (c.change.moved) processes.RemoveJitCode(c.pid, c.change.old_address, c.change.size);
    processes.ApplyJitCode(c.pid, c.change.address, c.change.size, c.dso, c.change.offset);
  }
}

}  // namespace sample::report
