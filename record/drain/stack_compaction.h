// Stack compaction: the recorder keeps only the live part of each user
// stack copy (PERF_SAMPLE_STACK_USER's dyn_size) as it drains a ring.
//
// The kernel reserves the whole requested copy (8 KiB by default) for every
// sample but fills only the part between the stack pointer and the top of
// the stack, often a few hundred bytes. Copying the records out of the ring
// whole and shrinking them afterwards moved every reserved byte twice; at
// 50 kHz that was most of the drain's time, and a slow drain is a lost
// sample. Here each record is read where the kernel wrote it and only what
// is kept is copied.
//
// For fp,leaf (-g) the copy is cut further, after the slot holding the
// chain's first user caller, where the report's CFI steps stop reading
// (LeafCopyEnd in the .cc says when it is kept whole).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "libsample/perf/event_table.h"

namespace sample::record {

// Appends the records in `first` then `second` (one stream, as a ring
// buffer holds them: a record may start in one and end in the other) to
// `out`, each user stack copy cut to its live part, rounded up to 8 as the
// kernel's sizes are. The records stay valid for any reader of
// PERF_SAMPLE_STACK_USER: the copy's size field says the new size, and
// dyn_size is never above it. Records it cannot parse, and anything after
// a malformed header, go on unchanged. `host_max_stack`:
// kernel.perf_event_max_stack, the chain limit of events without
// sample_max_stack (a chain that long was cut, and its copy is kept whole).
// Returns the bytes appended.
size_t AppendCompactingStacks(std::span<const std::byte> first, std::span<const std::byte> second,
                              const EventTable& table, uint32_t host_max_stack,
                              std::vector<std::byte>& out);

}  // namespace sample::record
