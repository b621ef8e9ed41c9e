// --list-events: the events this machine offers, one a line on standard
// output (hardware ones only where they open), then the parametrized forms
// (uprobe:PATH:SYM ...); with a glob, the matching names alone.
#pragma once

#include <string>

namespace sample::record {

// Prints the list; the exit status (1 when a glob matches nothing, with a
// message on standard error).
int ListEvents(const std::string& glob);

}  // namespace sample::record
