// The fuzz corpus as a regression test: every file of CORPUS/NAME/ is fed to
// the target NAME (see fuzz_target.h) as one gtest case,
// FuzzReplay/NAME.FILE, so scripts/test.sh counts them like any other test.
// A target with no corpus directory, or an empty one, fails: each target is
// meant to carry seeds and every crash it ever had.
//
// Usage: fuzz_replay [gtest flags] [CORPUS_DIR]   (default: the source tree's
// tests/fuzz/corpus, compiled in)
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fuzz/fuzz_target.h"

namespace sample::fuzz {
namespace {

std::map<std::string, TargetFn>& Targets() {
  static std::map<std::string, TargetFn> targets;
  return targets;
}

std::vector<std::byte> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
  return std::vector<std::byte>(bytes, bytes + text.size());
}

// gtest names allow letters, digits and underscores.
std::string TestName(const std::string& file) {
  std::string name = file;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
      '_');
  return name;
}

class ReplayCase : public ::testing::Test {
 public:
  ReplayCase(TargetFn fn, std::filesystem::path path) : fn_(fn), path_(std::move(path)) {}
  void TestBody() override {
    std::vector<std::byte> input = ReadFile(path_);
    // A crash ends the binary, which scripts/test.sh counts as a failure;
    // a target never returns anything but 0.
    EXPECT_EQ(fn_(input), 0) << path_;
  }

 private:
  TargetFn fn_;
  std::filesystem::path path_;
};

class MissingCorpus : public ::testing::Test {
 public:
  explicit MissingCorpus(std::filesystem::path dir) : dir_(std::move(dir)) {}
  void TestBody() override { ADD_FAILURE() << "no corpus files in " << dir_; }

 private:
  std::filesystem::path dir_;
};

void RegisterCases(const std::filesystem::path& corpus) {
  for (const auto& [name, fn] : Targets()) {
    const std::filesystem::path dir = corpus / name;
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    const std::string suite = "FuzzReplay/" + name;
    if (files.empty()) {
      ::testing::RegisterTest(suite.c_str(), "HasCorpus", nullptr, nullptr, __FILE__, __LINE__,
                              [dir]() -> ::testing::Test* { return new MissingCorpus(dir); });
    }
    for (const std::filesystem::path& file : files) {
      const TargetFn target = fn;
      ::testing::RegisterTest(
          suite.c_str(), TestName(file.filename().string()).c_str(), nullptr, nullptr, __FILE__,
          __LINE__, [target, file]() -> ::testing::Test* { return new ReplayCase(target, file); });
    }
  }
}

}  // namespace

bool RegisterTarget(const char* name, TargetFn fn) {
  Targets().emplace(name, fn);
  return true;
}

}  // namespace sample::fuzz

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sample::fuzz::RegisterCases(argc > 1 ? argv[1] : FUZZ_CORPUS_DIR);
  return RUN_ALL_TESTS();
}
