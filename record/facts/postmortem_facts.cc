#include "record/facts/postmortem_facts.h"

#include <algorithm>
#include <utility>

#include "formats/chunk_codec.h"
#include "libsample/memory_file.h"
#include "libsample/model/process_table.h"
#include "libsample/perf/perf_record.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/kallsyms.h"
#include "libsample/symbols/recorded_binary.h"
#include "libsample/symbols/vdso_image.h"

namespace sample::record {

void PostmortemFacts::AddBinary(std::string_view path) {
  // Only real files have build-ids: skip //anon, memfd: and such. The
  // [vdso] is on no disk; its image is stored instead.
  if (!path.empty() && path.front() == '/') binaries_.emplace(path);
  if (path == kVdsoPath) saw_vdso_ = true;
}

void PostmortemFacts::Observe(const perf_event_header& header, std::span<const std::byte> record,
                              const perf_event_attr& attr) {
  if (header.type == PERF_RECORD_MMAP2) {
    if (auto m = ParseMmap2(record, attr)) AddBinary(m->filename);
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
  for (const std::string& path : binaries_) {
    auto id = ReadElfBuildId(path);
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

void PostmortemFacts::SubmitTo(format::SampleFileWriter& writer, std::string* kernel_note,
                               std::string* vdso_note) const {
  std::vector<std::byte> vdso = VdsoPayload(vdso_note);
  writer.Submit(format::ChunkType::kBuildIds, BuildIdPayload(vdso), binary_count());
  if (!vdso.empty()) writer.Submit(format::ChunkType::kVdso, std::move(vdso));
  auto kernel_symbols = KernelSymbolsPayload(DefaultKallsymsSnapshotOptions(), kernel_note);
  if (!kernel_symbols.empty()) {
    writer.Submit(format::ChunkType::kKernelSymbols, std::move(kernel_symbols));
  }
}

}  // namespace sample::record
