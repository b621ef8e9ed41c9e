#include "report/export/gecko_export.h"

#include <charconv>
#include <iterator>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "report/export/export_threads.h"
#include "report/json/json_writer.h"

namespace sample::report {
namespace {

// The format's version these tables follow (perf's gecko script writes the
// same); the profiler upgrades older versions when it loads them.
constexpr int kGeckoVersion = 24;

// Category indexes into meta.categories.
enum Category : uint32_t { kUserCategory = 0, kKernelCategory, kJitCategory, kOtherCategory };

uint32_t CategoryOf(const ExportInput& input, uint32_t function) {
  switch (input.Kind(function)) {
    case FrameKind::kKernel:
      return kKernelCategory;
    case FrameKind::kJit:
      return kJitCategory;
    case FrameKind::kUnknown:
      return kOtherCategory;
    case FrameKind::kInlined:
      return input.profile().function(function).kernel ? kKernelCategory : kUserCategory;
    case FrameKind::kUser:
      return kUserCategory;
  }
  return kOtherCategory;
}

// One thread's tables, rows numbered in order of first use.
class ThreadTables {
 public:
  explicit ThreadTables(const ExportInput& input) : input_(input) {}

  // The stack row of a sample's (cut) stack.
  uint32_t Stack(const ProfileSample& s) {
    const std::span<const uint32_t> frames = input_.Frames(s);
    // Samples with the same interned stack share it: walk it once.
    const uint64_t key = (uint64_t{s.frames_begin} << 32) | frames.size();
    if (auto it = by_sample_stack_.find(key); it != by_sample_stack_.end()) return it->second;
    uint32_t prefix = kNone;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
      const uint64_t node = (uint64_t{prefix + 1} << 32) | Frame(*it);
      auto [found, added] = stacks_.try_emplace(node, static_cast<uint32_t>(stack_rows_.size()));
      if (added) stack_rows_.push_back({prefix, Frame(*it)});
      prefix = found->second;
    }
    by_sample_stack_.emplace(key, prefix);
    return prefix;
  }

  void Write(std::string& out) const {
    out +=
        "      \"stackTable\": {\n        \"schema\": {\"prefix\": 0, \"frame\": 1},\n"
        "        \"data\": [";
    for (size_t i = 0; i < stack_rows_.size(); ++i) {
      const auto& [prefix, frame] = stack_rows_[i];
      fmt::format_to(std::back_inserter(out), "{}[{}, {}]",
                     i == 0 ? "\n          " : ",\n          ",
                     prefix == kNone ? "null" : fmt::format("{}", prefix), frame);
    }
    out += stack_rows_.empty() ? "]\n      },\n" : "\n        ]\n      },\n";
    out +=
        "      \"frameTable\": {\n        \"schema\": {\"location\": 0, \"relevantForJS\": 1, "
        "\"innerWindowID\": 2, \"implementation\": 3, \"optimizations\": 4, \"line\": 5, "
        "\"column\": 6, \"category\": 7, \"subcategory\": 8},\n        \"data\": [";
    for (size_t i = 0; i < frame_rows_.size(); ++i) {
      const FrameRow& row = frame_rows_[i];
      fmt::format_to(std::back_inserter(out), "{}[{}, false, 0, null, null, {}, null, {}, 0]",
                     i == 0 ? "\n          " : ",\n          ", row.location,
                     row.line == 0 ? "null" : fmt::format("{}", row.line), row.category);
    }
    out += frame_rows_.empty() ? "]\n      },\n" : "\n        ]\n      },\n";
    out += "      \"stringTable\": [";
    for (size_t i = 0; i < strings_.size(); ++i) {
      out += i == 0 ? "\n        " : ",\n        ";
      out += JsonQuoted(strings_[i]);
    }
    out += strings_.empty() ? "]\n" : "\n      ]\n";
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct FrameRow {
    uint32_t location;  // into strings_
    uint32_t line;      // 0: unknown
    uint32_t category;
  };

  uint32_t Frame(uint32_t function) {
    auto [it, added] = frames_.try_emplace(function, static_cast<uint32_t>(frame_rows_.size()));
    if (!added) return it->second;
    const Profile& profile = input_.profile();
    const Function& f = profile.function(function);
    const std::string& dso = profile.dso_name(f.dso);
    const std::string label = FunctionLabel(f);
    uint32_t line = 0;
    if (f.srcline != 0) {
      const std::string& srcline = profile.srcline(f.srcline);
      const size_t colon = srcline.rfind(':');
      if (colon != std::string::npos) {
        std::from_chars(srcline.data() + colon + 1, srcline.data() + srcline.size(), line);
      }
    }
    // "name (in library)": how the profiler tells a native frame's library.
    const uint32_t location = String(dso.empty() ? label : fmt::format("{} (in {})", label, dso));
    frame_rows_.push_back({location, line, CategoryOf(input_, function)});
    return it->second;
  }

  uint32_t String(const std::string& text) {
    auto [it, added] = string_ids_.try_emplace(text, static_cast<uint32_t>(strings_.size()));
    if (added) strings_.push_back(text);
    return it->second;
  }

  const ExportInput& input_;
  std::unordered_map<uint64_t, uint32_t> by_sample_stack_;  // (frames_begin, count) -> row
  std::unordered_map<uint64_t, uint32_t> stacks_;           // (prefix + 1, frame) -> row
  std::vector<std::pair<uint32_t, uint32_t>> stack_rows_;   // (prefix or kNone, frame)
  std::unordered_map<uint32_t, uint32_t> frames_;           // function -> row
  std::vector<FrameRow> frame_rows_;
  std::unordered_map<std::string, uint32_t> string_ids_;
  std::vector<std::string> strings_;
};

void WriteThread(const ExportInput& input, const ExportThread& thread, uint64_t zero,
                 std::string& out) {
  const std::string name =
      input.sections.size() == 1
          ? thread.comm
          : fmt::format("{} ({})", thread.comm, input.sections[thread.section].name);
  fmt::format_to(std::back_inserter(out),
                 "    {{\n      \"name\": {},\n      \"processType\": \"default\",\n"
                 "      \"pid\": {},\n      \"tid\": {},\n      \"registerTime\": 0,\n"
                 "      \"unregisterTime\": null,\n",
                 JsonQuoted(name), thread.pid, thread.tid);
  out +=
      "      \"markers\": {\n        \"schema\": {\"name\": 0, \"startTime\": 1, \"endTime\": 2, "
      "\"phase\": 3, \"category\": 4, \"data\": 5},\n        \"data\": []\n      },\n";
  ThreadTables tables(input);
  out +=
      "      \"samples\": {\n        \"schema\": {\"stack\": 0, \"time\": 1, "
      "\"responsiveness\": 2},\n        \"data\": [";
  for (size_t i = 0; i < thread.samples.size(); ++i) {
    const ProfileSample& s = input.sample(thread.samples[i]);
    // ms written from integer ns: exact, and alike on every machine.
    const uint64_t ns = s.time - std::min(s.time, zero);
    fmt::format_to(std::back_inserter(out), "{}[{}, {}.{:06}, 0]",
                   i == 0 ? "\n          " : ",\n          ", tables.Stack(s), ns / 1000000,
                   ns % 1000000);
  }
  out += thread.samples.empty() ? "]\n      },\n" : "\n        ]\n      },\n";
  tables.Write(out);
  out += "    }";
}

void WriteMeta(const ExportInput& input, uint64_t zero, std::string& out) {
  const std::optional<uint64_t> realtime = RealtimeAt(input, zero);
  const std::string arch = format::FindMetadata(input.recording->metadata, "arch").value_or("");
  fmt::format_to(
      std::back_inserter(out),
      "  \"meta\": {{\n    \"version\": {},\n    \"product\": \"sample\",\n"
      "    \"startTime\": {}.{:06},\n    \"shutdownTime\": null,\n"
      "    \"interval\": {:.6f},\n    \"stackwalk\": {},\n    \"presymbolicated\": true,\n"
      "    \"processType\": 0,\n    \"platform\": \"Linux\",\n    \"oscpu\": {},\n"
      "    \"abi\": {},\n    \"misc\": \"\",\n    \"toolkit\": \"\",\n"
      "    \"debug\": 0,\n    \"gcpoison\": 0,\n    \"asyncstack\": 0,\n",
      kGeckoVersion, realtime.value_or(0) / 1000000, realtime.value_or(0) % 1000000,
      IntervalMs(input, input.sections.front().event), input.recording->callchains ? 1 : 0,
      JsonQuoted(arch.empty() ? "Linux" : "Linux " + arch), JsonQuoted(arch));
  out +=
      "    \"categories\": [\n"
      "      {\"name\": \"User\", \"color\": \"yellow\", \"subcategories\": [\"Other\"]},\n"
      "      {\"name\": \"Kernel\", \"color\": \"orange\", \"subcategories\": [\"Other\"]},\n"
      "      {\"name\": \"JIT\", \"color\": \"green\", \"subcategories\": [\"Other\"]},\n"
      "      {\"name\": \"Other\", \"color\": \"grey\", \"subcategories\": [\"Other\"]}\n"
      "    ],\n    \"markerSchema\": []\n  },\n";
}

}  // namespace

Result<std::string> GeckoExporter::Export(const ExportInput& input) {
  const std::vector<ExportThread> threads = SplitByThread(input);
  const uint64_t zero = TimelineZero(input);
  std::string out = "{\n";
  WriteMeta(input, zero, out);
  out += "  \"libs\": [],\n  \"pausedRanges\": [],\n  \"processes\": [],\n  \"threads\": [";
  for (size_t i = 0; i < threads.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    WriteThread(input, threads[i], zero, out);
  }
  out += threads.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace sample::report
