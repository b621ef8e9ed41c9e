// OpenRecording (recording_file.h): the reader a file's magic calls for.
#include <cstring>

#include <fmt/format.h>

#include "formats/perf_data_reader.h"
#include "formats/recording_file.h"
#include "formats/sample_file_reader.h"
#include "libsample/mapped_file.h"

namespace sample::format {

Result<std::unique_ptr<RecordingFile>> OpenRecording(const std::string& path) {
  TRY_ASSIGN(auto file, MappedFile::Open(path));
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
  TRY_ASSIGN(auto reader, SampleFileReader::Open(path, std::move(file)));
  return std::unique_ptr<RecordingFile>(std::make_unique<SampleFileReader>(std::move(reader)));
}

}  // namespace sample::format
