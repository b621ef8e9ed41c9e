// The text of --script, in perf script's default layout:
//   comm tid [cpu] seconds.micros: period event:
//   <tab>address symbol+0xoff (dso)      one line per frame, leaf first
// followed by an empty line; without call chains the leaf goes on the
// sample's own line. A tracepoint's fields follow its event name as
// name=value pairs ("fd=1 buf=0x7ffd1234 count=512", see
// libsample/events/trace_format.h for how each kind of field is shown). A group leader's sample is
// followed by one such entry per group member, with the member's count in the period's place. Where sampling was
// switched on or off (-D, --control), a line "# seconds.micros: sampling
// enabled|disabled [for EVENT]" comes between the samples at its time.
#pragma once

#include <string>

#include "report/views/script_view.h"

namespace sample::report {

std::string FormatScriptText(const ScriptView& script);

}  // namespace sample::report
