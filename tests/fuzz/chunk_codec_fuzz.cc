// Fuzz target: the decoders of our own chunk payloads (events, metadata and
// build-ids, trailer; formats/chunk_codec.h), fed directly so the fuzzer
// need not get through a file's checksums first. Whatever decodes must
// encode and decode again to the same values. Input: u8 selecting the
// decoder, then the payload.
#include <cstdlib>
#include <cstring>

#include "formats/chunk_codec.h"
#include "tests/fuzz/fuzz_target.h"

namespace sample::format {
namespace {

bool SameEvents(const std::vector<EventDesc>& a, const std::vector<EventDesc>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i].attr, &b[i].attr, sizeof(a[i].attr)) != 0 || a[i].name != b[i].name ||
        a[i].ids != b[i].ids) {
      return false;
    }
  }
  return true;
}

bool SameTrailer(const Trailer& a, const Trailer& b) {
  return std::memcmp(&a.header, &b.header, sizeof(a.header)) == 0 &&
         a.cpus.size() == b.cpus.size() &&
         std::memcmp(a.cpus.data(), b.cpus.data(), a.cpus.size() * sizeof(TrailerCpu)) == 0 &&
         a.chunk_offsets == b.chunk_offsets;
}

}  // namespace
}  // namespace sample::format

SAMPLE_FUZZ_TARGET(chunk_codec)(std::span<const std::byte> input) {
  using namespace sample::format;
  sample::fuzz::InputTaker take(input);
  const uint8_t which = take.Take<uint8_t>() % 3;
  const std::span<const std::byte> payload = take.rest();
  constexpr uint64_t kOffset = 64 + 56;  // where a first chunk's payload sits
  if (which == 0) {
    auto events = DecodeEvents(payload, kOffset);
    if (!events) return 0;
    auto again = DecodeEvents(EncodeEvents(*events), kOffset);
    if (!again || !SameEvents(*events, *again)) std::abort();
  } else if (which == 1) {
    auto metadata = DecodeMetadata(payload, kOffset);
    if (!metadata) return 0;
    auto again = DecodeMetadata(EncodeMetadata(*metadata), kOffset);
    if (!again || *again != *metadata) std::abort();
  } else {
    auto trailer = DecodeTrailer(payload, kOffset);
    if (!trailer) return 0;
    auto again = DecodeTrailer(EncodeTrailer(*trailer), kOffset);
    if (!again || !SameTrailer(*trailer, *again)) std::abort();
  }
  return 0;
}
