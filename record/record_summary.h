// What a recording's end says on stderr: the closing line (samples, lost,
// bytes, where) with advice when samples were lost, and the notes of
// closing a file. The per-CPU counts are output/cpu_counters.h's.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "record/output/cpu_counters.h"
#include "libsample/string_parts.h"  // HumanBytes, for the summary's users

namespace sample::record {

struct RecordOptions;
struct RecordSummary;

struct ClosingNotes;
// The notes of closing a file: missing kernel symbols or [vdso] image,
// what was embedded, binaries and maps that could not be.
void PrintClosingNotes(const ClosingNotes& notes);

// "[ sample-record: N samples, M lost, ... ]" and, when samples were lost,
// which CPUs lost them and what to change.
void PrintSummary(const RecordSummary& summary, const std::vector<CpuCounters>& counters,
                  const std::vector<int>& cpus, const RecordOptions& options);

}  // namespace sample::record
