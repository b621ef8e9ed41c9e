// sample-top: the hottest functions of the last interval, live, as perf top.
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "libsample/option_number.h"
#include "libsample/perf/chain_capture.h"
#include "libsample/version.h"
#include "report/text/text_printer.h"
#include "report/tui/terminal_browser.h"
#include "report/views/event_sections.h"
#include "report/views/sort_keys.h"
#include "top/live_session.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "Usage: sample-top [options] [-a | -p PID | -t TID | -C CPUS]\n"
    "Samples the whole machine (or the processes, threads or CPUs given) and shows the\n"
    "hottest functions of the last interval, refreshed every -d seconds: browsed on a\n"
    "terminal with sample-report's keys (and s to save what was seen so far as a\n"
    "recording), else printed as one table per interval.\n";

struct Parsed {
  sample::top::TopOptions top;
  sample::report::ReportOptions report;
  bool stdio = false;
  bool help = false;
};

template <typename T>
T Number(const sample::Result<T>& value) {
  if (!value) throw po::error(value.error().message);
  return *value;
}

Parsed Parse(int argc, char** argv) {
  Parsed out;
  sample::record::RecordOptions& record = out.top.record;
  record.output = "sample-top.data";
  for (int i = 0; i < argc; ++i) record.invocation.push_back(argv[i]);
  std::string frequency, period, delay, duration, call_graph, sort, percent_limit = "0.5";
  bool frame_pointers = false, children = false, no_children = false;
  po::options_description desc("Options");
  // clang-format off
  desc.add_options()
      ("help,h", "show this help")
      ("version", "print the version and the git commit built from")
      ("event,e", po::value(&record.events)->composing(),
       "events to sample, as sample-record -e (default cycles, or cpu-clock where there is no PMU)")
      ("freq,F", po::value(&frequency), "samples per second (default 4000)")
      ("count,c", po::value(&period), "sample every N events instead of -F")
      (",g", po::bool_switch(&frame_pointers), "call chains (as sample-record -g)")
      ("call-graph", po::value(&call_graph)->value_name("MODE"),
       "call chains: fp, fp,leaf[,SIZE], dwarf[,SIZE] or no, as sample-record")
      ("all-cpus,a", po::bool_switch(&record.target.all_cpus),
       "every CPU, all processes (the default)")
      ("pid,p", po::value(&record.target.pids), "only these running processes")
      ("tid,t", po::value(&record.target.tids), "only these running threads")
      ("cpu,C", po::value(&record.target.cpu_list), "only these CPUs, e.g. 0,2-3")
      ("delay,d", po::value(&delay)->value_name("SECONDS"),
       "seconds between refreshes (default 1; 0.1 to 3600)")
      ("duration", po::value(&duration), "stop after this many seconds")
      ("stdio", po::bool_switch(&out.stdio), "print one table per interval, even on a terminal")
      ("sort,s", po::value(&sort)->value_name("KEYS"),
       "row keys, as sample-report --sort (default dso,sym)")
      ("children", po::bool_switch(&children), "Children and Self columns (default with -g)")
      ("no-children", po::bool_switch(&no_children), "only the samples' own functions")
      ("percent-limit", po::value(&percent_limit),
       "--stdio: hide rows below this percentage (default 0.5)")
      ("output,o", po::value(&record.output),
       "where s saves: FILE.<date-time> (default sample-top.data)");
  // clang-format on
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << kUsage << desc;
    out.help = true;
    return out;
  }
  if (vm.count("version")) {
    std::cout << sample::VersionLine("sample-top") << "\n";
    out.help = true;
    return out;
  }
  if (vm.count("count")) {
    if (vm.count("freq")) throw po::error("use either -F or -c, not both");
    record.period = Number(sample::ParseWholeOption("-c", period, "events", {1, INT64_MAX}));
  }
  if (vm.count("freq")) {
    record.frequency =
        Number(sample::ParseWholeOption("-F", frequency, "samples per second", {1, UINT32_MAX}));
  }
  if (vm.count("delay")) {
    const double seconds = Number(
        sample::ParseDecimalOption("-d", delay, "seconds", {0.1, 3600, /*min_exclusive=*/false}));
    out.top.interval_ms = static_cast<uint64_t>(seconds * 1000 + 0.5);
  }
  if (vm.count("duration")) {
    record.duration_s = Number(sample::ParseDecimalOption("--duration", duration, "seconds",
                                                          {0, 1e9, /*min_exclusive=*/true}));
  }
  if (vm.count("call-graph")) {
    auto parsed = sample::ParseChainCapture(call_graph);
    if (!parsed) throw po::error("--call-graph " + parsed.error().message);
    record.chain_capture = *parsed;
  } else if (frame_pointers) {
    record.chain_capture = sample::DefaultCallGraph();
  }
  if (record.target.pids.empty() && record.target.tids.empty() && record.target.cpu_list.empty()) {
    record.target.all_cpus = true;
  }
  sample::report::ViewOptions& view = out.report.view;
  view.sort_keys = {sample::SortKey::kDso, sample::SortKey::kSym};
  if (vm.count("sort")) view.sort_keys = Number(sample::report::ParseSortKeys(sort));
  // sample-top records no data addresses (sample-record -d does).
  if (auto data = sample::report::CheckDataSortKeys(view.sort_keys, false, "sample-top"); !data) {
    throw po::error(data.error().message);
  }
  if (children && no_children) throw po::error("--children and --no-children contradict");
  if (children) view.children = true;
  if (no_children) view.children = false;
  view.percent_limit = Number(
      sample::ParseDecimalOption("--percent-limit", percent_limit, "percent", {0, 100, false}));
  out.report.tui = true;
  return out;
}

// One table per interval, as perf top --stdio. Each says what its refresh
// cost (the new records applied and named, the table built).
int RunStdio(sample::top::LiveSession& session, const sample::report::ReportOptions& options) {
  for (;;) {
    const bool ended = session.WaitForEnd(session.interval_ms());
    const auto start = std::chrono::steady_clock::now();
    const size_t named = session.locations();
    session.Refresh();
    const sample::report::Recording& recording = session.recording();
    const sample::SampleFilter filter(options.filters, recording.profile);
    const auto sections = sample::report::BuildEventSections(recording, options.view, filter);
    sample::report::TextPrinter printer(recording, options.view);
    printer.Sections(sections);
    const std::string table = printer.Finish();
    const std::chrono::duration<double, std::milli> cost = std::chrono::steady_clock::now() - start;
    fmt::print(
        "# sample-top {}: last {:.1f} s, {} samples, {} lost so far; refreshed in {:.1f} ms, {} "
        "new locations\n{}\n",
        session.Note(), session.interval_ms() / 1000.0, recording.profile.samples().size(),
        recording.stats.lost_samples, cost.count(), session.locations() - named, table);
    std::fflush(stdout);
    if (ended) return session.Stop();
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A refresh allocates and frees the same few megabytes every second
  // (the interval's records, payloads and samples). glibc would hand
  // blocks that large back to the kernel at each free and fault them in
  // zeroed at the next refresh: a fifth of sample-top's CPU went to
  // clearing pages. Kept in the heap, they are reused.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  Parsed parsed;
  try {
    parsed = Parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "sample-top: " << e.what() << "\n" << kUsage;
    return 2;
  }
  if (parsed.help) return 0;
  std::string why;
  bool tui = !parsed.stdio && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  if (tui && !sample::report::TerminalBrowserUsable(&why)) {
    std::cerr << "sample-top: " << why << "; printing tables instead\n";
    tui = false;
  }
  auto session = sample::top::LiveSession::Start(std::move(parsed.top));
  if (!session) {
    std::cerr << "sample-top: " << session.error().message << "\n";
    return session.error().exit_status != 0 ? session.error().exit_status : 1;
  }
  int status = 0;
  if (tui) {
    (*session)->Refresh();
    status = sample::report::RunLiveBrowser((*session)->recording(), parsed.report, **session);
    const int stopped = (*session)->Stop();
    if (status == 0) status = stopped;
  } else {
    status = RunStdio(**session, parsed.report);
  }
  if (const std::string failure = (*session)->failure(); !failure.empty()) {
    std::cerr << "sample-top: " << failure << "\n";
  }
  // Stopped: what is left is memory (the kernel's symbols, open DWARF,
  // every stack seen), which freeing one piece at a time took a fifth of
  // a 15-second session's CPU. The process's end frees it at once.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}
