// DebuginfodServer: a real debuginfod (Debian package `debuginfod`) run by a
// test on 127.0.0.1 over a directory of ELF files, so the client code is
// tested against the server it will meet, not a stub. Shared by the unit
// tests (DebuginfodClient through DebugFileFinder) and the end-to-end tests
// (sample-report with DEBUGINFOD_URLS). Owns the server process: the
// destructor stops it and waits for it. Move-only.
//
// Also here, because both kinds of test need them: a listening socket on a
// free port and a raw HTTP status probe.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample::testing {

// A TCP socket listening on 127.0.0.1 at a port the kernel picked; invalid
// (and *port untouched) on failure.
inline UniqueFd ListenOnFreePort(uint16_t* port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (!fd.valid() || bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd.get(), 16) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return UniqueFd();
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

// The HTTP status of GET `path` on 127.0.0.1:`port`; 0 if nothing answers.
inline int HttpStatus(uint16_t port, const std::string& path) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!fd.valid() || connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return 0;
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (write(fd.get(), request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    return 0;
  }
  char buffer[64] = {};
  const ssize_t n = read(fd.get(), buffer, sizeof(buffer) - 1);
  int status = 0;
  if (n > 0 && std::sscanf(buffer, "HTTP/%*d.%*d %d", &status) == 1) return status;
  return 0;
}

// The first executable `name` in $PATH, or nullopt.
inline std::optional<std::string> FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

class DebuginfodServer {
 public:
  // Why tests that need the server skip when FindBinary() finds none.
  static constexpr const char* kMissingReason =
      "the debuginfod server is not installed (Debian package debuginfod; scripts/setup.sh "
      "installs it)";

  // The debuginfod executable on $PATH, or nullopt.
  static std::optional<std::string> FindBinary() { return FindInPath("debuginfod"); }

  // Starts `binary` over the files in `serve_dir` (database and log go to
  // `work_dir`) and waits until it serves the debug file of `build_id`
  // (lowercase hex), at most 60 s. Readiness is asked over raw HTTP, not
  // through libdebuginfod, which would cache a miss asked too early.
  static Result<DebuginfodServer> Start(const std::string& binary, const std::string& serve_dir,
                                        const std::string& work_dir, const std::string& build_id) {
    // The kernel picks a free port; it is released for debuginfod to take.
    uint16_t port = 0;
    { UniqueFd probe = ListenOnFreePort(&port); }
    if (port == 0) return Fail("no free port on 127.0.0.1");
    const std::string log = work_dir + "/debuginfod.log";
    const std::string db = work_dir + "/debuginfod.sqlite";
    const std::string port_arg = std::to_string(port);
    const pid_t pid = fork();
    if (pid < 0) return Fail("fork failed");
    if (pid == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      // -F: index ELF files; -t 0 -g 0: one scan at start, no rescans or
      // grooming while tests run.
      execl(binary.c_str(), "debuginfod", "-F", "-p", port_arg.c_str(), "-d", db.c_str(), "-t", "0",
            "-g", "0", serve_dir.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    DebuginfodServer server(pid, port);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (HttpStatus(port, "/buildid/" + build_id + "/debuginfo") == 200) return server;
      int wstatus = 0;
      if (waitpid(pid, &wstatus, WNOHANG) != 0) {
        server.pid_ = -1;
        return Fail("debuginfod exited early; its log:\n" + ReadAll(log));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return Fail("debuginfod did not serve the debug file of " + build_id +
                " within 60 s; its log:\n" + ReadAll(log));
  }

  DebuginfodServer(DebuginfodServer&& other) noexcept
      : pid_(std::exchange(other.pid_, -1)), port_(other.port_) {}
  DebuginfodServer& operator=(DebuginfodServer&&) = delete;
  DebuginfodServer(const DebuginfodServer&) = delete;
  DebuginfodServer& operator=(const DebuginfodServer&) = delete;
  ~DebuginfodServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int wstatus = 0;
      waitpid(pid_, &wstatus, 0);
    }
  }

  uint16_t port() const { return port_; }
  // For DEBUGINFOD_URLS.
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  DebuginfodServer(pid_t pid, uint16_t port) : pid_(pid), port_(port) {}

  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

}  // namespace sample::testing
