#include "tests/e2e/e2e_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace sample::e2e {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp ? tmp : "/tmp") + "/sample-e2e-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ShellQuote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

pid_t Start(const std::vector<std::string>& argv, const ScratchDir& dir, const std::string& tag) {
  const std::string out = dir / (tag + ".out");
  const std::string err = dir / (tag + ".err");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    chdir(dir.path().c_str());
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

RunResult Wait(pid_t pid, const ScratchDir& dir, const std::string& tag) {
  int status = 0;
  waitpid(pid, &status, 0);
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(dir / (tag + ".out"));
  r.err = ReadFile(dir / (tag + ".err"));
  return r;
}

RunResult RunTool(const std::vector<std::string>& argv, const ScratchDir& dir) {
  return Wait(Start(argv, dir, "run"), dir, "run");
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::optional<double> OverheadOf(const std::string& report, const std::string& symbol) {
  for (const std::string& line : Lines(report)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.size() < symbol.size() ||
        line.compare(line.size() - symbol.size(), symbol.size(), symbol) != 0) {
      continue;
    }
    // The symbol must be a whole column, not the tail of a longer name.
    const size_t before = line.size() - symbol.size();
    if (before != 0 && line[before - 1] != ' ') continue;
    return std::stod(line.substr(0, line.find('%')));
  }
  return std::nullopt;
}

std::optional<double> OverheadOfRow(const std::string& report,
                                    const std::vector<std::string>& parts) {
  for (const std::string& line : Lines(report)) {
    if (line.empty() || line[0] == '#') continue;
    bool all = true;
    for (const std::string& part : parts) all = all && line.find(part) != std::string::npos;
    if (all) return std::stod(line.substr(0, line.find('%')));
  }
  return std::nullopt;
}

long SampleCount(const std::string& report) {
  std::smatch m;
  static const std::regex kSamples("# Samples: ([0-9]+)");
  if (std::regex_search(report, m, kSamples)) return std::stol(m[1]);
  return -1;
}

std::vector<std::string> AsNobody(std::vector<std::string> argv, const std::string& capability) {
  std::vector<std::string> prefix = {kSetpriv, "--reuid=65534", "--regid=65534", "--clear-groups"};
  if (!capability.empty()) {
    // Ambient capabilities survive the exec (they must be inheritable too).
    prefix.push_back("--inh-caps=+" + capability);
    prefix.push_back("--ambient-caps=+" + capability);
  }
  prefix.push_back("--");
  argv.insert(argv.begin(), prefix.begin(), prefix.end());
  return argv;
}

NobodyDir::NobodyDir() {
  std::string pattern = "/tmp/sample-nobody-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return;
  path_ = pattern;
  if (chmod(path_.c_str(), 0755) != 0 || chown(path_.c_str(), 65534, 65534) != 0) {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    path_.clear();
  }
}

NobodyDir::~NobodyDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

bool NobodyDir::Copy(const std::string& from, const std::string& name) {
  const std::string to = path_ + "/" + name;
  std::error_code error;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, error);
  return !error && chmod(to.c_str(), 0755) == 0;
}

}  // namespace sample::e2e
