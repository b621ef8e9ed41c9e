// ResolveToggles: the on=/off= terms of a parsed -e list resolved to the
// events they name (EventSpec::toggles), with the checks a user needs at
// record time. Split from event_spec.cc, which calls it once the whole
// list is parsed.
#pragma once

#include <vector>

#include "libsample/events/event_spec.h"
#include "libsample/result.h"

namespace sample {

// Fills toggles, toggled and starts_on of `specs`; an error names the
// event and what is wrong (an unknown name lists the list's events).
Result<void> ResolveToggles(std::vector<EventSpec>* specs);

}  // namespace sample
