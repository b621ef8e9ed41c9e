// OpenRecording (recording_file.h): the reader a file's magic calls for.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "formats/perf_data_reader.h"
#include "formats/recording_file.h"
#include "formats/sample_file_reader.h"
#include "libsample/mapped_file.h"
#include "libsample/memory_file.h"

namespace sample::format {

namespace {

// Standard input (-i -, as perf report reads `perf record -o - |`), read
// whole into an in-memory file: the readers map their input.
Result<MappedFile> MapStandardInput() {
  if (isatty(STDIN_FILENO)) {
    return Fail("-i -: standard input is a terminal; pipe a recording in (perf record -o - ... |)");
  }
  std::vector<std::byte> bytes;
  std::vector<std::byte> block(size_t{1} << 20);
  for (;;) {
    const ssize_t n = read(STDIN_FILENO, block.data(), block.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(fmt::format("-i -: reading standard input: {}", strerror(errno)), errno);
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), block.begin(), block.begin() + n);
  }
  TRY_ASSIGN(auto file, MemoryFile::Create("sample-report-stdin", bytes));
  // The mapping keeps the memory file's pages after its descriptor closes.
  return MappedFile::Open(file.path());
}

}  // namespace

Result<std::unique_ptr<RecordingFile>> OpenRecording(const std::string& path,
                                                     DecodeBudget* budget) {
  TRY_ASSIGN(auto file, path == "-" ? MapStandardInput() : MappedFile::Open(path));
  uint64_t magic = 0;
  if (file.bytes().size() >= sizeof(magic)) std::memcpy(&magic, file.bytes().data(), sizeof(magic));
  if (magic == perf_data::kMagic) {
    TRY_ASSIGN(auto reader, PerfDataReader::Open(path, std::move(file)));
    return std::unique_ptr<RecordingFile>(std::move(reader));
  }
  if (magic == perf_data::kMagicBigEndian) {
    return Fail(fmt::format("{}: offset 0: a perf.data file from a big-endian machine; only "
                            "little-endian perf.data is read (run perf report or perf script "
                            "on a machine of that kind)",
                            path));
  }
  if (file.bytes().size() >= 8 && std::memcmp(file.bytes().data(), "PERFFILE", 8) == 0) {
    return Fail(fmt::format("{}: offset 0: a version 1 perf.data file (perf before Linux 2.6.38?); "
                            "only version 2 (PERFILE2) is read",
                            path));
  }
  TRY_ASSIGN(auto reader, SampleFileReader::Open(path, std::move(file), budget));
  return std::unique_ptr<RecordingFile>(std::make_unique<SampleFileReader>(std::move(reader)));
}

}  // namespace sample::format
