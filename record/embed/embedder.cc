#include "record/embed/embedder.h"

#include <sys/stat.h>

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "formats/embedded_codec.h"
#include "libsample/cache_dir.h"
#include "libsample/memory_file.h"
#include "libsample/string_parts.h"
#include "libsample/symbols/debug_file_finder.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/file_identity.h"
#include "libsample/symbols/inflated_debug.h"
#include "libsample/symbols/recorded_binary.h"
#include "libsample/symbols/symbol_embedding.h"
#include "libsample/symbols/vdso_image.h"
#include "record/embed/frame_cache.h"

namespace sample::record {
namespace {

// A perf map's payload from which on the closing waits for the writer.
constexpr size_t kLargePerfMap = size_t{16} << 20;

// The file to build from: the binary's fd (kept open while it is read) and
// a path to it that libelf can open; for the [vdso], an in-memory copy of
// the recorder's own image (the one every 64-bit process maps).
struct OpenedBinary {
  UniqueFd fd;
  std::string path;
  std::optional<MemoryFile> vdso;
};

Result<OpenedBinary> OpenMapped(const CodeHits::Binary& binary, const ProcessFiles& files) {
  if (binary.path == kVdsoPath) {
    TRY_ASSIGN(auto image, ReadOwnVdsoImage());
    TRY_ASSIGN(auto file, MemoryFile::Create("vdso", image));
    OpenedBinary opened;
    opened.path = file.path();
    opened.vdso.emplace(std::move(file));
    return opened;
  }
  TRY_ASSIGN(auto fd, files.Open(binary.pid, binary.path));
  struct stat st;
  if (binary.inode != 0 && (fstat(fd.get(), &st) != 0 || st.st_ino != binary.inode)) {
    return Fail(fmt::format("{}: not the file that was mapped (another inode now)", binary.path));
  }
  std::string path = fmt::format("/proc/self/fd/{}", fd.get());
  return OpenedBinary{std::move(fd), std::move(path), std::nullopt};
}

// The tables of one binary, with the debug file this host has for it and
// the frames earlier recordings learnt of its build.
Result<EmbeddedBinary> EmbedOne(CodeHits::Binary& binary, const OpenedBinary& opened,
                                const ProcessFiles& files, DebugFileFinder& finder,
                                const std::string& frame_cache_dir, EmbeddingLimits& limits) {
  EmbeddingRequest request;
  request.path = binary.path;
  request.binary = opened.path;
  std::string build_id;
  // What identifies the build for the frame cache: a Go binary's own note.
  std::string cache_id;
  std::string fingerprint;
  if (auto elf = ElfFile::Open(opened.path)) {
    build_id = ReadElfBuildId(*elf);
    request.identity = FileIdentity(*elf, build_id);
    cache_id = build_id.empty() ? ReadGoBuildId(*elf) : build_id;
    fingerprint = FrameCache::Fingerprint(*elf);
  }
  // A separate debug file of this build, if this host has one.
  // (By the recorded path in our namespace, so .gnu_debuglink's
  // directories are searched; by the fd in another, where only the
  // build-id directory of this host can help.)
  if (!build_id.empty() && !opened.vdso) {
    request.debug =
        finder.Find(files.InOtherNamespace(binary.pid) ? opened.path : binary.path, build_id).debug;
  }
  // A compressed debug file (a distribution's) is read from its inflated
  // copy in the user's cache: libdw inflates all of it on every open.
  request.debug = InflatedDebugFile(request.debug, build_id);
  request.offsets = std::move(binary.offsets);
  request.leaf_offsets = std::move(binary.leaf_offsets);
  request.scanned_offsets = std::move(binary.scanned_offsets);
  request.leaf_samples = std::move(binary.leaf_samples);
  // What earlier recordings learnt of this build spares reading its DWARF:
  // the pieces of it holding the offsets the embedding may look up.
  std::vector<uint64_t> wanted = request.offsets;
  wanted.insert(wanted.end(), request.leaf_offsets.begin(), request.leaf_offsets.end());
  wanted.insert(wanted.end(), request.scanned_offsets.begin(), request.scanned_offsets.end());
  FrameCache cache = FrameCache::Open(
      frame_cache_dir,
      FrameCacheKey{cache_id, std::string(Basename(binary.path)), request.debug, fingerprint},
      wanted);
  request.known = cache.known();
  auto embedded = BuildEmbeddedBinary(request, limits);
  cache.Save();
  return embedded;
}

}  // namespace

EmbedSummary SubmitEmbedded(format::SampleFileWriter& writer, const CodeHits& hits,
                            std::vector<CodeHits::Binary> binaries, const ProcessFiles& files,
                            JitMaps& jit_maps, JitDumps& jit_dumps) {
  const auto start = std::chrono::steady_clock::now();
  EmbedSummary summary;
  summary.done = true;
  DebugFileFinderOptions finder_options;
  finder_options.use_debuginfod = false;  // never wait on the network at the end of a recording
  DebugFileFinder finder(finder_options);
  EmbeddingLimits limits;
  const std::string frame_cache_dir = UserCacheDir("frames");
  // One sample in a thousand of some event; none through an event without.
  for (const uint64_t samples : hits.event_samples()) {
    limits.min_event_samples.push_back(samples == 0 ? UINT64_MAX : MinCodeSamples(samples));
  }
  for (CodeHits::Binary& binary : binaries) {
    auto opened = OpenMapped(binary, files);
    if (!opened) {
      summary.notes.push_back(opened.error().message);
      continue;
    }
    const uint64_t cold_before = limits.cold_functions;
    auto embedded = EmbedOne(binary, *opened, files, finder, frame_cache_dir, limits);
    if (!embedded) {
      summary.notes.push_back(embedded.error().message);
      continue;
    }
    // Hit only by stack words that are no return address: nothing to name.
    if (embedded->addresses.empty()) continue;
    std::vector<std::byte> payload = format::EncodeEmbeddedBinary(*embedded);
    // A chunk over the writer's limit would fail the whole file.
    if (payload.size() > format::kWriterMaxChunkRawSize) {
      summary.notes.push_back(fmt::format("{}: its tables take {} bytes, over the {} of a chunk",
                                          binary.path, payload.size(),
                                          format::kWriterMaxChunkRawSize));
      continue;
    }
    ++summary.binaries;
    summary.vdso = summary.vdso || opened->vdso.has_value();
    summary.functions += embedded->functions.size();
    summary.addresses += embedded->addresses.size();
    summary.code_omitted += embedded->code_omitted - (limits.cold_functions - cold_before);
    summary.bytes += payload.size();
    writer.Submit(format::ChunkType::kEmbeddedBinary, std::move(payload));
  }
  // Once, after every binary's save: a trim lists the whole directory.
  if (!binaries.empty()) FrameCache::Trim(frame_cache_dir);
  if (const uint64_t dropped = hits.counts().hits_dropped; dropped != 0) {
    summary.notes.push_back(
        fmt::format("{} code addresses past the {} kept", dropped, CodeHits::kMaxHits));
  }
  jit_maps.Collect(files, &summary.notes, [&](RecordedPerfMap&& map) {
    std::vector<std::byte> payload = format::EncodePerfMap(map);
    map.text = {};  // one map's text and payload held at a time
    ++summary.perf_maps;
    summary.bytes += payload.size();
    const bool large = payload.size() >= kLargePerfMap;
    writer.Submit(format::ChunkType::kPerfMap, std::move(payload));
    // The writer's queue has no bound: a large map is written before the
    // next is read, so maps of 256 MiB in all never sit in memory at once.
    if (large) writer.WaitUntilWritten();
  });
  const JitDumpsCopied dumps = jit_dumps.Submit(writer, files, &summary.notes);
  summary.jit_dumps = dumps.dumps;
  summary.bytes += dumps.bytes;
  summary.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::string DescribeEmbedded(const EmbedSummary& s) {
  std::string text =
      fmt::format("embedded {} function{} of {} binar{}", s.functions, s.functions == 1 ? "" : "s",
                  s.binaries, s.binaries == 1 ? "y" : "ies");
  if (s.perf_maps != 0) {
    text += fmt::format(" and {} perf map{}", s.perf_maps, s.perf_maps == 1 ? "" : "s");
  }
  if (s.jit_dumps != 0) {
    text += fmt::format(" and {} jitdump{}", s.jit_dumps, s.jit_dumps == 1 ? "" : "s");
  }
  return text + fmt::format(" ({:.1f} KiB) in {:.0f} ms", s.bytes / 1024.0, s.milliseconds);
}

}  // namespace sample::record
