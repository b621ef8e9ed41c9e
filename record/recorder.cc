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
#include "libsample/file_limit.h"
#include "libsample/events/event_spec.h"
#include "libsample/perf/perf_event.h"
#include "libsample/perf/perf_event_advice.h"
#include "libsample/regular_file.h"
#include "libsample/unique_fd.h"
#include "record/target/command_launcher.h"
#include "record/control/sampling_control.h"
#include "record/drain/ring_drainer.h"
#include "record/events/event_opener.h"
#include "record/events/max_stack_raise.h"
#include "record/events/off_cpu_spec.h"
#include "record/events/ring_size.h"
#include "record/facts/host_facts.h"
#include "record/facts/postmortem_facts.h"
#include "record/facts/proc_synthesis.h"
#include "record/output/file_sink.h"
#include "record/output/flight_sink.h"
#include "record/output/rotating_sink.h"
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
  Recorder(const RecordOptions& options, std::unique_ptr<RecordSink> sink,
           ControlChannel* channel)
      : options_(options), sink_(std::move(sink)), channel_(channel) {}
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
  // The chunks every file ends with (build-ids, vDSO, kernel symbols,
  // counts) and the trailer; closes `writer`.
  Result<void> WriteClosing(format::SampleFileWriter& writer, const format::Trailer& trailer,
                            ClosingNotes* notes);
  // A cut of the sink's output (a snapshot, the next file), every record
  // drained so far in it.
  Result<void> Cut();
  DrainTotals Totals() const;
  format::WriterOptions WriterOptions();

  const RecordOptions& options_;
  std::unique_ptr<RecordSink> sink_;
  ControlChannel* channel_;  // sample-top's commands, or null
  // --raise-max-stack: set back when the recorder (or its guardian) ends.
  // First, so it goes last, after the events and their ring buffers: the
  // kernel refuses the change while they exist.
  std::optional<RaisedMaxStack> raised_max_stack_;
  // --alloc's probes, removed after the events that use them are closed.
  std::optional<AllocProbes> alloc_;
  RecordTarget target_;
  std::optional<EventOpener> opener_;
  // Before the sink: its writers' threads call its observer until they end.
  PostmortemFacts facts_;
  std::optional<CommandLauncher> launcher_;
  pid_t child_ = -1;  // the command, once launched
  sigset_t original_mask_{};
  UniqueFd signal_fd_;  // stop signals, SIGCHLD and SIGUSR2
  bool status_line_ = false;
  bool started_ = false;  // events on: from here a failure keeps the file
  bool wrote_files_ = false;  // the sink's end wrote its files
  bool probes_span_ = false;  // --alloc attaching: the control log is when all probes were on
  uint64_t start_ns_ = 0;

  std::optional<RingDrainer> drainer_;  // once the events are open
  std::optional<SamplingControl> control_;
};

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
  sink_->AddRunningTargets(std::move(chunk));
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
  // The output is checked before anything runs.
  TRY(sink_->Prepare(WriterOptions()));
  TRY_ASSIGN(auto target, ResolveTarget(options_.target));
  target_ = std::move(target);
  status_line_ = !options_.quiet && isatty(STDERR_FILENO);
  // Stop signals and SIGCHLD arrive through a signalfd polled with the
  // ring buffers; a command gets the original mask back before exec.
  // SIGUSR2 cuts the output (a snapshot, the next file) where it can.
  const CutPolicy cut = sink_->cut_policy();
  TRY_ASSIGN(signal_fd_,
             BlockRecordingSignals(cut.kind != CutPolicy::Kind::kNone, &original_mask_));
  if (target_.launches_command) {
    TRY_ASSIGN(auto launcher, CommandLauncher::Start(options_.target.command, original_mask_));
    child_ = launcher.pid();
    launcher_.emplace(std::move(launcher));
    if (target_.kind == TargetKind::kCommand) target_.threads = {child_};
  }
  RaiseOpenFileLimit();  // after the fork: the command keeps its own limit

  if (auto opened = OpenEvents(); !opened) return opened;
  // The command is still held before its exec: an output that cannot be
  // created costs it nothing.
  TRY(sink_->Open({opener_->first_attr(), opener_->cpu_field(), opener_->DescribeFile()}));
  // The records as the file holds them: the attrs of DescribeFile.
  if (options_.embed) facts_.CollectHits(EventTable(opener_->DescribeFile()), HostArch());
  SubmitFirstChunks();
  drainer_.emplace(*opener_, target_.cpus, *sink_, facts_);
  // Logged with -D and when --alloc attaches: its probes go on one by one,
  // and the report counts the calls made while all were (AllocEvents).
  probes_span_ = alloc_ && target_.kind != TargetKind::kCommand;
  const bool log = options_.delay_ms != 0 || options_.start_disabled || probes_span_;
  auto metadata = [this](format::ChunkType type, std::vector<std::byte> payload, uint64_t count) {
    sink_->AddMetadata(type, std::move(payload), count);
  };
  TRY_ASSIGN(auto control,
             SamplingControl::Create(*opener_, metadata, options_.control, log, status_line_,
                                     cut.kind == CutPolicy::Kind::kSnapshot, channel_));
  control_.emplace(std::move(control));
  return {};
}

void Recorder::SubmitFirstChunks() {
  sink_->AddMetadata(format::ChunkType::kEvents, format::EncodeEvents(opener_->DescribeFile()), 0);
  if (const auto toggles = ToggleEntries(opener_->specs()); !toggles.empty()) {
    sink_->AddMetadata(format::ChunkType::kToggles, format::EncodeToggles(toggles), 0);
  }
  if (const auto formats = TraceFormatEntries(opener_->specs()); !formats.empty()) {
    sink_->AddMetadata(format::ChunkType::kTraceFormats, format::EncodeTraceFormats(formats), 0);
  }
  sink_->AddMetadata(format::ChunkType::kMetadata,
                     format::EncodeMetadata(CollectHostFacts(options_.invocation)), 0);
}

Result<StopCause> Recorder::Record() {
  start_ns_ = MonotonicNowNs();
  // Enabled before the command is let go: its task events wait for the
  // exec anyway (enable_on_exec), but a probe opened on every CPU is on
  // only from here, and a short command released first ran through its hits.
  TRY(Start());
  if (launcher_) TRY(launcher_->Release());  // a command that cannot run leaves no file
  started_ = true;
  RecordingLoop loop({options_, target_, *opener_, *drainer_, *control_, *sink_,
                      signal_fd_.get(), child_, start_ns_, status_line_,
                      [this] { return Cut(); }});
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
    if (Finish(/*exit_status=*/1) && wrote_files_) {
      error.message += fmt::format(" ({} keeps what was recorded until then)", options_.output);
      return tl::unexpected(std::move(error));
    }
  }
  sink_->Discard(started_);
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

Result<void> Recorder::Cut() {
  drainer_->Flush(/*wait=*/true);  // every record drained so far, in the sink
  ClosingNotes notes;
  return sink_->Cut(
      [&](format::SampleFileWriter& writer, const format::Trailer& trailer) {
        return WriteClosing(writer, trailer, &notes);
      },
      Totals(), status_line_);
}

DrainTotals Recorder::Totals() const {
  return DrainTotals{drainer_->counters(), drainer_->records_written(), drainer_->time_range(),
                     target_.cpus, (MonotonicNowNs() - start_ns_) / 1e9};
}

format::WriterOptions Recorder::WriterOptions() {
  format::WriterOptions writer_options;
  writer_options.zstd_level = options_.zstd_level;
  writer_options.small_chunk_level = options_.zstd_small_chunk_level;
  writer_options.observe_records = facts_.RecordsObserver();
  return writer_options;
}

Result<RecordSummary> Recorder::Finish(int exit_status) {
  const double seconds = (MonotonicNowNs() - start_ns_) / 1e9;
  ClosingNotes notes;
  TRY_ASSIGN(const SinkEnd end, sink_->Finish(
                                    [&](format::SampleFileWriter& writer, const format::Trailer& t) {
                                      return WriteClosing(writer, t, &notes);
                                    },
                                    Totals()));
  RecordSummary summary;
  const format::Trailer& trailer = end.trailer;
  summary.bytes_written = end.bytes_written;
  summary.raw_bytes = end.raw_bytes;
  summary.written_to = end.written_to;
  wrote_files_ = end.wrote_files;
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
    sink_->PrintCost();
    PrintSummary(summary, drainer_->counters(), target_.cpus, options_);
  }
  return summary;
}

// sample-record's sink for its options: the file, the flight recorder or
// rotating files.
std::unique_ptr<RecordSink> MakeRecordSink(const RecordOptions& options) {
  if (options.flight_seconds > 0) {
    return std::make_unique<FlightSink>(options.output, options.flight_seconds, options.quiet,
                                        std::nullopt);
  }
  if (options.switch_output.kind != SwitchPolicy::Kind::kNone) {
    return std::make_unique<RotatingSink>(options.output, options.switch_output, options.quiet);
  }
  return std::make_unique<FileSink>(options.output);
}

}  // namespace

Result<RecordSummary> RunRecording(const RecordOptions& options) {
  Recorder recorder(options, MakeRecordSink(options), nullptr);
  return recorder.Run();
}

Result<RecordSummary> RunRecording(const RecordOptions& options, std::unique_ptr<RecordSink> sink,
                                   ControlChannel* control) {
  Recorder recorder(options, std::move(sink), control);
  return recorder.Run();
}

}  // namespace sample::record
