#include "record/record_flags.h"

#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "libsample/option_number.h"
#include "libsample/perf/chain_capture.h"
#include "record/control/control_fifo.h"

namespace sample::record {

const char* const kRecordUsage =
    "Usage: sample-record [options] [--] COMMAND [ARGS...]\n"
    "       sample-record [options] -p PID | -t TID | -a | -C CPUS\n"
    "Records samples of COMMAND (and its threads and children), of running\n"
    "processes or threads, or of whole CPUs into a file.\n"
    "       sample-record --stat [-e EVENTS] [-I MS] [-r N] [-x SEP | -j] [target]\n"
    "Counts the events instead and prints a table like perf stat's on stderr.\n"
    "The man page sample-record(1) says more of each option.\n";

namespace {

template <typename T>
Result<T> Whole(const char* option, const std::string& text, const char* what, WholeRange range) {
  TRY_ASSIGN(auto value, ParseWholeOption(option, text, what, range));
  return static_cast<T>(value);
}

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// The kernel's ceiling on -F (kernel.perf_event_max_sample_rate).
Result<uint64_t> MaxSampleRate() {
  FILE* f = std::fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
  unsigned long long max = 0;
  const bool read = f != nullptr && std::fscanf(f, "%llu", &max) == 1;
  if (f != nullptr) std::fclose(f);
  if (!read) return Fail("cannot read /proc/sys/kernel/perf_event_max_sample_rate");
  return max;
}

Result<uint64_t> Frequency(const std::string& text) {
  TRY_ASSIGN(const uint64_t max, MaxSampleRate());
  if (text == "max") return max;
  TRY_ASSIGN(const uint64_t frequency,
             Whole<uint64_t>("-F", text, "samples per second, or 'max'", {1, UINT32_MAX}));
  if (frequency > max) {
    return Fail(fmt::format(
        "-F {} is above the kernel's limit, kernel.perf_event_max_sample_rate = {}: use -F {} "
        "(or -F max), or raise the limit (sysctl kernel.perf_event_max_sample_rate={})",
        frequency, max, max, frequency));
  }
  return frequency;
}

// Fails when `given` holds `option` but not `needs`.
Result<void> Needs(const cli::Given& given, const char* option, const char* needs,
                   const std::string& message) {
  if (given.Has(option) && !given.Has(needs)) return Fail(message);
  return {};
}

void AddRecordingGroup(cli::CommandLine& line, RecordOptions& options) {
  line.AddGroup("Recording")
      .Value("output,o", "file", "output file (default sample.data; an old one becomes FILE.old)",
             &options.output)
      .Value("mmap-pages,m", "pages", "ring buffer data pages per CPU, a power of two",
             [&options](const std::string& text) -> Result<void> {
               // 2^20 pages: 4 GiB a CPU, far beyond any mlock limit.
               TRY_ASSIGN(options.mmap_pages, Whole<size_t>("-m", text, "pages", {1, 1 << 20}));
               if (!IsPowerOfTwo(options.mmap_pages)) {
                 return Fail(fmt::format("-m {} is not a power of two", options.mmap_pages));
               }
               return {};
             })
      .Value("compression-level,z", "level", "zstd level of every chunk (0: uncompressed)",
             [&options](const std::string& text) -> Result<void> {
               TRY_ASSIGN(options.zstd_level, Whole<int>("-z", text, "zstd level", {0, 22}));
               options.zstd_small_chunk_level = 0;  // the level asked for, for every chunk
               return {};
             })
      .Flag("no-embed", "store no symbols, unwind rules or code: reports need the binaries",
            cli::Assign(options.embed, false))
      .Optional("flight-recorder", "seconds", "30",
                "keep the last seconds (30) in memory; write at SIGUSR2, the end",
                // A day at most: the window is held in memory.
                cli::Decimal(options.flight_seconds, "--flight-recorder", "seconds",
                             {0, 86400, /*min_exclusive=*/true}))
      .Optional("switch-output", "when", "signal",
                "cut into files FILE.<date-time> at SIGUSR2, a SIZE or every TIME",
                [&options](const std::string& text) -> Result<void> {
                  const size_t kept = options.switch_output.max_files;
                  TRY_ASSIGN(options.switch_output, ParseSwitchOutput(text));
                  options.switch_output.max_files = kept;
                  return {};
                })
      .Value("switch-max-files", "n", "with --switch-output: keep only the newest N files",
             cli::Whole(options.switch_output.max_files, "--switch-max-files", "files",
                        {1, 1000000}))
      .Flag("quiet,q", "print nothing but errors", &options.quiet)
      .Check([](const cli::Given& given) -> Result<void> {
        if (given.Has("switch-output") && given.Has("flight-recorder")) {
          return Fail(
              "--switch-output and --flight-recorder: give one (files on disk, or the last "
              "seconds in memory)");
        }
        return Needs(given, "switch-max-files", "switch-output",
                     "--switch-max-files needs --switch-output");
      });
}

void AddControlGroup(cli::CommandLine& line, RecordOptions& options) {
  cli::Group& group = line.AddGroup("When to record");
  AddDurationOption(group, options);
  group
      .Value("delay,D", "ms", "start after MS milliseconds; -1: when --control says enable",
             [&options](const std::string& text) -> Result<void> {
               // As perf: -1 is disabled until --control says enable.
               if (text == "-1") {
                 options.start_disabled = true;
                 return {};
               }
               TRY_ASSIGN(options.delay_ms,
                          Whole<uint64_t>("-D", text, "milliseconds, or -1 with --control",
                                          {0, UINT32_MAX}));
               return {};
             })
      .Value("control", "fifo:CTL[,ACK]", "enable, disable, snapshot or stop by lines on a FIFO",
             [&options](const std::string& text) -> Result<void> {
               TRY(ParseControlSpec(text));  // its syntax now; the FIFOs at the start
               options.control = text;
               return {};
             })
      .Check([&options](const cli::Given&) -> Result<void> {
        // Without --control, -D -1 would wait forever: refused.
        if (options.start_disabled && options.control.empty()) {
          return Fail(
              "-D -1 starts with sampling disabled until a control command enables it: add "
              "--control fifo:CTL[,ACK]");
        }
        return {};
      });
}

void AddDataGroup(cli::CommandLine& line, RecordOptions& options) {
  line.AddGroup("What else to record")
      .Flag("switch-events", "context switches", &options.switch_events)
      .Flag("data,d", "each sample's data address, and the mappings of data",
            &options.data.addresses)
      .Flag("phys-data", "with -d: the physical address too (root)", &options.data.physical)
      .Flag("data-page-size", "with -d: the size of the data address's page",
            &options.data.page_size)
      .Flag("off-cpu", "where threads wait off the CPU, and how long (tracefs, -g)",
            &options.off_cpu)
      .Flag("alloc", "calls of malloc, free and their kin, through uprobes (root)",
            &options.alloc.enabled)
      .Value("alloc-min-size", "bytes", "with --alloc: leave out smaller requests",
             cli::Whole(options.alloc.min_size, "--alloc-min-size", "bytes", {1, INT64_MAX}))
      .Check([&options](const cli::Given& given) -> Result<void> {
        TRY(Needs(given, "alloc-min-size", "alloc", "--alloc-min-size is an option of --alloc"));
        if ((options.data.physical || options.data.page_size) && !options.data.addresses) {
          return Fail(fmt::format("{} is an option of -d: add -d",
                                  options.data.physical ? "--phys-data" : "--data-page-size"));
        }
        return {};
      });
}

void AddCountingGroup(cli::CommandLine& line, RecordRequest& request) {
  CountingOptions& counting = request.counting;
  line.AddGroup("Counting (--stat)")
      .Flag("stat", "count the events instead, and print a table as perf stat", &request.stat)
      .Value("interval-print,I", "ms", "print the counts of every MS milliseconds (at least 10)",
             // perf's floor: shorter intervals mostly measure the reading itself.
             cli::Whole(counting.interval_ms, "-I", "milliseconds", {10, UINT32_MAX}))
      .Value("repeat,r", "n", "run the command N times: the mean and its spread",
             cli::Whole(counting.repeat, "-r", "runs", {1, 100000}))
      .Value("field-separator,x", "sep", "CSV-like lines as perf stat -x",
             [&counting](const std::string& text) -> Result<void> {
               if (text.empty()) return Fail("-x takes a separator, not ''");
               counting.layout.separator = text;
               counting.layout.format = CountFormat::kSeparated;
               return {};
             })
      .Flag("json,j", "JSON lines as perf stat -j",
            cli::Assign(counting.layout.format, CountFormat::kJson))
      .Check([&request](const cli::Given& given) -> Result<void> {
        for (const char* name : {"interval-print", "repeat", "field-separator", "json"}) {
          if (given.Has(name) && !request.stat) {
            return Fail(fmt::format("--{} is an option of counting mode: add --stat", name));
          }
        }
        if (request.counting.interval_ms != 0 && request.counting.repeat > 1) {
          return Fail("-I and -r do not combine: intervals are of one run");
        }
        if (given.Has("field-separator") && given.Has("json")) {
          return Fail("-x and -j are two output formats: give one");
        }
        if (!request.stat) return {};
        // Sampling's options mean nothing to counters: refused, not ignored.
        const std::pair<const char*, const char*> sampling[] = {
            {"freq", "-F"},           {"count", "-c"},
            {"g", "-g"},              {"call-graph", "--call-graph"},
            {"mmap-pages", "-m"},     {"max-stack", "--max-stack"},
            {"compression-level", "-z"}, {"delay", "-D"},
            {"control", "--control"}, {"switch-events", "--switch-events"},
            {"off-cpu", "--off-cpu"}, {"alloc", "--alloc"},
            {"data", "-d"},           {"flight-recorder", "--flight-recorder"},
            {"switch-output", "--switch-output"}};
        for (const auto& [name, spelled] : sampling) {
          if (given.Has(name)) {
            return Fail(
                fmt::format("{} is an option of sampling: --stat counts without it", spelled));
          }
        }
        // Counting writes a file only when asked to, as perf stat.
        request.counting.write_file = given.Has("output");
        return {};
      });
}

}  // namespace

void AddTargetGroup(cli::CommandLine& line, TargetOptions& target) {
  line.AddGroup("Target")
      .Value("pid,p", "pids", "running processes (all their threads)", &target.pids)
      .Value("tid,t", "tids", "running threads (no inherit)", &target.tids)
      .Flag("all-cpus,a", "every CPU, all processes (with a command: while it runs)",
            &target.all_cpus)
      .Value("cpu,C", "cpus", "only these CPUs, such as 0,2-3", &target.cpu_list)
      .Flag("inherit", "follow threads and children created later (default but with -t)",
            cli::Assign(target.inherit, true))
      .Flag("no-inherit", "do not follow threads and children created later",
            cli::Assign(target.inherit, false))
      .Check([](const cli::Given& given) -> Result<void> {
        if (given.Has("inherit") && given.Has("no-inherit")) {
          return Fail("--inherit and --no-inherit contradict");
        }
        return {};
      });
}

void AddSamplingGroup(cli::CommandLine& line, RecordOptions& options) {
  line.AddGroup("Sampling")
      .Repeated("event,e", "events", "events in perf's syntax (default cycles, else cpu-clock)",
                [&options](const std::string& text) -> Result<void> {
                  options.events.push_back(text);
                  return {};
                })
      .Repeated("filter", "expr", "kernel filter of the tracepoint of the -e before it",
                [&options](const std::string& expression) -> Result<void> {
                  // A --filter belongs to the -e before it.
                  if (options.events.empty()) {
                    return Fail(fmt::format(
                        "--filter '{}' needs a tracepoint before it: -e SUBSYSTEM:EVENT "
                        "--filter 'EXPR'",
                        expression));
                  }
                  options.filters.push_back({options.events.size() - 1, expression});
                  return {};
                })
      .Value("freq,F", "n", "samples per second (default 4000), or max",
             cli::Into(options.frequency, Frequency))
      .Value("count,c", "n", "a sample every N events instead of -F",
             // The kernel takes the period as a u64 but refuses the top bit.
             cli::Whole(options.period, "-c", "events", {1, INT64_MAX}))
      .Check([](const cli::Given& given) -> Result<void> {
        if (given.Has("freq") && given.Has("count")) return Fail("use either -F or -c, not both");
        return {};
      });
}

void AddCallChainGroup(cli::CommandLine& line, RecordOptions& options) {
  line.AddGroup("Call chains")
      .Flag(",g", "frame pointers, and the callers they skip (--call-graph fp,leaf)",
            []() -> Result<void> { return {}; })
      .Value("call-graph", "mode", "fp, fp,leaf[,SIZE], dwarf[,SIZE] or no",
             [&options](const std::string& text) -> Result<void> {
               auto parsed = ParseChainCapture(text);
               if (!parsed) return Fail("--call-graph " + parsed.error().message);
               options.chain_capture = *parsed;
               return {};
             })
      .Value("max-stack", "n", "chains of at most N frames (default the kernel's, 127)",
             // attr.sample_max_stack is 16 bits; the kernel checks it against
             // kernel.perf_event_max_stack at the open.
             cli::Whole(options.max_stack, "--max-stack", "frames", {1, 65535}))
      .Flag("raise-max-stack", "raise kernel.perf_event_max_stack to --max-stack meanwhile (root)",
            &options.raise_max_stack)
      .Check([&options](const cli::Given& given) -> Result<void> {
        // --call-graph wins over -g whatever their order, as in perf.
        if (given.Has("g") && !given.Has("call-graph")) {
          options.chain_capture = DefaultCallGraph();
        }
        return {};
      });
}

void AddDurationOption(cli::Group& group, RecordOptions& options) {
  group.Value("duration", "seconds", "stop after SECONDS",
              cli::Decimal(options.duration_s, "--duration", "seconds",
                           {0, 1e9, /*min_exclusive=*/true}));
}

void AddRecordGroups(cli::CommandLine& line, RecordRequest& request) {
  RecordOptions& options = request.record;
  AddTargetGroup(line, options.target);
  AddSamplingGroup(line, options);
  AddCallChainGroup(line, options);
  AddRecordingGroup(line, options);
  AddControlGroup(line, options);
  AddDataGroup(line, options);
  AddCountingGroup(line, request);
  cli::AddInformationGroup(line, &request.help, &request.version)
      .Optional("list-events", "glob", "",
                "list the events this machine offers; with GLOB, tracepoints too",
                [&request](const std::string& glob) -> Result<void> {
                  request.list_events = glob;
                  return {};
                })
      .NextWordIsValue([](std::string_view word) { return !word.starts_with("-"); })
      .Informational();
  line.AddCheck([&request](const cli::Given& given) -> Result<void> {
    RecordOptions& options = request.record;
    // An allocation's call chain is where it was made: --alloc has -g's.
    if (options.alloc.enabled && !given.Has("call-graph") && !given.Has("g") && !request.stat) {
      options.chain_capture = DefaultCallGraph();
    }
    if (options.off_cpu && !request.stat &&
        options.chain_capture.mode == ChainCapture::kNone) {
      return Fail(
          "--off-cpu needs call chains (where a thread waits is its call chain): add -g or "
          "--call-graph MODE");
    }
    return {};
  });
}

}  // namespace sample::record
