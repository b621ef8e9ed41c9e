// sample-record: record a command's samples into a sample.data file.
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "libsample/events/event_spec.h"
#include "libsample/option_number.h"
#include "libsample/perf/chain_capture.h"
#include "libsample/perf/perf_event.h"
#include "libsample/version.h"
#include "record/counting/counting_session.h"
#include "record/events/event_listing.h"
#include "record/recorder.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "Usage: sample-record [options] [--] COMMAND [ARGS...]\n"
    "       sample-record [options] -p PID | -t TID | -a | -C CPUS\n"
    "Records samples of COMMAND (and its threads and children), of running\n"
    "processes or threads, or of whole CPUs into a file.\n"
    "       sample-record --stat [-e EVENTS] [-I MS] [-r N] [-x SEP | -j] [target]\n"
    "Counts the events instead and prints a table like perf stat's on stderr.\n";

// Options that take a value as the next argument; everything before the
// first other non-option argument (or "--") belongs to us, the rest is the
// command.
// clang-format off
const std::set<std::string> kOptionsWithValue = {
    "-o", "--output", "-F", "--freq", "-c", "--count", "-e", "--event", "-m", "--mmap-pages",
    "-z", "--compression-level", "-p", "--pid", "-t", "--tid", "-C", "--cpu", "--duration",
    "-D", "--delay", "--control", "--call-graph", "--switch-max-files", "-I", "--interval-print", "-r", "--repeat", "-x",
    "--field-separator", "--filter", "--max-stack", "--alloc-min-size"};
// clang-format on

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
    if (arg == "--list-events" && i + 1 < argc && argv[i + 1][0] != '-') {
      // perf list takes its glob as a separate word; boost wants "=".
      ours->push_back(arg + "=" + argv[++i]);
      continue;
    }
    if (kOptionsWithValue.count(arg) != 0 && i + 1 < argc) {
      // A value that starts with '-' (-D -1) would be taken for an option:
      // it is joined to its option ("-D-1", "--delay=-1").
      const std::string value = argv[++i];
      if (value.starts_with("-")) {
        ours->push_back(arg + (arg.starts_with("--") ? "=" : "") + value);
      } else {
        ours->push_back(arg);
        ours->push_back(value);
      }
      continue;
    }
    ours->push_back(arg);
  }
  for (; i < argc; ++i) command->push_back(argv[i]);
}

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// The kernel's ceiling on -F (kernel.perf_event_max_sample_rate).
uint64_t MaxSampleRate() {
  FILE* f = std::fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
  unsigned long long max = 0;
  const bool read = f != nullptr && std::fscanf(f, "%llu", &max) == 1;
  if (f != nullptr) std::fclose(f);
  if (!read) throw po::error("cannot read /proc/sys/kernel/perf_event_max_sample_rate");
  return max;
}

template <typename T>
T Whole(const char* option, const std::string& text, const char* what, sample::WholeRange range) {
  auto value = sample::ParseWholeOption(option, text, what, range);
  if (!value) throw po::error(value.error().message);
  return static_cast<T>(*value);
}

// The numeric options, taken as text (see libsample/option_number.h).
struct NumberText {
  std::string frequency, period, mmap_pages, zstd_level, duration, delay, interval, repeat, flight,
      max_stack, switch_output, switch_max_files, alloc_min_size;
};

// --stat's own options: refused without --stat, and -x with -j.
void ParseStatOptions(const po::variables_map& vm, const NumberText& text, bool stat,
                      sample::record::CountingOptions* options) {
  for (const char* name : {"interval-print", "repeat", "field-separator", "json"}) {
    if (vm.count(name) && !stat) {
      throw po::error(fmt::format("--{} is an option of counting mode: add --stat", name));
    }
  }
  if (vm.count("interval-print")) {
    // perf's floor: shorter intervals mostly measure the reading itself.
    options->interval_ms = Whole<uint64_t>("-I", text.interval, "milliseconds", {10, UINT32_MAX});
  }
  if (vm.count("repeat")) options->repeat = Whole<int>("-r", text.repeat, "runs", {1, 100000});
  if (options->interval_ms != 0 && options->repeat > 1) {
    throw po::error("-I and -r do not combine: intervals are of one run");
  }
  if (vm.count("field-separator") && vm.count("json")) {
    throw po::error("-x and -j are two output formats: give one");
  }
  if (vm.count("field-separator")) {
    if (options->layout.separator.empty()) throw po::error("-x takes a separator, not ''");
    options->layout.format = sample::record::CountFormat::kSeparated;
  }
  if (vm.count("json")) options->layout.format = sample::record::CountFormat::kJson;
  if (!stat) return;
  // Sampling's options mean nothing to counters: refused, not ignored.
  const std::pair<const char*, const char*> sampling[] = {{"freq", "-F"},
                                                          {"count", "-c"},
                                                          {"call-graph", "--call-graph"},
                                                          {"mmap-pages", "-m"},
                                                          {"max-stack", "--max-stack"},
                                                          {"compression-level", "-z"},
                                                          {"delay", "-D"},
                                                          {"control", "--control"},
                                                          {"switch-events", "--switch-events"},
                                                          {"off-cpu", "--off-cpu"},
                                                          {"alloc", "--alloc"},
                                                          {"data", "-d"},
                                                          {"flight-recorder", "--flight-recorder"},
                                                          {"switch-output", "--switch-output"}};
  for (const auto& [name, spelled] : sampling) {
    if (vm.count(name) && !vm[name].defaulted()) {
      throw po::error(
          fmt::format("{} is an option of sampling: --stat counts without it", spelled));
    }
  }
}

void ParseNumbers(const po::variables_map& vm, const NumberText& text,
                  sample::record::RecordOptions* options) {
  if (vm.count("count")) {
    // The kernel takes the period as a u64 but refuses the top bit.
    options->period = Whole<uint64_t>("-c", text.period, "events", {1, INT64_MAX});
  }
  if (vm.count("freq")) {
    if (vm.count("count")) throw po::error("use either -F or -c, not both");
    const uint64_t max = MaxSampleRate();
    if (text.frequency == "max") {
      options->frequency = max;
    } else {
      options->frequency =
          Whole<uint64_t>("-F", text.frequency, "samples per second, or 'max'", {1, UINT32_MAX});
      if (options->frequency > max) {
        throw po::error(fmt::format(
            "-F {} is above the kernel's limit, kernel.perf_event_max_sample_rate = {}: use -F {} "
            "(or -F max), or raise the limit (sysctl kernel.perf_event_max_sample_rate={})",
            options->frequency, max, max, options->frequency));
      }
    }
  }
  if (vm.count("mmap-pages")) {
    // 2^20 pages: 4 GiB a CPU, far beyond any mlock limit.
    options->mmap_pages = Whole<size_t>("-m", text.mmap_pages, "pages", {1, 1 << 20});
    if (!IsPowerOfTwo(options->mmap_pages)) {
      throw po::error(fmt::format("-m {} is not a power of two", options->mmap_pages));
    }
  }
  if (vm.count("max-stack")) {
    // attr.sample_max_stack is 16 bits; the kernel checks it against
    // kernel.perf_event_max_stack when the event is opened (the recorder
    // says so before that).
    options->max_stack = Whole<uint32_t>("--max-stack", text.max_stack, "frames", {1, 65535});
  }
  if (vm.count("alloc-min-size")) {
    if (!options->alloc.enabled) throw po::error("--alloc-min-size is an option of --alloc");
    options->alloc.min_size =
        Whole<uint64_t>("--alloc-min-size", text.alloc_min_size, "bytes", {1, INT64_MAX});
  }
  if (vm.count("compression-level")) {
    options->zstd_level = Whole<int>("-z", text.zstd_level, "zstd level", {0, 22});
    options->zstd_small_chunk_level = 0;  // the level asked for, for every chunk
  }
  if (vm.count("duration")) {
    auto seconds = sample::ParseDecimalOption("--duration", text.duration, "seconds",
                                              {0, 1e9, /*min_exclusive=*/true});
    if (!seconds) throw po::error(seconds.error().message);
    options->duration_s = *seconds;
  }
  if (vm.count("flight-recorder")) {
    // A day at most: the window is held in memory.
    auto seconds = sample::ParseDecimalOption("--flight-recorder", text.flight, "seconds",
                                              {0, 86400, /*min_exclusive=*/true});
    if (!seconds) throw po::error(seconds.error().message);
    options->flight_seconds = *seconds;
  }
  if (vm.count("switch-output")) {
    auto policy = sample::record::ParseSwitchOutput(text.switch_output);
    if (!policy) throw po::error(policy.error().message);
    options->switch_output = *policy;
    if (vm.count("flight-recorder")) {
      throw po::error("--switch-output and --flight-recorder: give one (files on disk, or the "
                      "last seconds in memory)");
    }
  }
  if (vm.count("switch-max-files")) {
    if (!vm.count("switch-output")) throw po::error("--switch-max-files needs --switch-output");
    options->switch_output.max_files =
        Whole<size_t>("--switch-max-files", text.switch_max_files, "files", {1, 1000000});
  }
  if (vm.count("delay")) {
    if (text.delay == "-1") {
      // As perf: disabled until --control says enable (without it, until
      // never, which we refuse).
      if (options->control.empty()) {
        throw po::error(
            "-D -1 starts with sampling disabled until a control command enables it: add "
            "--control fifo:CTL[,ACK]");
      }
      options->start_disabled = true;
    } else {
      options->delay_ms =
          Whole<uint64_t>("-D", text.delay, "milliseconds, or -1 with --control", {0, UINT32_MAX});
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  sample::record::RecordOptions options;
  std::vector<std::string> ours;
  SplitCommandLine(argc, argv, &ours, &options.target.command);
  for (int i = 0; i < argc; ++i) options.invocation.push_back(argv[i]);

  NumberText numbers;
  std::string call_graph;
  bool frame_pointers = false;
  bool stat = false;
  sample::record::CountingOptions stat_options;
  po::options_description desc("Options");
  // One option a line reads better than the chained calls clang-format
  // would make of them.
  // clang-format off
  desc.add_options()
      ("help,h", "show this help")
      ("version", "print the version and the git commit built from")
      ("output,o", po::value(&options.output)->default_value("sample.data"),
       "output file (an existing one is renamed FILE.old)")
      ("event,e", po::value(&options.events)->composing(),
       "events to sample, perf syntax (repeatable, comma lists, {groups}, :modifiers, "
       "/terms/ such as call-graph=dwarf,stack-size=N, tracepoints sub:name, uprobe:PATH:SYM, "
       "kprobe:FUNC[+OFF], kretprobe:FUNC, mem:ADDR); default cycles, or cpu-clock where there is no PMU")
      ("filter", po::value<std::vector<std::string>>()->composing()->value_name("EXPR"),
       "kernel filter of the tracepoint given by the -e just before it, in the kernel's "
       "syntax: -e syscalls:sys_enter_write --filter 'count == 512 && fd == 1'; only "
       "matching hits are recorded")
      ("freq,F", po::value(&numbers.frequency), "samples per second (default 4000, but tracepoints, "
       "probes and mem: breakpoints sample every hit), or 'max'")
      ("count,c", po::value(&numbers.period), "sample every N events instead of -F")
      (",g", po::bool_switch(&frame_pointers), "call chains: frame pointers, and the callers "
       "they skip (--call-graph fp,leaf)")
      ("call-graph", po::value(&call_graph)->value_name("MODE"),
       "call chains: fp (the kernel's frame-pointer chains alone, as perf's -g); fp,leaf[,SIZE] "
       "(-g: fp, plus 3 registers and SIZE bytes of user stack, default 192, from which the "
       "report finds the callers the chain skips: of a leaf function without frame set-up, of "
       "libc's system call wrappers under --off-cpu); dwarf[,SIZE] (user frames unwound by the report "
       "with CFI from every register and SIZE bytes of user stack, default 8192, at most "
       "65528; no frame pointers needed); no")
      ("mmap-pages,m", po::value(&numbers.mmap_pages), "ring buffer data pages per CPU "
       "(a power of two; default 128 = 512 KiB, or with --call-graph dwarf at a frequency and "
       "CAP_IPC_LOCK enough for 10 ms of stack copies: at most 8 MiB per CPU, 256 MiB or 1/16 "
       "of memory in all)")
      ("max-stack", po::value(&numbers.max_stack)->value_name("N"),
       "call chains of up to N frames (attr.sample_max_stack; default the kernel's "
       "kernel.perf_event_max_stack, 127), at most that sysctl")
      ("raise-max-stack", po::bool_switch(&options.raise_max_stack),
       "raise kernel.perf_event_max_stack to --max-stack for the recording (root or "
       "CAP_SYS_ADMIN); set back when it ends, even if the recorder is killed")
      ("compression-level,z", po::value(&numbers.zstd_level),
       "zstd level for every chunk (default: 1 with the double-fast match finder, 6 for chunks "
       "up to 128 KiB; 0 stores chunks uncompressed)")
      ("pid,p", po::value(&options.target.pids), "record running processes (all threads)")
      ("tid,t", po::value(&options.target.tids), "record running threads (no inherit)")
      ("all-cpus,a", po::bool_switch(&options.target.all_cpus), "record every CPU (all processes)")
      ("cpu,C", po::value(&options.target.cpu_list), "only these CPUs, e.g. 0,2-3")
      ("no-inherit", "do not follow threads and children created later")
      ("inherit", "follow threads and children created later (default except with -t)")
      ("duration", po::value(&numbers.duration), "stop after this many seconds")
      ("delay,D", po::value(&numbers.delay), "start recording after this many milliseconds; "
       "-1: start disabled until --control's 'enable'")
      ("control", po::value(&options.control)->value_name("fifo:CTL[,ACK]"),
       "switch sampling on and off while recording: lines 'enable', 'disable', 'enable EVENT', "
       "'disable EVENT', 'stop' written to the FIFO CTL, each answered 'ack' (or 'err') on the "
       "FIFO ACK; the windows are stored and shown by sample-report --header")
      ("flight-recorder", po::value(&numbers.flight)->implicit_value("30")->value_name("SECONDS"),
       "keep only the last SECONDS (default 30) in memory and write nothing while recording; "
       "SIGUSR2 or the --control command 'snapshot' writes them to FILE.<date-time>, and the "
       "end (the command's exit, a stop signal, --duration) to FILE")
      ("switch-output", po::value(&numbers.switch_output)->implicit_value("signal")->value_name("WHEN"),
       "cut the recording into complete files, FILE.<date-time>, each readable alone: at each "
       "SIGUSR2 (signal, the default), once a file holds SIZE bytes (such as 100M; K, M, G) or "
       "every TIME (such as 30s, 10m; ms, s, m, h)")
      ("switch-max-files", po::value(&numbers.switch_max_files)->value_name("N"),
       "with --switch-output: keep only the newest N files, deleting older ones")
      ("switch-events", po::bool_switch(&options.switch_events), "record context switches")
      ("data,d", po::bool_switch(&options.data.addresses), "record each sample's data address "
       "(a page fault's faulting address, a breakpoint's watched one, a memory event's load or "
       "store) and the mappings of data: sample-report --sort dso_daddr,symbol_daddr")
      ("phys-data", po::bool_switch(&options.data.physical), "with -d, the physical address "
       "too (root; 0 where the kernel cannot tell)")
      ("data-page-size", po::bool_switch(&options.data.page_size), "with -d, the size of the "
       "page holding the data address too")
      ("off-cpu", po::bool_switch(&options.off_cpu), "also record where the threads wait off "
       "the CPU and for how long: the sched:sched_switch tracepoint with call chains, and "
       "context switches (needs tracefs, and -g or --call-graph)")
      ("alloc", po::bool_switch(&options.alloc.enabled), "record the target's calls of malloc, "
       "free and the other allocation functions, sizes, results and -g's chains, through uprobes "
       "(root): alloc-bytes, alloc-calls, leak-bytes, peak-bytes; -c N: every Nth allocation")
      ("alloc-min-size", po::value(&numbers.alloc_min_size)->value_name("BYTES"),
       "with --alloc: leave out requests of fewer than BYTES bytes (leaks are then estimates)")
      ("no-embed", "do not store, for the code samples hit, the functions, inline frames, "
       "source lines, unwind rules and machine code, nor JIT perf maps: the report then needs "
       "the binaries (and maps) to name frames")
      ("quiet,q", po::bool_switch(&options.quiet), "print nothing but errors")
      ("stat", po::bool_switch(&stat), "count the events instead of sampling them and print "
       "a table like perf stat's (default events: perf stat's, those this machine has)")
      ("interval-print,I", po::value(&numbers.interval)->value_name("MS"),
       "with --stat: print the counts of every MS milliseconds (at least 10)")
      ("repeat,r", po::value(&numbers.repeat)->value_name("N"),
       "with --stat: run the command N times, show the mean and its spread")
      ("field-separator,x", po::value(&stat_options.layout.separator)->value_name("SEP"),
       "with --stat: CSV-like lines as perf stat -x (value, unit, event, [variance,] "
       "run time, % running, metric value, metric unit)")
      ("json,j", "with --stat: JSON lines as perf stat -j")
      ("list-events", po::value<std::string>()->implicit_value(""),
       "list the events this machine offers; with GLOB, the matching tracepoints too");
  // clang-format on
  try {
    po::variables_map vm;
    const po::parsed_options parsed = po::command_line_parser(ours).options(desc).run();
    po::store(parsed, vm);
    po::notify(vm);
    // A --filter belongs to the -e before it, so their order matters.
    size_t event_arguments = 0;
    for (const po::option& option : parsed.options) {
      if (option.string_key == "event") {
        event_arguments += option.value.size();
      } else if (option.string_key == "filter") {
        const std::string expression = option.value.empty() ? "" : option.value.front();
        if (event_arguments == 0) {
          throw po::error(fmt::format(
              "--filter '{}' needs a tracepoint before it: -e SUBSYSTEM:EVENT --filter 'EXPR'",
              expression));
        }
        options.filters.push_back({event_arguments - 1, expression});
      }
    }
    if (vm.count("help")) {
      std::cout << kUsage << desc;
      return 0;
    }
    if (vm.count("version")) {
      std::cout << sample::VersionLine("sample-record") << "\n";
      return 0;
    }
    if (vm.count("list-events"))
      return sample::record::ListEvents(vm["list-events"].as<std::string>());
    if (vm.count("no-inherit") && vm.count("inherit")) {
      throw po::error("--inherit and --no-inherit contradict");
    }
    if (vm.count("no-inherit")) options.target.inherit = false;
    options.embed = vm.count("no-embed") == 0;
    if (vm.count("inherit")) options.target.inherit = true;
    ParseNumbers(vm, numbers, &options);
    ParseStatOptions(vm, numbers, stat, &stat_options);
    if (stat && frame_pointers)
      throw po::error("-g is an option of sampling: --stat counts without it");
    // Counting writes a file only when asked to, as perf stat.
    stat_options.write_file = stat && !vm["output"].defaulted();
    if (vm.count("call-graph")) {
      // --call-graph wins over -g whatever their order, as in perf.
      auto parsed = sample::ParseChainCapture(call_graph);
      if (!parsed) throw po::error("--call-graph " + parsed.error().message);
      options.chain_capture = *parsed;
    } else if (frame_pointers || options.alloc.enabled) {
      // An allocation's call chain is where it was made: --alloc has -g's.
      options.chain_capture = sample::DefaultCallGraph();
    }
    if ((options.data.physical || options.data.page_size) && !options.data.addresses) {
      throw po::error(fmt::format("{} is an option of -d: add -d",
                                  options.data.physical ? "--phys-data" : "--data-page-size"));
    }
    if (options.off_cpu && !stat && options.chain_capture.mode == sample::ChainCapture::kNone) {
      throw po::error(
          "--off-cpu needs call chains (where a thread waits is its call chain): add -g or "
          "--call-graph MODE");
    }
  } catch (const std::exception& e) {
    std::cerr << "sample-record: " << e.what() << "\n" << kUsage;
    return 2;
  }

  if (stat) {
    auto status = sample::record::RunCounting(options, stat_options);
    if (!status) {
      std::cerr << "sample-record: " << status.error().message << "\n";
      return status.error().exit_status != 0 ? status.error().exit_status : 1;
    }
    return *status;
  }
  auto summary = sample::record::RunRecording(options);
  if (!summary) {
    std::cerr << "sample-record: " << summary.error().message << "\n";
    return summary.error().exit_status != 0 ? summary.error().exit_status : 1;
  }
  return summary->exit_status;
}
