#include "libsample/events/uprobe_definitions.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "libsample/unique_fd.h"

namespace sample {
namespace {

// One command to uprobe_events ("...\n"): the kernel takes one a write.
int WriteCommand(const std::string& root, const std::string& line) {
  UniqueFd fd(open((root + "/uprobe_events").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (fd.get() < 0) return errno;
  if (write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) return errno;
  return 0;
}

// The kernel's own words on the last refused definition: error_log's
// "trace_uprobe: error: ..." line, or empty.
std::string LastUprobeError(const std::string& root) {
  std::ifstream log(root + "/error_log");
  std::string line, last;
  while (std::getline(log, line)) {
    const size_t at = line.find("trace_uprobe: error: ");
    if (at != std::string::npos) last = line.substr(at + 21);
  }
  return last;
}

std::string Advice(int err) {
  if (err == EACCES || err == EPERM) {
    return "; defining uprobes needs root (write access to tracefs's uprobe_events)";
  }
  if (err == ENOENT) return "; this kernel has no uprobe_events (CONFIG_UPROBE_EVENTS)";
  return "";
}

}  // namespace

Result<DefinedUprobes> DefinedUprobes::Define(const Tracefs& tracefs, std::string group,
                                              const std::vector<UprobeDefinition>& defs) {
  DefinedUprobes out(tracefs.root(), std::move(group));
  for (const UprobeDefinition& def : defs) {
    // uprobe_events splits its command at white space, so a path that holds
    // some (a build in "my dir") is named through an fd of ours: the kernel
    // resolves the path to the file's inode as it defines the probe, and
    // the probe keeps the inode, not the name.
    UniqueFd opened;
    std::string path = def.path;
    if (path.find_first_of(" \t\n") != std::string::npos) {
      opened = UniqueFd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!opened.valid()) {
        return Fail(fmt::format("cannot open {} to probe it: {}", path, std::strerror(errno)),
                    errno);
      }
      path = fmt::format("/proc/self/fd/{}", opened.get());
    }
    const std::string line =
        fmt::format("{}:{}/{} {}:{:#x} {}", def.retprobe ? 'r' : 'p', out.group_, def.event,
                    path, def.file_offset, def.fetch_args);
    if (const int err = WriteCommand(out.root_, line + "\n"); err != 0) {
      const std::string why = LastUprobeError(out.root_);
      return Fail(
          fmt::format("cannot define the uprobe '{}' in {}/uprobe_events: {}{}{}", line, out.root_,
                      std::strerror(err), why.empty() ? "" : " (" + why + ")", Advice(err)),
          err);
    }
    out.events_.push_back(def.event);
  }
  return out;
}

void DefinedUprobes::RemoveStale(const Tracefs& tracefs, std::string_view prefix) {
  std::ifstream defined(tracefs.root() + "/uprobe_events");
  std::string line;
  std::set<std::string> stale;
  while (std::getline(defined, line)) {
    // "p:GROUP/EVENT PATH:OFFSET ARGS"
    const size_t colon = line.find(':'), slash = line.find('/');
    if (colon == std::string::npos || slash == std::string::npos || slash < colon) continue;
    const std::string group = line.substr(colon + 1, slash - colon - 1);
    if (!group.starts_with(prefix)) continue;
    const std::string_view digits = std::string_view(group).substr(prefix.size());
    pid_t pid = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0) continue;
    if (kill(pid, 0) == 0 || errno == EPERM) continue;  // its recorder still runs
    stale.insert(line.substr(colon + 1, line.find(' ') - colon - 1));
  }
  for (const std::string& name : stale) (void)WriteCommand(tracefs.root(), "-:" + name + "\n");
}

DefinedUprobes::DefinedUprobes(DefinedUprobes&& other) noexcept
    : root_(std::move(other.root_)),
      group_(std::move(other.group_)),
      events_(std::move(other.events_)) {
  other.events_.clear();
}

DefinedUprobes::~DefinedUprobes() { RemoveAll(); }

std::vector<std::string> DefinedUprobes::ReleaseRemovals() {
  std::vector<std::string> removals;
  for (const std::string& event : events_) {
    removals.push_back(fmt::format("-:{}/{}\n", group_, event));
  }
  events_.clear();
  return removals;
}

void DefinedUprobes::RemoveAll() {
  for (const std::string& line : ReleaseRemovals()) (void)WriteCommand(root_, line);
}

}  // namespace sample
