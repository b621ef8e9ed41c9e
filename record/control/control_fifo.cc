#include "record/control/control_fifo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "libsample/regular_file.h"
#include "libsample/string_parts.h"

namespace sample::record {
namespace {

// Whether the FIFO at `path` (`st`, of the open fd, found in `parent`) is
// one whoever can write it may steer this recording with: not writable by
// everyone (any local user could send `disable` or `stop`), and, in a
// directory others may create files in (/tmp), our own or root's: there
// another user's FIFO is a trap laid for whoever names that path next, as
// a link there is for -o (CheckNotPlanted, CheckReplaceable's rule).
Result<void> CheckFifoTrusted(const std::string& path, const struct stat& st,
                              const ParentDirectory& parent, const char* role) {
  if ((st.st_mode & S_IWOTH) != 0) {
    return Fail(
        fmt::format("--control: {} FIFO {}: refused: writable by everyone (mode {:04o}, "
                    "owner uid {}): anyone could switch this recording",
                    role, path, st.st_mode & 07777, st.st_uid));
  }
  if (auto trusted = CheckNotPlanted(parent, st.st_uid); !trusted) {
    return Fail(
        fmt::format("--control: {} FIFO {}: refused: {} (another user's FIFO there could "
                    "switch this recording); make your own",
                    role, path, trusted.error().message));
  }
  return {};
}

// Opens an existing FIFO read-write and non-blocking (see the header). Its
// directory is opened first and the FIFO found in it (*at calls), so the
// directory judged is the one it was opened from; the path is checked
// before opening, so that a device node is never opened, and the fd after,
// in case the entry changed meanwhile; its owner and mode on the fd, which
// cannot change under us.
Result<UniqueFd> OpenFifo(const std::string& path, const char* role) {
  auto parent = OpenParentDirectory(path);
  if (!parent) {
    return Fail(fmt::format("--control: {} FIFO {}: {}", role, path, parent.error().message));
  }
  struct stat st {};
  if (fstatat(parent->fd.get(), parent->name.c_str(), &st, 0) != 0) {
    return Fail(fmt::format("--control: {} FIFO {}: {} (create it with mkfifo)", role, path,
                            strerror(errno)));
  }
  if (!S_ISFIFO(st.st_mode)) {
    return Fail(fmt::format("--control: {} is not a FIFO (create one with mkfifo)", path));
  }
  UniqueFd fd(openat(parent->fd.get(), parent->name.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    return Fail(fmt::format("--control: cannot open {} FIFO {}: {}", role, path, strerror(errno)));
  }
  if (fstat(fd.get(), &st) != 0 || !S_ISFIFO(st.st_mode)) {
    return Fail(fmt::format("--control: {} is not a FIFO (create one with mkfifo)", path));
  }
  TRY(CheckFifoTrusted(path, st, *parent, role));
  return fd;
}

}  // namespace

Result<ControlPaths> ParseControlSpec(std::string_view spec) {
  constexpr std::string_view kFifo = "fifo:";
  if (spec.starts_with("fd:")) {
    return Fail(fmt::format(
        "--control {}: file descriptors are not supported; give FIFOs: --control fifo:CTL[,ACK]",
        spec));
  }
  if (!spec.starts_with(kFifo)) {
    return Fail(fmt::format("--control {}: expected fifo:CTL[,ACK] (paths of FIFOs)", spec));
  }
  spec.remove_prefix(kFifo.size());
  ControlPaths paths;
  const size_t comma = spec.find(',');
  paths.control = std::string(spec.substr(0, comma));
  if (comma != std::string_view::npos) {
    paths.ack = std::string(spec.substr(comma + 1));
    if (paths.ack.empty()) return Fail("--control fifo:CTL,ACK: the ACK path is empty");
  }
  if (paths.control.empty()) return Fail("--control fifo:CTL[,ACK]: the CTL path is empty");
  return paths;
}

ControlCommand ParseControlCommand(std::string_view line) {
  line = Trim(line);
  ControlCommand command;
  const size_t space = line.find_first_of(" \t");
  const std::string_view verb = line.substr(0, space);
  const std::string_view rest =
      space == std::string_view::npos ? std::string_view() : Trim(line.substr(space));
  if (verb == "enable") {
    command.kind = ControlCommand::Kind::kEnable;
  } else if (verb == "disable") {
    command.kind = ControlCommand::Kind::kDisable;
  } else if (verb == "stop" && rest.empty()) {
    command.kind = ControlCommand::Kind::kStop;
  } else if (verb == "ping" && rest.empty()) {
    command.kind = ControlCommand::Kind::kPing;
  } else if (verb == "snapshot" && rest.empty()) {
    command.kind = ControlCommand::Kind::kSnapshot;
  }
  if (command.kind == ControlCommand::Kind::kEnable ||
      command.kind == ControlCommand::Kind::kDisable) {
    command.event = std::string(rest);
  }
  return command;
}

void SplitControlLines(std::string_view bytes, std::string& partial, bool& skipping,
                       std::vector<std::string>& lines) {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (!skipping) partial.append(piece);
    if (partial.size() > ControlFifo::kMaxLine) {
      partial.clear();
      skipping = true;
    }
    if (newline == std::string_view::npos) return;
    if (!skipping) lines.push_back(std::move(partial));
    partial.clear();
    skipping = false;
    bytes.remove_prefix(newline + 1);
  }
}

Result<ControlFifo> ControlFifo::Open(const ControlPaths& paths) {
  TRY_ASSIGN(auto control, OpenFifo(paths.control, "control"));
  UniqueFd ack;
  if (!paths.ack.empty()) {
    TRY_ASSIGN(auto opened, OpenFifo(paths.ack, "acknowledgement"));
    ack = std::move(opened);
  }
  return ControlFifo(std::move(control), std::move(ack));
}

std::vector<std::string> ControlFifo::ReadLines() {
  std::vector<std::string> lines;
  char buffer[512];
  for (;;) {
    const ssize_t n = read(control_.get(), buffer, sizeof(buffer));
    if (n <= 0) break;  // EAGAIN: nothing more for now (we hold a writer: no EOF)
    SplitControlLines(std::string_view(buffer, static_cast<size_t>(n)), partial_, skipping_, lines);
  }
  return lines;
}

void ControlFifo::Answer(bool ok) {
  if (!ack_.valid()) return;
  const std::string_view answer = ok ? "ack\n" : "err\n";
  // Non-blocking: with nobody reading, a full pipe drops the answer rather
  // than stopping the recording.
  (void)!write(ack_.get(), answer.data(), answer.size());
}

}  // namespace sample::record
