#include "libsample/symbols/jitdump.h"

#include <cstring>

#include <fmt/format.h>

#include "libsample/byte_reader.h"
#include "libsample/string_parts.h"

namespace sample {
namespace {

// The fixed fields of the records this reader uses, as they are in the file.
#pragma pack(push, 1)
struct RawHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t total_size;
  uint32_t elf_mach;
  uint32_t pad;
  uint32_t pid;
  uint64_t timestamp;
  uint64_t flags;
};
static_assert(sizeof(RawHeader) == kJitDumpHeaderSize);

struct RawRecordHeader {
  uint32_t id;
  uint32_t total_size;
  uint64_t timestamp;
};
static_assert(sizeof(RawRecordHeader) == kJitRecordHeaderSize);

struct RawLoad {
  uint32_t pid;
  uint32_t tid;
  uint64_t vma;
  uint64_t code_address;
  uint64_t code_size;
  uint64_t code_index;
};
static_assert(sizeof(RawLoad) == 40);

struct RawMove {
  uint32_t pid;
  uint32_t tid;
  uint64_t vma;
  uint64_t old_address;
  uint64_t new_address;
  uint64_t code_size;
  uint64_t code_index;
};
static_assert(sizeof(RawMove) == 48);

struct RawDebugEntry {
  uint64_t address;
  uint32_t line;
  uint32_t discriminator;
};
#pragma pack(pop)

// The smallest entry: its fixed fields and a NUL.
constexpr size_t kMinDebugEntry = sizeof(RawDebugEntry) + 1;

// A NUL-terminated string at the reader's cursor; false when the bytes
// end before the NUL.
bool ReadCString(ByteReader& in, std::string_view* out) {
  std::span<const std::byte> rest;
  const size_t remaining = in.remaining();
  if (!in.ReadBytes(remaining, &rest)) return false;
  const void* nul = std::memchr(rest.data(), 0, rest.size());
  if (nul == nullptr) return false;
  const size_t length = static_cast<size_t>(static_cast<const std::byte*>(nul) - rest.data());
  *out = std::string_view(reinterpret_cast<const char*>(rest.data()), length);
  in.Seek(in.position() - remaining + length + 1);
  return true;
}

// Walks the records of `bytes` from `start`: calls `visit(id, time, body,
// body_offset)` for each whole record and returns where the walk stopped
// (the end of the last whole record). `torn` is set when the bytes end
// inside a record, `bad_size` when a size cannot be a record.
template <typename Visit>
size_t WalkRecords(std::span<const std::byte> bytes, size_t start, bool* torn, bool* bad_size,
                   Visit&& visit) {
  size_t at = start;
  while (at < bytes.size()) {
    ByteReader in(bytes.subspan(at));
    RawRecordHeader h;
    if (!in.Read(&h)) {
      *torn = true;
      break;
    }
    if (h.total_size < kJitRecordHeaderSize) {
      *bad_size = true;
      break;
    }
    if (h.total_size > in.remaining() + kJitRecordHeaderSize) {
      *torn = true;
      break;
    }
    if (!visit(h.id, h.timestamp,
               bytes.subspan(at + kJitRecordHeaderSize, h.total_size - kJitRecordHeaderSize),
               at + kJitRecordHeaderSize)) {
      break;
    }
    at += h.total_size;
  }
  return at;
}

}  // namespace

JitDumpCounts& JitDumpCounts::operator+=(const JitDumpCounts& o) {
  loads += o.loads;
  moves += o.moves;
  debug_infos += o.debug_infos;
  unwinding_infos += o.unwinding_infos;
  unknown += o.unknown;
  malformed += o.malformed;
  unmatched_debug_infos += o.unmatched_debug_infos;
  closed = closed || o.closed;
  torn = torn || o.torn;
  return *this;
}

Result<JitDump> JitDump::Parse(std::span<const std::byte> bytes, std::string_view name) {
  ByteReader in(bytes);
  RawHeader raw;
  if (!in.Read(&raw)) {
    return Fail(fmt::format("{}: offset 0: {} bytes, too short for a jitdump header ({})", name,
                            bytes.size(), kJitDumpHeaderSize));
  }
  if (raw.magic == kJitDumpMagicSwapped) {
    return Fail(fmt::format("{}: offset 0: a jitdump of the other byte order (not read)", name));
  }
  if (raw.magic != kJitDumpMagic) {
    return Fail(fmt::format("{}: offset 0: magic {:#010x} is not a jitdump's ({:#010x})", name,
                            raw.magic, kJitDumpMagic));
  }
  if (raw.total_size < kJitDumpHeaderSize || raw.total_size > bytes.size()) {
    return Fail(fmt::format("{}: offset 8: header size {} (at least {}, within the {} bytes)", name,
                            raw.total_size, kJitDumpHeaderSize, bytes.size()));
  }
  JitDump dump;
  dump.header_ =
      JitDumpHeader{raw.version, raw.total_size, raw.elf_mach, raw.pid, raw.timestamp, raw.flags};
  bool bad_size = false;
  WalkRecords(bytes, raw.total_size, &dump.counts_.torn, &bad_size,
              [&](uint32_t id, uint64_t time, std::span<const std::byte> body, size_t offset) {
                dump.ParseRecord(id, time, body, offset);
                return true;
              });
  if (bad_size) ++dump.counts_.malformed;
  if (dump.pending_lines_) ++dump.counts_.unmatched_debug_infos;
  return dump;
}

void JitDump::ParseRecord(uint32_t id, uint64_t time, std::span<const std::byte> body,
                          uint64_t body_offset) {
  // Debug info describes the next code load, and nothing else; unwinding
  // info for the same load may come between them (V8 writes debug info,
  // then unwinding info, then the load).
  if (pending_lines_ && id != kJitCodeLoad && id != kJitCodeUnwindingInfo) {
    ++counts_.unmatched_debug_infos;
    pending_lines_ = false;
    pending_.clear();
    pending_files_.clear();
  }
  switch (id) {
    case kJitCodeLoad:
      return ParseLoad(time, body, body_offset);
    case kJitCodeMove:
      return ParseMove(time, body, body_offset);
    case kJitCodeDebugInfo:
      return ParseDebugInfo(body, body_offset);
    case kJitCodeClose:
      counts_.closed = true;
      return;
    case kJitCodeUnwindingInfo:
      // eh_frame for the next load; the unwinder falls back to frame
      // pointers in JIT code, which V8 and the JVM keep.
      ++counts_.unwinding_infos;
      return;
    default:
      ++counts_.unknown;
      return;
  }
}

void JitDump::ParseLoad(uint64_t time, std::span<const std::byte> body, uint64_t body_offset) {
  ByteReader in(body, body_offset);
  RawLoad raw;
  std::string_view name;
  std::span<const std::byte> code;
  if (!in.Read(&raw) || !ReadCString(in, &name) || raw.code_size > in.remaining() ||
      !in.ReadBytes(static_cast<size_t>(raw.code_size), &code) ||
      raw.code_address > UINT64_MAX - raw.code_size) {
    ++counts_.malformed;
    pending_lines_ = false;
    pending_.clear();
    pending_files_.clear();
    return;
  }
  JitCodeLoad load;
  load.time = time;
  load.pid = raw.pid;
  load.tid = raw.tid;
  load.vma = raw.vma;
  load.code_address = raw.code_address;
  load.code_index = raw.code_index;
  load.name = std::string(name);
  load.code.assign(code.begin(), code.end());
  if (pending_lines_) {
    if (pending_address_ == raw.code_address) {
      load.lines = std::move(pending_);
      load.files = std::move(pending_files_);
    } else {
      ++counts_.unmatched_debug_infos;
    }
    pending_lines_ = false;
    pending_.clear();
    pending_files_.clear();
  }
  loads_.push_back(std::move(load));
  ++counts_.loads;
}

void JitDump::ParseMove(uint64_t time, std::span<const std::byte> body, uint64_t body_offset) {
  ByteReader in(body, body_offset);
  RawMove raw;
  if (!in.Read(&raw) || raw.old_address > UINT64_MAX - raw.code_size ||
      raw.new_address > UINT64_MAX - raw.code_size) {
    ++counts_.malformed;
    return;
  }
  moves_.push_back(JitCodeMove{time, raw.pid, raw.tid, raw.vma, raw.old_address, raw.new_address,
                               raw.code_size, raw.code_index});
  loads_before_move_.push_back(loads_.size());
  ++counts_.moves;
}

void JitDump::ParseDebugInfo(std::span<const std::byte> body, uint64_t body_offset) {
  ByteReader in(body, body_offset);
  uint64_t address = 0, count = 0;
  if (!in.Read(&address) || !in.Read(&count) || count > in.remaining() / kMinDebugEntry) {
    ++counts_.malformed;
    return;
  }
  std::vector<JitLine> lines;
  lines.reserve(static_cast<size_t>(count));
  // Each name is stored once: every entry's own bytes pay for at most one
  // name, so what is kept stays proportional to the record.
  std::vector<std::string> files;
  for (uint64_t i = 0; i < count; ++i) {
    RawDebugEntry raw;
    std::string_view file;
    if (!in.Read(&raw) || !ReadCString(in, &file)) {
      ++counts_.malformed;
      return;
    }
    // "\xff" stands for the file of the entry before (perf's convention);
    // a name repeated in full is the same file too.
    const bool same = !lines.empty() && (file == "\xff" || file == files.back());
    if (!same) files.emplace_back(file);
    lines.push_back(
        JitLine{raw.address, raw.line, raw.discriminator, static_cast<uint32_t>(files.size() - 1)});
  }
  ++counts_.debug_infos;
  pending_lines_ = true;
  pending_address_ = address;
  pending_ = std::move(lines);
  pending_files_ = std::move(files);
}

size_t JitDumpWholePrefix(std::span<const std::byte> bytes, size_t limit, bool with_header) {
  size_t start = 0;
  if (with_header) {
    ByteReader in(bytes);
    RawHeader raw;
    if (!in.Read(&raw) || raw.total_size < kJitDumpHeaderSize || raw.total_size > bytes.size() ||
        raw.total_size > limit) {
      return 0;
    }
    start = raw.total_size;
  }
  size_t end = start;
  bool torn = false, bad_size = false;
  WalkRecords(bytes, start, &torn, &bad_size,
              [&](uint32_t, uint64_t, std::span<const std::byte> body, size_t offset) {
                const size_t record_end = offset + body.size();
                if (record_end > limit) return false;
                end = record_end;
                return true;
              });
  return end;
}

bool IsJitDumpFileName(std::string_view path) {
  const std::string name = Basename(path);
  constexpr std::string_view kPrefix = "jit-", kSuffix = ".dump";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return false;
  }
  // A view of `name` itself: name.substr() would be a temporary, gone
  // before the loop reads it (ASan caught every recording of a jitdump).
  const std::string_view digits =
      std::string_view(name).substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace sample
