// Text of --script (the layout is described in text_script.h).
#include "report/text/text_script.h"

#include <fmt/format.h>

#include "report/text/display_text.h"

namespace sample::report {
namespace {

// A name as one line, cut at kMaxScriptNameBytes (at a character's
// start, so the cut leaves valid UTF-8 valid) with how long it was.
std::string ScriptName(std::string_view name) {
  if (name.size() <= kMaxScriptNameBytes) return OneLine(name);
  size_t cut = kMaxScriptNameBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xc0) == 0x80) --cut;
  return fmt::format("{}[... cut at {} of {} bytes]", OneLine(name.substr(0, cut)), cut,
                     name.size());
}

std::string FrameText(const ScriptFrame& f) {
  std::string symbol = f.function->known ? ScriptName(FunctionLabel(*f.function)) : "[unknown]";
  if (f.symbol_offset != FrameAddress::kNoOffset) symbol += fmt::format("+{:#x}", f.symbol_offset);
  return fmt::format("{:>16x} {} ({})", f.ip, symbol, ScriptName(*f.dso));
}

// "# 1234.567890: sampling enabled", and the event when one was switched.
std::string SwitchText(const ScriptSwitch& s) {
  return fmt::format("# {:>5}.{:06}: sampling {}{}\n", s.time / 1000000000u,
                     (s.time / 1000u) % 1000000u, s.on ? "enabled" : "disabled",
                     s.event.empty() ? "" : " for " + ScriptName(s.event));
}

std::string RecordText(const ScriptSideband& r) {
  return fmt::format("{:>16} {:>5} [{:03}] {:>5}.{:06}: {}\n", ScriptName(*r.comm), r.tid, r.cpu,
                     r.time / 1000000000u, (r.time / 1000u) % 1000000u, ScriptName(r.text));
}

// One sample's entry, and its group members' (a group leader's sample read
// its members too, -e '{a,b}:S': each member follows as a sample of its
// own with what it counted since the leader's previous sample, at the same
// time and frames, as perf script prints such a sample).
std::string SampleText(const ScriptView& script, const ProfileSample& s) {
  const Profile& profile = *script.profile;
  std::string out;
  const auto frames = script.Frames(s);
  // As perf script: the command unpadded when chains follow, else in 16.
  const std::string comm = ScriptName(profile.comm(s.comm));
  const std::string prefix = fmt::format(
      "{} {:>5} [{:03}] {:>5}.{:06}: ", script.callchains ? comm : fmt::format("{:>16}", comm),
      s.tid, s.cpu, s.time / 1000000000u, (s.time / 1000u) % 1000000u);
  // A tracepoint's fields follow its event name, as in perf script.
  const std::string fields = OneLine(TraceFieldsText(script.TraceFields(s)));
  auto entry = [&](uint64_t period, const std::string& event, const std::string& values) {
    out += prefix + fmt::format("{:>10} {}:", period, event);
    if (!values.empty()) out += " " + values;
    if (!script.callchains) {
      out += frames.empty() ? "\n" : " " + FrameText(frames[0]) + "\n";
      return;
    }
    out += "\n";
    for (const ScriptFrame& f : frames) out += "\t" + FrameText(f) + "\n";
    out += "\n";
  };
  entry(s.period, ScriptName(profile.event_name(s.event)), fields);
  for (const MemberCount& read : profile.reads(s)) {
    entry(read.count, ScriptName(profile.event_name(read.event)), std::string());
  }
  return out;
}

}  // namespace

bool WriteScriptText(const ScriptView& script, const ScriptTextSink& sink) {
  auto next_switch = script.switches.begin();
  size_t next_record = 0;
  // Kept non-sample records up to `time` (all of them with UINT64_MAX),
  // and switches up to it.
  auto records_until = [&](uint64_t time) {
    for (; next_record < script.sideband.size() && script.sideband[next_record].time <= time;
         ++next_record) {
      if (!sink(RecordText(script.sideband[next_record]))) return false;
    }
    return true;
  };
  auto switches_until = [&](uint64_t time) {
    for (; next_switch != script.switches.end() && next_switch->time <= time; ++next_switch) {
      if (!sink(SwitchText(*next_switch))) return false;
    }
    return true;
  };
  for (const ProfileSample* s : script.samples) {
    if (!switches_until(s->time) || !records_until(s->time)) return false;
    if (!sink(SampleText(script, *s))) return false;
  }
  return switches_until(UINT64_MAX) && records_until(UINT64_MAX);
}

std::string FormatScriptText(const ScriptView& script) {
  std::string out;
  WriteScriptText(script, [&](std::string_view text) {
    out += text;
    return true;
  });
  return out;
}

}  // namespace sample::report
