// Text of --script (the layout is described in text_script.h).
#include "report/text/text_script.h"

#include <fmt/format.h>

#include "report/text/display_text.h"

namespace sample::report {
namespace {

std::string FrameText(const ScriptFrame& f) {
  std::string symbol = f.function->known ? OneLine(FunctionLabel(*f.function)) : "[unknown]";
  if (f.symbol_offset != FrameAddress::kNoOffset) symbol += fmt::format("+{:#x}", f.symbol_offset);
  return fmt::format("{:>16x} {} ({})", f.ip, symbol, OneLine(*f.dso));
}

// "# 1234.567890: sampling enabled", and the event when one was switched.
std::string SwitchText(const ScriptSwitch& s) {
  return fmt::format("# {:>5}.{:06}: sampling {}{}\n", s.time / 1000000000u,
                     (s.time / 1000u) % 1000000u, s.on ? "enabled" : "disabled",
                     s.event.empty() ? "" : " for " + OneLine(s.event));
}

}  // namespace

std::string FormatScriptText(const ScriptView& script) {
  std::string out;
  const Profile& profile = *script.profile;
  auto next_switch = script.switches.begin();
  size_t next_record = 0;
  // Kept non-sample records up to `time` (all of them with UINT64_MAX).
  auto records_until = [&](uint64_t time) {
    for (; next_record < script.sideband.size() && script.sideband[next_record].time <= time;
         ++next_record) {
      const ScriptSideband& r = script.sideband[next_record];
      out += fmt::format("{:>16} {:>5} [{:03}] {:>5}.{:06}: {}\n", OneLine(*r.comm), r.tid,
                         r.cpu, r.time / 1000000000u, (r.time / 1000u) % 1000000u,
                         OneLine(r.text));
    }
  };
  for (const ProfileSample* s : script.samples) {
    for (; next_switch != script.switches.end() && next_switch->time <= s->time; ++next_switch) {
      out += SwitchText(*next_switch);
    }
    records_until(s->time);
    const auto frames = script.Frames(*s);
    // As perf script: the command unpadded when chains follow, else in 16.
    const std::string comm = OneLine(profile.comm(s->comm));
    const std::string prefix =
        fmt::format("{} {:>5} [{:03}] {:>5}.{:06}: ",
                    script.callchains ? comm : fmt::format("{:>16}", comm), s->tid, s->cpu,
                    s->time / 1000000000u, (s->time / 1000u) % 1000000u);
    // A tracepoint's fields follow its event name, as in perf script.
    const std::string fields = OneLine(TraceFieldsText(script.TraceFields(*s)));
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
    entry(s->period, OneLine(profile.event_name(s->event)), fields);
    // A group leader's sample read its members too (-e '{a,b}:S'): each
    // member follows as a sample of its own with what it counted since the
    // leader's previous sample, at the same time and frames, as perf script
    // prints such a sample.
    for (const MemberCount& read : profile.reads(*s)) {
      entry(read.count, OneLine(profile.event_name(read.event)), std::string());
    }
  }
  for (; next_switch != script.switches.end(); ++next_switch) out += SwitchText(*next_switch);
  records_until(UINT64_MAX);
  return out;
}

}  // namespace sample::report
