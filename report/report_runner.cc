#include "report/report_runner.h"

#include <algorithm>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "libsample/cache_dir.h"
#include "libsample/model/sample_filter.h"
#include "report/annotate_cache.h"
#include "report/diff_runner.h"
#include "report/export/exporter.h"
#include "report/json/json_annotate.h"
#include "report/json/json_printer.h"
#include "report/load/symbolization.h"
#include "report/script_stream.h"
#include "report/text/display_text.h"
#include "report/text/text_annotate.h"
#include "report/text/text_printer.h"
#include "report/tui/terminal_browser.h"
#include "report/views/annotate_view.h"
#include "report/views/event_sections.h"
#include "report/views/header_view.h"
#include "report/views/script_view.h"
#include "report/views/sort_keys.h"

namespace sample::report {

namespace {

// The samples as an export of `options.format` draws them.
Result<std::string> Export(const ReportOptions& options, const Recording& recording,
                           const SampleFilter& filter, std::vector<std::string>& warnings) {
  TRY_ASSIGN(auto exporter, MakeExporter(options.format));
  ExportOptions export_options = options.exports;
  export_options.max_stack = options.view.max_stack;
  TRY_ASSIGN(auto input, BuildExportInput(recording, filter, export_options,
                                          exporter->single_section(), warnings));
  input.binaries = &options.load.binaries;
  if (options.format == OutputFormat::kGecko) {
    // The Gecko format has no sample weights: the Firefox Profiler counts
    // samples (its importer sets every weight to 1).
    for (const ExportSection& section : input.sections) {
      if (!input.PeriodWeighted(section.event) || section.period == section.sample_count) {
        continue;
      }
      warnings.push_back(fmt::format(
          "--format gecko: the Firefox Profiler counts the samples of '{}', one per {}, not their "
          "weights; --format pprof or speedscope carry the weights",
          section.name,
          EventPeriodUnit(recording, section.event) == PeriodUnit::kNanoseconds ? "wait"
                                                                                : "call"));
    }
  }
  return exporter->Export(input);
}

// --wall needs both halves of a thread's time in the file.
Result<void> CheckWall(const ReportOptions& options, const Recording& recording) {
  if (!options.load.wall || recording.wall_event) return {};
  if (!recording.off_cpu_event) {
    return Fail(fmt::format("--wall: {} has no off-CPU data; record with sample-record --off-cpu",
                            options.input));
  }
  return Fail(
      fmt::format("--wall: {} has no cpu-clock or task-clock samples, whose periods are "
                  "time on the CPU; record with -e cpu-clock (or task-clock) --off-cpu",
                  options.input));
}

// One recording loaded with the options' plan, checked against them, and
// the filter over its profile.
struct Loaded {
  Recording recording;
  SampleFilter filter;
};

Result<Loaded> Load(const ReportOptions& options) {
  TRY_ASSIGN(auto recording, LoadRecording(options.input, options.load));
  TRY(CheckWall(options, recording));
  TRY(CheckDataSortKeys(options.view.sort_keys, recording.data_addresses, options.input));
  SampleFilter filter(options.filters, recording.profile);
  return Loaded{std::move(recording), std::move(filter)};
}

ReportOutput AnnotateOutput(const ReportOptions& options, const AnnotateView& view,
                            std::vector<std::string> warnings) {
  warnings.insert(warnings.end(), view.warnings.begin(), view.warnings.end());
  std::string text = options.format == OutputFormat::kJson
                         ? AnnotateJson(view)
                         : ShowableText(FormatAnnotate(view, options.annotate.source_only), true);
  return ReportOutput{std::move(text), WithoutRepeats(std::move(warnings))};
}

// The binaries the load symbolized with and the index's DSOs, each with
// its recorded build-id: what the annotate cache checks.
std::vector<std::pair<std::string, std::string>> BinariesOf(const Recording& recording,
                                                            const AnnotateIndex& index) {
  std::vector<std::string> paths;
  for (const auto& [path, source] : recording.stats.symbol_sources) paths.push_back(path);
  for (const IndexedDso& dso : index.dsos) paths.push_back(dso.path);
  std::ranges::sort(paths);
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string& path : paths) {
    std::string build_id = format::FindMetadata(recording.build_ids, path).value_or("");
    out.emplace_back(std::move(path), std::move(build_id));
  }
  return out;
}

// An index is kept unless its names may come from a perf map (a file the
// running JIT writes, read when the recording holds none: the pseudo-DSO
// of a JIT's anonymous code, or a memfd's) or its code from the
// recording's jitdumps, and only
// when the binaries are found now where the load found them (a debuginfod
// download that failed then would otherwise be taken as seen).
bool Cacheable(const Recording& recording, const AnnotateIndex& index,
               const std::vector<BinaryFingerprint>& binaries) {
  const Profile& profile = recording.profile;
  for (uint32_t dso = 0; dso < profile.dso_count(); ++dso) {
    const std::string& name = profile.dso_name(dso);
    if (IsPerfMapPath(name) || name.starts_with("/memfd:")) return false;
  }
  for (const auto& [path, source] : recording.stats.symbol_sources) {
    // Files only: the kernel's symbols and the vDSO are no file found.
    if (!path.starts_with('/')) continue;
    const auto found = std::ranges::find(binaries, path, &BinaryFingerprint::path);
    if (found == binaries.end() || !source.starts_with(found->source)) return false;
  }
  return recording.jit_code.empty() &&
         std::ranges::none_of(index.functions, [](const IndexedFunction& f) {
           return !f.kernel && f.some_offset == FrameAddress::kNoOffset;
         });
}

// The annotate view from the cache when it holds this recording's index
// for these options (report/annotate_cache.h), else from the recording.
Result<ReportOutput> Annotate(const ReportOptions& options) {
  const std::string dir = options.annotate_cache.empty() ? "" : UserCacheDir("annotate");
  std::string key;
  if (!dir.empty()) {
    std::vector<std::string> inputs = {options.input};
    inputs.insert(inputs.end(), options.load.more_inputs.begin(), options.load.more_inputs.end());
    key = AnnotateCacheKey(options.annotate_cache, inputs);
  }
  const BinaryLocatorOptions& files = options.load.binaries;
  if (auto cached = ReadAnnotateCache(dir, key)) {
    // Binaries looked for as the load did, where the recording embedded some.
    const EmbeddedBinaries stand_ins = EmbeddedStandIns(cached->embedded);
    const RecordedCode recorded{{}, &stand_ins};
    std::vector<std::pair<std::string, std::string>> binaries;
    for (const BinaryFingerprint& b : cached->binaries) binaries.emplace_back(b.path, b.build_id);
    if (FingerprintBinaries(binaries, files, recorded) == cached->binaries) {
      TRY_ASSIGN(auto view, AnnotateFromIndex(cached->index, options.annotate,
                                              AnnotateCode{files, recorded, nullptr, true}));
      if (!view.needs_recording) return AnnotateOutput(options, view, cached->warnings);
    }
  }
  TRY_ASSIGN(auto loaded, Load(options));
  Recording& recording = loaded.recording;
  AnnotateIndex index = BuildAnnotateIndex(recording, options.annotate, loaded.filter);
  const RecordedCode recorded{{}, &recording.embedded};
  if (!key.empty()) {
    CachedAnnotate cached{index, recording.warnings,
                          FingerprintBinaries(BinariesOf(recording, index), files, recorded), {}};
    for (const auto& binary : recording.embedded.all()) {
      cached.embedded.emplace_back(binary->path, binary->build_id);
    }
    if (Cacheable(recording, index, cached.binaries)) WriteAnnotateCache(dir, key, cached);
  }
  const AnnotateCode code{files, recorded, &recording.jit_code};
  TRY_ASSIGN(auto view, AnnotateFromIndex(index, options.annotate, code));
  return AnnotateOutput(options, view, std::move(recording.warnings));
}

std::unique_ptr<ReportPrinter> PrinterFor(const ReportOptions& options, const Recording& recording) {
  if (options.format == OutputFormat::kJson) {
    return std::make_unique<JsonPrinter>(recording, options.view);
  }
  return std::make_unique<TextPrinter>(recording, options.view);
}

// The printer's text, and the recording's warnings. Names and facts from
// the file reach a terminal: no control characters or invalid UTF-8
// (display_text.h). JSON escapes its own strings.
ReportOutput Printed(const ReportOptions& options, ReportPrinter& printer, Recording& recording) {
  std::string text = printer.Finish();
  if (options.format == OutputFormat::kText) text = ShowableText(text, true);
  return ReportOutput{std::move(text), WithoutRepeats(std::move(recording.warnings))};
}

}  // namespace

Result<ReportOutput> RunAnnotate(const ReportOptions& options) { return Annotate(options); }

Result<ReportOutput> RunBrowse(const ReportOptions& options) {
  TRY_ASSIGN(auto loaded, Load(options));
  const BrowseOptions browse{options.view, options.filters, options.annotate.syntax,
                             options.load.binaries};
  const int status = RunTerminalBrowser(loaded.recording, browse);
  return ReportOutput{"", WithoutRepeats(std::move(loaded.recording.warnings)), status};
}

Result<ReportOutput> RunExport(const ReportOptions& options) {
  TRY_ASSIGN(auto loaded, Load(options));
  std::vector<std::string> warnings = std::move(loaded.recording.warnings);
  TRY_ASSIGN(auto bytes, Export(options, loaded.recording, loaded.filter, warnings));
  // Folded stacks are text for terminals and flamegraph.pl alike.
  if (options.format == OutputFormat::kFolded) bytes = ShowableText(bytes, true);
  return ReportOutput{std::move(bytes), WithoutRepeats(std::move(warnings))};
}

Result<ReportOutput> RunScript(const ReportOptions& options) {
  TRY_ASSIGN(auto loaded, Load(options));
  Recording& recording = loaded.recording;
  auto printer = PrinterFor(options, recording);
  if (options.header) printer->Header(BuildHeaderView(recording));
  if (StreamsScript(options)) return StreamedScript(options, std::move(recording), printer->Finish());
  printer->Script(BuildScriptView(recording, loaded.filter, options.view.max_stack));
  return Printed(options, *printer, recording);
}

Result<ReportOutput> RunProfile(const ReportOptions& options) {
  TRY_ASSIGN(auto loaded, Load(options));
  Recording& recording = loaded.recording;
  auto printer = PrinterFor(options, recording);
  const bool need_header = options.header || options.header_only || options.stats;
  const HeaderView header = need_header ? BuildHeaderView(recording) : HeaderView{};
  if (options.header || options.header_only) printer->Header(header);
  if (options.header_only) {
    // nothing else
  } else if (options.stats) {
    printer->Stats(header, recording.stats);
  } else {
    printer->Sections(BuildEventSections(recording, options.view, loaded.filter));
    // A counting run's file has events but no samples: say where its
    // numbers are rather than leave empty sections unexplained.
    if (recording.counts && recording.counts->source == format::kCountsFromCounting &&
        recording.stats.samples == 0) {
      recording.warnings.push_back(fmt::format(
          "{} holds the counts of sample-record --stat, no samples: --header or --stats shows "
          "them",
          options.input));
    }
  }
  return Printed(options, *printer, recording);
}

}  // namespace sample::report
