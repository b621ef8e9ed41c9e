#include "record/postmortem_facts.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "formats/chunk_codec.h"
#include "libsample/elf_symbols.h"
#include "libsample/kallsyms.h"
#include "libsample/perf_record.h"
#include "libsample/process_table.h"
#include "libsample/unique_fd.h"

namespace sample::record {

void PostmortemFacts::AddBinary(std::string_view path) {
  // Only real files have build-ids: skip [vdso], //anon, memfd: and such.
  if (!path.empty() && path.front() == '/') binaries_.emplace(path);
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

std::vector<std::byte> PostmortemFacts::BuildIdPayload() const {
  format::Metadata ids;
  for (const std::string& path : binaries_) {
    auto id = ReadElfBuildId(path);
    if (id && !id->empty()) ids.emplace_back(path, *id);
  }
  std::sort(ids.begin(), ids.end());
  return format::EncodeMetadata(ids);
}

std::vector<std::byte> PostmortemFacts::KernelSymbolsPayload(std::string* note) const {
  if (kernel_addresses_.empty()) return {};
  UniqueFd fd(open("/proc/kallsyms", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    *note = "cannot read /proc/kallsyms; kernel frames will show as [unknown]";
    return {};
  }
  std::string text;
  char buffer[1 << 16];
  ssize_t n;
  while ((n = read(fd.get(), buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  const auto all = ParseKallsyms(text);
  if (all.empty()) {
    *note =
        "/proc/kallsyms hides addresses (kernel.kptr_restrict); kernel frames will show as "
        "[unknown]. Record as root or set kernel.kptr_restrict=0.";
    return {};
  }
  const auto subset = SelectCoveringSymbols(
      all, std::vector<uint64_t>(kernel_addresses_.begin(), kernel_addresses_.end()));
  const std::string formatted = FormatKallsyms(subset);
  const auto* bytes = reinterpret_cast<const std::byte*>(formatted.data());
  return std::vector<std::byte>(bytes, bytes + formatted.size());
}

}  // namespace sample::record
