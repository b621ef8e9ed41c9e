// Tests for DebugFileFinder: the order in which binaries and debug files are
// looked for, and why candidates are turned down (build-id mismatch, CRC
// mismatch), on copies of the symbolizer fixtures laid out in a scratch
// directory. debuginfod is off here (tests/unit/libsample/symbols/debuginfod_test.cc has it).
#include "libsample/symbols/debug_file_finder.h"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/elf_symbols.h"
#include "tests/unit/symbolizer_test_util.h"

namespace sample {
namespace {

using testing::CopyTo;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ScratchDir;

const char* const kSym = FIXTURE_SYMBOLIZER_PATH;
const char* const kSymDebug = FIXTURE_SYMBOLIZER_DEBUG_PATH;
const char* const kSymStripped = FIXTURE_SYMBOLIZER_STRIPPED_PATH;
const char* const kProgDebug = FIXTURE_PROG_DEBUG_PATH;
// The name fixture_symbolizer_stripped's .gnu_debuglink gives.
const char* const kLinkName = "fixture_symbolizer.debug";

std::string BuildIdOf(const std::string& path) {
  auto id = ReadElfBuildId(path);
  EXPECT_TRUE(id) << id.error().message;
  EXPECT_FALSE(id->empty()) << path;
  return id ? *id : "";
}

class DebugFileFinderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Nothing here may reach a real debuginfod server.
    if (const char* urls = std::getenv("DEBUGINFOD_URLS")) saved_urls_ = urls;
    unsetenv("DEBUGINFOD_URLS");
    id_ = BuildIdOf(kSym);
    ASSERT_EQ(BuildIdOf(kSymStripped), id_);
    ASSERT_EQ(BuildIdOf(kSymDebug), id_);
  }
  void TearDown() override {
    if (saved_urls_) setenv("DEBUGINFOD_URLS", saved_urls_->c_str(), 1);
  }

  // Options with the debug root inside the scratch dir.
  DebugFileFinderOptions Options() const {
    DebugFileFinderOptions options;
    options.debug_root = dir_ / "usr/lib/debug";
    return options;
  }
  std::string BuildIdPath(const std::string& root) const {
    return root + "/.build-id/" + id_.substr(0, 2) + "/" + id_.substr(2) + ".debug";
  }

  ScratchDir dir_;
  std::string id_;
  std::optional<std::string> saved_urls_;
};

TEST_F(DebugFileFinderTest, BinaryWithDwarfAtItsRecordedPathNeedsNothingElse) {
  DebugFileFinder finder(Options());
  // A debug file by build-id exists but is not looked for.
  CopyTo(kSymDebug, BuildIdPath(Options().debug_root));
  const FoundFiles found = finder.Find(kSym, id_);
  EXPECT_EQ(found.binary, kSym);
  EXPECT_EQ(found.binary_source, FileSource::kRecordedPath);
  EXPECT_TRUE(found.binary_has_dwarf);
  EXPECT_EQ(found.debug, "");
  EXPECT_EQ(found.build_id, id_);
  EXPECT_THAT(found.rejected, IsEmpty());
  EXPECT_EQ(found.symbol_source(), FileSource::kRecordedPath);
}

TEST_F(DebugFileFinderTest, RecordedBuildIdIsCaseInsensitive) {
  std::string upper = id_;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(DebugFileFinder(Options()).Find(kSym, upper).binary, kSym);
}

TEST_F(DebugFileFinderTest, BuildIdMismatchIsReportedNotUsed) {
  const std::string recorded(40, 'a');
  const FoundFiles found = DebugFileFinder(Options()).Find(kSym, recorded);
  EXPECT_EQ(found.binary, "");
  EXPECT_EQ(found.mismatched_binary, kSym);
  EXPECT_EQ(found.mismatched_build_id, id_);
  ASSERT_EQ(found.rejected.size(), 1u);
  EXPECT_EQ(found.rejected[0].path, kSym);
  EXPECT_EQ(found.rejected[0].reason, "build-id " + id_ + ", recorded " + recorded);
}

TEST_F(DebugFileFinderTest, MissingBinaryIsNotARejection) {
  const FoundFiles found = DebugFileFinder(Options()).Find(dir_ / "no/such/binary", id_);
  EXPECT_EQ(found.binary, "");
  EXPECT_EQ(found.mismatched_binary, "");
  EXPECT_THAT(found.rejected, IsEmpty());
  // The recorded build-id alone finds the debug file.
  CopyTo(kSymDebug, BuildIdPath(Options().debug_root));
  const FoundFiles by_id = DebugFileFinder(Options()).Find(dir_ / "no/such/binary", id_);
  EXPECT_EQ(by_id.debug, BuildIdPath(Options().debug_root));
  EXPECT_EQ(by_id.debug_source, FileSource::kBuildIdDir);
}

TEST_F(DebugFileFinderTest, DebugLinkInTheBinarysDirectory) {
  // The fixture's own build directory holds fixture_symbolizer.debug.
  const FoundFiles found = DebugFileFinder(Options()).Find(kSymStripped, "");
  EXPECT_EQ(found.binary, kSymStripped);
  EXPECT_FALSE(found.binary_has_dwarf);
  EXPECT_EQ(found.build_id, id_);  // the binary's own, none being recorded
  EXPECT_EQ(found.debug, kSymDebug);
  EXPECT_EQ(found.debug_source, FileSource::kDebugLink);
  EXPECT_EQ(found.symbol_source(), FileSource::kDebugLink);
}

TEST_F(DebugFileFinderTest, DebugLinkDirectoriesInOrder) {
  const std::string binary = dir_ / "opt/app/bin/app";
  CopyTo(kSymStripped, binary);
  const std::string in_dir = dir_ / "opt/app/bin/" + kLinkName;
  const std::string in_dot_debug = dir_ / "opt/app/bin/.debug/" + kLinkName;
  const std::string in_root = Options().debug_root + dir_.path() + "/opt/app/bin/" + kLinkName;

  CopyTo(kSymDebug, in_root);
  FoundFiles found = DebugFileFinder(Options()).Find(binary, id_);
  EXPECT_EQ(found.debug, in_root);
  EXPECT_EQ(found.debug_source, FileSource::kDebugLink);

  CopyTo(kSymDebug, in_dot_debug);
  EXPECT_EQ(DebugFileFinder(Options()).Find(binary, id_).debug, in_dot_debug);

  CopyTo(kSymDebug, in_dir);
  EXPECT_EQ(DebugFileFinder(Options()).Find(binary, id_).debug, in_dir);
}

TEST_F(DebugFileFinderTest, DebugLinkWithWrongCrcIsRejected) {
  const std::string binary = dir_ / "bin/app";
  CopyTo(kSymStripped, binary);
  // Same build-id, different bytes: only the CRC tells it is not the file.
  const std::string stale = dir_ / "bin/" + kLinkName;
  CopyTo(kSymDebug, stale);
  std::ofstream(stale, std::ios::app) << "x";
  const std::string good = dir_ / "bin/.debug/" + kLinkName;
  CopyTo(kSymDebug, good);

  const FoundFiles found = DebugFileFinder(Options()).Find(binary, id_);
  EXPECT_EQ(found.debug, good);
  ASSERT_EQ(found.rejected.size(), 1u);
  EXPECT_EQ(found.rejected[0].path, stale);
  EXPECT_THAT(found.rejected[0].reason, HasSubstr("CRC-32"));
  EXPECT_THAT(found.rejected[0].reason, HasSubstr(".gnu_debuglink wants"));
}

TEST_F(DebugFileFinderTest, DebugLinkToAnotherBuildIsRejected) {
  const std::string binary = dir_ / "bin/app";
  CopyTo(kSymStripped, binary);
  const std::string other = dir_ / "bin/" + kLinkName;
  CopyTo(kProgDebug, other);
  const FoundFiles found = DebugFileFinder(Options()).Find(binary, id_);
  EXPECT_EQ(found.debug, "");
  ASSERT_EQ(found.rejected.size(), 1u);
  EXPECT_EQ(found.rejected[0].path, other);
  EXPECT_EQ(found.rejected[0].reason, "build-id " + BuildIdOf(kProgDebug) + ", binary has " + id_);
}

TEST_F(DebugFileFinderTest, BuildIdDirectoryAfterDebugLink) {
  const std::string binary = dir_ / "bin/app";
  CopyTo(kSymStripped, binary);
  const std::string by_id = BuildIdPath(Options().debug_root);
  CopyTo(kSymDebug, by_id);
  FoundFiles found = DebugFileFinder(Options()).Find(binary, id_);
  EXPECT_EQ(found.debug, by_id);
  EXPECT_EQ(found.debug_source, FileSource::kBuildIdDir);

  const std::string linked = dir_ / "bin/" + kLinkName;
  CopyTo(kSymDebug, linked);
  found = DebugFileFinder(Options()).Find(binary, id_);
  EXPECT_EQ(found.debug, linked);
  EXPECT_EQ(found.debug_source, FileSource::kDebugLink);
}

TEST_F(DebugFileFinderTest, BuildIdDirectoryFileOfAnotherBuildIsRejected) {
  const std::string binary = dir_ / "bin/app";
  CopyTo(kSymStripped, binary);
  const std::string by_id = BuildIdPath(Options().debug_root);
  CopyTo(kProgDebug, by_id);
  const FoundFiles found = DebugFileFinder(Options()).Find(binary, id_);
  EXPECT_EQ(found.debug, "");
  ASSERT_EQ(found.rejected.size(), 1u);
  EXPECT_EQ(found.rejected[0].path, by_id);
  EXPECT_THAT(found.rejected[0].reason, HasSubstr("build-id " + BuildIdOf(kProgDebug)));
}

TEST_F(DebugFileFinderTest, SymfsPrefixesTheBinaryAndEveryDebugDirectory) {
  const std::string symfs = dir_ / "symfs";
  DebugFileFinderOptions options;
  options.symfs = symfs + "/";  // a trailing slash is fine
  options.debug_root = "/usr/lib/debug";
  CopyTo(kSymStripped, symfs + "/usr/bin/app");
  CopyTo(kSymDebug,
         symfs + "/usr/lib/debug/.build-id/" + id_.substr(0, 2) + "/" + id_.substr(2) + ".debug");
  FoundFiles found = DebugFileFinder(options).Find("/usr/bin/app", id_);
  EXPECT_EQ(found.binary, symfs + "/usr/bin/app");
  EXPECT_EQ(found.binary_source, FileSource::kSymfs);
  EXPECT_EQ(found.debug_source, FileSource::kBuildIdDir);
  EXPECT_EQ(found.debug, symfs + "/usr/lib/debug/.build-id/" + id_.substr(0, 2) + "/" +
                             id_.substr(2) + ".debug");

  // The debug root + the binary's directory, under symfs.
  CopyTo(kSymDebug, symfs + "/usr/lib/debug/usr/bin/" + kLinkName);
  found = DebugFileFinder(options).Find("/usr/bin/app", id_);
  EXPECT_EQ(found.debug, symfs + "/usr/lib/debug/usr/bin/" + kLinkName);
  EXPECT_EQ(found.debug_source, FileSource::kDebugLink);
}

TEST_F(DebugFileFinderTest, SymfsBasenameWhenThePathIsNotUnderSymfs) {
  const std::string symfs = dir_ / "flat";
  DebugFileFinderOptions options = Options();
  options.symfs = symfs;
  CopyTo(kSym, symfs + "/app");
  FoundFiles found = DebugFileFinder(options).Find("/usr/bin/app", id_);
  EXPECT_EQ(found.binary, symfs + "/app");
  EXPECT_EQ(found.binary_source, FileSource::kSymfsBasename);

  // symfs + path is tried first; a mismatch there does not stop the search.
  CopyTo(kProgDebug, symfs + "/usr/bin/app");
  found = DebugFileFinder(options).Find("/usr/bin/app", id_);
  EXPECT_EQ(found.binary, symfs + "/app");
  EXPECT_EQ(found.mismatched_binary, symfs + "/usr/bin/app");
  ASSERT_EQ(found.rejected.size(), 1u);
  EXPECT_THAT(found.rejected[0].reason, HasSubstr("recorded " + id_));

  // Under symfs the real root is not looked at.
  const FoundFiles outside = DebugFileFinder(options).Find(kSym, id_);
  EXPECT_EQ(outside.binary, "");
  EXPECT_EQ(outside.mismatched_binary, "");
}

TEST_F(DebugFileFinderTest, NotAnElfFileIsRejected) {
  const std::string binary = dir_ / "bin/app";
  std::filesystem::create_directories(dir_ / "bin");
  std::ofstream(binary) << "#!/bin/sh\n";
  const FoundFiles found = DebugFileFinder(Options()).Find(binary, "");
  EXPECT_EQ(found.binary, "");
  ASSERT_EQ(found.rejected.size(), 1u);
  EXPECT_THAT(found.rejected[0].reason, HasSubstr("not an ELF file"));
}

TEST_F(DebugFileFinderTest, DebuginfodIsNotAskedWithoutUrls) {
  DebugFileFinderOptions options = Options();
  options.use_debuginfod = true;
  const FoundFiles found = DebugFileFinder(options).Find(dir_ / "missing", id_);
  EXPECT_EQ(found.debug, "");
  EXPECT_THAT(found.rejected, IsEmpty());
}

TEST_F(DebugFileFinderTest, FoundFilesFeedTheSymbolizer) {
  const std::string binary = dir_ / "bin/app";
  CopyTo(kSymStripped, binary);
  CopyTo(kSymDebug, BuildIdPath(Options().debug_root));
  const FoundFiles found = DebugFileFinder(Options()).Find(binary, id_);
  auto symbolizer = BinarySymbolizer::Open(found.binary, found.debug);
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  EXPECT_EQ(symbolizer->dwarf_path(), found.debug);
}

}  // namespace
}  // namespace sample
