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
// A name (symbol, DSO, command, event) longer than kMaxScriptNameBytes
// is cut there, marked with how long it was: a crafted perf map's 1 MB
// names, printed at every frame, made gigabytes of text.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "report/views/script_view.h"

namespace sample::report {

inline constexpr size_t kMaxScriptNameBytes = 4096;

// Receives the text in pieces of whole lines (each sample's entry, each
// switch line or record), as each is formatted; false: stop, the reader
// has gone away.
using ScriptTextSink = std::function<bool(std::string_view)>;

// Writes the text to `sink` piece by piece, so that memory does not grow
// with the output; false when the sink stopped it.
bool WriteScriptText(const ScriptView& script, const ScriptTextSink& sink);

// The whole text at once (-o, JSON's neighbours, tests).
std::string FormatScriptText(const ScriptView& script);

}  // namespace sample::report
