#include "report/report_command.h"

#include <fmt/format.h>

#include "report/diff_runner.h"
#include "report/export/output_format.h"
#include "report/report_runner.h"
#include "report/text/display_text.h"
#include "report/tui/terminal_browser.h"

namespace sample::report {

namespace {

// What a command's load keeps and which of its stages run.
struct LoadPlan {
  bool unwind;         // chains unwound, even for a flat view
  bool chains;         // call chains kept at all
  bool merge_samples;  // samples that differ only in time taken as one
  bool chain_leaf = false;  // without chains, each sample is its chain's first address
};

// A command's line of the table: its name, its plan (from the options
// that shape it) and its renderer.
struct CommandEntry {
  ReportCommand command;
  std::string_view name;
  LoadPlan (*plan)(const ReportOptions& options);
  Result<ReportOutput> (*run)(const ReportOptions& options);
};

// A view that draws no chain: flat, without children (diff: unless
// --children) and without a call graph. perf unwinds nothing for it
// either; its samples keep the kernel's chain, whose user part is the
// sampled ip.
bool FlatOnly(const ReportOptions& options, bool children_by_default) {
  const ViewOptions& view = options.view;
  return !view.children.value_or(children_by_default) &&
         (!view.call_graph || view.call_graph->mode == CallGraphMode::kNone);
}

// Views that read no sample's time or order take samples that differ only
// in time as one: memory for distinct samples, not every sample.
bool Timeless(const ReportOptions& options) { return !options.filters.time; }

Result<ReportOutput> RunDiffText(const ReportOptions& options) {
  TRY_ASSIGN(auto diff, RunDiff(options));
  if (options.format == OutputFormat::kText) diff.text = ShowableText(diff.text, true);
  return diff;
}

// clang-format off
constexpr CommandEntry kCommands[] = {
    {ReportCommand::kReport, "report",
     [](const ReportOptions& o) {
       // --stats shows the unwinding counts; --header-only reads no sample.
       // A flat view's rows and filters are of each sample's own address:
       // its chain is neither kept nor named (on a whole machine, most of
       // the load).
       const bool flat = FlatOnly(o, true) && !o.stats;
       return LoadPlan{!flat && !o.header_only, !flat, Timeless(o) && !o.stats, true};
     },
     RunProfile},
    {ReportCommand::kScript, "script",
     [](const ReportOptions&) { return LoadPlan{true, true, false}; }, RunScript},
    // Each sample's own address only: no unwinding (a leaf's caller found
    // by CFI cost a step a sample) and no chains to intern and name.
    {ReportCommand::kAnnotate, "annotate",
     [](const ReportOptions& o) { return LoadPlan{false, false, Timeless(o)}; }, RunAnnotate},
    // Self shares unless --children, as perf diff; its flame graph draws chains.
    {ReportCommand::kDiff, "diff",
     [](const ReportOptions& o) {
       return LoadPlan{!FlatOnly(o, false) || IsExport(o.format), true, Timeless(o)};
     },
     RunDiffText},
    {ReportCommand::kExport, "export",
     [](const ReportOptions& o) {
       return LoadPlan{true, true, Timeless(o) && !ExportsSampleTimes(o.format)};
     },
     RunExport},
    // The browser unfolds call graphs whatever -g said, and shows samples in time.
    {ReportCommand::kBrowse, "browse",
     [](const ReportOptions&) { return LoadPlan{true, true, false}; }, RunBrowse},
};
// clang-format on

const CommandEntry& EntryOf(ReportCommand command) {
  for (const CommandEntry& entry : kCommands) {
    if (entry.command == command) return entry;
  }
  return kCommands[0];
}

// The option that asks for some output other than the browser, if any.
const char* OtherOutput(const ReportOptions& options, bool stdio) {
  return stdio                                     ? "--stdio"
         : options.format != OutputFormat::kText   ? "--format"
         : !options.output.empty()                 ? "-o"
         : options.script                          ? "--script"
         : options.header || options.header_only  ? "--header"
         : options.stats                           ? "--stats"
         : options.annotate.on                     ? "--annotate"
         : !options.diff_base.empty()              ? "--diff"
                                                   : nullptr;
}

// Whether the browser runs: as perf report's, on a terminal unless some
// other output was asked for; a terminal terminfo does not know gets the
// text, said.
Result<bool> Browses(const ReportOptions& options, const CommandContext& context,
                     std::vector<std::string>& notes) {
  const char* other = OtherOutput(options, context.stdio);
  if (context.tui) {
    if (other != nullptr) {
      return Fail(fmt::format("--tui is the interactive browser: leave out {}", other));
    }
    if (!context.terminal) return Fail("--tui needs a terminal on standard input and output");
  }
  if (other != nullptr || !context.terminal) return false;
  std::string unusable;
  if (!TerminalBrowserUsable(&unusable)) {
    if (context.tui) return Fail("--tui: " + unusable);
    notes.push_back(unusable + ": printing the text report");
    return false;
  }
  return true;
}

Result<void> CheckAnnotate(const ReportOptions& options) {
  if (options.header || options.header_only || options.stats || options.script ||
      (options.format != OutputFormat::kText && options.format != OutputFormat::kJson)) {
    return Fail(
        "--annotate is a view of its own, in --format text or json: leave out --header, "
        "--header-only, --stats, --script and export formats");
  }
  return {};
}

Result<void> CheckExport(const ReportOptions& options) {
  if (options.header || options.header_only || options.stats || options.script) {
    return Fail(
        fmt::format("--format {} exports samples; --header, --header-only, --stats and "
                    "--script are views of --format text or json",
                    FormatName(options.format)));
  }
  return {};
}

}  // namespace

std::string_view CommandName(ReportCommand command) { return EntryOf(command).name; }

Result<void> ChooseCommand(ReportOptions& options, const CommandContext& context,
                           std::vector<std::string>& notes) {
  TRY_ASSIGN(const bool browse, Browses(options, context, notes));
  if (!options.diff_base.empty()) {
    TRY(CheckDiffOptions(options));
    options.command = ReportCommand::kDiff;
  } else if (options.annotate.on) {
    TRY(CheckAnnotate(options));
    options.command = ReportCommand::kAnnotate;
  } else if (browse) {
    options.command = ReportCommand::kBrowse;
  } else if (IsExport(options.format)) {
    TRY(CheckExport(options));
    options.command = ReportCommand::kExport;
  } else if (options.script && !options.header_only && !options.stats) {
    options.command = ReportCommand::kScript;
  } else {
    options.command = ReportCommand::kReport;
  }
  const LoadPlan plan = EntryOf(options.command).plan(options);
  options.load.unwind = plan.unwind;
  options.load.chains = plan.chains;
  options.load.chain_leaf = plan.chain_leaf;
  options.load.merge_samples = plan.merge_samples;
  options.load.symbolize = !options.header_only;
  options.load.show_progress = context.progress;
  return {};
}

Result<ReportOutput> RunReport(const ReportOptions& options) {
  return EntryOf(options.command).run(options);
}

}  // namespace sample::report
