// sample-top: the hottest functions of the last interval, live, as perf top.
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "libsample/cli/command_line.h"
#include "libsample/option_number.h"
#include "libsample/version.h"
#include "report/text/text_printer.h"
#include "report/tui/terminal_browser.h"
#include "report/views/event_sections.h"
#include "record/record_flags.h"
#include "report/report_flags.h"
#include "report/views/sort_keys.h"
#include "top/live_session.h"

namespace {

constexpr const char* kUsage =
    "Usage: sample-top [options] [-a | -p PID | -t TID | -C CPUS]\n"
    "Samples the whole machine (or the processes, threads or CPUs given) and shows the\n"
    "hottest functions of the last interval, refreshed every -d seconds: browsed on a\n"
    "terminal with sample-report's keys (and s to save what was seen so far as a\n"
    "recording), else printed as one table per interval.\n"
    "The man page sample-top(1) says more of each option.\n";

struct Parsed {
  sample::top::TopOptions top;
  sample::report::ReportOptions report;
  bool stdio = false;
  bool help = false;
  bool version = false;
};

// sample-record's target, sampling and call-chain groups and sample-report's
// rows, with sample-top's own defaults; then its own options.
void AddTopGroups(sample::cli::CommandLine& line, Parsed& out) {
  sample::record::RecordOptions& record = out.top.record;
  record.output = "sample-top.data";
  sample::report::ViewOptions& view = out.report.view;
  view.sort_keys = {sample::SortKey::kDso, sample::SortKey::kSym};
  view.percent_limit = 0.5;
  sample::record::AddTargetGroup(line, record.target);
  sample::record::AddSamplingGroup(line, record);
  sample::record::AddCallChainGroup(line, record);
  sample::report::AddRowsGroup(line, view);
  sample::cli::Group& own = line.AddGroup("Display");
  own.Value("delay,d", "seconds", "seconds between refreshes (default 1; 0.1 to 3600)",
            [&out](const std::string& text) -> sample::Result<void> {
              TRY_ASSIGN(const double seconds,
                         sample::ParseDecimalOption("-d", text, "seconds",
                                                    {0.1, 3600, /*min_exclusive=*/false}));
              out.top.interval_ms = static_cast<uint64_t>(seconds * 1000 + 0.5);
              return {};
            })
      .Flag("stdio", "one table per interval, even on a terminal", &out.stdio)
      .Value("output,o", "file", "where s saves: FILE.<date-time> (default sample-top.data)",
             &record.output);
  sample::record::AddDurationOption(own, record);
  sample::cli::AddInformationGroup(line, &out.help, &out.version);
  line.AddCheck([&out](const sample::cli::Given&) -> sample::Result<void> {
    sample::record::TargetOptions& target = out.top.record.target;
    if (target.pids.empty() && target.tids.empty() && target.cpu_list.empty()) {
      target.all_cpus = true;
    }
    // sample-top records no data addresses (sample-record -d does).
    return sample::report::CheckDataSortKeys(out.report.view.sort_keys, false, "sample-top");
  });
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
  for (int i = 0; i < argc; ++i) parsed.top.record.invocation.push_back(argv[i]);
  sample::cli::CommandLine line(kUsage);
  AddTopGroups(line, parsed);
  if (auto given = line.Parse(sample::cli::Arguments(argc, argv)); !given) {
    std::cerr << "sample-top: " << given.error().message << "\n" << kUsage;
    return 2;
  }
  if (parsed.help || parsed.version) {
    std::cout << (parsed.help ? line.Help() : sample::VersionLine("sample-top") + "\n");
    return 0;
  }
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
    const sample::report::BrowseOptions browse{parsed.report.view, parsed.report.filters};
    status = sample::report::RunLiveBrowser((*session)->recording(), browse, **session);
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
