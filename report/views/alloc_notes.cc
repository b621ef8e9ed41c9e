#include "report/views/alloc_notes.h"

#include <fmt/format.h>

#include "libsample/string_parts.h"

namespace sample::report {
namespace {

// What the recorder left out on purpose: "-c 10", "requests under 4096
// bytes"; empty when every call was recorded.
std::vector<std::string> LeftOut(const Recording& recording) {
  std::vector<std::string> out;
  if (recording.stats.alloc.scale > 1) {
    out.push_back(fmt::format("only every {}th allocation was recorded (-c), each counted {} times",
                              recording.stats.alloc.scale, recording.stats.alloc.scale));
  }
  for (size_t i = 0; i < recording.tracepoints.size() && i < recording.events.size(); ++i) {
    const std::string& filter = recording.tracepoints[i].filter;
    if (recording.events[i].name.starts_with("alloc:") && filter.starts_with("size >= ")) {
      out.push_back(fmt::format("requests under {} bytes were not recorded (--alloc-min-size)",
                                filter.substr(8)));
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> AllocSectionLines(const EventSection& section,
                                           const Recording& recording) {
  const auto& first = recording.alloc_event;
  if (!first || section.event < *first || section.event > *first + 3) return {};
  const AllocLoadStats& stats = recording.stats.alloc;
  const uint32_t kind = section.event - *first;
  const uint64_t bytes = section.flat.period, blocks = section.flat.samples * stats.scale;
  std::vector<std::string> lines;
  switch (kind) {
    case 0:
      lines.push_back(
          fmt::format("Allocated: {} bytes ({}) in {} blocks", bytes, HumanBytes(bytes), blocks));
      break;
    case 1:
      lines.push_back(fmt::format("Allocations: {}", section.flat.period));
      break;
    case 2:
      lines.push_back(
          fmt::format("Leaked: {} bytes ({}) in {} blocks, allocated while recording "
                      "and never freed",
                      bytes, HumanBytes(bytes), blocks));
      break;
    default: {
      const double at =
          stats.pairs.peak_time > recording.stats.first_time
              ? static_cast<double>(stats.pairs.peak_time - recording.stats.first_time) / 1e9
              : 0.0;
      lines.push_back(
          fmt::format("Peak: {} bytes ({}) live in {} blocks, {:.3f} s into the "
                      "recording",
                      bytes, HumanBytes(bytes), blocks, at));
    }
  }
  for (const std::string& why : LeftOut(recording)) {
    lines.push_back(
        fmt::format("Note: {}: {} estimates", why, kind >= 2 ? "leaks and peak are" : "these are"));
  }
  if (kind >= 2 && recording.stats.lost_samples != 0) {
    lines.push_back(fmt::format(
        "Warning: {} records were lost: each lost free shows its block as live, each lost "
        "allocation hides one, so up to {} blocks here may be wrong",
        recording.stats.lost_samples, recording.stats.lost_samples));
  }
  if (stats.pairs.unknown_frees != 0) {
    lines.push_back(fmt::format(
        "Note: {} frees of blocks allocated before the recording began (or not recorded) are "
        "counted apart, not as negative leaks",
        stats.pairs.unknown_frees));
  }
  if (stats.untracked != 0 && kind >= 2) {
    lines.push_back(fmt::format(
        "Note: {} posix_memalign blocks ({} bytes) are not tracked to their frees: no probe can "
        "read the pointer it stores",
        stats.untracked, stats.untracked_bytes));
  }
  return lines;
}

}  // namespace sample::report
