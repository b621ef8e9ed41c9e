// Text of --script, in perf script's default layout (declared in
// text_printer.h):
//   comm tid [cpu] seconds.micros: period event:
//   <tab>address symbol+0xoff (dso)      one line per frame, leaf first
// followed by an empty line; without call chains the leaf goes on the
// sample's own line.
#include <fmt/format.h>

#include "report/script_view.h"
#include "report/text_printer.h"

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
    // As perf script: the command unpadded when chains follow, else in 16.
    const std::string& comm = profile.comm(s->comm);
    out += script.callchains ? comm : fmt::format("{:>16}", comm);
    out +=
        fmt::format(" {:>5} [{:03}] {:>5}.{:06}: {:>10} {}:", s->tid, s->cpu, s->time / 1000000000u,
                    (s->time / 1000u) % 1000000u, s->period, profile.event_name(s->event));
    const auto frames = script.Frames(*s);
    if (!script.callchains) {
      out += frames.empty() ? "\n" : " " + FrameText(frames[0]) + "\n";
      continue;
    }
    out += "\n";
    for (const ScriptFrame& f : frames) out += "\t" + FrameText(f) + "\n";
    out += "\n";
  }
  return out;
}

}  // namespace sample::report
