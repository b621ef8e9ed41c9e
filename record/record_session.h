// RecordSession: one recording from start to a finalized file.
//
// Launches the command held before exec, opens one sampling event per
// online CPU on it (inherit, enable_on_exec), maps a ring buffer per CPU,
// then loops: poll all event fds and a signalfd, drain every CPU's buffer
// into the current chunk, hand full or second-old chunks to the file
// writer's thread. When the command exits or a stop signal arrives, the
// events are disabled, every buffer is drained once more and the file is
// finalized with per-CPU totals. Owns the events, the launcher and the
// writer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libsample/result.h"

namespace sample::record {

struct RecordOptions {
  std::string output = "sample.data";
  std::string event = "cycles";
  bool event_given = false;  // -e was used: no silent fallback
  uint64_t frequency = 4000;  // samples per second, when period == 0
  uint64_t period = 0;        // -c: a sample every `period` events
  bool callchain = false;     // -g: kernel frame-pointer call chains
  size_t mmap_pages = 128;    // data pages per CPU ring buffer (512 KiB)
  int zstd_level = 1;
  bool quiet = false;
  std::vector<std::string> command;
  std::vector<std::string> invocation;  // our own argv, stored in the file
};

struct RecordSummary {
  uint64_t samples = 0;
  uint64_t lost_samples = 0;
  uint64_t bytes_written = 0;
  uint64_t raw_bytes = 0;
  double seconds = 0;
  int exit_status = 0;  // the command's, shell-style (128 + signal)
};

Result<RecordSummary> RunRecording(const RecordOptions& options);

}  // namespace sample::record
