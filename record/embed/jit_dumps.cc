#include "record/embed/jit_dumps.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "formats/embedded_codec.h"
#include "libsample/regular_file.h"
#include "libsample/symbols/jitdump.h"
#include "libsample/symbols/perf_map.h"

namespace sample::record {
namespace {

// Up to `size` bytes of `fd` from `offset` (fewer at its end).
std::vector<std::byte> ReadAt(int fd, uint64_t offset, size_t size) {
  std::vector<std::byte> bytes(size);
  bytes.resize(PreadAll(fd, bytes, offset));
  return bytes;
}

}  // namespace

void JitDumps::NoteMapping(uint32_t pid, std::string_view path, uint64_t inode,
                           const ProcessFiles& files) {
  if (!IsJitDumpFileName(path)) return;
  Dump& dump = dumps_[pid];
  if (dump.fd.get() >= 0 && dump.path == path && (inode == 0 || inode == dump.inode)) return;
  // A new dump of this process (an exec's new JIT): the latest counts.
  Release(dump);
  dump = Dump{};
  dump.path = std::string(path);
  dump.inode = inode;
  dump.uid = files.Uid(pid);
  Open(pid, dump, files);
}

void JitDumps::NoteExit(uint32_t pid, const ProcessFiles& files) {
  auto it = dumps_.find(pid);
  if (it == dumps_.end() || it->second.exited) return;
  Dump& dump = it->second;
  dump.exited = true;
  // An evicted one too: its file, if still there, is complete now.
  if (dump.fd.get() < 0) Open(pid, dump, files);
  // Read and closed (the copy of an evicted one kept if it could not be).
  if (dump.fd.get() >= 0) Hold(dump);
}

void JitDumps::Open(uint32_t pid, Dump& dump, const ProcessFiles& files) {
  if (open_ >= limits_.max_open) HoldOldest();
  // Not through a link: its target would be a file of whoever made it.
  auto fd = files.Open(pid, dump.path, OpenRegularOptions{.no_follow = true});
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
  // As for perf maps: only a dump the process's own user could have
  // written and no one else (a 0666 dump in /tmp, rewritten by another
  // user, named the victim's code after hers), read as root only if it
  // is root's process's.
  if (!dump.uid) {
    dump.note =
        fmt::format("{}: ignored: process {} ended before its user could be read", dump.path, pid);
    return;
  }
  if (auto trusted = CheckPerfMapFile(dump.path, st, PerfMapOptions{.user = *dump.uid}); !trusted) {
    dump.note = trusted.error().message;
    return;
  }
  dump.inode = st.st_ino;
  dump.note.clear();
  dump.fd = std::move(*fd);
  dump.opened = opens_++;
  ++open_;
}

void JitDumps::Close(Dump& dump) {
  if (dump.fd.get() < 0) return;
  dump.fd = UniqueFd();
  --open_;
}

void JitDumps::Release(Dump& dump) {
  Close(dump);
  held_bytes_ -= dump.bytes.size();
  dump.bytes = {};
  dump.held = false;
}

void JitDumps::Hold(Dump& dump) {
  held_bytes_ -= dump.bytes.size();
  dump.cut.clear();
  dump.bytes = ReadWhole(dump, BytesLeft(), &dump.cut);
  held_bytes_ += dump.bytes.size();
  dump.held = true;
  Close(dump);
}

void JitDumps::HoldOldest() {
  Dump* oldest = nullptr;
  for (auto& [pid, dump] : dumps_) {
    if (dump.fd.get() >= 0 && (oldest == nullptr || dump.opened < oldest->opened)) oldest = &dump;
  }
  if (oldest == nullptr) return;
  Hold(*oldest);
  if (!oldest->exited) {
    oldest->cut.push_back(fmt::format(
        "{}: read before its process ended ({} newer dumps were open): code it loaded later is "
        "named only if the file is still there at the close",
        oldest->path, limits_.max_open));
  }
}

uint64_t JitDumps::BytesLeft() const {
  const uint64_t used = held_bytes_ + closing_bytes_;
  return std::min(format::kMaxJitDumpSize,
                  used >= limits_.max_total_bytes ? 0 : limits_.max_total_bytes - used);
}

std::vector<std::byte> JitDumps::ReadWhole(const Dump& dump, uint64_t limit,
                                           std::vector<std::string>* notes) const {
  std::vector<std::byte> out;
  const auto budget_note = [&] {
    notes->push_back(fmt::format(
        "{}: only its first {} bytes stored: the recording keeps {} MiB of jitdumps in all",
        dump.path, out.size(), limits_.max_total_bytes >> 20));
  };
  while (out.size() < limit) {
    const uint64_t offset = out.size();
    const size_t want = static_cast<size_t>(std::min(format::kJitDumpPartSize, limit - offset));
    std::vector<std::byte> bytes = ReadAt(dump.fd.get(), offset, want);
    // Whole records only: a read ends where its last whole record does.
    const size_t whole = JitDumpWholePrefix(bytes, bytes.size(), offset == 0);
    if (whole == 0) {
      if (bytes.size() == want && want < format::kJitDumpPartSize) {
        budget_note();  // the limit cut the first record that did not fit
      } else if (offset == 0) {
        notes->push_back(fmt::format("{}: not stored: no jitdump header", dump.path));
      } else if (bytes.size() == want) {
        notes->push_back(
            fmt::format("{}: not stored past offset {}: a record over {} MiB or of "
                        "no possible size there",
                        dump.path, offset, format::kJitDumpPartSize >> 20));
      }
      return out;
    }
    out.insert(out.end(), bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(whole));
    // At the end of the file a record cut short (its writer still writing)
    // stays out.
    if (bytes.size() < want) return out;
  }
  struct stat st;
  if (fstat(dump.fd.get(), &st) == 0 && static_cast<uint64_t>(st.st_size) > out.size()) {
    if (limit < format::kMaxJitDumpSize) {  // the total's bound
      budget_note();
    } else {
      notes->push_back(fmt::format("{}: only its first {} MiB stored", dump.path,
                                   format::kMaxJitDumpSize >> 20));
    }
  }
  return out;
}

JitDumpsCopied JitDumps::Submit(format::SampleFileWriter& writer, const ProcessFiles& files,
                                std::vector<std::string>* notes) {
  JitDumpsCopied copied;
  closing_bytes_ = 0;
  std::vector<uint32_t> pids;
  for (const auto& [pid, dump] : dumps_) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  for (uint32_t pid : pids) {
    Dump& dump = dumps_[pid];
    // A live process's dump as it is now (an evicted one read again whole
    // if its file is still there).
    if (!dump.exited && dump.fd.get() < 0) Open(pid, dump, files);
    std::vector<std::byte> fresh;
    if (dump.fd.get() >= 0) {
      if (dump.held) {  // reopened: the copy is superseded
        held_bytes_ -= dump.bytes.size();
        dump.bytes = {};
        dump.held = false;
      }
      fresh = ReadWhole(dump, BytesLeft(), notes);
      closing_bytes_ += fresh.size();
    } else if (dump.held) {
      notes->insert(notes->end(), dump.cut.begin(), dump.cut.end());
    } else {
      notes->push_back(dump.note.empty() ? fmt::format("{}: not read", dump.path) : dump.note);
      continue;
    }
    const std::vector<std::byte>& bytes = dump.held ? dump.bytes : fresh;
    if (bytes.empty()) continue;
    if (!dump.exited && !dump.held) {
      // JITs buffer their writes (V8 up to 2 MiB): a running process's
      // newest code may not be in its file yet.
      notes->push_back(fmt::format(
          "{}: read while process {} still ran: code its JIT had not written out yet stays "
          "unnamed",
          dump.path, pid));
    }
    // Parts of whole records (ReadWhole stopped before any over a part).
    size_t offset = 0;
    for (uint32_t part = 0; offset < bytes.size(); ++part) {
      const auto rest = std::span(bytes).subspan(offset);
      const size_t n = JitDumpWholePrefix(rest, format::kJitDumpPartSize, part == 0);
      if (n == 0) break;
      writer.Submit(format::ChunkType::kJitDump,
                    format::EncodeJitDumpPart(pid, part, rest.first(n)));
      ++copied.parts;
      copied.bytes += n;
      offset += n;
    }
    ++copied.dumps;
  }
  closing_bytes_ = 0;
  return copied;
}

}  // namespace sample::record
