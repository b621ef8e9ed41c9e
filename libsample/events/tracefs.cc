#include "libsample/events/tracefs.h"

#include <fnmatch.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include <fmt/format.h>

#include "libsample/perf/perf_event_advice.h"

namespace sample {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTracingDir = "/sys/kernel/tracing";
constexpr const char* kDebugTracingDir = "/sys/kernel/debug/tracing";

constexpr std::string_view kMountHint =
    "mount it with 'sudo mount -t tracefs nodev /sys/kernel/tracing' (mounting needs root); "
    "reading it as another user also needs "
    "'sudo mount -o remount,mode=755 /sys/kernel/tracing'";

// 0 if `dir` holds an events/ directory, else why not: ENOENT (no tracefs
// there), EACCES (one this user may not look into), ...
int EventsError(const fs::path& dir) {
  struct stat st {};
  if (stat((dir / "events").c_str(), &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

bool HasEvents(const fs::path& dir) { return EventsError(dir) == 0; }

bool IsPermissionError(int err) { return err == EACCES || err == EPERM; }

// /proc/mounts escapes blanks in paths as octal (\040).
std::string UnescapeMountPath(std::string_view path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '\\' && i + 3 < path.size()) {
      int value = 0;
      const auto [end, ec] = std::from_chars(path.data() + i + 1, path.data() + i + 4, value, 8);
      if (ec == std::errc() && end == path.data() + i + 4) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(path[i]);
  }
  return out;
}

// The tracefs mount points listed in /proc/mounts.
std::vector<std::string> MountedTracefs() {
  std::vector<std::string> paths;
  std::ifstream mounts("/proc/mounts");
  std::string device, mount_point, type, rest;
  while (mounts >> device >> mount_point >> type && std::getline(mounts, rest)) {
    if (type == "tracefs") paths.push_back(UnescapeMountPath(mount_point));
  }
  return paths;
}

// Tracepoint subsystems and names are C identifiers in practice; refusing
// anything else keeps a name from walking out of events/.
bool IsTracepointName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
         });
}

}  // namespace

Error Tracefs::PermissionError(const std::string& root) {
  std::string mode;
  struct stat st {};
  if (stat(root.c_str(), &st) == 0) {
    mode = fmt::format(" (mode {:04o}, owner uid {})", st.st_mode & 07777, st.st_uid);
  }
  const std::optional<int> paranoid = ReadPerfEventParanoid();
  return Error{
      fmt::format("tracefs is mounted at {}{} but this user (uid {}) may not read it: permission "
                  "denied. Tracefs is root-only by default: run as root, or let others read it "
                  "with 'sudo chmod 755 {}' (or the mount option: 'sudo mount -o "
                  "remount,mode=755 {}'); opening a tracepoint then also needs "
                  "kernel.perf_event_paranoid 1 or lower (0 with -a or -C; it is {}) or "
                  "CAP_PERFMON",
                  root, mode, geteuid(), root, root,
                  paranoid ? fmt::format("{}", *paranoid) : std::string("unreadable")),
      EACCES};
}

Result<Tracefs> Tracefs::Locate(const std::string& root) {
  if (!root.empty()) {
    const int err = EventsError(root);
    if (IsPermissionError(err)) return tl::unexpected(PermissionError(root));
    if (err != 0) return Fail(fmt::format("{} has no events/ directory", root), err);
    return Tracefs(root);
  }
  // A tracefs this user may not look into is reported as such, not as
  // missing: mounting another one would not help (and needs root anyway).
  std::string denied;
  for (const std::string& mounted : MountedTracefs()) {
    const int err = EventsError(mounted);
    if (err == 0) return Tracefs(mounted);
    if (IsPermissionError(err) && denied.empty()) denied = mounted;
  }
  for (const char* dir : {kTracingDir, kDebugTracingDir}) {
    const int err = EventsError(dir);
    if (err == 0) return Tracefs(dir);
    // /sys/kernel/tracing is a world-readable sysfs directory until tracefs
    // is mounted on it; debugfs itself may be root-only, which says nothing
    // about tracefs.
    if (IsPermissionError(err) && denied.empty() && dir == kTracingDir) denied = dir;
  }
  if (!denied.empty()) return tl::unexpected(PermissionError(denied));
  std::error_code ec;
  if (!fs::is_directory(kTracingDir, ec)) {
    return Fail(
        fmt::format("tracefs is not mounted and {} does not exist (is the kernel built "
                    "with CONFIG_TRACING?); {}",
                    kTracingDir, kMountHint));
  }
  if (mount("nodev", kTracingDir, "tracefs", 0, nullptr) != 0) {
    const int err = errno;
    return Fail(fmt::format("tracefs is not mounted and mounting it at {} failed: {}; {}",
                            kTracingDir, std::strerror(err), kMountHint),
                err);
  }
  if (!HasEvents(kTracingDir)) {
    return Fail(fmt::format("mounted tracefs at {} but it has no events/ directory", kTracingDir));
  }
  return Tracefs(kTracingDir);
}

Result<uint64_t> Tracefs::TracepointId(std::string_view subsystem, std::string_view event) const {
  if (!IsTracepointName(subsystem) || !IsTracepointName(event)) {
    return Fail(
        fmt::format("'{}:{}' is not a tracepoint name (letters, digits, _ - .)", subsystem, event));
  }
  const fs::path events = fs::path(root_) / "events";
  std::error_code ec;
  if (!fs::is_directory(events / std::string(subsystem), ec)) {
    if (ec == std::errc::permission_denied) return tl::unexpected(PermissionError(root_));
    return Fail(fmt::format("no tracepoint subsystem '{}' in {}", subsystem, events.string()),
                ENOENT);
  }
  const fs::path id_path = events / std::string(subsystem) / std::string(event) / "id";
  std::ifstream in(id_path);
  if (!in) {
    const int err = errno;
    if (IsPermissionError(err)) {
      Error denied = PermissionError(root_);
      denied.message = fmt::format("cannot read {}: {}", id_path.string(), denied.message);
      return tl::unexpected(std::move(denied));
    }
    return Fail(fmt::format("no tracepoint '{}:{}' ({} does not exist)", subsystem, event,
                            id_path.string()),
                ENOENT);
  }
  std::string text(std::istreambuf_iterator<char>(in), {});
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  uint64_t id = 0;
  const auto [end, parse_ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (text.empty() || parse_ec != std::errc() || end != text.data() + text.size()) {
    return Fail(fmt::format("{}: '{}' is not a tracepoint id", id_path.string(), text));
  }
  return id;
}

std::string Tracefs::TracepointFormat(std::string_view subsystem, std::string_view event) const {
  if (!IsTracepointName(subsystem) || !IsTracepointName(event)) return {};
  std::ifstream in(fs::path(root_) / "events" / std::string(subsystem) / std::string(event) /
                   "format");
  if (!in) return {};
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> Tracefs::List(std::string_view glob) const {
  const std::string pattern(glob);
  std::vector<std::string> names;
  std::error_code ec;
  const fs::path events = fs::path(root_) / "events";
  for (fs::directory_iterator sub(events, ec), end; !ec && sub != end; sub.increment(ec)) {
    std::error_code sub_ec;
    if (!sub->is_directory(sub_ec)) continue;
    for (fs::directory_iterator it(sub->path(), sub_ec); !sub_ec && it != end;
         it.increment(sub_ec)) {
      std::error_code id_ec;
      if (!fs::exists(it->path() / "id", id_ec)) continue;
      std::string name = sub->path().filename().string() + ":" + it->path().filename().string();
      if (fnmatch(pattern.c_str(), name.c_str(), 0) == 0) names.push_back(std::move(name));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace sample
