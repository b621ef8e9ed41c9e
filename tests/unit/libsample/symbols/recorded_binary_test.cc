// Tests for BinaryLocator, the one policy for finding a recorded binary:
// found, missing, of another build (with and without --force), under
// --symfs, and the [vdso] from the image a recording stores (good, bad,
// absent, of another build). The fixture ELF files of tests/fixtures/ stand
// in for binaries and for the vDSO image.
#include "libsample/symbols/recorded_binary.h"

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/symbols/elf_symbols.h"
#include "tests/unit/symbolizer_test_util.h"

namespace sample {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScratchDir;

const char* const kProg = FIXTURE_PROG_PATH;

const std::string kOtherId(40, 'f');

std::string BuildIdOf(const std::string& path) {
  auto id = ReadElfBuildId(path);
  EXPECT_TRUE(id) << id.error().message;
  EXPECT_FALSE(id && id->empty()) << path << " has no build-id";
  return id ? *id : "";
}

std::vector<std::byte> BytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* bytes = reinterpret_cast<const std::byte*>(chars.data());
  return std::vector<std::byte>(bytes, bytes + chars.size());
}

class BinaryLocatorTest : public ::testing::Test {
 protected:
  LocatedBinary Locate(const std::string& path, const std::string& build_id, bool force = false) {
    BinaryLocatorOptions options;
    options.files.symfs = symfs_;
    options.force = force;
    options.files.use_debuginfod = false;
    locator_.emplace(std::move(options), RecordedCode{image_, &embedded_});
    return locator_->Locate(path, build_id);
  }

  ScratchDir dir_;
  const std::string prog_ = dir_ / "bin/prog";
  const std::string id_ = BuildIdOf(kProg);
  std::string symfs_;
  std::vector<std::byte> image_;
  EmbeddedBinaries embedded_;
  std::optional<BinaryLocator> locator_;  // kept: it owns the [vdso] file

  // Embeds a binary recorded at `path` with `build_id`.
  const EmbeddedBinary* Embed(const std::string& path, const std::string& build_id) {
    auto binary = std::make_shared<EmbeddedBinary>();
    binary->path = path;
    binary->build_id = build_id;
    binary->functions.push_back({0x1000, 0x10, "main"});
    embedded_.Add(binary);
    return binary.get();
  }
};

TEST_F(BinaryLocatorTest, AFileWithTheRecordedBuildIdIsUsed) {
  testing::CopyTo(kProg, prog_);
  LocatedBinary found = Locate(prog_, id_);
  EXPECT_EQ(found.path, prog_);
  EXPECT_EQ(found.binary, prog_);
  EXPECT_EQ(found.debug, "");
  EXPECT_EQ(found.source, "recorded path");
  EXPECT_FALSE(found.missing);
  EXPECT_FALSE(found.mismatched);
  EXPECT_TRUE(found.warnings.empty());
  found.NoteOpened(/*has_dwarf=*/true);
  EXPECT_EQ(found.source, "recorded path + DWARF");

  // Without a recorded build-id any file at the path is taken.
  EXPECT_EQ(Locate(prog_, "").binary, prog_);
}

TEST_F(BinaryLocatorTest, AnAbsentFileIsMissingButAPseudoPathIsNot) {
  const LocatedBinary absent = Locate(dir_ / "absent", id_);
  EXPECT_EQ(absent.binary, "");
  EXPECT_TRUE(absent.missing);
  EXPECT_FALSE(absent.mismatched);
  EXPECT_EQ(absent.source, "none: not found");
  EXPECT_TRUE(absent.warnings.empty());

  const LocatedBinary heap = Locate("[heap]", "");
  EXPECT_EQ(heap.binary, "");
  EXPECT_FALSE(heap.missing);  // nothing the user could supply
  EXPECT_EQ(heap.source, "none: not found");
}

TEST_F(BinaryLocatorTest, AFileOfAnotherBuildIsUsedOnlyWhenForcedAndAlwaysWithAWarning) {
  testing::CopyTo(kProg, prog_);
  const LocatedBinary refused = Locate(prog_, kOtherId);
  EXPECT_EQ(refused.binary, "");
  EXPECT_TRUE(refused.mismatched);
  EXPECT_FALSE(refused.missing);
  EXPECT_EQ(refused.source, "none: build-id differs");
  ASSERT_EQ(refused.warnings.size(), 1u);
  EXPECT_EQ(refused.warnings[0],
            prog_ + " has build-id " + id_ + " but the recording saw " + kOtherId +
                "; its frames are shown as [unknown] (--force uses it anyway)");

  const LocatedBinary forced = Locate(prog_, kOtherId, /*force=*/true);
  EXPECT_EQ(forced.binary, prog_);
  EXPECT_EQ(forced.debug, "");
  EXPECT_EQ(forced.source, "recorded path (build-id differs, --force)");
  EXPECT_TRUE(forced.mismatched);
  EXPECT_FALSE(forced.missing);
  EXPECT_THAT(forced.warnings,
              ElementsAre(prog_ + " has build-id " + id_ + " but the recording saw " + kOtherId +
                          "; used anyway (--force)"));

  // Forced but unreadable after all: still a mismatch, not a missing file.
  LocatedBinary unreadable = forced;
  unreadable.NoteUnreadable("cannot read it");
  EXPECT_EQ(unreadable.binary, "");
  EXPECT_EQ(unreadable.source, "none: build-id differs");
  EXPECT_FALSE(unreadable.missing);
  EXPECT_EQ(unreadable.warnings.back(), "cannot read it");
}

TEST_F(BinaryLocatorTest, AFoundFileThatCannotBeReadCountsAsMissing) {
  testing::CopyTo(kProg, prog_);
  LocatedBinary found = Locate(prog_, id_);
  found.NoteUnreadable("broken");
  EXPECT_EQ(found.binary, "");
  EXPECT_TRUE(found.missing);
  EXPECT_EQ(found.source, "none: not found");
  EXPECT_THAT(found.warnings, ElementsAre("broken"));
}

TEST_F(BinaryLocatorTest, SymfsIsSearchedByPathThenByBasename) {
  symfs_ = dir_ / "root";
  testing::CopyTo(kProg, symfs_ + "/usr/bin/prog");
  const LocatedBinary by_path = Locate("/usr/bin/prog", id_);
  EXPECT_EQ(by_path.binary, symfs_ + "/usr/bin/prog");
  EXPECT_EQ(by_path.source, "symfs");

  testing::CopyTo(kProg, symfs_ + "/flat");
  const LocatedBinary by_name = Locate("/opt/app/flat", id_);
  EXPECT_EQ(by_name.binary, symfs_ + "/flat");
  EXPECT_EQ(by_name.source, "symfs basename");

  // The real path is not looked at under a symfs.
  testing::CopyTo(kProg, prog_);
  EXPECT_TRUE(Locate(prog_, id_).missing);
}

TEST_F(BinaryLocatorTest, TheVdsoIsTheImageInTheRecording) {
  image_ = BytesOf(kProg);  // any ELF file will do as the image
  LocatedBinary vdso = Locate(std::string(kVdsoPath), id_);
  ASSERT_NE(vdso.binary, "");
  EXPECT_EQ(BuildIdOf(vdso.binary), id_);  // readable while the locator lives
  EXPECT_EQ(vdso.source, "recorded image");
  EXPECT_FALSE(vdso.missing);
  EXPECT_FALSE(vdso.mismatched);
  EXPECT_TRUE(vdso.warnings.empty());
  vdso.NoteOpened(/*has_dwarf=*/true);
  EXPECT_EQ(vdso.source, "recorded image");

  // No build-id recorded for it: used all the same.
  EXPECT_NE(Locate(std::string(kVdsoPath), "").binary, "");
}

// Recorders since 2026-11-27 embed the [vdso]'s hit functions (no image):
// the recorded build's are used, another build's are not.
TEST_F(BinaryLocatorTest, AVdsoWithoutItsImageIsItsEmbeddedFunctions) {
  const EmbeddedBinary* embedded = Embed(std::string(kVdsoPath), id_);
  const LocatedBinary vdso = Locate(std::string(kVdsoPath), id_);
  EXPECT_EQ(vdso.embedded, embedded);
  EXPECT_EQ(vdso.binary, "");
  EXPECT_EQ(vdso.source, "embedded");
  EXPECT_FALSE(vdso.missing);
  EXPECT_EQ(Locate(std::string(kVdsoPath), kOtherId).embedded, nullptr);
}

TEST_F(BinaryLocatorTest, AVdsoImageOfAnotherBuildIsUsedOnlyWhenForced) {
  image_ = BytesOf(kProg);
  const LocatedBinary refused = Locate(std::string(kVdsoPath), kOtherId);
  EXPECT_EQ(refused.binary, "");
  EXPECT_TRUE(refused.mismatched);
  EXPECT_FALSE(refused.missing);
  EXPECT_EQ(refused.source, "none: build-id differs");
  EXPECT_THAT(
      refused.warnings,
      ElementsAre("the recording's [vdso] image has build-id " + id_ + " but the recording saw " +
                  kOtherId + "; its frames are shown as [unknown] (--force uses it anyway)"));

  const LocatedBinary forced = Locate(std::string(kVdsoPath), kOtherId, /*force=*/true);
  EXPECT_NE(forced.binary, "");
  EXPECT_TRUE(forced.mismatched);
  EXPECT_EQ(forced.source, "recorded image (build-id differs)");
  EXPECT_THAT(forced.warnings,
              ElementsAre("the recording's [vdso] image has build-id " + id_ +
                          " but the recording saw " + kOtherId + "; used anyway (--force)"));
}

TEST_F(BinaryLocatorTest, WithoutAUsableVdsoImageNothingIsUsed) {
  const LocatedBinary absent = Locate(std::string(kVdsoPath), id_);
  EXPECT_EQ(absent.binary, "");
  EXPECT_EQ(absent.source, "none: not in the recording");
  EXPECT_FALSE(absent.missing);  // nothing the user could supply
  EXPECT_TRUE(absent.warnings.empty());

  image_.assign(64, std::byte{0x7f});  // not ELF
  const LocatedBinary broken = Locate(std::string(kVdsoPath), id_);
  EXPECT_EQ(broken.binary, "");
  EXPECT_EQ(broken.source, "none: unreadable image");
  EXPECT_FALSE(broken.missing);
  EXPECT_FALSE(broken.mismatched);
  ASSERT_EQ(broken.warnings.size(), 1u);
  EXPECT_THAT(broken.warnings[0], HasSubstr("the recording's [vdso] image is unreadable: "));
}

TEST_F(BinaryLocatorTest, AMissingFileIsNamedByWhatTheRecordingEmbedded) {
  const std::string absent = dir_ / "absent";
  const EmbeddedBinary* embedded = Embed(absent, id_);
  const LocatedBinary found = Locate(absent, id_);
  EXPECT_EQ(found.embedded, embedded);
  EXPECT_EQ(found.binary, "");
  EXPECT_EQ(found.source, "embedded");
  // Its names are complete: nothing is missing, nothing to warn of.
  EXPECT_FALSE(found.missing);
  EXPECT_FALSE(found.mismatched);
  EXPECT_TRUE(found.warnings.empty());

  // Another build embedded at the path is not the recorded one.
  const LocatedBinary other = Locate(absent, kOtherId);
  EXPECT_EQ(other.embedded, nullptr);
  EXPECT_TRUE(other.missing);
  EXPECT_EQ(other.source, "none: not found");
}

TEST_F(BinaryLocatorTest, AFileOfAnotherBuildGivesWayToTheEmbeddedOne) {
  testing::CopyTo(kProg, prog_);
  const EmbeddedBinary* embedded = Embed(prog_, kOtherId);
  const LocatedBinary found = Locate(prog_, kOtherId);
  EXPECT_EQ(found.embedded, embedded);
  EXPECT_EQ(found.binary, "");
  EXPECT_EQ(found.source, "embedded (the file found has build-id " + id_ + ")");
  EXPECT_FALSE(found.missing);
  // Counted in --stats as a mismatch, as its source line says.
  EXPECT_TRUE(found.mismatched);
  EXPECT_TRUE(found.warnings.empty());

  // --force takes the file it was asked to, and says what it passes over.
  const LocatedBinary forced = Locate(prog_, kOtherId, /*force=*/true);
  EXPECT_EQ(forced.embedded, nullptr);
  EXPECT_EQ(forced.binary, prog_);
  EXPECT_TRUE(forced.mismatched);
  EXPECT_THAT(forced.warnings,
              ElementsAre(prog_ + " has build-id " + id_ + " but the recording saw " + kOtherId +
                          "; used anyway (--force); without --force the recording's own tables "
                          "name it"));
}

TEST_F(BinaryLocatorTest, APresentMatchingFileComesBeforeTheEmbeddedOne) {
  testing::CopyTo(kProg, prog_);
  Embed(prog_, id_);
  for (bool force : {false, true}) {
    const LocatedBinary found = Locate(prog_, id_, force);
    EXPECT_EQ(found.binary, prog_);
    EXPECT_EQ(found.embedded, nullptr);
    EXPECT_EQ(found.source, "recorded path");
    EXPECT_TRUE(found.warnings.empty());
  }
}

TEST_F(BinaryLocatorTest, TheVdsoIsTheStoredImageWhateverIsEmbedded) {
  image_ = BytesOf(kProg);
  Embed(std::string(kVdsoPath), id_);
  const LocatedBinary vdso = Locate(std::string(kVdsoPath), id_);
  EXPECT_NE(vdso.binary, "");
  EXPECT_EQ(vdso.embedded, nullptr);
  EXPECT_EQ(vdso.source, "recorded image");
}

}  // namespace
}  // namespace sample
