#include "record/alloc/alloc_probes.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>

#include <fmt/format.h>

#include "libsample/perf/user_regs.h"
#include "record/alloc/allocator_functions.h"

namespace sample::record {
namespace {

// Every running tracefs group of ours is this followed by the recorder's
// pid (DefinedUprobes::RemoveStale).
constexpr std::string_view kGroupPrefix = "sample_alloc_";
constexpr std::string_view kReturnSuffix = "_return";

// The binaries whose allocation functions the target calls.
Result<std::vector<FoundAllocFunction>> FindForTarget(const RecordTarget& target,
                                                      const std::vector<std::string>& command) {
  if (target.kind == TargetKind::kCpus) {
    return Fail("--alloc profiles a command or the processes of -p/-t, not whole CPUs (-a, -C)");
  }
  if (target.kind == TargetKind::kCommand) {
    TRY_ASSIGN(auto binaries, CommandBinaries(command.front()));
    return FindAllocFunctions(binaries);
  }
  std::vector<FoundAllocFunction> all;
  std::set<std::pair<std::string, uint64_t>> places;
  for (pid_t pid : target.processes) {
    TRY_ASSIGN(auto binaries, ProcessBinaries(pid));
    auto found = FindAllocFunctions(binaries);
    if (!found) return Fail(fmt::format("process {}: {}", pid, found.error().message));
    for (FoundAllocFunction& f : *found) {
      if (places.emplace(f.path, f.file_offset).second) all.push_back(std::move(f));
    }
  }
  return all;
}

// Probe names are unique in a group: a second libc's malloc (two
// processes of -p) is malloc_2, its return probe malloc_2_return.
std::vector<UprobeDefinition> UniqueNames(std::vector<UprobeDefinition> defs) {
  std::map<std::string, int> seen;
  std::string call;
  for (UprobeDefinition& def : defs) {
    if (def.retprobe) {
      def.event = call + std::string(kReturnSuffix);  // follows its call's
      continue;
    }
    const int n = ++seen[def.event];
    if (n > 1) def.event += fmt::format("_{}", n);
    call = def.event;
  }
  return defs;
}

// Whether the kernel may drop the calls of `function` below the minimum
// size: those whose one size argument is the request (calloc's is an
// element's; a realloc left out would leave its old block live).
bool FilteredBySize(const AllocFunction& function) {
  return function.entry_args.find("size=") != std::string_view::npos &&
         function.entry_args.find("nmemb=") == std::string_view::npos &&
         function.entry_args.find("ptr=") == std::string_view::npos;
}

}  // namespace

void CloseInBackground(AllocProbes& probes, std::vector<PerfEvent>& events) {
  int order[2];
  if (!probes.defined || pipe2(order, O_CLOEXEC) != 0) {
    events.clear();
    return;
  }
  // Everything the child uses is made before the fork: after it, only
  // async-signal-safe calls (the recorder has threads). The rings go
  // first: a mapping holds its event as an fd does.
  std::vector<int> fds;
  for (PerfEvent& event : events) {
    event.Unmap();
    fds.push_back(event.fd());
  }
  const std::string file = probes.defined->events_file();
  const std::vector<std::string> removals = probes.defined->ReleaseRemovals();
  const pid_t child = fork();
  if (child == 0) {
    const int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);  // nothing waits on our output
    // The last close pays for the unregistering: ours, after the
    // recorder's (its end of the pipe closes when it has closed them).
    close(order[1]);
    char byte;
    while (read(order[0], &byte, 1) < 0 && errno == EINTR) {
    }
    for (int fd : fds) close(fd);
    const int out = open(file.c_str(), O_WRONLY | O_APPEND);
    for (const std::string& line : removals) (void)!write(out, line.data(), line.size());
    _exit(0);
  }
  close(order[0]);
  events.clear();  // with a child, only references are dropped
  close(order[1]);
  if (child < 0) {
    const int out = open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    for (const std::string& line : removals) (void)!write(out, line.data(), line.size());
    if (out >= 0) close(out);
  }
}

Result<AllocProbes> PrepareAllocProbes(const AllocOptions& options, const RecordTarget& target,
                                       const std::vector<std::string>& command,
                                       const EventParseOptions& parse) {
  if (HostArch() != Arch::kX86_64) {
    return Fail(
        "--alloc fetches the allocation functions' arguments from x86_64 registers; "
        "this host is not x86_64");
  }
  TRY_ASSIGN(auto found, FindForTarget(target, command));
  auto tracefs = Tracefs::Locate(parse.tracefs_root);
  if (!tracefs) return Fail("--alloc: " + tracefs.error().message, tracefs.error().sys_errno);
  DefinedUprobes::RemoveStale(*tracefs, kGroupPrefix);
  std::vector<UprobeDefinition> defs = UniqueNames(AllocProbeDefinitions(found));
  AllocProbes out;
  auto defined =
      DefinedUprobes::Define(*tracefs, fmt::format("{}{}", kGroupPrefix, getpid()), defs);
  if (!defined) return Fail("--alloc: " + defined.error().message, defined.error().sys_errno);
  out.defined.emplace(std::move(*defined));
  // Each probe's function, in the order of `defs` (an entry, then its
  // return when it has one).
  std::vector<const AllocFunction*> functions;
  std::map<std::string, std::vector<std::string>> by_path;
  for (const FoundAllocFunction& f : found) {
    functions.push_back(f.function);
    if (f.function->returns_pointer) functions.push_back(f.function);
    by_path[f.path].emplace_back(f.function->event);
  }
  for (size_t i = 0; i < defs.size(); ++i) {
    const AllocFunction& function = *functions[i];
    TRY_ASSIGN(auto parsed, ParseEventList(out.defined->TracepointName(defs[i].event), parse));
    EventSpec spec = std::move(parsed.front());
    // "alloc:malloc", "alloc:malloc:return" (the report pairs them by name).
    const std::string& event = defs[i].event;
    spec.name = defs[i].retprobe ? fmt::format("alloc:{}:return",
                                               event.substr(0, event.size() - kReturnSuffix.size()))
                                 : fmt::format("alloc:{}", event);
    spec.period_given = true;
    spec.attr.sample_period = 1;
    if (defs[i].retprobe || !function.returns_pointer) {
      // Pairs and frees: every call, and no chain (the call's is enough).
      spec.chain_capture = ChainCapture::kNone;
    } else {
      spec.wants_stack_pointer = true;
      spec.attr.sample_period = options.every;
      spec.without_period = options.every > 1;
      std::vector<std::string> filters;
      if (!function.filter.empty()) filters.emplace_back(function.filter);
      if (options.min_size != 0 && FilteredBySize(function)) {
        filters.push_back(fmt::format("size >= {}", options.min_size));
      }
      spec.filter = fmt::format("{}", fmt::join(filters, " && "));
    }
    out.specs.push_back(std::move(spec));
  }
  for (const auto& [path, events] : by_path) {
    out.found_in.push_back(fmt::format("{} in {}", fmt::join(events, ", "), path));
  }
  return out;
}

}  // namespace sample::record
