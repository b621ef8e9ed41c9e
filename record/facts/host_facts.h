// Facts about the recording host and session that travel in the file's
// metadata chunk (see formats/sample_file_format.h for the keys).
#pragma once

#include <string>
#include <vector>

#include "formats/chunk_codec.h"

namespace sample::record {

format::Metadata CollectHostFacts(const std::vector<std::string>& command_line);

// The perf clock (CLOCK_MONOTONIC-based local clock) now, in ns.
uint64_t MonotonicNowNs();

}  // namespace sample::record
