// DebuginfodClient: debug files and executables fetched by build-id from the
// debuginfod servers named in DEBUGINFOD_URLS, through libdebuginfod.
//
// libdebuginfod reads its settings from the environment on every query
// (DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT for connection
// and stalled-transfer timeouts) and keeps downloads, and misses, in its own
// cache, so a second report of the same binaries costs no network. On top,
// each query takes a deadline (enforced from the progress callback, the one
// hook libdebuginfod gives to cancel a transfer) and reports progress to a
// callback the caller can print.
//
// Owns one debuginfod_client (debuginfod_end on destruction). Move-only. Not
// thread-safe: one thread at a time per client; distinct clients may be used
// concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "libsample/result.h"

namespace sample {

// What a progress callback is told while a query runs.
struct DebuginfodProgress {
  std::string_view build_id;  // lowercase hex
  std::string_view kind;      // "debuginfo" or "executable"
  std::string_view url;       // the server answering, once one does; may be empty
  int64_t bytes_done = 0;
  int64_t bytes_total = 0;  // 0 or less: not known yet
  std::chrono::milliseconds elapsed{0};
};

using DebuginfodProgressFn = std::function<void(const DebuginfodProgress&)>;

class DebuginfodClient {
 public:
  // True if DEBUGINFOD_URLS names a server: libdebuginfod reads only the
  // environment, so that is where "is debuginfod on" is decided.
  static bool Configured();

  // Errors if libdebuginfod cannot start a client (out of memory, bad curl).
  static Result<DebuginfodClient> Create(DebuginfodProgressFn progress = nullptr);

  DebuginfodClient(DebuginfodClient&&) noexcept;
  DebuginfodClient& operator=(DebuginfodClient&&) noexcept;
  ~DebuginfodClient();

  // The path of the (cached) file for `build_id` (lowercase hex); an error
  // naming the build-id and why (not found, timed out, ...). A query still
  // running at `deadline` is cancelled; nullopt: no deadline.
  Result<std::string> FindDebugInfo(std::string_view build_id,
                                    std::optional<std::chrono::steady_clock::time_point> deadline);
  Result<std::string> FindExecutable(std::string_view build_id,
                                     std::optional<std::chrono::steady_clock::time_point> deadline);

 private:
  struct State;
  explicit DebuginfodClient(std::unique_ptr<State> state);
  Result<std::string> Find(std::string_view kind, std::string_view build_id,
                           std::optional<std::chrono::steady_clock::time_point> deadline);

  std::unique_ptr<State> state_;
};

}  // namespace sample
