// End to end: a crafted file whose chunks each claim tens of MiB, stored as
// small zstd frames that really do decompress to that much (a random head,
// then a run of one byte: within the reader's compression-ratio cap), must
// not make sample-report's memory grow with -j (issue 17: a 627 KB file
// made it allocate 8.4 GB, more with more threads). The reader bounds what
// a chunk may claim by the file header's limit, and the ordered record
// stream bounds the bytes decoded ahead of the consumer, whatever -j says.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/sample_file_format.h"
#include "formats/sample_file_writer.h"
#include "libsample/crc32.h"
#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kReport = SAMPLE_REPORT_PATH;

// Runs argv with output discarded; the child's peak resident set, in KiB.
long PeakKib(const std::vector<std::string>& argv, int* status) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execv(args[0], args.data());
    _exit(127);
  }
  rusage usage{};
  wait4(pid, status, 0, &usage);
  return usage.ru_maxrss;
}

TEST(DecompressionBombTest, MemoryDoesNotGrowWithJobs) {
  ScratchDir dir;
  const std::string path = dir / "bomb.data";
  {
    auto writer = format::SampleFileWriter::Create(path, format::WriterOptions{});
    ASSERT_TRUE(writer) << writer.error().message;
    EventDesc event;
    event.name = "cpu-clock";
    event.attr.size = sizeof(event.attr);
    event.attr.type = PERF_TYPE_SOFTWARE;
    event.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    event.attr.sample_id_all = 1;
    (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents({event}));
    // No Finish: a file without a trailer, as a killed recorder leaves.
  }
  constexpr size_t kClaim = size_t{60} << 20;
  std::vector<char> raw(kClaim, 0);
  std::mt19937 random(1);
  for (size_t i = 0; i < 8192; ++i) raw[i] = static_cast<char>(random());
  std::vector<char> frame(ZSTD_compressBound(raw.size()));
  const size_t size = ZSTD_compress(frame.data(), frame.size(), raw.data(), raw.size(), 1);
  ASSERT_FALSE(ZSTD_isError(size));
  frame.resize(size);
  ASSERT_LT(frame.size() * format::kMaxCompressionRatio, kClaim * 2);  // a real bomb
  ASSERT_GT(frame.size() * format::kMaxCompressionRatio, kClaim);      // within the cap
  std::ofstream out(path, std::ios::binary | std::ios::app);
  for (int i = 0; i < 40; ++i) {
    format::ChunkHeader h{};
    h.magic = format::kChunkMagic;
    h.type = static_cast<uint16_t>(format::ChunkType::kRecords);
    h.compression = static_cast<uint16_t>(format::Compression::kZstd);
    h.stored_size = frame.size();
    h.raw_size = kClaim;
    h.record_count = 1;
    h.time_min = 1000 + i;
    h.time_max = 2000 + i;
    const auto bytes = std::as_bytes(std::span(frame));
    h.crc32 = Crc32(bytes, Crc32(std::as_bytes(std::span(&h, 1))));
    out.write(reinterpret_cast<const char*>(&h), sizeof(h));
    out.write(frame.data(), static_cast<std::streamsize>(frame.size()));
  }
  out.close();

  int status = 0;
  const long one = PeakKib({kReport, "-i", path, "-j", "1"}, &status);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  const long many = PeakKib({kReport, "-i", path, "-j", "64"}, &status);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  // One chunk at a time takes ~70 MB. Before the bound, -j 64 took 2.2 GB
  // for this 400 KB file; now the decode budget (64 MiB) plus one chunk.
  if (kSanitized) GTEST_SKIP() << "peak memory under ASan is ASan's (shadow and quarantine)";
  EXPECT_LT(many, 200 * 1024) << "-j 1: " << one << " KiB, -j 64: " << many << " KiB";
}

}  // namespace
}  // namespace sample::e2e
