// Synthetic perf.data files for tests and fuzz seeds (the layout is in
// formats/perf_data_format.h): file mode with its attrs, data and feature
// sections, pipe mode with the same facts as records, and perf record -z's
// compressed records. Records come from synthetic_records.h.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/synthetic_records.h"

namespace sample::testing {

struct PerfDataEvent {
  perf_event_attr attr{};
  std::string name;
  std::vector<uint64_t> ids;
};

struct PerfDataContents {
  std::vector<PerfDataEvent> events;
  // The data section: kernel records and perf's own, in order.
  std::vector<Bytes> records;
  // String features (perf_data::kHostname, kOsRelease, kVersion, kArch).
  std::map<uint32_t, std::string> strings;
  std::vector<std::string> cmdline;
  std::vector<std::pair<std::string, std::string>> build_ids;  // path, hex id
  // Features given as raw bytes, written as they are.
  std::map<uint32_t, Bytes> raw_features;
  bool event_desc = true;  // write EVENT_DESC (the events' names)
};

// file mode (perf record -o FILE); data_size_zero as a killed perf leaves it.
Bytes BuildPerfDataFile(const PerfDataContents& contents, bool data_size_zero = false);
// pipe mode (perf record -o -).
Bytes BuildPerfDataPipe(const PerfDataContents& contents);

// perf's records.
Bytes PerfFinishedRound();
// `records` as perf record -z writes them: zstd frames of `frame_bytes` of
// records each (a record may be split between frames), each frame cut into
// COMPRESSED (or COMPRESSED2) records of at most `record_payload` bytes.
std::vector<Bytes> PerfCompressed(const std::vector<Bytes>& records, size_t frame_bytes,
                                  size_t record_payload, bool compressed2 = false);
// A record of perf's of `type` with `payload` after the header (sized to
// it, not padded).
Bytes PerfUserRecord(uint32_t type, const Bytes& payload);

}  // namespace sample::testing
