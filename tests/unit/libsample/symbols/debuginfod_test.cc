// Tests for debuginfod support (DebuginfodClient through DebugFileFinder)
// against a real server: Debian's `debuginfod` (tests/debuginfod_server.h),
// started here on a free port over a directory holding the symbolizer
// fixture's debug file and its --strip-all executable. Skipped, saying why,
// if debuginfod is not installed. The timeout test needs no debuginfod: its
// "server" is a listening socket that never answers.
#include <chrono>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/debug_file_finder.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/unique_fd.h"
#include "tests/debuginfod_server.h"
#include "tests/unit/symbolizer_test_util.h"

namespace sample {
namespace {

using testing::CopyTo;
using testing::DebuginfodServer;
using testing::Describe;
using testing::Expect;
using ::testing::HasSubstr;
using testing::LineOf;
using testing::ListenOnFreePort;
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

// One debuginfod server for the whole suite (starting one and letting it
// scan takes a second or two); each test gets its own client cache.
class DebuginfodTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_path_ = new std::optional<std::string>(DebuginfodServer::FindBinary());
    setup_error_ = new std::string();
    if (!*server_path_) return;
    dir_ = new ScratchDir();
    auto id = ReadElfBuildId(kSymDebug);
    if (!id || id->empty()) {
      *setup_error_ = "no build-id in " + std::string(kSymDebug);
      return;
    }
    id_ = new std::string(*id);
    // The server gets a copy of the fixture files.
    const std::string serve = *dir_ / "serve";
    CopyTo(kSymDebug, serve + "/fixture_symbolizer.debug");
    CopyTo(kSymStrippedAll, serve + "/fixture_symbolizer");
    auto server = DebuginfodServer::Start(**server_path_, serve, dir_->path(), *id_);
    if (!server) {
      *setup_error_ = server.error().message;
      return;
    }
    server_ = new DebuginfodServer(std::move(*server));
  }

  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete dir_;
    delete id_;
    delete server_path_;
    delete setup_error_;
  }

  void SetUp() override {
    if (!*server_path_) {
      GTEST_SKIP() << DebuginfodServer::kMissingReason;
    }
    ASSERT_EQ(*setup_error_, "");
    id = *id_;
    env_.Set("DEBUGINFOD_URLS", server_->url());
    env_.Set("DEBUGINFOD_CACHE_PATH", scratch_ / "cache");
  }

  DebugFileFinderOptions Options() {
    DebugFileFinderOptions options;
    options.debug_root = scratch_ / "no-debug-root";
    options.debuginfod_timeout = std::chrono::seconds(30);
    return options;
  }
  DebuginfodProgressFn Progress() {
    return [this](const DebuginfodProgress& progress) {
      progress_.insert(std::string(progress.kind) + " " + std::string(progress.build_id));
    };
  }

  static std::optional<std::string>* server_path_;
  static std::string* setup_error_;
  static ScratchDir* dir_;
  static std::string* id_;
  static DebuginfodServer* server_;

  std::string id;  // the fixture's build-id
  ScratchDir scratch_;
  ScopedEnv env_;
  std::set<std::string> progress_;  // "kind build-id" of each progress call
};

std::optional<std::string>* DebuginfodTest::server_path_ = nullptr;
std::string* DebuginfodTest::setup_error_ = nullptr;
ScratchDir* DebuginfodTest::dir_ = nullptr;
std::string* DebuginfodTest::id_ = nullptr;
DebuginfodServer* DebuginfodTest::server_ = nullptr;

TEST_F(DebuginfodTest, DebugFileOfAStrippedBinaryComesFromTheServer) {
  // The stripped binary alone, far from its debug file.
  const std::string binary = scratch_ / "bin/app";
  CopyTo(kSymStrippedAll, binary);
  DebugFileFinder finder(Options(), Progress());
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
    if (symbol.name() == "static_worker") worker = &symbol;
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
  DebugFileFinder finder(Options(), Progress());
  const FoundFiles found = finder.Find(scratch_ / "gone/app", id);
  EXPECT_EQ(found.binary_source, FileSource::kDebuginfod);
  EXPECT_TRUE(found.binary.starts_with(scratch_ / "cache/")) << found.binary;
  EXPECT_EQ(found.debug_source, FileSource::kDebuginfod);
  auto symbolizer = BinarySymbolizer::Open(found.binary, found.debug);
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  EXPECT_EQ(symbolizer->elf_symbols().build_id(), id);
}

TEST_F(DebuginfodTest, UnknownBuildIdIsARejectionNamingIt) {
  DebugFileFinder finder(Options(), Progress());
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
  const FoundFiles found = DebugFileFinder(options, Progress()).Find(scratch_ / "gone/app", id);
  EXPECT_EQ(found.binary, "");
  EXPECT_EQ(found.debug, "");
  EXPECT_TRUE(found.rejected.empty());
}

TEST(DebuginfodTimeoutTest, AServerThatNeverAnswersIsGivenUpOn) {
  // The kernel completes connections to a listening socket that nobody
  // accepts, so requests hang as they would on a stuck server.
  uint16_t port = 0;
  UniqueFd silent = ListenOnFreePort(&port);
  ASSERT_TRUE(silent.valid());
  ScratchDir dir;
  ScopedEnv env;
  env.Set("DEBUGINFOD_URLS", "http://127.0.0.1:" + std::to_string(port));
  env.Set("DEBUGINFOD_CACHE_PATH", dir / "cache");
  DebugFileFinderOptions options;
  options.debug_root = dir / "no-debug-root";
  options.debuginfod_timeout = std::chrono::milliseconds(1500);
  int progress_calls = 0;
  const auto start = std::chrono::steady_clock::now();
  const FoundFiles found =
      DebugFileFinder(options, [&](const DebuginfodProgress&) { ++progress_calls; })
          .Find(dir / "gone", std::string(40, 'a'));
  const auto took = std::chrono::steady_clock::now() - start;
  // Both queries share the binary's budget: the second starts past it.
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_GT(progress_calls, 0);
  ASSERT_FALSE(found.rejected.empty());
  EXPECT_THAT(found.rejected[0].reason, HasSubstr("timed out"));
}

}  // namespace
}  // namespace sample
