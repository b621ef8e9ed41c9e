#include "record/facts/postmortem_facts.h"

#include <sys/mman.h>

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "formats/chunk_codec.h"
#include "libsample/memory_file.h"
#include "libsample/model/process_table.h"
#include "libsample/perf/perf_event_advice.h"
#include "libsample/perf/perf_record.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/file_identity.h"
#include "libsample/symbols/kallsyms.h"
#include "libsample/symbols/recorded_binary.h"
#include "libsample/symbols/vdso_image.h"

namespace sample::record {

void PostmortemFacts::AddBinary(uint32_t pid, std::string_view path) {
  files_.Note(pid);
  jit_maps_.NoteMapping(pid, path, files_);
  // Only real files have build-ids: skip //anon, memfd: and such. The
  // [vdso] is on no disk; its image is stored instead.
  if (!path.empty() && path.front() == '/' && !IsAnonymousCode(path)) {
    binaries_.try_emplace(std::string(path), pid);
  }
  if (path == kVdsoPath) saw_vdso_ = true;
}

void PostmortemFacts::Observe(const perf_event_header& header, std::span<const std::byte> record,
                              const perf_event_attr& attr) {
  if (header.type == PERF_RECORD_MMAP2) {
    // -d's mappings of data name no code: no build-ids, no perf maps.
    if (auto m = ParseMmap2(record, attr); m && (m->prot & PROT_EXEC)) {
      AddBinary(m->pid, m->filename);
      // A JIT maps its jitdump executable for this record to be written
      // (ino is 0 in records that carry a build-id instead).
      jit_dumps_.NoteMapping(m->pid, m->filename, m->ino, files_);
    }
    return;
  }
  if (header.type == PERF_RECORD_COMM) {
    // After an exec the process may be in another mount namespace.
    if (auto c = ParseComm(record, attr); c && (header.misc & PERF_RECORD_MISC_COMM_EXEC)) {
      files_.Renote(c->pid);
    }
    return;
  }
  if (header.type == PERF_RECORD_EXIT) {
    if (auto t = ParseTask(record, attr); t && t->pid == t->tid) {
      jit_maps_.NoteExit(t->pid, files_);
      jit_dumps_.NoteExit(t->pid, files_);
    }
    return;
  }
  // Kernel addresses appear only in samples taken in kernel mode (their
  // chains hold the kernel part); user-mode samples cost one test.
  if (header.type != PERF_RECORD_SAMPLE ||
      (header.misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_KERNEL) {
    return;
  }
  auto sample = ParseSample(record, attr);
  if (!sample) return;
  if (IsKernelAddress(sample->ip)) kernel_addresses_.insert(sample->ip);
  for (size_t i = 0; i < sample->callchain.size(); ++i) {
    const uint64_t ip = sample->callchain[i];
    if (IsKernelAddress(ip) && !IsContextMarker(ip)) kernel_addresses_.insert(ip);
  }
}

std::vector<std::byte> PostmortemFacts::VdsoPayload(std::string* note) const {
  if (!saw_vdso_) return {};
  auto image = ReadOwnVdsoImage();
  if (!image) {
    *note = "[vdso] frames will be unknown: " + image.error().message;
    return {};
  }
  return std::move(*image);
}

std::vector<std::byte> PostmortemFacts::BuildIdPayload(std::span<const std::byte> vdso) const {
  format::Metadata ids;
  for (const auto& [path, pid] : binaries_) {
    // The file the process mapped: in its mount namespace, not ours.
    auto fd = files_.Open(pid, path);
    // Its identity: the GNU build-id, else Go's, else a hash of the file
    // (file_identity.h), so a report can tell it from another file there.
    auto id = fd ? ReadFileIdentity(fmt::format("/proc/self/fd/{}", fd->get()))
                 : tl::unexpected(fd.error());
    if (id && !id->empty()) ids.emplace_back(path, *id);
  }
  if (!vdso.empty()) {
    // libelf reads files: the image goes through an in-memory one.
    auto file = MemoryFile::Create("vdso", vdso);
    auto id = file ? ReadElfBuildId(file->path()) : tl::unexpected(file.error());
    if (id && !id->empty()) ids.emplace_back(kVdsoPath, *id);
  }
  std::sort(ids.begin(), ids.end());
  return format::EncodeMetadata(ids);
}

std::vector<std::byte> PostmortemFacts::KernelSymbolsPayload(const KallsymsSnapshotOptions& options,
                                                             std::string* note) const {
  if (kernel_addresses_.empty()) return {};
  const KallsymsSnapshot snapshot = TakeKallsymsSnapshot(
      std::vector<uint64_t>(kernel_addresses_.begin(), kernel_addresses_.end()), options);
  *note = snapshot.note;
  const std::string formatted = FormatKallsyms(snapshot.symbols);
  const auto* bytes = reinterpret_cast<const std::byte*>(formatted.data());
  return std::vector<std::byte>(bytes, bytes + formatted.size());
}

void PostmortemFacts::CollectHits(EventTable events, Arch arch) {
  // kernel.perf_event_max_stack as the events were opened (after
  // --raise-max-stack), as the drainer reads it.
  const auto max_stack = static_cast<uint32_t>(std::max(ReadPerfEventMaxStack().value_or(127), 1));
  hits_ = std::make_unique<CodeHits>(std::move(events), arch, max_stack);
}

std::function<void(std::span<std::byte>)> PostmortemFacts::RecordsObserver() {
  // Called on the writer's thread; hits_ is set before the first records
  // chunk is handed to it (the hand-over's lock orders the two).
  return [this](std::span<std::byte> records) {
    if (hits_) hits_->Observe(records);
  };
}

void PostmortemFacts::SubmitTo(format::SampleFileWriter& writer, ClosingNotes* notes) {
  writer.WaitUntilWritten();  // the observer has seen every record
  // With the hits known (embedding runs), the vDSO counts only when a
  // sample's frames or stack words lie in it: every process maps it, and
  // most recordings never use it.
  std::optional<std::vector<CodeHits::Binary>> hit;
  if (hits_) hit = hits_->Resolve();
  // (Past CodeHits::kMaxHits a hit in it may have gone uncounted.)
  const bool vdso_hit = !hit || hits_->counts().hits_dropped != 0 ||
                        std::any_of(hit->begin(), hit->end(),
                                    [](const auto& binary) { return binary.path == kVdsoPath; });
  // Its hit functions are embedded as any binary's; the whole image is
  // stored only without embedding (or when that failed), its build-id
  // either way.
  if (hit) {
    notes->embedded =
        SubmitEmbedded(writer, *hits_, std::move(*hit), files_, jit_maps_, jit_dumps_);
  }
  // The next file's code goes by its own samples.
  if (hits_) hits_->ResetSamples();
  std::vector<std::byte> vdso;
  if (vdso_hit) vdso = VdsoPayload(&notes->vdso);
  writer.Submit(format::ChunkType::kBuildIds, BuildIdPayload(vdso), binary_count());
  // The boot and the JIT processes' users: whether a report may read this
  // host's perf map of a process whose map the file does not hold.
  if (format::Metadata jit_facts = jit_maps_.Facts(); !jit_facts.empty()) {
    writer.Submit(format::ChunkType::kMetadata, format::EncodeMetadata(jit_facts));
  }
  if (!vdso.empty() && !notes->embedded.vdso) {
    writer.Submit(format::ChunkType::kVdso, std::move(vdso));
  }
  auto kernel_symbols = KernelSymbolsPayload(DefaultKallsymsSnapshotOptions(), &notes->kernel);
  if (!kernel_symbols.empty()) {
    writer.Submit(format::ChunkType::kKernelSymbols, std::move(kernel_symbols));
  }
}

}  // namespace sample::record
