// sample-report: print profiles from a sample.data file.
#include <iostream>
#include <string>

#include <boost/program_options.hpp>

#include "libsample/profile.h"
#include "report/report_pipeline.h"
#include "report/text_printer.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "Usage: sample-report [options]\n"
    "Prints the profile recorded in a sample.data file.\n";

}  // namespace

int main(int argc, char** argv) {
  std::string input = "sample.data";
  std::string sort = "comm,dso,sym";
  bool call_graph = false;
  bool no_children = false;
  bool children = false;
  double percent_limit = 0;
  sample::report::LoadOptions load;
  po::options_description desc("Options");
  desc.add_options()("help,h", "show this help")("input,i", po::value(&input),
                                                 "input file (default sample.data)")(
      "call-graph,g", po::bool_switch(&call_graph), "show call chains under each entry")(
      "children", po::bool_switch(&children),
      "add callers' shares (default when the file has call chains)")(
      "no-children", po::bool_switch(&no_children), "only the samples' own functions")(
      "sort,s", po::value(&sort), "sort keys: comm,pid,tid,dso,sym,cpu (default comm,dso,sym)")(
      "percent-limit", po::value(&percent_limit), "hide entries below this percentage")(
      "jobs,j", po::value(&load.jobs), "threads for reading the file (default: one per core)")(
      "force,f", po::bool_switch(&load.force),
      "use binaries even when their build-id differs from the recorded one")(
      "stdio", "text output (the default; accepted for perf users)");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << kUsage << desc;
      return 0;
    }
    if (children && no_children) throw po::error("--children and --no-children contradict");
  } catch (const std::exception& e) {
    std::cerr << "sample-report: " << e.what() << "\n" << kUsage;
    return 2;
  }

  auto keys = sample::ParseSortKeys(sort);
  if (!keys) {
    std::cerr << "sample-report: " << keys.error().message << "\n";
    return 2;
  }
  auto recording = sample::report::LoadRecording(input, load);
  if (!recording) {
    std::cerr << "sample-report: " << recording.error().message << "\n";
    return 1;
  }
  for (const std::string& warning : recording->warnings) {
    std::cerr << "sample-report: warning: " << warning << "\n";
  }

  // One section per event that has samples, as perf prints them.
  const sample::Profile& profile = recording->profile;
  bool first = true;
  for (uint32_t event = 0; event < profile.event_count(); ++event) {
    if (profile.sample_count(event) == 0 && profile.event_count() > 1) continue;
    sample::FlatOptions flat;
    flat.event = event;
    flat.sort_keys = *keys;
    flat.children = children || (!no_children && profile.has_callchains());
    flat.call_graph = call_graph;
    const auto entries = sample::BuildFlatProfile(profile, flat);

    sample::report::TextOptions text;
    text.event = event;
    text.children = flat.children;
    text.call_graph = call_graph;
    text.percent_limit = percent_limit;
    text.sort_keys = *keys;
    if (!first) std::cout << "\n\n";
    first = false;
    std::cout << sample::report::FormatTextReport(*recording, entries, text);
  }
  return 0;
}
