// Tests for debuginfod support (DebuginfodClient through DebugFileFinder)
// against a real server: Debian's `debuginfod`, started here on a free port
// over a directory holding the symbolizer fixture's debug file and its
// --strip-all executable. Skipped, saying why, if debuginfod is not
// installed. The timeout test needs no debuginfod: its "server" is a
// listening socket that never answers.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/binary_symbolizer.h"
#include "libsample/debug_file_finder.h"
#include "libsample/elf_symbols.h"
#include "libsample/unique_fd.h"
#include "tests/unit/symbolizer_test_util.h"

namespace sample {
namespace {

using testing::CopyTo;
using testing::Describe;
using testing::Expect;
using ::testing::HasSubstr;
using testing::LineOf;
using testing::ScratchDir;

const char* const kSource = FIXTURE_SYMBOLIZER_SOURCE;
const char* const kSymDebug = FIXTURE_SYMBOLIZER_DEBUG_PATH;
const char* const kSymStrippedAll = FIXTURE_SYMBOLIZER_STRIPPED_ALL_PATH;

// Sets environment variables for one test and puts the old values back.
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  void Set(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A TCP socket listening on 127.0.0.1 at a port the kernel picked.
UniqueFd Listen(uint16_t* port) {
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
int HttpStatus(uint16_t port, const std::string& path) {
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

std::optional<std::string> FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One debuginfod server for the whole suite (starting one and letting it
// scan takes a second or two); each test gets its own client cache.
class DebuginfodTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_path_ = new std::optional<std::string>(FindInPath("debuginfod"));
    setup_error_ = new std::string();
    if (!*server_path_) return;
    dir_ = new ScratchDir();
    auto id = ReadElfBuildId(kSymDebug);
    if (!id || id->empty()) {
      *setup_error_ = "no build-id in " + std::string(kSymDebug);
      return;
    }
    id_ = new std::string(*id);
    *setup_error_ = StartServer();
  }

  static void TearDownTestSuite() {
    if (server_ > 0) {
      kill(server_, SIGTERM);
      int wstatus = 0;
      waitpid(server_, &wstatus, 0);
      server_ = -1;
    }
    delete dir_;
    delete id_;
    delete server_path_;
    delete setup_error_;
  }

  // Starts debuginfod over a copy of the fixture files; an error, or "".
  static std::string StartServer() {
    const std::string serve = *dir_ / "serve";
    CopyTo(kSymDebug, serve + "/fixture_symbolizer.debug");
    CopyTo(kSymStrippedAll, serve + "/fixture_symbolizer");
    // The kernel picks a free port; it is released for debuginfod to take.
    { UniqueFd probe = Listen(&port_); }
    if (port_ == 0) return "no free port";
    const std::string log = *dir_ / "debuginfod.log";
    server_ = fork();
    if (server_ < 0) return "fork failed";
    if (server_ == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      const std::string port = std::to_string(port_);
      const std::string db = *dir_ / "debuginfod.sqlite";
      // -t 0 -g 0: one scan at start, no rescans or grooming during the test.
      execl(server_path_->value().c_str(), "debuginfod", "-F", "-p", port.c_str(), "-d", db.c_str(),
            "-t", "0", "-g", "0", serve.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Ready once the scan has indexed the debug file: asked directly, since
    // libdebuginfod would cache a miss asked too early.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (HttpStatus(port_, "/buildid/" + *id_ + "/debuginfo") == 200) return "";
      int wstatus = 0;
      if (waitpid(server_, &wstatus, WNOHANG) != 0) {
        server_ = -1;
        return "debuginfod exited early; its log:\n" + ReadAll(log);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "debuginfod did not serve the debug file within 60 s; its log:\n" + ReadAll(log);
  }

  void SetUp() override {
    if (!*server_path_) {
      GTEST_SKIP() << "the debuginfod server is not installed (Debian package debuginfod; "
                      "scripts/setup.sh installs it)";
    }
    ASSERT_EQ(*setup_error_, "");
    id = *id_;
    env_.Set("DEBUGINFOD_URLS", "http://127.0.0.1:" + std::to_string(port_));
    env_.Set("DEBUGINFOD_CACHE_PATH", scratch_ / "cache");
  }

  DebugFileFinderOptions Options() {
    DebugFileFinderOptions options;
    options.debug_root = scratch_ / "no-debug-root";
    options.debuginfod_timeout = std::chrono::seconds(30);
    options.debuginfod_progress = [this](const DebuginfodProgress& progress) {
      progress_.insert(std::string(progress.kind) + " " + std::string(progress.build_id));
    };
    return options;
  }

  static std::optional<std::string>* server_path_;
  static std::string* setup_error_;
  static ScratchDir* dir_;
  static std::string* id_;
  static uint16_t port_;
  static pid_t server_;

  std::string id;  // the fixture's build-id
  ScratchDir scratch_;
  ScopedEnv env_;
  std::set<std::string> progress_;  // "kind build-id" of each progress call
};

std::optional<std::string>* DebuginfodTest::server_path_ = nullptr;
std::string* DebuginfodTest::setup_error_ = nullptr;
ScratchDir* DebuginfodTest::dir_ = nullptr;
std::string* DebuginfodTest::id_ = nullptr;
uint16_t DebuginfodTest::port_ = 0;
pid_t DebuginfodTest::server_ = -1;

TEST_F(DebuginfodTest, DebugFileOfAStrippedBinaryComesFromTheServer) {
  // The stripped binary alone, far from its debug file.
  const std::string binary = scratch_ / "bin/app";
  CopyTo(kSymStrippedAll, binary);
  DebugFileFinder finder(Options());
  const FoundFiles found = finder.Find(binary, id);
  EXPECT_EQ(found.binary, binary);
  ASSERT_EQ(found.debug_source, FileSource::kDebuginfod) << ::testing::PrintToString(found.debug);
  EXPECT_TRUE(found.debug.starts_with(scratch_ / "cache/")) << found.debug;
  EXPECT_EQ(found.symbol_source(), FileSource::kDebuginfod);
  // The progress hook heard of the download (and of nothing else).
  EXPECT_EQ(progress_, std::set<std::string>{"debuginfo " + id});

  auto symbolizer = BinarySymbolizer::Open(found.binary, found.debug);
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  // static_worker is a local function: only the downloaded file names it.
  const ElfSymbol* worker = nullptr;
  for (const ElfSymbol& symbol : symbolizer->elf_symbols().symbols()) {
    if (symbol.name == "static_worker") worker = &symbol;
  }
  ASSERT_NE(worker, nullptr);
  bool saw_body_line = false;
  for (uint64_t vaddr = worker->start; vaddr < worker->start + worker->size; ++vaddr) {
    const auto frames = symbolizer->SymbolizeVaddr(vaddr);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function, "static_worker");
    EXPECT_EQ(frames[0].name_source, NameSource::kDwarf);
    saw_body_line |= Describe(frames[0]) == Expect("static_worker", false, kSource,
                                                   LineOf(kSource, "LINE:static_worker_body"));
  }
  EXPECT_TRUE(saw_body_line);
}

TEST_F(DebuginfodTest, MissingBinaryComesFromTheServerToo) {
  DebugFileFinder finder(Options());
  const FoundFiles found = finder.Find(scratch_ / "gone/app", id);
  EXPECT_EQ(found.binary_source, FileSource::kDebuginfod);
  EXPECT_TRUE(found.binary.starts_with(scratch_ / "cache/")) << found.binary;
  EXPECT_EQ(found.debug_source, FileSource::kDebuginfod);
  auto symbolizer = BinarySymbolizer::Open(found.binary, found.debug);
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  EXPECT_EQ(symbolizer->elf_symbols().build_id(), id);
}

TEST_F(DebuginfodTest, UnknownBuildIdIsARejectionNamingIt) {
  DebugFileFinder finder(Options());
  const std::string unknown(40, '0');
  const FoundFiles found = finder.Find(scratch_ / "gone/app", unknown);
  EXPECT_EQ(found.binary, "");
  EXPECT_EQ(found.debug, "");
  ASSERT_EQ(found.rejected.size(), 2u);  // the executable, then the debuginfo
  for (const RejectedFile& rejected : found.rejected) {
    EXPECT_EQ(rejected.path, "debuginfod");
    EXPECT_THAT(rejected.reason, HasSubstr(unknown));
  }
}

TEST_F(DebuginfodTest, OffUnlessAsked) {
  DebugFileFinderOptions options = Options();
  options.use_debuginfod = false;
  const FoundFiles found = DebugFileFinder(options).Find(scratch_ / "gone/app", id);
  EXPECT_EQ(found.binary, "");
  EXPECT_EQ(found.debug, "");
  EXPECT_TRUE(found.rejected.empty());
}

TEST(DebuginfodTimeoutTest, AServerThatNeverAnswersIsGivenUpOn) {
  // The kernel completes connections to a listening socket that nobody
  // accepts, so requests hang as they would on a stuck server.
  uint16_t port = 0;
  UniqueFd silent = Listen(&port);
  ASSERT_TRUE(silent.valid());
  ScratchDir dir;
  ScopedEnv env;
  env.Set("DEBUGINFOD_URLS", "http://127.0.0.1:" + std::to_string(port));
  env.Set("DEBUGINFOD_CACHE_PATH", dir / "cache");
  DebugFileFinderOptions options;
  options.debug_root = dir / "no-debug-root";
  options.debuginfod_timeout = std::chrono::milliseconds(1500);
  int progress_calls = 0;
  options.debuginfod_progress = [&](const DebuginfodProgress&) { ++progress_calls; };
  const auto start = std::chrono::steady_clock::now();
  const FoundFiles found = DebugFileFinder(options).Find(dir / "gone", std::string(40, 'a'));
  const auto took = std::chrono::steady_clock::now() - start;
  // Both queries share the binary's budget: the second starts past it.
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_GT(progress_calls, 0);
  ASSERT_FALSE(found.rejected.empty());
  EXPECT_THAT(found.rejected[0].reason, HasSubstr("timed out"));
}

}  // namespace
}  // namespace sample
