#include "record/recorder.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "formats/sample_file_writer.h"
#include "libsample/events/event_spec.h"
#include "libsample/perf/perf_event.h"
#include "libsample/perf/perf_event_advice.h"
#include "libsample/regular_file.h"
#include "libsample/unique_fd.h"
#include "record/command_launcher.h"
#include "record/control/sampling_control.h"
#include "record/drain/flight_recorder.h"
#include "record/drain/ring_drainer.h"
#include "record/events/event_opener.h"
#include "record/events/max_stack_raise.h"
#include "record/events/off_cpu_spec.h"
#include "record/events/ring_size.h"
#include "record/facts/host_facts.h"
#include "record/facts/postmortem_facts.h"
#include "record/facts/proc_synthesis.h"
#include "libsample/file_limit.h"
#include "record/record_summary.h"
#include "record/recording_events.h"
#include "record/recording_loop.h"

namespace sample::record {
namespace {

// One recording. Run() is the three stages: Prepare (target, output file,
// command held before exec, events, the file's first chunks), Record (the
// draining loop, until the target ends, the duration runs out or a signal
// arrives: RecordingLoop) and Finish (the last drain, the command's end,
// the trailer). A failure at any stage goes through Abandon, the one exit
// that stops the command and leaves either a finished file or none.
class Recorder {
 public:
  explicit Recorder(const RecordOptions& options) : options_(options) {}
  Result<RecordSummary> Run();

 private:
  Result<void> Prepare();
  Result<void> OpenEvents();
  // The metadata chunks every file starts with: events, toggles, trace
  // formats, host facts.
  void SubmitFirstChunks();
  Result<StopCause> Record();
  Result<void> Start();
  void StopAndDrain();
  int EndCommand(const StopCause& cause);
  Result<RecordSummary> Finish(int exit_status);
  Result<RecordSummary> Abandon(Error error);
  // A metadata chunk, written once at the start (events, host facts) or as
  // it happens (control switches): to the file, or held for every file the
  // flight recorder writes.
  void SubmitMetadata(format::ChunkType type, std::vector<std::byte> payload, uint64_t count = 0);
  // The chunks every file ends with (build-ids, vDSO, kernel symbols,
  // counts) and the trailer; closes `writer`.
  Result<void> WriteClosing(format::SampleFileWriter& writer, const format::Trailer& trailer,
                            ClosingNotes* notes);
  // A flight snapshot while recording, to FILE.<local time>; says its name.
  Result<void> Snapshot();
  // --switch-output: the current file closed, the next one opened.
  Result<void> SwitchOutput();
  format::WriterOptions WriterOptions();
  bool rotating() const { return options_.switch_output.kind != SwitchPolicy::Kind::kNone; }

  const RecordOptions& options_;
  // --raise-max-stack: set back when the recorder (or its guardian) ends.
  // First, so it goes last, after the events and their ring buffers: the
  // kernel refuses the change while they exist.
  std::optional<RaisedMaxStack> raised_max_stack_;
  // --alloc's probes, removed after the events that use them are closed.
  std::optional<AllocProbes> alloc_;
  RecordTarget target_;
  std::optional<EventOpener> opener_;
  // Before the writers: their threads call its observer until they end.
  PostmortemFacts facts_;
  std::unique_ptr<format::SampleFileWriter> writer_;
  std::optional<CommandLauncher> launcher_;
  pid_t child_ = -1;  // the command, once launched
  sigset_t original_mask_{};
  UniqueFd signal_fd_;  // stop signals, SIGCHLD and SIGUSR2
  bool status_line_ = false;
  bool started_ = false;  // events on: from here a failure keeps the file
  bool probes_span_ = false;  // --alloc attaching: the control log is when all probes were on
  uint64_t start_ns_ = 0;

  std::optional<RingDrainer> drainer_;  // once the events are open
  std::optional<SamplingControl> control_;
  std::optional<FlightRecorder> flight_;    // --flight-recorder
  std::optional<RotatingOutput> rotating_;  // --switch-output
};

void Recorder::SubmitMetadata(format::ChunkType type, std::vector<std::byte> payload,
                              uint64_t count) {
  if (flight_) {
    flight_->AddMetadataChunk(type, std::move(payload), count);
  } else if (rotating_) {
    rotating_->AddMetadataChunk(type, std::move(payload), count);
  } else {
    writer_->Submit(type, std::move(payload), count);
  }
}

Result<void> Recorder::OpenEvents() {
  TRY_ASSIGN(raised_max_stack_,
             RaiseMaxStackIfNeeded(options_.max_stack, options_.raise_max_stack, options_.quiet));
  std::vector<EventSpec> added;
  if (options_.alloc.enabled) {
    EventParseOptions parse;
    AllocOptions alloc = options_.alloc;
    if (options_.period != 0) alloc.every = options_.period;
    auto probes = PrepareAllocProbes(alloc, target_, options_.target.command, parse);
    if (!probes) return tl::unexpected(probes.error());
    alloc_.emplace(std::move(*probes));
    added = alloc_->specs;
    if (!options_.quiet) {
      for (const std::string& where : alloc_->found_in) {
        fmt::print(stderr, "sample-record: --alloc probes {}\n", where);
      }
    }
  }
  return OpenRecordingEvents(options_, target_, added, opener_);
}

// Turns the events on (unless enable_on_exec does it; with -D only the
// sideband-tracking event; RecordingLoop starts sampling) and, for targets
// that were running before us, describes them from /proc. Enabling first
// means a mapping created meanwhile is reported; one described twice is
// harmless.
Result<void> Recorder::Start() {
  const uint64_t now = MonotonicNowNs();
  const bool sampling = options_.delay_ms == 0 && !options_.start_disabled;
  auto enabled = sampling ? opener_->EnableAll() : opener_->EnableTracking();
  if (!enabled) return enabled;
  // A window holds every sample: from before the first event went on, but
  // the probes' span starts once the last one did.
  if (sampling) control_->Switched(/*on=*/true, probes_span_ ? MonotonicNowNs() : now);
  if (target_.kind == TargetKind::kCommand) return {};
  format::RecordsChunk chunk =
      SynthesizeRunningTargets(target_, opener_->first_attr(), opener_->events().front().id(), now,
                               options_.data.addresses, facts_);
  chunk.cpu_field = opener_->cpu_field();
  const uint64_t records = chunk.record_count;
  if (options_.live.chunk) options_.live.chunk(chunk);
  if (flight_) {
    flight_->history().AddSideband(chunk);
  } else if (rotating_) {
    rotating_->Add(std::move(chunk));
  } else {
    writer_->SubmitRecords(std::move(chunk));
  }
  drainer_->CountWritten(records);
  return {};
}

Result<RecordSummary> Recorder::Run() {
  if (auto prepared = Prepare(); !prepared) return Abandon(prepared.error());
  auto stopped = Record();
  if (!stopped) return Abandon(stopped.error());
  StopAndDrain();
  auto summary = Finish(EndCommand(*stopped));
  if (summary) summary->stop_signal = stopped->stop_signal;
  return summary;
}

Result<void> Recorder::Prepare() {
  // Refused before anything runs (the flight recorder and --stat write it
  // only at the end, when a refusal would lose the whole run).
  TRY(CheckReplaceable(options_.output, "-o"));
  TRY_ASSIGN(auto target, ResolveTarget(options_.target));
  target_ = std::move(target);
  status_line_ = !options_.quiet && isatty(STDERR_FILENO);
  // Stop signals and SIGCHLD arrive through a signalfd polled with the
  // ring buffers; a command gets the original mask back before exec.
  // SIGUSR2 takes a flight snapshot, or switches files.
  TRY_ASSIGN(signal_fd_,
             BlockRecordingSignals(options_.flight_seconds > 0 || rotating(), &original_mask_));
  // The flight recorder writes nothing until a snapshot or the end; a
  // rotating output opens its first file once the events are known.
  if (options_.flight_seconds == 0 && !rotating()) {
    TRY(MoveAside(options_.output, "-o"));
    TRY_ASSIGN(auto writer, format::SampleFileWriter::Create(options_.output, WriterOptions()));
    writer_ = std::move(writer);
  }
  if (target_.kind == TargetKind::kCommand) {
    TRY_ASSIGN(auto launcher, CommandLauncher::Start(options_.target.command, original_mask_));
    child_ = launcher.pid();
    launcher_.emplace(std::move(launcher));
    target_.threads = {child_};
  }
  RaiseOpenFileLimit();  // after the fork: the command keeps its own limit

  if (auto opened = OpenEvents(); !opened) return opened;
  if (options_.flight_seconds > 0) {
    flight_.emplace(options_.flight_seconds, WriterOptions(), opener_->first_attr(),
                    opener_->cpu_field(), options_.live.history_byte_cap);
  } else if (rotating()) {
    rotating_.emplace(options_.output, options_.switch_output, WriterOptions(),
                      opener_->first_attr(), opener_->cpu_field(), options_.quiet);
    TRY(rotating_->Open());
  }
  // The records as the file holds them: the attrs of DescribeFile.
  if (options_.embed) facts_.CollectHits(EventTable(opener_->DescribeFile()), HostArch());
  SubmitFirstChunks();
  drainer_.emplace(*opener_, target_.cpus, writer_.get(), facts_);
  if (flight_) {
    drainer_->DivertTo([this](format::RecordsChunk chunk) {
      if (options_.live.chunk) options_.live.chunk(chunk);
      return flight_->history().Add(std::move(chunk));
    });
  } else if (rotating_) {
    drainer_->DivertTo(
        [this](format::RecordsChunk chunk) { return rotating_->Add(std::move(chunk)); });
  }
  // Logged with -D and when --alloc attaches: its probes go on one by one,
  // and the report counts the calls made while all were (AllocEvents).
  probes_span_ = alloc_ && target_.kind != TargetKind::kCommand;
  const bool log = options_.delay_ms != 0 || options_.start_disabled || probes_span_;
  auto sink = [this](format::ChunkType type, std::vector<std::byte> payload, uint64_t count) {
    SubmitMetadata(type, std::move(payload), count);
  };
  TRY_ASSIGN(auto control, SamplingControl::Create(*opener_, sink, options_.control, log,
                                                   status_line_, flight_.has_value()));
  control_.emplace(std::move(control));
  if (options_.live.opened) options_.live.opened(opener_->DescribeFile());
  return {};
}

void Recorder::SubmitFirstChunks() {
  SubmitMetadata(format::ChunkType::kEvents, format::EncodeEvents(opener_->DescribeFile()));
  if (const auto toggles = ToggleEntries(opener_->specs()); !toggles.empty()) {
    SubmitMetadata(format::ChunkType::kToggles, format::EncodeToggles(toggles));
  }
  if (const auto formats = TraceFormatEntries(opener_->specs()); !formats.empty()) {
    SubmitMetadata(format::ChunkType::kTraceFormats, format::EncodeTraceFormats(formats));
  }
  SubmitMetadata(format::ChunkType::kMetadata,
                 format::EncodeMetadata(CollectHostFacts(options_.invocation)));
}

Result<StopCause> Recorder::Record() {
  start_ns_ = MonotonicNowNs();
  // Enabled before the command is let go: its task events wait for the
  // exec anyway (enable_on_exec), but a probe opened on every CPU is on
  // only from here, and a short command released first ran through its hits.
  TRY(Start());
  if (launcher_) TRY(launcher_->Release());  // a command that cannot run leaves no file
  started_ = true;
  RecordingLoop loop({options_, target_, *opener_, *drainer_, *control_, writer_.get(),
                      flight_ ? &*flight_ : nullptr, signal_fd_.get(), child_, start_ns_,
                      status_line_, [this] { return Snapshot(); },
                      rotating_ ? &*rotating_ : nullptr, [this] { return SwitchOutput(); }});
  return loop.Run();
}

// Stops counting, then takes what is left in every buffer.
void Recorder::StopAndDrain() {
  const uint64_t before = MonotonicNowNs();  // the probes' span: all on until here
  for (PerfEvent& event : opener_->events()) (void)event.Disable();
  if (control_) control_->Switched(/*on=*/false, probes_span_ ? before : MonotonicNowNs());
  drainer_->DrainAll();
  drainer_->Flush(/*wait=*/true);
}

// Waits for the command to end and returns its exit status, shell-style
// (0 without a command). Stopped by a signal or --duration, the command is
// sent the signal (a terminal's SIGINT reached it already) or SIGTERM.
int Recorder::EndCommand(const StopCause& cause) {
  if (child_ <= 0) return 0;
  int status = cause.child_status;
  if (!cause.child_done) {
    if (cause.stop_signal != SIGINT)
      kill(child_, cause.stop_signal != 0 ? cause.stop_signal : SIGTERM);
    waitpid(child_, &status, 0);
  }
  child_ = -1;
  return ShellStatus(status);
}

// The one way out after a failure: the command is killed (it must not run
// on unobserved, or wait forever for its release), and the output is
// finished if recording had started (what was recorded stays readable) or
// removed if not.
Result<RecordSummary> Recorder::Abandon(Error error) {
  if (child_ > 0) {
    kill(child_, SIGKILL);
    waitpid(child_, nullptr, 0);
    child_ = -1;
  }
  if (started_ && drainer_) {
    StopAndDrain();
    if (Finish(/*exit_status=*/1) && !options_.live.chunk) {
      error.message += fmt::format(" ({} keeps what was recorded until then)", options_.output);
      return tl::unexpected(std::move(error));
    }
  }
  if (writer_) {
    writer_.reset();
    unlink(options_.output.c_str());
  }
  if (rotating_ && !started_) {
    const std::string path = rotating_->current_path();
    rotating_.reset();
    unlink(path.c_str());
  }
  return tl::unexpected(std::move(error));
}

Result<void> Recorder::WriteClosing(format::SampleFileWriter& writer,
                                    const format::Trailer& trailer, ClosingNotes* notes) {
  facts_.SubmitTo(writer, notes);
  // How much each event counted and ran (multiplexing): a failed read
  // costs only this chunk, never the recording.
  if (auto counts = opener_->ReadCounts(MonotonicNowNs() - start_ns_)) {
    writer.Submit(format::ChunkType::kCounts, format::EncodeCounts(*counts));
  } else if (!options_.quiet) {
    fmt::print(stderr, "sample-record: note: final counts not stored: {}\n",
               counts.error().message);
  }
  return writer.Finish(trailer);
}

Result<void> Recorder::Snapshot() {
  drainer_->Flush(/*wait=*/true);  // the history ends now
  ClosingNotes notes;
  TRY_ASSIGN(auto file, flight_->Snapshot(
                            options_.output, target_.cpus,
                            [&](format::SampleFileWriter& writer, const format::Trailer& trailer) {
                              return WriteClosing(writer, trailer, &notes);
                            }));
  if (options_.live.snapshot) {
    options_.live.snapshot(file.path, file.trailer.header.sample_count);
  }
  if (!options_.quiet) {
    if (status_line_) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "sample-record: snapshot: {} ({} samples, {})\n", file.path,
               file.trailer.header.sample_count, HumanBytes(file.bytes_written));
  }
  return {};
}

format::WriterOptions Recorder::WriterOptions() {
  format::WriterOptions writer_options;
  writer_options.zstd_level = options_.zstd_level;
  writer_options.small_chunk_level = options_.zstd_small_chunk_level;
  writer_options.observe_records = facts_.RecordsObserver();
  return writer_options;
}

Result<void> Recorder::SwitchOutput() {
  drainer_->Flush(/*wait=*/true);  // every record drained so far, in this file
  ClosingNotes notes;
  return rotating_->Switch(
      [&](format::SampleFileWriter& writer, const format::Trailer& trailer) {
        return WriteClosing(writer, trailer, &notes);
      },
      drainer_->counters(), status_line_);
}

Result<RecordSummary> Recorder::Finish(int exit_status) {
  const double seconds = (MonotonicNowNs() - start_ns_) / 1e9;
  ClosingNotes notes;
  RecordSummary summary;
  format::Trailer trailer;
  if (flight_ && options_.live.chunk) {
    // A live view's recorder keeps what it saved and writes nothing more.
    trailer = MakeTrailer(drainer_->counters());
  } else if (flight_) {
    // The end's snapshot is the output file itself.
    TRY(MoveAside(options_.output, "-o"));
    TRY_ASSIGN(auto file,
               flight_->Write(options_.output, target_.cpus,
                              [&](format::SampleFileWriter& writer, const format::Trailer& t) {
                                return WriteClosing(writer, t, &notes);
                              }));
    trailer = file.trailer;
    summary.bytes_written = file.bytes_written;
    summary.raw_bytes = file.raw_bytes;
  } else if (rotating_) {
    TRY(rotating_->Finish([&](format::SampleFileWriter& writer,
                              const format::Trailer& t) { return WriteClosing(writer, t, &notes); },
                          drainer_->counters()));
    trailer = MakeTrailer(drainer_->counters());  // the whole recording's, for the summary
    summary.bytes_written = rotating_->total_bytes();
    summary.raw_bytes = rotating_->total_raw_bytes();
    const auto& files = rotating_->files();
    summary.written_to = files.size() == 1 ? files.front()
                                           : fmt::format("{} files, {} to {}", files.size(),
                                                         files.front(), files.back());
  } else {
    trailer = MakeTrailer(drainer_->counters());
    trailer.header.record_count = drainer_->records_written();
    if (auto range = drainer_->time_range()) {
      trailer.header.start_clock_ns = range->first;
      trailer.header.end_clock_ns = range->second;
    }
    if (auto finished = WriteClosing(*writer_, trailer, &notes); !finished) {
      // The recording stopped at the failed write (Record); the chunks
      // written before it are whole, and the reader recovers them.
      return Fail(
          fmt::format("{}: {}; recording stopped after {:.2f} s, {} written before the "
                      "failure stay readable (not finalized)",
                      options_.output, finished.error().message, seconds,
                      HumanBytes(writer_->bytes_written())));
    }
    summary.bytes_written = writer_->bytes_written();
    summary.raw_bytes = writer_->raw_bytes();  // complete once Finish has written everything
  }
  summary.mmap_pages = opener_->mmap_pages();  // read before the opener goes
  // Closes the events; --alloc's probes are unregistered (80 ms each) in
  // a child of ours, not waited for.
  if (alloc_) CloseInBackground(*alloc_, opener_->events());
  opener_.reset();

  summary.samples = trailer.header.sample_count;
  summary.lost_samples = trailer.header.lost_samples;
  summary.seconds = seconds;
  summary.exit_status = exit_status;
  if (status_line_) fmt::print(stderr, "\r\033[K");
  if (!options_.quiet) {
    PrintClosingNotes(notes);
    if (flight_) flight_->PrintCost();
    PrintSummary(summary, drainer_->counters(), target_.cpus, options_);
  }
  return summary;
}

}  // namespace

Result<RecordSummary> RunRecording(const RecordOptions& options) {
  Recorder recorder(options);
  return recorder.Run();
}

}  // namespace sample::record
