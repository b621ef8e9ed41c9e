// sample-record: record a command's samples into a sample.data file.
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "libsample/event_spec.h"
#include "record/record_session.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "Usage: sample-record [options] [--] COMMAND [ARGS...]\n"
    "Records samples of COMMAND (and its threads and children) into a file.\n";

// Options that take a value as the next argument; everything before the
// first other non-option argument (or "--") belongs to us, the rest is the
// command.
const std::set<std::string> kOptionsWithValue = {"-o", "--output", "-F", "--freq", "-c",
                                                 "--count", "-e", "--event", "-m",
                                                 "--mmap-pages", "-z", "--compression-level"};

void SplitCommandLine(int argc, char** argv, std::vector<std::string>* ours,
                      std::vector<std::string>* command) {
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;
    ours->push_back(arg);
    if (kOptionsWithValue.count(arg) != 0 && i + 1 < argc) ours->push_back(argv[++i]);
  }
  for (; i < argc; ++i) command->push_back(argv[i]);
}

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

int main(int argc, char** argv) {
  sample::record::RecordOptions options;
  std::vector<std::string> ours;
  SplitCommandLine(argc, argv, &ours, &options.command);
  for (int i = 0; i < argc; ++i) options.invocation.push_back(argv[i]);

  std::string frequency;
  po::options_description desc("Options");
  desc.add_options()
      ("help,h", "show this help")
      ("output,o", po::value(&options.output)->default_value("sample.data"),
       "output file (an existing one is renamed FILE.old)")
      ("event,e", po::value(&options.event), "event to sample: cycles (default; cpu-clock where "
       "there is no PMU), cpu-clock, task-clock, page-faults, ...")
      ("freq,F", po::value(&frequency), "samples per second (default 4000), or 'max'")
      ("count,c", po::value(&options.period), "sample every N events instead of -F")
      ("call-graph,g", po::bool_switch(&options.callchain), "record frame-pointer call chains")
      ("mmap-pages,m", po::value(&options.mmap_pages), "ring buffer data pages per CPU "
       "(a power of two; default 128 = 512 KiB)")
      ("compression-level,z", po::value(&options.zstd_level),
       "zstd level (default 1; 0 stores chunks uncompressed)")
      ("quiet,q", po::bool_switch(&options.quiet), "print nothing but errors")
      ("list-events", "list the event names this version knows");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(ours).options(desc).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << kUsage << desc;
      return 0;
    }
    if (vm.count("list-events")) {
      for (const std::string& name : sample::KnownEventNames()) std::cout << name << "\n";
      return 0;
    }
    options.event_given = vm.count("event") != 0;
    if (!frequency.empty()) {
      if (options.period != 0) throw po::error("use either -F or -c, not both");
      if (frequency == "max") {
        FILE* f = std::fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
        unsigned long long max = 0;
        if (f == nullptr || std::fscanf(f, "%llu", &max) != 1) {
          throw po::error("cannot read /proc/sys/kernel/perf_event_max_sample_rate");
        }
        std::fclose(f);
        options.frequency = max;
      } else {
        size_t used = 0;
        options.frequency = std::stoull(frequency, &used);
        if (used != frequency.size() || options.frequency == 0) throw std::invalid_argument("");
      }
    }
    if (!IsPowerOfTwo(options.mmap_pages)) {
      throw po::error(fmt::format("-m {} is not a power of two", options.mmap_pages));
    }
    if (options.zstd_level < 0 || options.zstd_level > 22) {
      throw po::error("-z takes a level from 0 to 22");
    }
  } catch (const std::invalid_argument&) {
    std::cerr << "sample-record: -F takes a positive number of samples per second or 'max'\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sample-record: " << e.what() << "\n" << kUsage;
    return 2;
  }
  if (options.command.empty()) {
    std::cerr << "sample-record: no command to record\n" << kUsage;
    return 2;
  }

  auto summary = sample::record::RunRecording(options);
  if (!summary) {
    std::cerr << "sample-record: " << summary.error().message << "\n";
    return 1;
  }
  return summary->exit_status;
}
