// A tracepoint's format description (tracefs events/SUBSYSTEM/NAME/format)
// and the decoding of its PERF_SAMPLE_RAW payload into named fields.
//
// The format text lists each field of the trace record as
//   field:TYPE NAME[N];  offset:O;  size:S;  signed:0|1;
// with `__data_loc TYPE[] NAME` (a u32: payload offset in the low 16 bits,
// length in the high 16) and `__rel_loc` (the same, offset counted from the
// end of the field) for variable-length data. The recorder stores the text
// in the file (kTraceFormats); the report parses it here. Both the text and
// the payloads are untrusted: every offset and size is checked against the
// payload, and a field that does not fit is decoded as missing.
//
// How values are shown (DecodeTraceFields), one rule for every tracepoint:
//   - char arrays (`char comm[16]`; not `unsigned char`, which holds bytes)
//     and `__data_loc char[]`: a string, up to
//     the first NUL; bytes outside printable ASCII, the space and '\'
//     become \xNN, so the text is one token of plain ASCII (and valid
//     inside JSON);
//   - pointers (a '*' in the type): hexadecimal, 0x...;
//   - other integers of 1, 2, 4 or 8 bytes: decimal, signed when the
//     format says signed:1 (so `size_t count` is 512, `int fd` -1);
//   - other arrays with a numeric length: a list of such elements;
//   - anything else (odd sizes, other __data_loc arrays): its bytes in hex,
//     in memory order.
// Fields named common_* (type, flags, preempt count, pid) are left out, as
// perf script does: the sample's own columns say the same.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

struct TraceField {
  enum class Kind {
    kInteger,    // scalar of 1, 2, 4 or 8 bytes
    kPointer,    // scalar with '*' in its type
    kCharArray,  // char NAME[N]
    kArray,      // TYPE NAME[N], N numeric, elements of size/N bytes
    kDynString,  // __data_loc / __rel_loc char[]
    kDynBytes,   // other __data_loc / __rel_loc arrays
    kBytes,      // anything else
  };
  std::string type;  // as written before the name ("const char *", "__data_loc char[]")
  std::string name;
  uint32_t offset = 0;
  uint32_t size = 0;
  bool is_signed = false;
  bool relative = false;      // __rel_loc: the offset is from the end of the field
  uint32_t array_length = 0;  // kArray and kCharArray: N
  Kind kind = Kind::kBytes;
  bool common() const { return name.starts_with("common_"); }
};

struct TraceFormat {
  std::string name;  // "sys_enter_write"
  uint64_t id = 0;   // the tracepoint id (PERF_TYPE_TRACEPOINT config)
  std::vector<TraceField> fields;
};

// Parses a format file's text. Fails (naming the line) for a field line
// without a name, offset or size, and for text that declares no fields.
Result<TraceFormat> ParseTraceFormat(std::string_view text);

struct TraceValue {
  enum class Kind { kSigned, kUnsigned, kHex, kString, kList, kBytes, kMissing };
  const TraceField* field = nullptr;
  Kind kind = Kind::kMissing;
  uint64_t number = 0;  // kSigned (two's complement), kUnsigned, kHex
  std::string text;     // kString: escaped as described above; kBytes: hex digits
  // kList: the elements, each with element_kind (kSigned, kUnsigned or kHex).
  std::vector<uint64_t> elements;
  Kind element_kind = Kind::kUnsigned;
};

// The values of the fields other than common_*, in format order. `raw` is
// the PERF_SAMPLE_RAW payload (the trace record, without the u32 size).
std::vector<TraceValue> DecodeTraceFields(const TraceFormat& format,
                                          std::span<const std::byte> raw);

// One value as text: "512", "-1", "0x7ffd1234", "bash", "[1,2,3]",
// "0a0b"; "?" for a field the payload is too short for.
std::string TraceValueText(const TraceValue& value);

// "fd=1 buf=0x7ffd1234 count=512", perf script's name=value layout.
std::string TraceFieldsText(const std::vector<TraceValue>& values);

}  // namespace sample
