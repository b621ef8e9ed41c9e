// Tests for JitDumps (the recorder's copies of jitdump files): a dump is
// read and closed when its process exits, no more than max_open stay open
// however many processes map one, and all of them together stay within
// max_total_bytes, what is left out said in the notes.
#include "record/embed/jit_dumps.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/embedded_codec.h"
#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "tests/unit/jitdump_builder.h"
#include "tests/unit/synthetic_records.h"
#include "tests/unit/temp_dir.h"

namespace sample::record {
namespace {

namespace st = sample::testing;
using Bytes = std::vector<std::byte>;

// Pids no process has: ProcessFiles opens their paths as they are, and
// reads their users from the status files the tests write.
constexpr uint32_t kFirstPid = 4000000;

class JitDumpsTest : public ::testing::Test {
 protected:
  JitDumpsTest() : dir_("jit dumps test"), files_(dir_.path().string() + "/no-proc") {}

  // jit-PID.dump of one load named after the pid, `size` bytes of code.
  std::string WriteDump(uint32_t pid, size_t size = 0x40) {
    st::JitDumpBuilder b(pid);
    b.Load(1, 0x7000, "f" + std::to_string(pid), size, 1);
    const std::string path = (dir_.path() / ("jit-" + std::to_string(pid) + ".dump")).string();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.bytes().data()),
               static_cast<std::streamsize>(b.bytes().size()));
    chmod(path.c_str(), 0644);  // whatever the umask: writable by its owner alone
    written_[pid] = b.bytes();
    WriteStatus(pid, geteuid());
    return path;
  }
  // The process's status as ProcessFiles reads it: its real uid.
  void WriteStatus(uint32_t pid, uid_t uid) {
    const auto dir = dir_.path() / "no-proc" / std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "status") << "Name:\tjit\nUid:\t" << uid << "\t" << uid << "\t" << uid
                                  << "\t" << uid << "\n";
  }
  // Submits to a file and reads back its dumps.
  std::vector<RecordedJitDump> Submitted(JitDumps& dumps, std::vector<std::string>* notes) {
    const std::string path = (dir_.path() / "r.sample").string();
    auto writer = format::SampleFileWriter::Create(path, format::WriterOptions{});
    EXPECT_TRUE(writer.has_value()) << writer.error().message;
    EventDesc event;
    event.attr = st::MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TIME, true);
    (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents({event}));
    dumps.Submit(**writer, files_, notes);
    EXPECT_TRUE((*writer)->Finish(format::Trailer{}).has_value());
    writer->reset();
    auto reader = format::SampleFileReader::Open(path);
    EXPECT_TRUE(reader.has_value()) << reader.error().message;
    return reader->jit_dumps();
  }

  st::TempDir dir_;
  ProcessFiles files_;
  std::unordered_map<uint32_t, Bytes> written_;
};

// Hundreds of short-lived JITs once held an fd each to the end and ran
// out of RLIMIT_NOFILE. Exited ones are read and closed; past max_open the
// oldest is read and closed; every dump is stored whole, also the deleted
// ones of exited processes.
TEST_F(JitDumpsTest, FdsStayBoundedAndEveryDumpIsStored) {
  constexpr uint32_t kDumps = 200;
  JitDumps dumps(JitDumpLimits{.max_open = 16});
  for (uint32_t i = 0; i < kDumps; ++i) {
    const uint32_t pid = kFirstPid + i;
    dumps.NoteMapping(pid, WriteDump(pid), 0, files_);
    ASSERT_LE(dumps.open_dumps(), 16u);
    // Half of them exit and delete their dump.
    if (i % 2 == 0) {
      dumps.NoteExit(pid, files_);
      std::filesystem::remove(dir_.path() / ("jit-" + std::to_string(pid) + ".dump"));
    }
  }
  EXPECT_GT(dumps.held_bytes(), 0u);
  std::vector<std::string> notes;
  const std::vector<RecordedJitDump> stored = Submitted(dumps, &notes);
  EXPECT_LE(dumps.open_dumps(), 16u);
  ASSERT_EQ(stored.size(), kDumps);
  for (const RecordedJitDump& dump : stored) EXPECT_EQ(dump.bytes, written_[dump.pid]) << dump.pid;
  // Evicted ones were read again whole at the close: nothing left out. The
  // running processes' dumps were read as they were, and the notes say so.
  EXPECT_EQ(notes.size(), kDumps / 2);
  for (const std::string& note : notes) EXPECT_NE(note.find("still ran"), std::string::npos);
  // All exited: nothing open.
  for (uint32_t i = 0; i < kDumps; ++i) dumps.NoteExit(kFirstPid + i, files_);
  EXPECT_EQ(dumps.open_dumps(), 0u);
}

// An evicted dump whose file is gone at the close is stored as it was
// read, and the notes say so.
TEST_F(JitDumpsTest, EvictedAndDeletedDumpKeepsItsCopy) {
  JitDumps dumps(JitDumpLimits{.max_open = 1});
  dumps.NoteMapping(kFirstPid, WriteDump(kFirstPid), 0, files_);
  dumps.NoteMapping(kFirstPid + 1, WriteDump(kFirstPid + 1), 0, files_);  // evicts the first
  EXPECT_EQ(dumps.open_dumps(), 1u);
  std::filesystem::remove(dir_.path() / ("jit-" + std::to_string(kFirstPid) + ".dump"));
  std::vector<std::string> notes;
  const std::vector<RecordedJitDump> stored = Submitted(dumps, &notes);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].bytes, written_[kFirstPid]);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("read before its process ended"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("still ran"), std::string::npos) << notes[1];  // the second
}

// The total bound: dumps past it are stored in part (whole records) or
// not at all, and the notes say which.
TEST_F(JitDumpsTest, TotalBytesAreBounded) {
  constexpr uint64_t kTotal = 3000;
  JitDumps dumps(JitDumpLimits{.max_open = 64, .max_total_bytes = kTotal});
  for (uint32_t i = 0; i < 10; ++i) {
    const uint32_t pid = kFirstPid + i;
    dumps.NoteMapping(pid, WriteDump(pid, 1000), 0, files_);
    if (i < 5) dumps.NoteExit(pid, files_);
  }
  EXPECT_LE(dumps.held_bytes(), kTotal);
  std::vector<std::string> notes;
  const std::vector<RecordedJitDump> stored = Submitted(dumps, &notes);
  uint64_t total = 0;
  for (const RecordedJitDump& dump : stored) {
    total += dump.bytes.size();
    const Bytes& written = written_[dump.pid];  // a prefix of whole records
    ASSERT_LE(dump.bytes.size(), written.size());
    EXPECT_TRUE(std::equal(dump.bytes.begin(), dump.bytes.end(), written.begin()));
  }
  EXPECT_LE(total, kTotal);
  EXPECT_GE(stored.size(), 2u);
  ASSERT_GE(notes.size(), 10u - stored.size());
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& note) {
    return note.find("jitdumps in all") != std::string::npos;
  }));
}

// Issue 56: another user rewrote a 0666 dump in /tmp and the report named
// the victim's code after hers. A dump is taken only as a perf map is: the
// process's user's, writable by no one else, not a link; the notes say why.
TEST_F(JitDumpsTest, DumpsOthersCouldWriteAreRefusedWithANote) {
  JitDumps dumps;
  const uint32_t writable = kFirstPid, linked = kFirstPid + 1, gone = kFirstPid + 2;
  const std::string path = WriteDump(writable);
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  dumps.NoteMapping(writable, path, 0, files_);
  const std::string target = WriteDump(linked);
  const std::string link = (dir_.path() / ("jit-" + std::to_string(linked + 100) + ".dump"));
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  dumps.NoteMapping(linked, link, 0, files_);
  const std::string orphan = WriteDump(gone);
  std::filesystem::remove_all(dir_.path() / "no-proc" / std::to_string(gone));
  dumps.NoteMapping(gone, orphan, 0, files_);
  std::vector<std::string> notes;
  EXPECT_TRUE(Submitted(dumps, &notes).empty());
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_NE(notes[0].find(path + ": ignored: writable by everyone (mode 0666)"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[1].find("it is a symbolic link"), std::string::npos) << notes[1];
  EXPECT_NE(notes[2].find("ended before its user could be read"), std::string::npos) << notes[2];
}

TEST_F(JitDumpsTest, DumpOfAnotherUserIsRefusedWithANote) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  JitDumps dumps;
  const std::string path = WriteDump(kFirstPid);
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);  // nobody's, for root's process
  dumps.NoteMapping(kFirstPid, path, 0, files_);
  const std::string root_owned = WriteDump(kFirstPid + 1);
  WriteStatus(kFirstPid + 1, 65534);  // root's file, for nobody's process
  dumps.NoteMapping(kFirstPid + 1, root_owned, 0, files_);
  std::vector<std::string> notes;
  EXPECT_TRUE(Submitted(dumps, &notes).empty());
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("owned by uid 65534, not by the process's user (uid 0)"),
            std::string::npos)
      << notes[0];
  EXPECT_NE(notes[1].find("owned by uid 0, not by the process's user (uid 65534)"),
            std::string::npos)
      << notes[1];
}

}  // namespace
}  // namespace sample::record
