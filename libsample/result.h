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
};

template <typename T>
using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> Fail(std::string message, int sys_errno = 0) {
  return tl::unexpected<Error>(Error{std::move(message), sys_errno});
}

}  // namespace sample
