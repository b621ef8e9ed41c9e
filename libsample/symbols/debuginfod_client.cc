#include "libsample/symbols/debuginfod_client.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace sample {

namespace {

// libdebuginfod, loaded on the first query. Linking it would load libcurl,
// GnuTLS, Kerberos and LDAP (30 libraries) into every run of both tools:
// measured 5 ms of start-up and 6 MB of resident memory per process, for a
// feature used only when DEBUGINFOD_URLS is set. (libdwfl loads it the
// same way.) The header still gives the types and signatures.
struct Library {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_end) end = nullptr;
  decltype(&debuginfod_set_user_data) set_user_data = nullptr;
  decltype(&debuginfod_get_user_data) get_user_data = nullptr;
  decltype(&debuginfod_set_progressfn) set_progressfn = nullptr;
  decltype(&debuginfod_get_url) get_url = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&debuginfod_find_executable) find_executable = nullptr;
  std::string error;  // why it could not be loaded; empty when it was
};

constexpr const char* kLibraryName = "libdebuginfod.so.1";

template <typename Fn>
bool Bind(void* handle, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr && error.empty()) {
    error = fmt::format("debuginfod: {} has no {}", kLibraryName, name);
  }
  return fn != nullptr;
}

// Loaded once per process (thread-safe); never unloaded.
const Library& LoadLibrary() {
  static const Library library = [] {
    Library lib;
    void* handle = dlopen(kLibraryName, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      lib.error = fmt::format("debuginfod: cannot load {} ({}); install libdebuginfod1",
                              kLibraryName, why != nullptr ? why : "unknown error");
      return lib;
    }
    Bind(handle, "debuginfod_begin", lib.begin, lib.error);
    Bind(handle, "debuginfod_end", lib.end, lib.error);
    Bind(handle, "debuginfod_set_user_data", lib.set_user_data, lib.error);
    Bind(handle, "debuginfod_get_user_data", lib.get_user_data, lib.error);
    Bind(handle, "debuginfod_set_progressfn", lib.set_progressfn, lib.error);
    Bind(handle, "debuginfod_get_url", lib.get_url, lib.error);
    Bind(handle, "debuginfod_find_debuginfo", lib.find_debuginfo, lib.error);
    Bind(handle, "debuginfod_find_executable", lib.find_executable, lib.error);
    return lib;
  }();
  return library;
}

// The query running now, for the progress callback.
struct Query {
  const DebuginfodProgressFn* progress = nullptr;
  std::string_view build_id;
  std::string_view kind;
  std::chrono::steady_clock::time_point start;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  bool timed_out = false;
};

// libdebuginfod calls this while a transfer runs (about once a second while
// waiting, more often while bytes arrive); non-zero cancels the transfer.
int OnProgress(debuginfod_client* client, long done, long total) {
  const Library& lib = LoadLibrary();
  auto* query = static_cast<Query*>(lib.get_user_data(client));
  if (query == nullptr) return 0;
  const auto now = std::chrono::steady_clock::now();
  if (query->progress != nullptr && *query->progress) {
    const char* url = lib.get_url(client);
    (*query->progress)(DebuginfodProgress{
        query->build_id, query->kind, url != nullptr ? url : "", done, total,
        std::chrono::duration_cast<std::chrono::milliseconds>(now - query->start)});
  }
  if (query->deadline && now >= *query->deadline) {
    query->timed_out = true;
    return 1;
  }
  return 0;
}

}  // namespace

struct DebuginfodClient::State {
  ~State() {
    if (client != nullptr) LoadLibrary().end(client);
  }

  debuginfod_client* client = nullptr;
  DebuginfodProgressFn progress;
  Query query;
};

bool DebuginfodClient::Configured() {
  const char* urls = std::getenv(DEBUGINFOD_URLS_ENV_VAR);
  return urls != nullptr && urls[std::strspn(urls, " \t")] != '\0';
}

Result<DebuginfodClient> DebuginfodClient::Create(DebuginfodProgressFn progress) {
  const Library& lib = LoadLibrary();
  if (!lib.error.empty()) return Fail(lib.error);
  auto state = std::make_unique<State>();
  state->client = lib.begin();
  if (state->client == nullptr) return Fail("debuginfod: cannot start a client", errno);
  state->progress = std::move(progress);
  state->query.progress = &state->progress;
  // The State is on the heap, so this pointer survives moves of the client.
  lib.set_user_data(state->client, &state->query);
  lib.set_progressfn(state->client, &OnProgress);
  return DebuginfodClient(std::move(state));
}

DebuginfodClient::DebuginfodClient(std::unique_ptr<State> state) : state_(std::move(state)) {}
DebuginfodClient::DebuginfodClient(DebuginfodClient&&) noexcept = default;
DebuginfodClient& DebuginfodClient::operator=(DebuginfodClient&&) noexcept = default;
DebuginfodClient::~DebuginfodClient() = default;

Result<std::string> DebuginfodClient::FindDebugInfo(
    std::string_view build_id, std::optional<std::chrono::steady_clock::time_point> deadline) {
  return Find("debuginfo", build_id, deadline);
}

Result<std::string> DebuginfodClient::FindExecutable(
    std::string_view build_id, std::optional<std::chrono::steady_clock::time_point> deadline) {
  return Find("executable", build_id, deadline);
}

Result<std::string> DebuginfodClient::Find(
    std::string_view kind, std::string_view build_id,
    std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (build_id.empty()) return Fail(fmt::format("debuginfod: no build-id to ask for"));
  Query& query = state_->query;
  query.build_id = build_id;
  query.kind = kind;
  query.start = std::chrono::steady_clock::now();
  query.deadline = deadline;
  query.timed_out = false;
  // A build-id length of 0 tells libdebuginfod the id is a hex string.
  const std::string hex(build_id);
  const auto* id = reinterpret_cast<const unsigned char*>(hex.c_str());
  char* path = nullptr;
  const Library& lib = LoadLibrary();
  const int fd = kind == "executable" ? lib.find_executable(state_->client, id, 0, &path)
                                      : lib.find_debuginfo(state_->client, id, 0, &path);
  query.build_id = {};
  query.kind = {};
  if (fd < 0) {
    if (query.timed_out) {
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - query.start);
      return Fail(fmt::format("debuginfod: {} for build-id {}: timed out after {} ms", kind,
                              build_id, waited.count()),
                  ETIMEDOUT);
    }
    return Fail(
        fmt::format("debuginfod: {} for build-id {}: {}", kind, build_id, std::strerror(-fd)), -fd);
  }
  ::close(fd);
  std::string result = path != nullptr ? path : "";
  std::free(path);
  if (result.empty())
    return Fail(fmt::format("debuginfod: {} for build-id {}: no path", kind, build_id));
  return result;
}

}  // namespace sample
