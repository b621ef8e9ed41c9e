#include "report/report_runner.h"

#include <memory>

#include <fmt/format.h>

#include "libsample/model/sample_filter.h"
#include "report/diff/diff_runner.h"
#include "report/export/exporter.h"
#include "report/json/json_annotate.h"
#include "report/json/json_printer.h"
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
  if (options.header || options.header_only || options.stats || options.script) {
    return Fail(
        fmt::format("--format {} exports samples; --header, --header-only, --stats and "
                    "--script are views of --format text or json",
                    FormatName(options.format)));
  }
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

// --annotate: text or JSON, instead of the profile.
Result<ReportOutput> Annotate(const ReportOptions& options, Recording& recording,
                              const SampleFilter& filter) {
  if (options.header || options.header_only || options.stats || options.script ||
      (options.format != OutputFormat::kText && options.format != OutputFormat::kJson)) {
    return Fail(
        "--annotate is a view of its own, in --format text or json: leave out --header, "
        "--header-only, --stats, --script and export formats");
  }
  TRY_ASSIGN(auto view,
             BuildAnnotateView(recording, options.annotate, filter, options.load.binaries));
  std::vector<std::string> warnings = std::move(recording.warnings);
  warnings.insert(warnings.end(), view.warnings.begin(), view.warnings.end());
  std::string text = options.format == OutputFormat::kJson
                         ? AnnotateJson(view)
                         : ShowableText(FormatAnnotate(view, options.annotate.source_only), true);
  return ReportOutput{std::move(text), WithoutRepeats(std::move(warnings))};
}

}  // namespace

Result<ReportOutput> RunReport(const ReportOptions& options) {
  if (!options.diff_base.empty()) {
    TRY_ASSIGN(auto diff, RunDiff(options));
    if (options.format == OutputFormat::kText) diff.text = ShowableText(diff.text, true);
    return diff;
  }
  TRY_ASSIGN(auto recording, LoadRecording(options.input, options.load));
  TRY(CheckWall(options, recording));
  TRY(CheckDataSortKeys(options.view.sort_keys, recording.data_addresses, options.input));
  const SampleFilter filter(options.filters, recording.profile);
  if (options.annotate.on) return Annotate(options, recording, filter);
  if (options.tui) {
    const int status = RunTerminalBrowser(recording, options);
    return ReportOutput{"", WithoutRepeats(std::move(recording.warnings)), status};
  }
  if (IsExport(options.format)) {
    std::vector<std::string> warnings = std::move(recording.warnings);
    TRY_ASSIGN(auto bytes, Export(options, recording, filter, warnings));
    // Folded stacks are text for terminals and flamegraph.pl alike.
    if (options.format == OutputFormat::kFolded) bytes = ShowableText(bytes, true);
    return ReportOutput{std::move(bytes), WithoutRepeats(std::move(warnings))};
  }

  std::unique_ptr<ReportPrinter> printer;
  if (options.format == OutputFormat::kJson) {
    printer = std::make_unique<JsonPrinter>(recording, options.view);
  } else {
    printer = std::make_unique<TextPrinter>(recording, options.view);
  }
  const bool need_header = options.header || options.header_only || options.stats;
  const HeaderView header = need_header ? BuildHeaderView(recording) : HeaderView{};
  if (options.header || options.header_only) printer->Header(header);
  if (options.header_only) {
    // nothing else
  } else if (options.stats) {
    printer->Stats(header, recording.stats);
  } else if (options.script) {
    printer->Script(BuildScriptView(recording, filter, options.view.max_stack));
  } else {
    printer->Sections(BuildEventSections(recording, options.view, filter));
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
  std::string text = printer->Finish();
  // Names and facts from the file reach a terminal: no control characters
  // or invalid UTF-8 (display_text.h). JSON escapes its own strings.
  if (options.format == OutputFormat::kText) text = ShowableText(text, true);
  return ReportOutput{std::move(text), WithoutRepeats(std::move(recording.warnings))};
}

}  // namespace sample::report
