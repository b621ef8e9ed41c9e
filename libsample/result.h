// Result<T>: the return type of everything that can fail.
//
// Errors carry a human-readable message that already names what failed and
// where (file, offset, syscall); callers add context by wrapping, never by
// throwing. No exception crosses a library boundary.
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace sample {

struct Error {
  std::string message;
  int sys_errno = 0;  // the errno behind the failure, when a syscall failed
  // The exit status a tool should end with, when not the usual 1 (a
  // command that could not run: 127 not found, 126 not executable).
  int exit_status = 0;
};

template <typename T>
using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> Fail(std::string message, int sys_errno = 0) {
  return tl::unexpected<Error>(Error{std::move(message), sys_errno});
}

}  // namespace sample

// Passing a failure up, the commonest thing done with a Result: in a
// function that returns any Result,
//   TRY(writer.Finish(trailer));                  // a Result<void>
//   TRY_ASSIGN(auto specs, ParseEventList(text)); // declares specs = the value
// return the callee's Error unchanged when it failed. Standard C++ (no
// statement expressions), so TRY_ASSIGN is a statement, not an expression.
#define SAMPLE_TRY_CONCAT_INNER(a, b) a##b
#define SAMPLE_TRY_CONCAT(a, b) SAMPLE_TRY_CONCAT_INNER(a, b)
#define SAMPLE_TRY_TEMP SAMPLE_TRY_CONCAT(sample_try_result_, __LINE__)

#define TRY(...)                                                      \
  do {                                                                \
    auto&& sample_try_result_ = (__VA_ARGS__);                        \
    if (!sample_try_result_) {                                        \
      return ::tl::unexpected(std::move(sample_try_result_).error()); \
    }                                                                 \
  } while (false)

#define TRY_ASSIGN(declaration, ...)                             \
  auto SAMPLE_TRY_TEMP = (__VA_ARGS__);                          \
  if (!SAMPLE_TRY_TEMP) {                                        \
    return ::tl::unexpected(std::move(SAMPLE_TRY_TEMP).error()); \
  }                                                              \
  declaration = std::move(*SAMPLE_TRY_TEMP)
