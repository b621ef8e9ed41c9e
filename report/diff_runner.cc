#include "report/diff_runner.h"

#include <fmt/format.h>

#include "report/diff/diff_printer.h"
#include "report/diff/profile_diff.h"
#include "report/export/export_input.h"
#include "report/export/exporter.h"
#include "report/views/sort_keys.h"

namespace sample::report {
namespace {

struct Side {
  Recording recording;
  SampleFilter filter;
};

Result<Side> LoadSide(const std::string& path, const ReportOptions& options,
                      std::vector<std::string>& warnings) {
  TRY_ASSIGN(auto recording, LoadRecording(path, options.load));
  TRY(CheckDataSortKeys(options.view.sort_keys, recording.data_addresses, path));
  SampleFilter filter(options.filters, recording.profile);
  for (std::string& w : recording.warnings) warnings.push_back(std::move(w));
  recording.warnings.clear();
  return Side{std::move(recording), std::move(filter)};
}

// A differential flame graph: the new recording's input, pointing at the
// baseline's, drawn by the exporter of options.format.
Result<std::string> ExportDiff(const ReportOptions& options, const Side& before, const Side& after,
                               std::vector<std::string>& warnings) {
  TRY_ASSIGN(auto exporter, MakeExporter(options.format));
  ExportOptions export_options = options.exports;
  export_options.max_stack = options.view.max_stack;
  const bool single = exporter->single_section();
  TRY_ASSIGN(auto base,
             BuildExportInput(before.recording, before.filter, export_options, single, warnings));
  TRY_ASSIGN(auto input,
             BuildExportInput(after.recording, after.filter, export_options, single, warnings));
  input.baseline = &base;
  return exporter->Export(input);
}

}  // namespace

Result<void> CheckDiffOptions(const ReportOptions& options) {
  if (options.header || options.header_only || options.stats || options.script) {
    return Fail(
        "--diff compares two recordings' profiles; --header, --header-only, --stats and "
        "--script show one recording (run them on each file)");
  }
  if (options.format != OutputFormat::kText && options.format != OutputFormat::kJson &&
      options.format != OutputFormat::kSvg) {
    return Fail(fmt::format("--diff prints --format text or json, or draws svg; not {}",
                            FormatName(options.format)));
  }
  if (options.view.call_graph) {
    return Fail("--diff compares functions' shares; it draws no call graph (-g, -G)");
  }
  return {};
}

Result<ReportOutput> RunDiff(const ReportOptions& options) {
  TRY(CheckDiffOptions(options));
  std::vector<std::string> warnings;
  TRY_ASSIGN(auto before, LoadSide(options.diff_base, options, warnings));
  TRY_ASSIGN(auto after, LoadSide(options.input, options, warnings));
  if (options.format == OutputFormat::kSvg) {
    TRY_ASSIGN(auto bytes, ExportDiff(options, before, after, warnings));
    return ReportOutput{std::move(bytes), WithoutRepeats(std::move(warnings))};
  }
  DiffOptions diff;
  diff.event = options.exports.event;
  // Self shares unless --children, as perf diff (which has no children).
  diff.children = options.view.children.value_or(false);
  diff.max_stack = options.view.max_stack;
  diff.data_object =
      std::ranges::find(options.view.sort_keys, SortKey::kDsoDaddr) != options.view.sort_keys.end();
  TRY_ASSIGN(auto sections,
             DiffProfiles({&before.recording.profile, &before.filter},
                          {&after.recording.profile, &after.filter}, diff, warnings));
  const DiffHeading heading{options.diff_base, options.input, diff.children};
  std::string text = options.format == OutputFormat::kJson
                         ? DiffJson(heading, sections)
                         : DiffText(heading, sections, options.view.show_total_period);
  return ReportOutput{std::move(text), WithoutRepeats(std::move(warnings))};
}

}  // namespace sample::report
