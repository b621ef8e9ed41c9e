#include "record/facts/jit_dumps.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "formats/embedded_codec.h"
#include "libsample/symbols/jitdump.h"

namespace sample::record {
namespace {

// Up to `size` bytes of `fd` from `offset` (fewer at its end).
std::vector<std::byte> ReadAt(int fd, uint64_t offset, size_t size) {
  std::vector<std::byte> bytes(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n =
        pread(fd, bytes.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace

void JitDumps::NoteMapping(uint32_t pid, std::string_view path, uint64_t inode,
                           const ProcessFiles& files) {
  if (!IsJitDumpFileName(path)) return;
  Dump& dump = dumps_[pid];
  if (dump.fd.get() >= 0 && dump.path == path && (inode == 0 || inode == dump.inode)) return;
  // A new dump of this process (an exec's new JIT): the latest counts.
  dump = Dump{std::string(path), inode, UniqueFd(), {}};
  Open(pid, dump, files);
}

void JitDumps::NoteExit(uint32_t pid, const ProcessFiles& files) {
  auto it = dumps_.find(pid);
  if (it != dumps_.end() && it->second.fd.get() < 0) Open(pid, it->second, files);
}

void JitDumps::Open(uint32_t pid, Dump& dump, const ProcessFiles& files) {
  auto fd = files.Open(pid, dump.path);
  if (!fd) {
    dump.note = fd.error().message;
    return;
  }
  struct stat st;
  if (fstat(fd->get(), &st) != 0) return;
  // The file at that path now may be another dump than the one mapped.
  if (dump.inode != 0 && st.st_ino != dump.inode) {
    dump.note = fmt::format("{}: not the file that was mapped (another inode now)", dump.path);
    return;
  }
  dump.inode = st.st_ino;
  dump.note.clear();
  dump.fd = std::move(*fd);
}

JitDumpsCopied JitDumps::Submit(format::SampleFileWriter& writer, const ProcessFiles& files,
                                std::vector<std::string>* notes) {
  JitDumpsCopied copied;
  std::vector<uint32_t> pids;
  for (const auto& [pid, dump] : dumps_) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  for (uint32_t pid : pids) {
    Dump& dump = dumps_[pid];
    if (dump.fd.get() < 0) Open(pid, dump, files);
    if (dump.fd.get() < 0) {
      notes->push_back(dump.note.empty() ? fmt::format("{}: not read", dump.path) : dump.note);
      continue;
    }
    if (SubmitDump(pid, dump, writer, copied, notes)) ++copied.dumps;
  }
  return copied;
}

bool JitDumps::SubmitDump(uint32_t pid, Dump& dump, format::SampleFileWriter& writer,
                          JitDumpsCopied& copied, std::vector<std::string>* notes) {
  uint64_t offset = 0;
  uint32_t part = 0;
  while (offset < format::kMaxJitDumpSize) {
    const size_t want =
        static_cast<size_t>(std::min(format::kJitDumpPartSize, format::kMaxJitDumpSize - offset));
    std::vector<std::byte> bytes = ReadAt(dump.fd.get(), offset, want);
    // Whole records only: a part ends where its last whole record does.
    const size_t whole = JitDumpWholePrefix(bytes, bytes.size(), part == 0);
    if (whole == 0) {
      if (part == 0) {
        notes->push_back(fmt::format("{}: not stored: no jitdump header", dump.path));
        return false;
      }
      if (bytes.size() == want) {
        notes->push_back(
            fmt::format("{}: not stored past offset {}: a record over {} MiB or of "
                        "no possible size there",
                        dump.path, offset, format::kJitDumpPartSize >> 20));
      }
      return true;
    }
    const bool at_end = bytes.size() < want;
    bytes.resize(whole);
    copied.bytes += whole;
    ++copied.parts;
    writer.Submit(format::ChunkType::kJitDump, format::EncodeJitDumpPart(pid, part++, bytes));
    offset += whole;
    // At the end of the file a record cut short (its writer still writing)
    // stays out; before it, the next part starts with the record that did
    // not fit in this one.
    if (at_end) return true;
  }
  struct stat st;
  if (offset >= format::kMaxJitDumpSize && fstat(dump.fd.get(), &st) == 0 &&
      static_cast<uint64_t>(st.st_size) > offset) {
    notes->push_back(
        fmt::format("{}: only its first {} MiB stored", dump.path, format::kMaxJitDumpSize >> 20));
  }
  return true;
}

}  // namespace sample::record
