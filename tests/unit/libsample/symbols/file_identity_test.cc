// Tests for a binary's identity (file_identity.h) and the finder's use of
// it: the GNU build-id when the file has one, else the Go build ID note,
// else its size and CRC; a file at the recorded path with another identity
// is turned down. The Go and the hashed files are copies of a fixture with
// its GNU build-id note rewritten.
#include "libsample/symbols/file_identity.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/symbols/debug_file_finder.h"
#include "libsample/symbols/elf_build_id.h"
#include "tests/fixtures/raw_elf.h"

namespace sample {
namespace {

using fixtures::ReadWholeFile;
using fixtures::WriteWholeFile;

const char* const kProg = FIXTURE_PROG_PATH;

// kProg's GNU build-id note header: 4-byte owner, 20-byte desc, type 3.
const std::string kGnuNote("\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16);

class FileIdentityTest : public ::testing::Test {
 protected:
  // A copy of kProg whose build-id note has header `note` and desc `desc`
  // (20 bytes; empty: kProg's own).
  std::string CopyWithNote(const std::string& name, const std::string& note,
                           const std::string& desc = "") {
    std::vector<char> bytes = ReadWholeFile(kProg);
    auto at = std::search(bytes.begin(), bytes.end(), kGnuNote.begin(), kGnuNote.end());
    EXPECT_NE(at, bytes.end()) << "no GNU build-id note in " << kProg;
    if (at == bytes.end()) return "";
    std::copy(note.begin(), note.end(), at);
    if (!desc.empty()) std::copy(desc.begin(), desc.end(), at + 16);
    const std::string path = testing::TempDir() + "file_identity_test_" + name;
    WriteWholeFile(path, bytes);
    made_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const std::string& path : made_) std::remove(path.c_str());
  }

  std::vector<std::string> made_;
};

TEST_F(FileIdentityTest, GnuBuildIdFirst) {
  auto id = ReadFileIdentity(kProg);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, *ReadElfBuildId(kProg));
  EXPECT_TRUE(IsGnuBuildId(*id));
}

TEST_F(FileIdentityTest, GoBuildIdAsGoToolPrintsIt) {
  const std::string go = CopyWithNote("go", std::string("\x04\0\0\0\x14\0\0\0\x04\0\0\0Go\0\0", 16),
                                      "aZ7mF15fkl/hhhLeOgXs");
  auto id = ReadFileIdentity(go);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "go:aZ7mF15fkl/hhhLeOgXs");
  EXPECT_FALSE(IsGnuBuildId(*id));
}

TEST_F(FileIdentityTest, ElseSizeAndCrcWhichOneByteChanges) {
  // The note's type made one nobody reads: no build-id of either kind.
  const std::string none("\x04\0\0\0\x14\0\0\0\x99\0\0\0GNU\0", 16);
  const std::string a = CopyWithNote("hash_a", none);
  const std::string b = CopyWithNote("hash_b", none, std::string(20, 'x'));
  auto id_a = ReadFileIdentity(a);
  auto id_b = ReadFileIdentity(b);
  ASSERT_TRUE(id_a) << id_a.error().message;
  ASSERT_TRUE(id_b) << id_b.error().message;
  EXPECT_TRUE(id_a->starts_with("elf:")) << *id_a;
  EXPECT_NE(*id_a, *id_b);
  EXPECT_EQ(*ReadFileIdentity(a), *id_a);  // the same file, the same identity
  EXPECT_FALSE(IsGnuBuildId(*id_a));
}

TEST_F(FileIdentityTest, FinderTurnsDownAnotherGoBuild) {
  const std::string go_note("\x04\0\0\0\x14\0\0\0\x04\0\0\0Go\0\0", 16);
  const std::string path = CopyWithNote("go_finder", go_note, "aAaAaAaAaA/bBbBbBbBb");
  DebugFileFinderOptions options;
  options.use_debuginfod = false;
  DebugFileFinder finder(options);
  const FoundFiles same = finder.Find(path, "go:aAaAaAaAaA/bBbBbBbBb");
  EXPECT_EQ(same.binary, path);
  // Not a GNU build-id: no debug file or debuginfod query is made of it;
  // compared with its case (another case is another build).
  EXPECT_EQ(same.build_id, "");
  const FoundFiles other = finder.Find(path, "go:aAaAaAaAaA/bBbBbBbBB");
  EXPECT_EQ(other.binary, "");
  EXPECT_EQ(other.mismatched_binary, path);
  EXPECT_EQ(other.mismatched_build_id, "go:aAaAaAaAaA/bBbBbBbBb");
  // A GNU build-id recorded, a Go binary found: another build.
  EXPECT_EQ(finder.Find(path, *ReadElfBuildId(kProg)).binary, "");
}

}  // namespace
}  // namespace sample
