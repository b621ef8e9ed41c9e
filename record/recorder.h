// RunRecording: one recording from start to its end in a sink (the
// Recorder class in recorder.cc does it).
//
// Resolves the target (a command held before exec, running processes or
// threads, or whole CPUs), opens one sampling event per (thread, CPU) with
// one ring buffer per CPU (other events on that CPU write into it through
// PERF_EVENT_IOC_SET_OUTPUT), describes already-running targets from /proc,
// then loops (record/recording_loop.h, one handler per source): poll the
// event fds, a signalfd, the --control FIFO and the in-process control
// channel (record/control/: enable and disable commands switch the
// sampling events, each switch written as a kControl chunk), drain every
// CPU's buffer into the current chunk, hand full or half-second-old chunks
// to the sink (record/output/record_sink.h: the file, the flight
// recorder's memory, rotating files or sample-top's feed). When the
// command or the attached processes exit, the duration ends or a stop
// signal arrives, the events are disabled, every buffer is drained once
// more and the sink finishes with per-CPU totals, build-ids and the kernel
// symbols that samples hit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/events/event_filter.h"
#include "libsample/perf/chain_capture.h"
#include "libsample/perf/event_table.h"
#include "libsample/result.h"
#include "record/alloc/alloc_probes.h"
#include "record/control/control_channel.h"
#include "record/output/record_sink.h"
#include "record/output/rotating_output.h"
#include "record/events/event_attrs.h"
#include "record/target/record_target.h"

namespace sample::record {

struct RecordOptions {
  TargetOptions target;
  std::string output = "sample.data";
  std::vector<std::string> events;      // -e arguments; empty: cycles, else cpu-clock
  std::vector<EventFilterArg> filters;  // --filter, each after its -e argument
  uint64_t frequency = 0;               // -F, when period == 0; 0: see SamplingDefaults
  uint64_t period = 0;                  // -c: a sample every `period` events
  ChainCaptureOptions chain_capture;    // -g (fp) or --call-graph MODE
  uint32_t max_stack = 0;               // --max-stack: frames per chain; 0: the kernel's limit
  bool raise_max_stack = false;         // --raise-max-stack: raise the sysctl to max_stack
  size_t mmap_pages = 0;                // -m: data pages per CPU ring; 0: chosen (ring_size.h)
  int zstd_level = 1;
  // Small chunks' level (format::WriterOptions::small_chunk_level); 0
  // when -z asks for one level.
  int zstd_small_chunk_level = 6;
  double duration_s = 0;        // --duration; 0 = until the target ends
  uint64_t delay_ms = 0;        // -D: start disabled, enable after this
  bool start_disabled = false;  // -D -1: until --control says enable
  std::string control;          // --control fifo:CTL[,ACK]; empty: none
  bool switch_events = false;   // --switch-events: PERF_RECORD_SWITCH
  DataAddresses data;           // -d, --phys-data, --data-page-size
  // --off-cpu: sched:sched_switch sampled every hit with call chains, and
  // PERF_RECORD_SWITCH, so the report can time each wait (kOffCpuEvent).
  bool off_cpu = false;
  // --alloc: the allocation functions' calls (record/alloc/alloc_probes.h).
  AllocOptions alloc;
  // --flight-recorder[=SECONDS]: keep the last SECONDS in memory and write
  // them on SIGUSR2, a 'snapshot' control command, and at the end; 0: off.
  double flight_seconds = 0;
  // Store what names and unwinds the code samples hit, the perf maps of
  // JITs included, so the file reports anywhere (--no-embed: false).
  bool embed = true;
  bool quiet = false;
  std::vector<std::string> invocation;  // our own argv, stored in the file
  // --switch-output, --switch-max-files: the recording cut into complete
  // files, FILE.<local time> (record/output/rotating_output.h).
  SwitchPolicy switch_output;
};

struct RecordSummary {
  uint64_t samples = 0;
  uint64_t lost_samples = 0;
  uint64_t bytes_written = 0;
  uint64_t raw_bytes = 0;
  double seconds = 0;
  size_t mmap_pages = 0;   // data pages per ring buffer, as given or chosen
  int exit_status = 0;     // the command's, shell-style (128 + signal); 0 otherwise
  int stop_signal = 0;     // the signal that stopped the recording, if one did
  std::string written_to;  // what the summary names; empty: the output file
};

// Records into the sink `options` ask for (MakeRecordSink: the file, the
// flight recorder or rotating files).
Result<RecordSummary> RunRecording(const RecordOptions& options);

// Records into `sink` (sample-top's FlightSink with LiveHooks), also
// controlled through `control` (commands posted in this process) when not
// null.
Result<RecordSummary> RunRecording(const RecordOptions& options, std::unique_ptr<RecordSink> sink,
                                   ControlChannel* control);

}  // namespace sample::record
