#include "report/views/script_view.h"

#include <algorithm>

#include <fmt/format.h>

#include "libsample/perf/perf_record.h"
#include "libsample/perf/perf_names.h"

namespace sample::report {

namespace {

// A string from the file, safe for a terminal.
std::string Printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

std::string DescribeSwitch(const SwitchRecord& s) {
  std::string text = s.cpu_wide ? "PERF_RECORD_SWITCH_CPU_WIDE" : "PERF_RECORD_SWITCH";
  text += s.out ? (s.preempted ? " OUT preempt" : " OUT        ") : " IN         ";
  if (s.cpu_wide) {
    text +=
        fmt::format(" {} pid/tid: {:>5}/{:<5}", s.out ? "next" : "prev", s.other_pid, s.other_tid);
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

std::string DescribeRecord(std::span<const std::byte> record, const perf_event_attr& attr) {
  const uint32_t type = ReadRecordHeader(record).type;
  const std::string name = "PERF_RECORD_" + RecordTypeName(type);
  switch (type) {
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE:
      if (const auto s = ParseSwitch(record, attr)) return DescribeSwitch(*s);
      break;
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
      if (const auto t = ParseThrottle(record, attr)) {
        return fmt::format("{} time: {} id: {} stream_id: {}", name, t->time, t->id, t->stream_id);
      }
      break;
    case PERF_RECORD_COMM:
      if (const auto c = ParseComm(record, attr)) {
        return fmt::format("{}{}: {}:{}/{}", name, c->exec ? " exec" : "", Printable(c->comm),
                           c->pid, c->tid);
      }
      break;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
      if (const auto t = ParseTask(record, attr)) {
        return fmt::format("{}({}:{}):({}:{})", name, t->pid, t->tid, t->ppid, t->ptid);
      }
      break;
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2:
      if (const auto m = type == PERF_RECORD_MMAP ? ParseMmap(record, attr)
                                                  : ParseMmap2(record, attr)) {
        return fmt::format("{} {}/{}: [{:#x}({:#x}) @ {:#x}]: {}{}{} {}", name, m->pid, m->tid,
                           m->addr, m->len, m->pgoff, (m->prot & 1) ? 'r' : '-',
                           (m->prot & 2) ? 'w' : '-', (m->prot & 4) ? 'x' : '-',
                           Printable(m->filename));
      }
      break;
    case PERF_RECORD_LOST:
      if (const auto l = ParseLost(record, attr)) return fmt::format("{} lost: {}", name, l->lost);
      break;
    case PERF_RECORD_LOST_SAMPLES:
      if (const auto l = ParseLostSamples(record, attr)) {
        return fmt::format("{} lost: {}", name, l->lost);
      }
      break;
    default:
      break;
  }
  return name;
}

std::vector<ScriptFrame> ScriptView::Frames(const ProfileSample& sample) const {
  const auto functions = profile->frames(sample);
  const auto addresses = profile->addresses(sample);
  size_t count = functions.size();
  if (max_stack != 0) count = std::min(count, max_stack);
  std::vector<ScriptFrame> frames;
  frames.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    ScriptFrame f;
    f.ip = addresses[i].ip;
    f.function = &profile->function(functions[i]);
    f.symbol_offset = f.function->known ? addresses[i].symbol_offset : FrameAddress::kNoOffset;
    f.dso = &profile->dso_name(f.function->dso);
    frames.push_back(f);
  }
  return frames;
}

std::vector<TraceValue> ScriptView::TraceFields(const ProfileSample& sample) const {
  if (tracepoints == nullptr || sample.event >= tracepoints->size()) return {};
  const std::optional<TraceFormat>& format = (*tracepoints)[sample.event].format;
  if (!format) return {};
  return DecodeTraceFields(*format, profile->raw(sample));
}

ScriptView BuildScriptView(const Recording& recording, const SampleFilter& filter,
                           size_t max_stack) {
  ScriptView view;
  view.profile = &recording.profile;
  view.max_stack = max_stack;
  view.callchains = recording.callchains;
  view.tracepoints = &recording.tracepoints;
  for (const ProfileSample& s : recording.profile.samples()) {
    if (filter.Keeps(recording.profile, s)) view.samples.push_back(&s);
  }
  const std::vector<EventDesc>& events = recording.events;
  for (const KeptRecord& kept : recording.sideband) {
    if (kept.event >= events.size()) continue;
    const perf_event_attr& attr = events[kept.event].attr;
    const auto id = ParseSampleIdTrailer(kept.bytes, attr);
    ScriptSideband entry;
    entry.time = kept.time;
    entry.tid = id ? id->tid : 0;
    entry.cpu = id ? id->cpu : 0;
    entry.comm = &kept.comm;
    entry.text = DescribeRecord(kept.bytes, attr);
    view.sideband.push_back(std::move(entry));
  }
  // Samples were added in time order; keep equal times as recorded.
  std::stable_sort(
      view.samples.begin(), view.samples.end(),
      [](const ProfileSample* a, const ProfileSample* b) { return a->time < b->time; });
  for (const format::ControlEntry& e : recording.control) {
    ScriptSwitch s;
    s.time = e.time_ns;
    s.on = e.action == format::kControlEnable;
    if (e.event != format::kControlAllEvents) {
      s.event = e.event < recording.events.size() ? recording.events[e.event].name
                                                  : "event " + std::to_string(e.event);
    }
    view.switches.push_back(std::move(s));
  }
  std::stable_sort(view.switches.begin(), view.switches.end(),
                   [](const ScriptSwitch& a, const ScriptSwitch& b) { return a.time < b.time; });
  return view;
}

}  // namespace sample::report
