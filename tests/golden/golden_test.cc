// Golden-output tests: sample-report over small checked-in recordings must
// print exactly the checked-in expected text, for every view.
//
// tests/golden/cases.txt lists the cases, one "NAME: ARGUMENTS" a line
// (arguments split at spaces; '#' lines are comments; any other line fails
// CasesFileTest, naming it). Each runs
// sample-report ARGUMENTS with tests/golden as the working directory, so
// paths in the arguments and the output are relative and the same on every
// machine; binaries come from tests/golden/symfs via --symfs. The output is
// compared with expected/NAME.txt (expected/NAME.json for --format json,
// speedscope and gecko, which must also parse as JSON).
//
// SAMPLE_GOLDEN_UPDATE=1 writes the expected files instead of comparing
// (scripts/update_golden.sh); review the diff before committing it.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/golden/json_check.h"
#include "tests/golden/run_in_dir.h"

namespace sample::golden {
namespace {

using testing::RunResult;

const std::string kGoldenDir = GOLDEN_DIR;
const std::string kReport = SAMPLE_REPORT_PATH;

struct Case {
  std::string name;
  std::vector<std::string> args;
  bool json = false;
};

// cases.txt read once: its cases, and every line that is not one, as
// "cases.txt:N: why: 'TEXT'". The cases are instantiated before any test
// runs, where nothing can fail yet; CasesFileTest fails on the errors, so a
// mistyped line fails the suite instead of quietly testing nothing.
struct LoadedCases {
  std::vector<Case> cases;
  std::vector<std::string> errors;
};

// gtest's rule for a parameter's name, checked here to be reported with the
// line rather than abort the binary.
bool IsCaseName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

LoadedCases Load() {
  LoadedCases loaded;
  const std::string path = kGoldenDir + "/cases.txt";
  std::ifstream in(path);
  if (!in) {
    loaded.errors.push_back(path + ": cannot be read");
    return loaded;
  }
  std::set<std::string> names;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    const std::string where = "cases.txt:" + std::to_string(number) + ": ";
    const size_t colon = line.find(':');
    if (colon == std::string::npos) {
      loaded.errors.push_back(where + "no ':' after a case name: '" + line + "'");
      continue;
    }
    Case c;
    c.name = line.substr(0, colon);
    if (!IsCaseName(c.name)) {
      loaded.errors.push_back(where + "the name is not letters, digits and '_': '" + line + "'");
      continue;
    }
    if (!names.insert(c.name).second) {
      loaded.errors.push_back(where + "a second case named " + c.name + ": '" + line + "'");
      continue;
    }
    std::istringstream words(line.substr(colon + 1));
    for (std::string word; words >> word;) {
      const bool json_format = word == "json" || word == "speedscope" || word == "gecko";
      c.json |= json_format && !c.args.empty() && c.args.back() == "--format";
      c.args.push_back(word);
    }
    if (c.args.empty()) {
      loaded.errors.push_back(where + "no arguments after the name: '" + line + "'");
      continue;
    }
    loaded.cases.push_back(std::move(c));
  }
  return loaded;
}

const LoadedCases& Cases() {
  static const LoadedCases loaded = Load();
  return loaded;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}


// Runs sample-report in the golden directory.
RunResult RunReport(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kReport};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunInDir(kGoldenDir, argv);
}

class GoldenTest : public ::testing::TestWithParam<Case> {};

TEST_P(GoldenTest, OutputMatches) {
  const Case& c = GetParam();
  const RunResult run = RunReport(c.args);
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string expected_path =
      kGoldenDir + "/expected/" + c.name + (c.json ? ".json" : ".txt");
  if (c.json) {
    std::string error;
    EXPECT_TRUE(IsValidJson(run.out, &error)) << error << "\n" << run.out;
  }
  const char* update = std::getenv("SAMPLE_GOLDEN_UPDATE");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(expected_path, std::ios::binary) << run.out;
    GTEST_SKIP() << "rewrote " << expected_path;
  }
  const std::string expected = ReadFile(expected_path);
  ASSERT_FALSE(expected.empty()) << expected_path << " is missing; run scripts/update_golden.sh";
  EXPECT_EQ(run.out, expected) << "differs from " << expected_path
                               << " (SAMPLE_GOLDEN_UPDATE=1 rewrites it)";
}

INSTANTIATE_TEST_SUITE_P(Views, GoldenTest, ::testing::ValuesIn(Cases().cases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(CasesFileTest, EveryLineIsACase) {
  for (const std::string& error : Cases().errors) ADD_FAILURE() << error;
  EXPECT_FALSE(Cases().cases.empty()) << "no golden case was loaded";
}

// The JSON checker itself, so that a broken checker cannot pass bad output.
TEST(JsonCheckTest, AcceptsAndRejects) {
  EXPECT_TRUE(IsValidJson("{\"a\": [1, -2.5e3, true, null, \"x\\n\"], \"b\": {}}\n"));
  EXPECT_FALSE(IsValidJson("{\"a\": [1, 2,]}"));
  EXPECT_FALSE(IsValidJson("{\"a\" 1}"));
  EXPECT_FALSE(IsValidJson("{} {}"));
  EXPECT_FALSE(IsValidJson("\"unterminated"));
  EXPECT_FALSE(IsValidJson("[01]"));
}

}  // namespace
}  // namespace sample::golden
