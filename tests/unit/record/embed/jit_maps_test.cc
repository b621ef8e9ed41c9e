// Tests for JitMaps (the recorder's copies of JIT perf maps): only a map
// the process's own user could have written is taken, all maps together
// stay within max_total_bytes, and a map that repeats itself is cut so
// that the reader accepts its chunk whatever the writer's zstd level
// (issue 56, items 2 and 5). The maps are in /tmp, where JITs write them,
// under pids no process has; the processes' status files are the tests'.
#include "record/embed/jit_maps.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "formats/embedded_codec.h"
#include "formats/sample_file_format.h"
#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "libsample/symbols/perf_map.h"
#include "tests/unit/synthetic_records.h"
#include "tests/unit/temp_dir.h"

namespace sample::record {
namespace {

namespace st = sample::testing;

constexpr uint32_t kFirstPid = 4100000;

// `lines` map lines of distinct addresses and names (a real JIT's).
std::string VariedMap(size_t lines) {
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    text += fmt::format("{:x} {:x} LazyCompile:*fn_{}_{:x} /app/src/module_{}.js:{}\n",
                        0x7f0000000000 + i * 0x140, 0x100 + i % 97, i, i * 2654435761u, i % 313,
                        i % 4099);
  }
  return text;
}

// `size` bytes of one line over and over.
std::string RepeatedMap(size_t size) {
  const std::string line = "7f0000001000 40 the_same_function_again\n";
  std::string text;
  while (text.size() + line.size() <= size) text += line;
  return text;
}

class JitMapsTest : public ::testing::Test {
 protected:
  JitMapsTest() : dir_("jit maps test"), files_(dir_.path().string() + "/proc") {}
  ~JitMapsTest() override {
    for (uint32_t pid : pids_) unlink(MapPath(pid).c_str());
  }

  static std::string MapPath(uint32_t pid) { return fmt::format("/tmp/perf-{}.map", pid); }
  // Process `pid` of user `uid` maps anonymous code and has written `text`
  // as its map (mode 0644 unless `mode`).
  void Jit(JitMaps& maps, uint32_t pid, const std::string& text, uid_t uid, mode_t mode = 0644) {
    const auto status = dir_.path() / "proc" / std::to_string(pid);
    std::filesystem::create_directories(status);
    std::ofstream(status / "status") << "Name:\tjit\nUid:\t" << uid << "\t" << uid << "\t" << uid
                                     << "\t" << uid << "\nNSpid:\t" << pid << "\n";
    pids_.push_back(pid);
    std::ofstream(MapPath(pid)) << text;
    chmod(MapPath(pid).c_str(), mode);
    maps.NoteMapping(pid, "//anon", files_);
  }

  st::TempDir dir_;
  ProcessFiles files_;
  std::vector<uint32_t> pids_;
};

TEST_F(JitMapsTest, OnlyAMapTheProcessUserCouldHaveWrittenIsTaken) {
  JitMaps maps;
  Jit(maps, kFirstPid, "1000 10 own\n", geteuid());
  Jit(maps, kFirstPid + 1, "1000 10 writable\n", geteuid(), 0666);
  Jit(maps, kFirstPid + 2, "1000 10 someone_elses\n", geteuid() + 1);
  std::vector<std::string> notes;
  const std::vector<RecordedPerfMap> taken = maps.Collect(files_, &notes);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].pid, kFirstPid);
  EXPECT_EQ(taken[0].text, "1000 10 own\n");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("writable by everyone"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find(fmt::format("owned by uid {}, not by the process's user (uid {})",
                                      geteuid(), geteuid() + 1)),
            std::string::npos)
      << notes[1];
  // What a report needs to read them itself: this boot, whose processes.
  const format::Metadata facts = maps.Facts();
  EXPECT_EQ(format::FindMetadata(facts, "boot_id").value_or(""), BootId());
  EXPECT_EQ(format::FindMetadata(facts, fmt::format("jit_uid {}", kFirstPid + 2)),
            std::to_string(geteuid() + 1));
}

// 30 JITs each linking one 60 MB map once took 1.93 GB: the total is
// bounded, the map past it cut at a line's end, and the notes say so.
TEST_F(JitMapsTest, AllMapsTogetherStayWithinTheTotal) {
  JitMaps maps(JitMapLimits{.max_map_bytes = 30000, .max_total_bytes = 45000});
  const std::string text = VariedMap(300);  // ~20 KB
  ASSERT_LT(text.size(), 22500u);
  for (uint32_t i = 0; i < 4; ++i) Jit(maps, kFirstPid + i, text, geteuid());
  std::vector<std::string> notes;
  const std::vector<RecordedPerfMap> taken = maps.Collect(files_, &notes);
  uint64_t total = 0;
  for (const RecordedPerfMap& map : taken) {
    total += map.text.size();
    EXPECT_TRUE(text.starts_with(map.text)) << map.pid;
    EXPECT_TRUE(map.text.ends_with('\n')) << map.pid;
  }
  EXPECT_LE(total, 45000u);
  ASSERT_EQ(taken.size(), 3u);  // two whole, one cut, none left for the last
  EXPECT_EQ(taken[0].text, text);
  EXPECT_EQ(taken[1].text, text);
  EXPECT_LT(taken[2].text.size(), text.size());
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& note) {
    return note.find("perf maps in all") != std::string::npos;
  }));
}

// Once the total is used up a map's limit is 0, yet one byte is read (to
// see whether it was cut): a map starting with a newline kept that byte,
// the total went one past the bound, and the next map's room wrapped
// around to a whole map's bound again.
TEST_F(JitMapsTest, NothingIsTakenOnceTheTotalIsUsedUpEvenAfterANewline) {
  JitMaps maps(JitMapLimits{.max_map_bytes = 1000, .max_total_bytes = 20});
  const std::string first = "1000 10 fills_total\n";
  ASSERT_EQ(first.size(), 20u);
  Jit(maps, kFirstPid, first, geteuid());
  Jit(maps, kFirstPid + 1, "\n2000 10 after_newline\n", geteuid());
  Jit(maps, kFirstPid + 2, "3000 10 third\n", geteuid());
  std::vector<std::string> notes;
  const std::vector<RecordedPerfMap> taken = maps.Collect(files_, &notes);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].pid, kFirstPid);
  EXPECT_EQ(taken[0].text, first);
  ASSERT_EQ(notes.size(), 2u);
  for (const std::string& note : notes) {
    EXPECT_NE(note.find("not stored: the recording keeps"), std::string::npos) << note;
  }
}

// The reader refuses a chunk of more than kMaxCompressionRatio times its
// stored bytes beyond the first MiB; a map of one line over and over went
// past it and was lost whole. Such a map keeps its first MiB, which the
// reader always accepts; a real JIT's map is kept whole.
TEST_F(JitMapsTest, RepetitiveMapIsCutToWhatItsReaderAccepts) {
  const std::string repeated = RepeatedMap(32 << 20);
  const size_t kept = PerfMapPayloadPrefix(repeated);
  EXPECT_LE(kept + 4, format::kRatioFreeRawSize);
  EXPECT_GT(kept, (format::kRatioFreeRawSize * 9) / 10);
  EXPECT_EQ(repeated[kept - 1], '\n');
  const std::string varied = VariedMap(60000);  // ~4 MB
  ASSERT_GT(varied.size(), format::kRatioFreeRawSize);
  EXPECT_EQ(PerfMapPayloadPrefix(varied), varied.size());

  // Written through JitMaps at the strongest levels users pick, both read
  // back.
  for (const int level : {1, 19}) {
    JitMaps maps;
    Jit(maps, kFirstPid, repeated, geteuid());
    Jit(maps, kFirstPid + 1, varied, geteuid());
    std::vector<std::string> notes;
    const std::vector<RecordedPerfMap> taken = maps.Collect(files_, &notes);
    ASSERT_EQ(taken.size(), 2u);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("repeats itself"), std::string::npos) << notes[0];
    const std::string path = (dir_.path() / fmt::format("maps-{}.sample", level)).string();
    format::WriterOptions options;
    options.zstd_level = level;
    auto writer = format::SampleFileWriter::Create(path, options);
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    EventDesc event;
    event.attr = st::MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TIME, true);
    (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents({event}));
    for (const RecordedPerfMap& map : taken) {
      (*writer)->Submit(format::ChunkType::kPerfMap, format::EncodePerfMap(map));
    }
    ASSERT_TRUE((*writer)->Finish(format::Trailer{}).has_value());
    writer->reset();
    auto reader = format::SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    EXPECT_EQ(reader->perf_maps(), taken) << "level " << level;
  }
}

}  // namespace
}  // namespace sample::record
