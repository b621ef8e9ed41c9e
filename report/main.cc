// sample-report: print profiles from a recording (sample.data or perf.data). Options only; the
// work is RunReport's (report/report_runner.h).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "libsample/comma_list.h"
#include "libsample/cpu_list.h"
#include "libsample/model/flat_profile.h"
#include "libsample/model/sample_filter.h"
#include "libsample/option_number.h"
#include "libsample/symbols/function_names.h"
#include "libsample/version.h"
#include "report/annotate_cache.h"
#include "report/diff/diff_runner.h"
#include "report/output_file.h"
#include "report/output_format.h"
#include "report/report_runner.h"
#include "report/text/display_text.h"
#include "report/tui/terminal_browser.h"
#include "report/views/call_graph_spec.h"
#include "report/views/sort_keys.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "Usage: sample-report [options]\n"
    "Prints the profile recorded in a sample.data (or perf.data) file.\n";

size_t Whole(const char* option, const std::string& text, const char* what,
             sample::WholeRange range) {
  auto value = sample::ParseWholeOption(option, text, what, range);
  if (!value) throw po::error(value.error().message);
  return static_cast<size_t>(*value);
}

// --format's value, else what -o's extension names, else text.
sample::report::OutputFormat OutputFormatFor(const std::string& format, const std::string& output) {
  if (!format.empty()) {
    auto parsed = sample::report::ParseOutputFormat(format);
    if (!parsed) throw po::error(parsed.error().message);
    return *parsed;
  }
  if (!output.empty()) {
    if (auto by_extension = sample::report::FormatForPath(output)) return *by_extension;
  }
  return sample::report::OutputFormat::kText;
}

// The filter options as typed (comma lists, a CPU list, --time).
struct FilterText {
  std::string comms, pids, tids, cpus, dsos, symbols, time;
};

std::vector<std::string> Strings(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  for (std::string_view part : sample::SplitCommaList(text)) out.emplace_back(part);
  return out;
}

std::vector<uint32_t> Ids(const std::string& text, const char* option) {
  std::vector<uint32_t> out;
  if (text.empty()) return out;
  for (std::string_view part : sample::SplitCommaList(text)) {
    uint32_t id = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), id);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
      throw po::error(fmt::format("{} '{}': '{}' is not a number", option, text, part));
    }
    out.push_back(id);
  }
  return out;
}

// The filters as typed values, checked before any file is read; --time's
// windows become times when a recording's first and last sample are known.
sample::SampleFilterSpec ParseFilters(const FilterText& text) {
  sample::SampleFilterSpec spec;
  spec.lists.comms = Strings(text.comms);
  spec.lists.dsos = Strings(text.dsos);
  // Commas inside a C++ signature's brackets do not split.
  if (!text.symbols.empty()) spec.lists.symbols = sample::SplitFunctionList(text.symbols);
  spec.lists.pids = Ids(text.pids, "--pid");
  spec.lists.tids = Ids(text.tids, "--tid");
  if (!text.cpus.empty()) {
    auto cpus = sample::ParseCpuList(text.cpus);
    if (!cpus) throw po::error("--cpu: " + cpus.error().message);
    spec.lists.cpus = std::move(*cpus);
  }
  if (!text.time.empty()) {
    auto time = sample::TimeSpec::Parse(text.time);
    if (!time) throw po::error(time.error().message);
    spec.time = std::move(*time);
  }
  return spec;
}

// --diff BASE [NEW]: NEW is -i's file unless given here.
// Options that shape one recording's table are refused rather than ignored.
void SetDiffFiles(const std::vector<std::string>& files, const po::variables_map& vm,
                  sample::report::ReportOptions& options) {
  if (files.empty() || files.size() > 2) {
    throw po::error("--diff takes BASE [NEW] (NEW defaults to -i's file), not " +
                    std::to_string(files.size()) + " files");
  }
  // Its rows are dso,sym; -d recordings' by the data object too, which
  // --sort dso_daddr,dso,sym (in any order) asks for.
  const std::vector<sample::SortKey>& keys = options.view.sort_keys;
  const bool by_data_object = std::ranges::find(keys, sample::SortKey::kDsoDaddr) != keys.end() &&
                              std::ranges::all_of(keys, [](sample::SortKey key) {
                                return key == sample::SortKey::kDso ||
                                       key == sample::SortKey::kSym ||
                                       key == sample::SortKey::kDsoDaddr;
                              });
  for (const char* option : {"sort", "percent-limit", "percentage"}) {
    if (vm.count(option) && !vm[option].defaulted() &&
        !(option == std::string("sort") && by_data_object)) {
      throw po::error(std::string("--diff matches functions by shared object and symbol (and "
                                  "with --sort dso_daddr,dso,sym the data object) and compares "
                                  "relative shares; --") +
                      option + " does not apply to it");
    }
  }
  if (files.size() == 2 && vm.count("input")) {
    throw po::error("--diff BASE NEW and -i both name the new file: give one");
  }
  options.diff_base = files[0];
  if (files.size() == 2) options.input = files[1];
  if (auto ok = sample::report::CheckDiffOptions(options); !ok) throw po::error(ok.error().message);
}

}  // namespace

// libdw keeps every binary it unwinds through open (an fd and a map per
// file, per process, per -j thread): take the hard limit on open files, as
// the soft default of 1024 can run out on machine-wide recordings.
void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int main(int argc, char** argv) {
  RaiseOpenFileLimit();
  sample::report::ReportOptions options;
  sample::report::ViewOptions& view = options.view;
  FilterText filters;
  std::string sort = "comm,dso,sym";
  std::string call_graph;
  std::string percentage = "relative";
  std::string format;
  std::string folded_weight = "samples";
  std::vector<std::string> diff_files;
  std::vector<std::string> inputs;
  bool no_children = false;
  bool children = false;
  bool no_debuginfod = false;
  bool no_toggle = false;
  bool no_cache = false;
  bool no_inline = false;
  bool show_switches = false;
  bool show_all = false;
  bool inverted = false;
  std::string asm_style = "att";
  std::string max_stack, percent_limit, jobs;  // numbers, checked after parsing
  po::options_description desc("Options");
  // One option a line reads better than the formatter's layout.
  // clang-format off
  desc.add_options()
      ("help,h", "show this help")
      ("version", "print the version and the git commit built from")
      ("input,i", po::value(&inputs)->multitoken()->composing()->value_name("FILE..."),
       "input file (default sample.data); several (-i A B, a glob of --switch-output files, or "
       "-i repeated) are reported as one recording")
      ("call-graph,g", po::value(&call_graph)->implicit_value(""),
       "show call chains under each entry: [graph|fractal|flat|folded|none][,THRESHOLD%]"
       "[,caller|callee] (default graph,0.5)")
      ("inverted,G", po::bool_switch(&inverted), "same as -g caller")
      ("max-stack", po::value(&max_stack),
       "use at most this many frames of each chain, from the leaf (default all)")
      ("children", po::bool_switch(&children),
       "add callers' shares (default when the file has call chains)")
      ("no-children", po::bool_switch(&no_children), "only the samples' own functions")
      ("sort,s", po::value(&sort),
       "sort keys: comm,pid,tid,dso,sym,cpu,srcline,inline,dso_daddr,symbol_daddr (default "
       "comm,dso,sym; sym is the function holding the address, inline the innermost inlined call "
       "there; dso_daddr and symbol_daddr the mapping and the address of -d's data address)")
      ("no-inline", po::bool_switch(&no_inline), "leave inlined calls out of call chains")
      ("show-nr-samples,n", po::bool_switch(&view.show_nr_samples), "show a Samples column")
      ("show-total-period", po::bool_switch(&view.show_total_period), "show a Period column")
      ("percent-limit", po::value(&percent_limit), "hide entries below this percentage")
      ("percentage", po::value(&percentage),
       "relative (default): percentages of the samples the filters keep; absolute: of all "
       "samples of the event")
      ("comm", po::value(&filters.comms), "only these commands (comma list)")
      ("pid", po::value(&filters.pids), "only these process ids (comma list)")
      ("tid", po::value(&filters.tids), "only these thread ids (comma list)")
      ("cpu,C", po::value(&filters.cpus), "only these CPUs (0,2-3)")
      ("dso,d", po::value(&filters.dsos), "only samples in these DSOs (comma list)")
      ("symbols", po::value(&filters.symbols),
       "only samples in these functions (comma list; C++ names with or without parameters)")
      ("full-signature", po::bool_switch(&options.load.full_signatures),
       "name C++ functions with their parameter lists (default: as perf, without them, "
       "except overloads that would read alike)")
      ("time", po::value(&filters.time),
       "only samples in START,END seconds after the first sample, or P%/N, A%-B% slices")
      ("diff", po::value(&diff_files)->multitoken(),
       "compare with a baseline, as perf diff: --diff BASE [NEW] (NEW defaults to -i's file)")
      ("header", po::bool_switch(&options.header), "print the recording's header first")
      ("header-only", po::bool_switch(&options.header_only), "print only the header")
      ("stats", po::bool_switch(&options.stats), "print record counts and problems found")
      ("wall", po::bool_switch(&options.load.wall),
       "with an --off-cpu recording: also a wall-clock profile per thread, its on-CPU "
       "(cpu-clock or task-clock) samples and its time off the CPU together")
      ("annotate", po::value(&options.annotate.symbols)->multitoken()->zero_tokens(),
       "show where in each function the samples fell, by instruction and source line, as "
       "perf annotate: --annotate [SYMBOL...] (default: the hottest functions)")
      ("annotate-source", po::bool_switch(&options.annotate.source_only),
       "with --annotate: one row per source line instead of instructions")
      ("disassembler-style,M", po::value(&asm_style),
       "with --annotate: att (default, as objdump and perf) or intel")
      ("no-cache", po::bool_switch(&no_cache),
       "with --annotate: neither read nor write the index of the recording's samples kept in "
       "~/.cache/sample/annotate (each run reads the whole recording)")
      ("script", po::bool_switch(&options.script),
       "print every sample with its call chain, as perf script")
      ("show-switch-events", po::bool_switch(&show_switches),
       "with --script: also the context switch records (PERF_RECORD_SWITCH)")
      ("show-all-records", po::bool_switch(&show_all),
       "with --script: also every other non-sample record (switches, COMM, MMAP2, FORK, "
       "EXIT, THROTTLE, LOST, ...)")
      ("format", po::value(&format),
       "text (default), json, folded, svg, html, pprof, speedscope or gecko")
      ("output,o", po::value(&options.output),
       "write to this file (its extension picks the format when --format is not given)")
      ("event", po::value(&options.exports.event),
       "exports: only this event (default: every event with samples)")
      ("folded-weight", po::value(&folded_weight),
       "exports: a stack's count or width is its samples (default) or period")
      ("icicle", po::bool_switch(&options.exports.icicle),
       "flame graphs: draw the roots at the top")
      ("symfs", po::value(&options.load.binaries.files.symfs),
       "read binaries from this directory (recorded path appended), as perf --symfs")
      ("no-debuginfod", po::bool_switch(&no_debuginfod),
       "never ask debuginfod servers (DEBUGINFOD_URLS) for missing binaries or debug info")
      ("jobs,j", po::value(&jobs),
       "threads for reading the file (default: one per core)")
      ("no-toggle", po::bool_switch(&no_toggle),
       "keep a toggled event's samples outside its on..off windows too (the header still "
       "counts them)")
      ("force,f", po::bool_switch(&options.load.binaries.force),
       "use binaries even when their build-id differs from the recorded one")
      ("group", "accepted for perf users: group members are always shown beside their leader")
      ("stdio", "text output, not the interactive browser a terminal gets by default")
      ("tui", "the interactive browser (the default when standard input and output are a "
              "terminal and no other output is asked for)");
  // clang-format on
  try {
    po::variables_map vm;
    const po::parsed_options parsed =
        po::command_line_parser(sample::report::JoinCallGraphArgument(argc, argv))
            .options(desc)
            .run();
    po::store(parsed, vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << kUsage << desc;
      return 0;
    }
    if (vm.count("version")) {
      std::cout << sample::VersionLine("sample-report") << "\n";
      return 0;
    }
    options.filters = ParseFilters(filters);
    options.annotate.on = vm.count("annotate") != 0 || options.annotate.source_only;
    if (asm_style != "att" && asm_style != "intel") {
      throw po::error("--disassembler-style (-M) takes att or intel");
    }
    options.annotate.syntax =
        asm_style == "intel" ? sample::AsmSyntax::kIntel : sample::AsmSyntax::kAtt;
    if (no_cache && !options.annotate.on) throw po::error("--no-cache is an option of --annotate");
    if (options.annotate.on && !no_cache) {
      std::vector<std::pair<std::string, std::vector<std::string>>> given;
      for (const po::option& o : parsed.options) given.emplace_back(o.string_key, o.value);
      options.annotate_cache = sample::report::AnnotateCacheOptions(given);
    }
    if (vm.count("max-stack")) {
      // perf's --max-stack 0 keeps no frames; ours would keep whole chains,
      // so the range starts at 1 (whole chains: leave it out).
      view.max_stack = Whole("--max-stack", max_stack, "frames", {1, UINT32_MAX});
    }
    if (vm.count("jobs")) {
      options.load.jobs = Whole("-j", jobs, "threads", {1, 1024});
    }
    if (vm.count("percent-limit")) {
      auto limit =
          sample::ParseDecimalOption("--percent-limit", percent_limit, "percent", {0, 100});
      if (!limit) throw po::error(limit.error().message);
      view.percent_limit = *limit;
    }
    if (children && no_children) throw po::error("--children and --no-children contradict");
    if (children) view.children = true;
    if (no_children) view.children = false;
    if (vm.count("call-graph") || inverted) {
      auto spec = sample::report::ParseCallGraphSpec(call_graph);
      if (!spec) throw po::error(spec.error().message);
      if (inverted) spec->order = sample::CallOrder::kCaller;
      view.call_graph = *spec;
    }
    if (percentage != "relative" && percentage != "absolute") {
      throw po::error("--percentage takes relative or absolute");
    }
    view.relative_percentage = percentage == "relative";
    options.format = OutputFormatFor(format, options.output);
    if (folded_weight != "samples" && folded_weight != "period") {
      throw po::error("--folded-weight takes samples or period");
    }
    options.exports.weight = folded_weight == "period" ? sample::report::ExportWeight::kPeriod
                                                       : sample::report::ExportWeight::kSamples;
    if (!inputs.empty()) {
      options.input = inputs.front();
      options.load.more_inputs.assign(inputs.begin() + 1, inputs.end());
      if (!options.load.more_inputs.empty() && vm.count("diff")) {
        throw po::error("--diff compares two recordings: give -i one file");
      }
    }
    auto keys = sample::report::ParseSortKeys(sort);
    if (!keys) throw po::error(keys.error().message);
    view.sort_keys = std::move(*keys);
    if (vm.count("diff")) SetDiffFiles(diff_files, vm, options);
    options.load.srclines = std::find(view.sort_keys.begin(), view.sort_keys.end(),
                                      sample::SortKey::kSrcline) != view.sort_keys.end();
    options.load.inline_frames = !no_inline;
    options.load.binaries.files.use_debuginfod = !no_debuginfod;
    options.load.apply_toggles = !no_toggle;
    if ((show_switches || show_all) && !options.script) {
      throw po::error(std::string(show_all ? "--show-all-records" : "--show-switch-events") +
                      " is an option of --script");
    }
    if (show_all) {
      options.load.sideband = sample::report::KeepSideband::kAll;
    } else if (show_switches) {
      options.load.sideband = sample::report::KeepSideband::kSwitches;
    }
    // The browser, as perf report's, unless some other output was asked for.
    const char* other_output =
        vm.count("stdio")                                  ? "--stdio"
        : options.format != sample::report::OutputFormat::kText ? "--format"
        : !options.output.empty()                          ? "-o"
        : options.script                                   ? "--script"
        : options.header || options.header_only            ? "--header"
        : options.stats                                    ? "--stats"
        : options.annotate.on                              ? "--annotate"
        : !options.diff_base.empty()                       ? "--diff"
                                                           : nullptr;
    const bool terminal = isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0;
    if (vm.count("tui") != 0) {
      if (other_output != nullptr) {
        throw po::error(std::string("--tui is the interactive browser: leave out ") + other_output);
      }
      if (!terminal) throw po::error("--tui needs a terminal on standard input and output");
    }
    // A terminal whose type terminfo does not know gets the text, said.
    options.tui = other_output == nullptr && terminal;
    std::string unusable;
    if (options.tui && !sample::report::TerminalBrowserUsable(&unusable)) {
      if (vm.count("tui") != 0) throw po::error("--tui: " + unusable);
      std::cerr << "sample-report: " << unusable << ": printing the text report\n";
      options.tui = false;
    }
    // Call chains matter to every view but the flat profile without
    // children and call graph (as perf, which then unwinds nothing either);
    // --stats shows the unwinding counts.
    // (No call graph unless asked for: --no-children alone is flat too.)
    // --diff compares self shares unless --children, as perf diff.
    const bool flat_only =
        !view.children.value_or(options.diff_base.empty()) &&
        (!view.call_graph || view.call_graph->mode == sample::report::CallGraphMode::kNone);
    // --annotate reads each sample's own address only: no unwinding (a
    // leaf's caller found by CFI cost a step a sample, half of an fp,leaf
    // recording's annotate time) and no chains to intern and name.
    // The browser unfolds call graphs whatever -g said.
    options.load.unwind = (!flat_only || options.tui || options.script || options.stats ||
                           sample::report::IsExport(options.format)) &&
                          !options.header_only && !options.annotate.on;
    options.load.chains = !options.annotate.on;
    // Views that read no sample's time or order take samples that differ
    // only in time as one: memory for distinct samples, not every sample.
    options.load.merge_samples = !options.script && !options.tui && !options.stats &&
                                 !options.filters.time &&
                                 !sample::report::ExportsSampleTimes(options.format);
    options.load.symbolize = !options.header_only;
    options.load.show_progress = isatty(STDERR_FILENO) != 0;
  } catch (const std::exception& e) {
    std::cerr << "sample-report: " << e.what() << "\n" << kUsage;
    return 2;
  }

  auto output = sample::report::RunReport(options);
  // Messages quote paths and names from the file: one line each, no
  // control characters.
  if (!output) {
    std::cerr << "sample-report: " << sample::report::ShowableText(output.error().message, false)
              << "\n";
    return 1;
  }
  for (const std::string& warning : output->warnings) {
    std::cerr << "sample-report: warning: " << sample::report::ShowableText(warning, false)
              << "\n";
  }
  if (output->stream) {
    // Streamed (--script): a reader that went away (`| head`) ends the run
    // quietly, as SIGPIPE would where it is not ignored.
    auto written = output->stream(STDOUT_FILENO);
    if (!written && written.error().sys_errno != EPIPE) {
      std::cerr << "sample-report: " << written.error().message << "\n";
    }
    return written ? output->status : 1;
  }
  if (!options.output.empty()) {
    auto written = sample::report::WriteOutputFile(options.output, output->text);
    if (!written) {
      std::cerr << "sample-report: " << written.error().message << "\n";
      return 1;
    }
    return 0;
  }
  if (sample::report::IsBinary(options.format) && isatty(STDOUT_FILENO)) {
    std::cerr << "sample-report: --format " << sample::report::FormatName(options.format)
              << " writes binary data; give -o FILE or redirect standard output\n";
    return 1;
  }
  std::cout << output->text;
  return output->status;
}
