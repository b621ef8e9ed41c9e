// SAMPLE_FUZZ_TARGET(name): defines one fuzz target, built two ways.
//
// - With -Dfuzz=true (clang, -fsanitize=fuzzer,address) each target file is
//   its own libFuzzer binary: the macro defines LLVMFuzzerTestOneInput.
// - Always, all target files are also linked into one replay test
//   (replay_main.cc), where the macro registers the body under `name` and
//   every file of tests/fuzz/corpus/NAME/ becomes a test case. That keeps the
//   corpus, crashes included, a regression test in the normal suite.
//
// The body gets the input as bytes and returns 0; it must not leak, keep
// state between calls, or print. Usage:
//
//   SAMPLE_FUZZ_TARGET(kallsyms)(std::span<const std::byte> input) {
//     ...
//     return 0;
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace sample::fuzz {

using TargetFn = int (*)(std::span<const std::byte>);

// Registers a target for the replay driver; returns true (for a static
// initializer). Defined in replay_main.cc.
bool RegisterTarget(const char* name, TargetFn fn);

// Reads fixed-size values off the front of a fuzz input (zeroes once it is
// used up), so a target can take its parameters (an attr, a count) from the
// input and hand the rest to the parser.
class InputTaker {
 public:
  explicit InputTaker(std::span<const std::byte> input) : rest_(input) {}

  template <typename T>
  T Take() {
    T value{};
    const size_t n = rest_.size() < sizeof(T) ? rest_.size() : sizeof(T);
    std::memcpy(&value, rest_.data(), n);
    rest_ = rest_.subspan(n);
    return value;
  }
  // The next `n` bytes (fewer at the input's end).
  std::span<const std::byte> TakeBytes(size_t n) {
    const std::span<const std::byte> taken = rest_.first(n < rest_.size() ? n : rest_.size());
    rest_ = rest_.subspan(taken.size());
    return taken;
  }
  std::span<const std::byte> rest() const { return rest_; }

 private:
  std::span<const std::byte> rest_;
};

}  // namespace sample::fuzz

#define SAMPLE_FUZZ_BODY_NAME(name) SampleFuzzTarget_##name

#if defined(SAMPLE_LIBFUZZER)
#define SAMPLE_FUZZ_ENTRY(name)                                                      \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {          \
    return SAMPLE_FUZZ_BODY_NAME(name)(                                              \
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size)); \
  }
#else
#define SAMPLE_FUZZ_ENTRY(name)                                      \
  [[maybe_unused]] static const bool sample_fuzz_registered_##name = \
      ::sample::fuzz::RegisterTarget(#name, SAMPLE_FUZZ_BODY_NAME(name));
#endif

#define SAMPLE_FUZZ_TARGET(name)                                            \
  static int SAMPLE_FUZZ_BODY_NAME(name)(std::span<const std::byte> input); \
  SAMPLE_FUZZ_ENTRY(name)                                                   \
  static int SAMPLE_FUZZ_BODY_NAME(name)
