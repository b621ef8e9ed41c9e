// Fuzz target: a tracepoint format text (libsample/events/trace_format.h),
// as stored in kTraceFormats, and the decoding of a PERF_SAMPLE_RAW payload
// with it. Input: u16 length of the format text, the text, then the payload.
// Every decoded value must print.
#include <algorithm>
#include <string_view>

#include "libsample/events/trace_format.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(trace_format)(std::span<const std::byte> input) {
  sample::fuzz::InputTaker take(input);
  const size_t length = std::min<size_t>(take.Take<uint16_t>(), take.rest().size());
  const std::span<const std::byte> text = take.rest().first(length);
  const std::span<const std::byte> payload = take.rest().subspan(length);
  auto format = sample::ParseTraceFormat(
      std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
  if (!format) return 0;
  const auto values = sample::DecodeTraceFields(*format, payload);
  (void)sample::TraceFieldsText(values);
  return 0;
}
