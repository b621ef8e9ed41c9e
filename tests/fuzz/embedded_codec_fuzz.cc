// Fuzz target: the decoders of the embedded chunks (kEmbeddedBinary,
// kPerfMap; formats/embedded_codec.h), fed directly so the fuzzer need not
// get through a file's checksums first. Whatever decodes must be sorted,
// unique and disjoint as the model says, within the memory limit, answer
// lookups of its own keys, keep at most kMaxReadInlineDepth frames of an
// address, say what it charged (never over the limit, also when decoding
// failed), and encode and decode again to the same value.
// Input: u8 (bit 0: perf map, else binary; bit 1: a 64 KiB memory limit,
// so that limit is reached too), then the payload.
#include <cstdlib>

#include "formats/embedded_codec.h"
#include "tests/fuzz/fuzz_target.h"

namespace sample::format {
namespace {

constexpr uint64_t kOffset = 64 + 56;  // where a first chunk's payload sits

void CheckBinary(const EmbeddedBinary& binary, uint64_t memory_limit) {
  if (EmbeddedMemoryCost(binary) > memory_limit) std::abort();
  EmbeddedBinary normalized = binary;
  normalized.Normalize();
  if (!(normalized == binary)) std::abort();
  for (const EmbeddedAddress& address : binary.addresses) {
    if (binary.FramesAt(address.offset) != &address.frames) std::abort();
    if (address.frames.size() > kMaxReadInlineDepth) std::abort();
  }
  for (size_t i = 0; i < binary.cfi.size(); ++i) {
    const CfiRow& row = binary.cfi[i];
    if (row.end <= row.start || (i > 0 && row.start < binary.cfi[i - 1].end)) std::abort();
    if (binary.CfiRowAt(row.start) != &row || binary.CfiRowAt(row.end - 1) != &row) std::abort();
  }
  for (size_t i = 0; i < binary.code.size(); ++i) {
    const EmbeddedCode& code = binary.code[i];
    if (code.bytes.empty()) std::abort();
    if (i > 0) {
      const EmbeddedCode& before = binary.code[i - 1];
      if (code.vaddr - before.vaddr < before.bytes.size()) std::abort();
    }
  }
  for (const EmbeddedFunction& function : binary.functions) {
    if (binary.FunctionAt(function.start) == nullptr) std::abort();
  }
  for (const EmbeddedSegment& segment : binary.segments) {
    (void)binary.FileOffsetToVaddr(segment.offset);
    (void)binary.LoadBias(0x7f0000000000, segment.offset);
  }
}

}  // namespace
}  // namespace sample::format

SAMPLE_FUZZ_TARGET(embedded_codec)(std::span<const std::byte> input) {
  using namespace sample::format;
  sample::fuzz::InputTaker take(input);
  const uint8_t flags = take.Take<uint8_t>();
  const std::span<const std::byte> payload = take.rest();
  if (flags & 1) {
    auto map = DecodePerfMap(payload, kOffset);
    if (!map) return 0;
    auto again = DecodePerfMap(EncodePerfMap(*map), kOffset);
    if (!again || !(*again == *map)) std::abort();
    return 0;
  }
  const uint64_t limit = (flags & 2) ? uint64_t{64} << 10 : sample::format::kMaxEmbeddedDecodedSize;
  uint64_t charged = UINT64_MAX;
  auto binary = DecodeEmbeddedBinary(payload, kOffset, limit, &charged);
  if (charged > limit) std::abort();
  if (!binary) return 0;
  if (charged < sample::format::EmbeddedMemoryCost(*binary)) std::abort();
  CheckBinary(*binary, limit);
  auto again = DecodeEmbeddedBinary(EncodeEmbeddedBinary(*binary), kOffset, limit);
  if (!again || !(*again == *binary)) std::abort();
  return 0;
}
