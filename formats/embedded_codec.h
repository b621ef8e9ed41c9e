// Encoders and decoders of the embedded chunks: kEmbeddedBinary (what the
// recorder kept of one binary: frames, functions, CFI rows, code) and
// kPerfMap (a JIT's perf map). Layouts are specified in
// sample_file_format.h. Decoders take untrusted bytes and the payload's
// file offset, bound every count by the bytes left and the memory the
// decoded tables take, and name the offset of whatever is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "formats/sample_file_format.h"
#include "libsample/result.h"
#include "libsample/symbols/embedded_binary.h"

namespace sample::format {

// `binary` in the kEmbeddedBinary layout. Tables need not be sorted: they
// are written sorted, the first of equal keys kept (as Normalize keeps
// it), and entries a reader would refuse are left out (see the format).
std::vector<std::byte> EncodeEmbeddedBinary(const EmbeddedBinary& binary);
// The binary a kEmbeddedBinary payload holds, its tables sorted and unique.
// Fails, naming the offset, on any malformed field, or when the decoded
// tables (with the string table, while decoding) would take more than
// `memory_limit` bytes as EmbeddedMemoryCost counts them. `charged`, when
// given, is set to the memory decoding counted, also when it failed
// (what it cost before it found the chunk bad: a budget over several
// chunks charges refused ones too, or each could cost the limit again).
Result<EmbeddedBinary> DecodeEmbeddedBinary(std::span<const std::byte> payload,
                                            uint64_t payload_offset,
                                            uint64_t memory_limit = kMaxEmbeddedDecodedSize,
                                            uint64_t* charged = nullptr);
// The memory `binary`'s tables take, as decoding counts it: the elements
// of every table, the bytes of every string and of the code.
uint64_t EmbeddedMemoryCost(const EmbeddedBinary& binary);

std::vector<std::byte> EncodePerfMap(const RecordedPerfMap& map);
// Fails, naming the offset, when the payload is too short for its pid.
Result<RecordedPerfMap> DecodePerfMap(std::span<const std::byte> payload, uint64_t payload_offset);

// One kJitDump part: which process, which part, and the dump's bytes in it
// (a view into the payload).
struct JitDumpPart {
  uint32_t pid = 0;
  uint32_t part = 0;
  std::span<const std::byte> bytes;
};
std::vector<std::byte> EncodeJitDumpPart(uint32_t pid, uint32_t part,
                                         std::span<const std::byte> bytes);
// Fails, naming the offset, when the payload is too short for its fields.
Result<JitDumpPart> DecodeJitDumpPart(std::span<const std::byte> payload, uint64_t payload_offset);

}  // namespace sample::format
