#include "report/report_flags.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "libsample/comma_list.h"
#include "libsample/cpu_list.h"
#include "libsample/option_number.h"
#include "libsample/symbols/function_names.h"
#include "report/annotate_cache.h"
#include "report/views/call_graph_spec.h"
#include "report/views/sort_keys.h"

namespace sample::report {

const char* const kReportUsage =
    "Usage: sample-report [options]\n"
    "Prints the profile recorded in a sample.data (or perf.data) file.\n"
    "The man page sample-report(1) says more of each option.\n";

namespace {

std::vector<std::string> Strings(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view part : SplitCommaList(text)) out.emplace_back(part);
  return out;
}

Result<std::vector<uint32_t>> Ids(const std::string& text, const char* option) {
  std::vector<uint32_t> out;
  for (std::string_view part : SplitCommaList(text)) {
    uint32_t id = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), id);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
      return Fail(fmt::format("{} '{}': '{}' is not a number", option, text, part));
    }
    out.push_back(id);
  }
  return out;
}

// An action that stores a comma list's strings.
cli::ValueAction StringList(std::vector<std::string>& target) {
  return [&target](const std::string& text) -> Result<void> {
    target = Strings(text);
    return {};
  };
}

cli::ValueAction IdList(std::vector<uint32_t>& target, const char* option) {
  return [&target, option](const std::string& text) -> Result<void> {
    TRY_ASSIGN(target, Ids(text, option));
    return {};
  };
}

// An action that refuses a value other than `yes` and `no`'s names.
cli::ValueAction Choice(const char* option, const char* yes, const char* no, bool& target) {
  return [=, &target](const std::string& text) -> Result<void> {
    if (text != yes && text != no) return Fail(fmt::format("{} takes {} or {}", option, yes, no));
    target = text == yes;
    return {};
  };
}

void AddInputGroup(cli::CommandLine& line, ReportRequest& request) {
  ReportOptions& options = request.options;
  LoadOptions& load = options.load;
  line.AddGroup("Input")
      .List("input,i", "file", true, "the recording (default sample.data); several read as one",
            [&request](const std::vector<std::string>& files) -> Result<void> {
              request.inputs.insert(request.inputs.end(), files.begin(), files.end());
              return {};
            })
      .Value("jobs,j", "n", "threads that read the file (default one per core)",
             cli::Whole(load.jobs, "-j", "threads", {1, 1024}))
      .Flag("no-toggle", "keep a toggled event's samples outside its windows too",
            cli::Assign(load.apply_toggles, false))
      .Flag("wall", "with --off-cpu: wall-clock time a thread, on and off the CPU",
            &load.wall)
      .Check([&request](const cli::Given&) -> Result<void> {
        // -i A B, or -i repeated: the first is `input`, the rest are read with it.
        if (request.inputs.empty()) return {};
        request.options.input = request.inputs.front();
        request.options.load.more_inputs.assign(request.inputs.begin() + 1, request.inputs.end());
        return {};
      });
  line.AddGroup("Names and binaries")
      .Value("symfs", "dir", "read binaries under DIR (recorded path appended), as perf",
             &load.binaries.files.symfs)
      .Flag("no-debuginfod", "never ask debuginfod servers for missing files",
            cli::Assign(load.binaries.files.use_debuginfod, false))
      .Flag("force,f", "use binaries whose build-id differs from the recorded one",
            &load.binaries.force)
      .Flag("full-signature", "C++ functions with their parameter lists", &load.full_signatures)
      .Flag("no-inline", "leave inlined calls out of call chains",
            cli::Assign(load.inline_frames, false));
}

void AddFilterGroup(cli::CommandLine& line, SampleFilterSpec& spec) {
  line.AddGroup("Filters")
      .Value("comm", "comms", "only these commands (comma list)", StringList(spec.lists.comms))
      .Value("pid", "pids", "only these processes", IdList(spec.lists.pids, "--pid"))
      .Value("tid", "tids", "only these threads", IdList(spec.lists.tids, "--tid"))
      .Value("cpu,C", "cpus", "only these CPUs, such as 0,2-3",
             [&spec](const std::string& text) -> Result<void> {
               auto cpus = ParseCpuList(text);
               if (!cpus) return Fail("--cpu: " + cpus.error().message);
               spec.lists.cpus = std::move(*cpus);
               return {};
             })
      .Value("dso,d", "dsos", "only samples in these DSOs", StringList(spec.lists.dsos))
      .Value("symbols", "names", "only samples in these functions",
             [&spec](const std::string& text) -> Result<void> {
               // Commas inside a C++ signature's brackets do not split.
               spec.lists.symbols = SplitFunctionList(text);
               return {};
             })
      .Value("time", "when", "only START,END seconds in, or P%/N, A%-B% slices",
             cli::Into(spec.time, TimeSpec::Parse));
}

void AddCallGraphGroup(cli::CommandLine& line, ViewOptions& view) {
  line.AddGroup("Call graph")
      .Optional("call-graph,g", "mode", "",
                "graph|fractal|flat|folded|none[,THRESHOLD%][,caller|callee]",
                [&view](const std::string& text) -> Result<void> {
                  const bool caller = view.call_graph && view.call_graph->order == CallOrder::kCaller;
                  TRY_ASSIGN(view.call_graph, ParseCallGraphSpec(text));
                  if (caller) view.call_graph->order = CallOrder::kCaller;  // -G before -g
                  return {};
                })
      .NextWordIsValue(IsCallGraphArgument)
      .Flag("inverted,G", "callers first (-g caller)",
            [&view]() -> Result<void> {
              if (!view.call_graph) {
                TRY_ASSIGN(view.call_graph, ParseCallGraphSpec(""));
              }
              view.call_graph->order = CallOrder::kCaller;
              return {};
            })
      .Value("max-stack", "n", "at most N frames of each chain, from the leaf",
             // perf's --max-stack 0 keeps no frames; ours would keep whole
             // chains, so the range starts at 1.
             cli::Whole(view.max_stack, "--max-stack", "frames", {1, UINT32_MAX}));
}

void AddOutputGroup(cli::CommandLine& line, ReportRequest& request) {
  ReportOptions& options = request.options;
  line.AddGroup("Output")
      .Flag("stdio", "text, not the interactive browser a terminal gets", &request.stdio)
      .Flag("tui", "the interactive browser (the default on a terminal)", &request.tui)
      .Value("format", "name", "text, json, folded, svg, html, pprof, speedscope or gecko",
             cli::Into(options.format, ParseOutputFormat))
      .Value("output,o", "file", "write to FILE; its extension names the format", &options.output)
      .Flag("header", "the recording's header first", &options.header)
      .Flag("header-only", "only the header", &options.header_only)
      .Flag("stats", "record counts and the problems found", &options.stats)
      .Flag("script", "every sample with its call chain, as perf script", &options.script)
      .Flag("show-switch-events", "with --script: the context switch records too",
            [&options]() -> Result<void> {
              if (options.load.sideband == KeepSideband::kNone) {
                options.load.sideband = KeepSideband::kSwitches;
              }
              return {};
            })
      .Flag("show-all-records", "with --script: every other record too",
            [&options]() -> Result<void> {
              options.load.sideband = KeepSideband::kAll;
              return {};
            })
      .Flag("group", "for perf users: members always show beside their leader",
            []() -> Result<void> { return {}; })
      .Check([&options](const cli::Given& given) -> Result<void> {
        for (const char* name : {"show-all-records", "show-switch-events"}) {
          if (given.Has(name) && !options.script) {
            return Fail(fmt::format("--{} is an option of --script", name));
          }
        }
        return {};
      });
  line.AddGroup("Exports")
      .Value("event", "name", "only this event (default every event with samples)",
             &options.exports.event)
      .Value("folded-weight", "weight", "a stack's weight: samples (default) or period",
             [&options](const std::string& text) -> Result<void> {
               bool period = false;
               TRY(Choice("--folded-weight", "period", "samples", period)(text));
               options.exports.weight = period ? ExportWeight::kPeriod : ExportWeight::kSamples;
               return {};
             })
      .Flag("icicle", "flame graphs: the roots at the top", &options.exports.icicle);
}

void AddAnnotateGroup(cli::CommandLine& line, ReportOptions& options) {
  AnnotateOptions& annotate = options.annotate;
  line.AddGroup("Annotate")
      .List("annotate", "symbol", false,
            "samples by instruction and source line (default: the hottest)",
            [&annotate](const std::vector<std::string>& symbols) -> Result<void> {
              annotate.on = true;
              annotate.symbols.insert(annotate.symbols.end(), symbols.begin(), symbols.end());
              return {};
            })
      .Flag("annotate-source", "with --annotate: a row a source line",
            [&annotate]() -> Result<void> {
              annotate.on = true;
              annotate.source_only = true;
              return {};
            })
      .Value("disassembler-style,M", "style", "with --annotate: att (default) or intel",
             [&annotate](const std::string& text) -> Result<void> {
               if (text != "att" && text != "intel") {
                 return Fail("--disassembler-style (-M) takes att or intel");
               }
               annotate.syntax = text == "intel" ? AsmSyntax::kIntel : AsmSyntax::kAtt;
               return {};
             })
      .Flag("no-cache", "with --annotate: no index kept in ~/.cache/sample/annotate",
            cli::Assign(options.annotate_cache, std::string()))
      .Check([&options](const cli::Given& given) -> Result<void> {
        if (given.Has("no-cache") && !options.annotate.on) {
          return Fail("--no-cache is an option of --annotate");
        }
        if (options.annotate.on && !given.Has("no-cache")) {
          options.annotate_cache = AnnotateCacheOptions(given.in_order());
        }
        return {};
      });
}

// --diff BASE [NEW]: NEW is -i's file unless given here. Options that
// shape one recording's table are refused rather than ignored.
void AddDiffGroup(cli::CommandLine& line, ReportRequest& request) {
  line.AddGroup("Compare")
      .List("diff", "<base> [<new>]", true, "compare with a baseline, as perf diff (NEW: -i's)",
            [&request](const std::vector<std::string>& files) -> Result<void> {
              request.diff_files.insert(request.diff_files.end(), files.begin(), files.end());
              return {};
            })
      .Check([&request](const cli::Given& given) -> Result<void> {
        if (!given.Has("diff")) return {};
        ReportOptions& options = request.options;
        const std::vector<std::string>& files = request.diff_files;
        if (files.empty() || files.size() > 2) {
          return Fail(fmt::format("--diff takes BASE [NEW] (NEW defaults to -i's file), not {} files",
                                  files.size()));
        }
        if (!options.load.more_inputs.empty()) {
          return Fail("--diff compares two recordings: give -i one file");
        }
        // Its rows are dso,sym; -d recordings' by the data object too,
        // which --sort dso_daddr,dso,sym (in any order) asks for.
        const std::vector<SortKey>& keys = options.view.sort_keys;
        const bool by_data_object =
            std::ranges::find(keys, SortKey::kDsoDaddr) != keys.end() &&
            std::ranges::all_of(keys, [](SortKey key) {
              return key == SortKey::kDso || key == SortKey::kSym || key == SortKey::kDsoDaddr;
            });
        for (const char* option : {"sort", "percent-limit", "percentage"}) {
          if (given.Has(option) && !(option == std::string("sort") && by_data_object)) {
            return Fail(fmt::format(
                "--diff matches functions by shared object and symbol (and with --sort "
                "dso_daddr,dso,sym the data object) and compares relative shares; --{} does not "
                "apply to it",
                option));
          }
        }
        if (files.size() == 2 && given.Has("input")) {
          return Fail("--diff BASE NEW and -i both name the new file: give one");
        }
        options.diff_base = files[0];
        if (files.size() == 2) options.input = files[1];
        return {};
      });
}

}  // namespace

void AddRowsGroup(cli::CommandLine& line, ViewOptions& view) {
  line.AddGroup("Rows")
      .Value("sort,s", "keys", "comm,pid,tid,dso,sym,cpu,srcline,inline,dso_daddr,symbol_daddr",
             cli::Into(view.sort_keys, ParseSortKeys))
      .Flag("children", "add callers' shares (default with call chains)",
            cli::Assign(view.children, true))
      .Flag("no-children", "only the samples' own functions", cli::Assign(view.children, false))
      .Flag("show-nr-samples,n", "a Samples column", &view.show_nr_samples)
      .Flag("show-total-period", "a Period column", &view.show_total_period)
      .Value("percent-limit", "percent", "hide rows below this percentage",
             cli::Decimal(view.percent_limit, "--percent-limit", "percent", {0, 100}))
      .Value("percentage", "base", "relative (default: of what the filters keep) or absolute",
             Choice("--percentage", "relative", "absolute", view.relative_percentage))
      .Check([](const cli::Given& given) -> Result<void> {
        if (given.Has("children") && given.Has("no-children")) {
          return Fail("--children and --no-children contradict");
        }
        return {};
      });
}

void AddReportGroups(cli::CommandLine& line, ReportRequest& request) {
  ReportOptions& options = request.options;
  AddInputGroup(line, request);
  AddFilterGroup(line, options.filters);
  AddRowsGroup(line, options.view);
  AddCallGraphGroup(line, options.view);
  AddOutputGroup(line, request);
  AddAnnotateGroup(line, options);
  AddDiffGroup(line, request);
  cli::AddInformationGroup(line, &request.help, &request.version);
  line.AddCheck([&options](const cli::Given& given) -> Result<void> {
    // --format's value, else what -o's extension names, else text.
    if (!given.Has("format") && !options.output.empty()) {
      TRY_ASSIGN(options.format, FormatForOutput(options.output));
    }
    options.load.srclines = std::ranges::find(options.view.sort_keys, SortKey::kSrcline) !=
                            options.view.sort_keys.end();
    return {};
  });
}

}  // namespace sample::report
