// The text of --script, in perf script's default layout:
//   comm tid [cpu] seconds.micros: period event:
//   <tab>address symbol+0xoff (dso)      one line per frame, leaf first
// followed by an empty line; without call chains the leaf goes on the
// sample's own line. A group leader's sample is followed by one such entry
// per group member, with the member's count in the period's place.
#pragma once

#include <string>

#include "report/script_view.h"

namespace sample::report {

std::string FormatScriptText(const ScriptView& script);

}  // namespace sample::report
