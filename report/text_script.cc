// Text of --script (the layout is described in text_script.h).
#include "report/text_script.h"

#include <fmt/format.h>

namespace sample::report {
namespace {

std::string FrameText(const ScriptFrame& f) {
  std::string symbol = f.function->known ? FunctionLabel(*f.function) : "[unknown]";
  if (f.symbol_offset != FrameAddress::kNoOffset) symbol += fmt::format("+{:#x}", f.symbol_offset);
  return fmt::format("{:>16x} {} ({})", f.ip, symbol, *f.dso);
}

}  // namespace

std::string FormatScriptText(const ScriptView& script) {
  std::string out;
  const Profile& profile = *script.profile;
  for (const ProfileSample* s : script.samples) {
    const auto frames = script.Frames(*s);
    // As perf script: the command unpadded when chains follow, else in 16.
    const std::string& comm = profile.comm(s->comm);
    const std::string prefix =
        fmt::format("{} {:>5} [{:03}] {:>5}.{:06}: ",
                    script.callchains ? comm : fmt::format("{:>16}", comm), s->tid, s->cpu,
                    s->time / 1000000000u, (s->time / 1000u) % 1000000u);
    auto entry = [&](uint64_t period, const std::string& event) {
      out += prefix + fmt::format("{:>10} {}:", period, event);
      if (!script.callchains) {
        out += frames.empty() ? "\n" : " " + FrameText(frames[0]) + "\n";
        return;
      }
      out += "\n";
      for (const ScriptFrame& f : frames) out += "\t" + FrameText(f) + "\n";
      out += "\n";
    };
    entry(s->period, profile.event_name(s->event));
    // A group leader's sample read its members too (-e '{a,b}:S'): each
    // member follows as a sample of its own with what it counted since the
    // leader's previous sample, at the same time and frames, as perf script
    // prints such a sample.
    for (const MemberCount& read : profile.reads(*s)) {
      entry(read.count, profile.event_name(read.event));
    }
  }
  return out;
}

}  // namespace sample::report
