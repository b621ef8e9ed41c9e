// The report pipeline: a sample.data file in, a symbolized Profile out.
//
// Reads every record chunk, orders records by time across CPUs, applies
// COMM/FORK/EXIT/MMAP2 to a ProcessTable so each sample resolves against the
// mappings live when it was taken, collects distinct (DSO, offset)
// locations, symbolizes each once, and builds the Profile. Problems in the
// data are counted in LoadStats, never fatal past the file header.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/profile.h"
#include "libsample/result.h"

namespace sample::report {

struct LoadStats {
  std::array<uint64_t, 32> records_by_type{};  // indexed by PERF_RECORD_* (< 32)
  uint64_t records = 0;
  uint64_t malformed_records = 0;      // too short for their fields, bad sizes
  uint64_t unknown_event_records = 0;  // id not in the event table
  uint64_t bad_chunks = 0;             // checksum or decompression failures
  uint64_t samples = 0;
  uint64_t lost_samples = 0;  // from PERF_RECORD_LOST and LOST_SAMPLES
  uint64_t frames = 0;
  uint64_t unknown_frames = 0;       // no mapping or no symbol
  uint64_t mismatched_binaries = 0;  // build-id differs from the recorded one
  uint64_t first_time = 0;
  uint64_t last_time = 0;
};

struct Recording {
  Profile profile;
  LoadStats stats;
  format::Metadata metadata;
  bool finalized = false;
  std::vector<std::string> warnings;
};

struct LoadOptions {
  // Use a binary even when its build-id differs from the recorded one.
  bool force = false;
  // Threads for decompressing and indexing chunks; 0 = one per core.
  unsigned jobs = 0;
};

Result<Recording> LoadRecording(const std::string& path, const LoadOptions& options = {});

}  // namespace sample::report
