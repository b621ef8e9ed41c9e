#include "report/export/export_threads.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>

#include <linux/perf_event.h>

namespace sample::report {
namespace {

std::optional<uint64_t> NumberFact(const ExportInput& input, std::string_view key) {
  const std::optional<std::string> text = format::FindMetadata(input.recording->metadata, key);
  if (!text || text->empty()) return std::nullopt;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<ExportThread> SplitByThread(const ExportInput& input) {
  // Keyed by (section, pid, tid): std::map gives the sorted order.
  std::map<std::tuple<size_t, uint32_t, uint32_t>, ExportThread> threads;
  for (size_t section = 0; section < input.sections.size(); ++section) {
    for (uint32_t index : input.sections[section].samples) {
      const ProfileSample& s = input.sample(index);
      ExportThread& thread = threads[{section, s.pid, s.tid}];
      if (thread.samples.empty()) {
        thread.section = section;
        thread.pid = s.pid;
        thread.tid = s.tid;
      }
      thread.samples.push_back(index);
    }
  }
  std::vector<ExportThread> out;
  out.reserve(threads.size());
  for (auto& [key, thread] : threads) {
    // Samples arrive in time order from the loader; sort only if that
    // promise is ever broken (a timeline must not run backwards).
    auto by_time = [&](uint32_t a, uint32_t b) {
      return input.sample(a).time < input.sample(b).time;
    };
    if (!std::is_sorted(thread.samples.begin(), thread.samples.end(), by_time)) {
      std::stable_sort(thread.samples.begin(), thread.samples.end(), by_time);
    }
    thread.comm = input.profile().comm(input.sample(thread.samples.back()).comm);
    out.push_back(std::move(thread));
  }
  return out;
}

uint64_t TimelineZero(const ExportInput& input) {
  std::optional<uint64_t> earliest;
  for (const ExportSection& section : input.sections) {
    for (uint32_t index : section.samples) {
      const uint64_t time = input.sample(index).time;
      if (!earliest || time < *earliest) earliest = time;
    }
  }
  const std::optional<uint64_t> start = NumberFact(input, "start_clock_ns");
  if (start && (!earliest || *start <= *earliest)) return *start;
  return earliest.value_or(0);
}

std::optional<uint64_t> RealtimeAt(const ExportInput& input, uint64_t clock_ns) {
  const std::optional<uint64_t> realtime = NumberFact(input, "start_realtime_ns");
  const std::optional<uint64_t> clock = NumberFact(input, "start_clock_ns");
  if (!realtime || !clock) return std::nullopt;
  if (clock_ns >= *clock) return *realtime + (clock_ns - *clock);
  const uint64_t before = *clock - clock_ns;
  return before <= *realtime ? std::optional<uint64_t>(*realtime - before) : std::nullopt;
}

bool CountsTime(const ExportInput& input, uint32_t event) {
  const std::vector<EventDesc>& events = input.recording->events;
  if (event >= events.size()) return false;
  const perf_event_attr& attr = events[event].attr;
  return attr.type == PERF_TYPE_SOFTWARE &&
         (attr.config == PERF_COUNT_SW_CPU_CLOCK || attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

double IntervalMs(const ExportInput& input, uint32_t event) {
  const std::vector<EventDesc>& events = input.recording->events;
  if (event >= events.size()) return 1;
  const perf_event_attr& attr = events[event].attr;
  if (attr.freq && attr.sample_freq != 0) return 1000.0 / static_cast<double>(attr.sample_freq);
  if (!attr.freq && attr.sample_period != 0 && CountsTime(input, event)) {
    return static_cast<double>(attr.sample_period) / 1e6;
  }
  return 1;
}

}  // namespace sample::report
