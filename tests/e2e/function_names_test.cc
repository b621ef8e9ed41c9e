// End to end: function names as perf prints them. C++ names lose their
// parameter lists (and a template function its return type) in every view
// and export, except overloads, which keep them so that their rows tell
// them apart; --full-signature prints every signature; --symbols takes
// either spelling. Rust names of both manglings and Go names reach the
// report as their toolchains spell them (the Rust and Go workloads are
// built only where rustc and go are installed: the tests skip otherwise).
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;

const std::string kFold = "acc::Box<unsigned long>::fold<int>";
const std::string kFoldSignature = "unsigned long acc::Box<unsigned long>::fold<int>(int, long)";
const std::string kTwiceLong = "acc::twice(long, long)";
const std::string kTwiceDouble = "acc::twice(double, long)";

class FunctionNamesTest : public ::testing::Test {
 protected:
  // Records `argv` at 2 kHz with frame-pointer chains into `data_`.
  void RecordCommand(const std::vector<std::string>& argv) {
    std::vector<std::string> cmd = {kRecord, "-g", "-F", "2000", "-o", data_, "--"};
    cmd.insert(cmd.end(), argv.begin(), argv.end());
    const RunResult rec = RunTool(cmd, dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
  }

  std::string Report(std::vector<std::string> options) {
    std::vector<std::string> argv = {kReport, "-i", data_};
    argv.insert(argv.end(), options.begin(), options.end());
    const RunResult rep = RunTool(argv, dir_);
    EXPECT_EQ(rep.exit_code, 0) << rep.err;
    return rep.out;
  }

  // The flat profile's rows named `names` each hold at least `least` percent.
  void ExpectRows(const std::string& report, const std::vector<std::string>& names, double least) {
    for (const std::string& name : names) {
      const auto share = OverheadOf(report, "[.] " + name);
      ASSERT_TRUE(share.has_value()) << name << " missing in\n" << report;
      EXPECT_GT(*share, least) << name << " in\n" << report;
    }
  }

  ScratchDir dir_;
  const std::string data_ = dir_ / "names.data";
};

TEST_F(FunctionNamesTest, CxxNamesLoseTheirParametersExceptOverloads) {
  RecordCommand({WORKLOAD_OVERLOADS_PATH, "1"});
  const std::string flat = Report({"--no-children", "--sort", "sym"});
  // 40%, 30%, 30% of the CPU time: generous margins on a loaded machine.
  ExpectRows(flat, {kFold, kTwiceLong, kTwiceDouble}, 10);
  EXPECT_EQ(flat.find("fold<int>(int"), std::string::npos) << flat;
  EXPECT_EQ(flat.find("unsigned long acc::Box"), std::string::npos) << flat;

  const std::string full = Report({"--no-children", "--sort", "sym", "--full-signature"});
  ExpectRows(full, {kFoldSignature, kTwiceLong, kTwiceDouble}, 10);
  EXPECT_FALSE(OverheadOf(full, "[.] " + kFold).has_value()) << full;
}

TEST_F(FunctionNamesTest, ExportsAndCallGraphsNameFunctionsAsTheText) {
  RecordCommand({WORKLOAD_OVERLOADS_PATH, "0.5"});
  const std::string folded = Report({"--format", "folded"});
  const std::string json = Report({"--format", "json", "--no-children"});
  const std::string graph = Report({"-g", "caller"});
  const std::string script = Report({"--script"});
  for (const std::string& name : {kFold, kTwiceLong, kTwiceDouble}) {
    EXPECT_NE(folded.find(";" + name), std::string::npos) << name << " in\n" << folded;
    EXPECT_NE(json.find("\"" + name + "\""), std::string::npos) << name << " in\n" << json;
    EXPECT_NE(graph.find(name), std::string::npos) << name;
    EXPECT_NE(script.find(name), std::string::npos) << name;
  }
  for (const std::string& text : {folded, json, graph, script}) {
    EXPECT_EQ(text.find("fold<int>(int"), std::string::npos) << text.substr(0, 2000);
  }
  // pprof: the short name is the function's name (the signature is its
  // system name); the protobuf's string table holds both as they are.
  const RunResult written = RunTool({kReport, "-i", data_, "-o", dir_ / "names.pb.gz"}, dir_);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  const RunResult pb = RunTool({"/bin/gzip", "-dc", dir_ / "names.pb.gz"}, dir_);
  ASSERT_EQ(pb.exit_code, 0) << pb.err;
  for (const std::string& name : {kFold, kTwiceLong, kTwiceDouble, kFoldSignature}) {
    EXPECT_NE(pb.out.find(name), std::string::npos) << name;
  }

  const std::string full_folded = Report({"--format", "folded", "--full-signature"});
  EXPECT_NE(full_folded.find(";" + kFoldSignature), std::string::npos) << full_folded;
}

TEST_F(FunctionNamesTest, SymbolsFilterTakesEitherSpelling) {
  RecordCommand({WORKLOAD_OVERLOADS_PATH, "0.5"});
  for (const std::string& spelling : {kFold, kFoldSignature}) {
    const std::string only = Report({"--no-children", "--sort", "sym", "--symbols", spelling});
    const auto share = OverheadOf(only, "[.] " + kFold);
    ASSERT_TRUE(share.has_value()) << spelling << ":\n" << only;
    EXPECT_GT(*share, 99.0) << only;
  }
  // Both overloads by their short name, one by its signature.
  const std::string both = Report({"--no-children", "--sort", "sym", "--symbols", "acc::twice"});
  ExpectRows(both, {kTwiceLong, kTwiceDouble}, 20);
  EXPECT_FALSE(OverheadOf(both, "[.] " + kFold).has_value()) << both;
  const std::string one = Report({"--no-children", "--sort", "sym", "--symbols", kTwiceDouble});
  ExpectRows(one, {kTwiceDouble}, 99);
}

#if defined(WORKLOAD_RUST_LEGACY_PATH)
TEST_F(FunctionNamesTest, RustLegacyNames) {
  RecordCommand({WORKLOAD_RUST_LEGACY_PATH, "0.6"});
  // With children: a row per function, whatever was inlined into it.
  const std::string flat = Report({"--children", "--sort", "sym"});
  ExpectRows(flat, {"rust_names::Worker::spin", "<rust_names::Thirty as rust_names::Job>::work"},
             10);
  EXPECT_EQ(flat.find("17h"), std::string::npos) << "a legacy hash shows in\n" << flat;
}

TEST_F(FunctionNamesTest, RustV0Names) {
  RecordCommand({WORKLOAD_RUST_V0_PATH, "0.6"});
  const std::string flat = Report({"--children", "--sort", "sym"});
  // libiberty's (and so perf's) spelling of an inherent method in v0.
  ExpectRows(flat, {"<rust_names::Worker>::spin", "<rust_names::Thirty as rust_names::Job>::work"},
             10);
  EXPECT_EQ(flat.find("_RNv"), std::string::npos) << "a mangled name shows in\n" << flat;
}
#else
TEST_F(FunctionNamesTest, RustLegacyNames) {
  GTEST_SKIP() << "rustc was not found when the build was configured (scripts/setup.sh "
                  "installs it with the test packages)";
}
TEST_F(FunctionNamesTest, RustV0Names) {
  GTEST_SKIP() << "rustc was not found when the build was configured";
}
#endif

// Two static functions named spin in two files (70/30): two rows, as perf
// shows one per symbol, each marked with where it starts so the rows say
// which is which; the same from the recording's own tables.
TEST_F(FunctionNamesTest, SameNamedStaticFunctionsAreRowsOfTheirOwn) {
  RecordCommand({WORKLOAD_TWINS_PATH, "1"});
  const std::string flat = Report({"--no-children", "--sort", "sym"});
  std::vector<double> shares;
  for (const std::string& line : Lines(flat)) {
    if (line.find("[.] spin@0x") != std::string::npos) {
      shares.push_back(OverheadOfRow(line, {"[.] spin@0x"}).value_or(0));
    }
  }
  ASSERT_EQ(shares.size(), 2u) << flat;
  EXPECT_GT(std::max(shares[0], shares[1]), 55) << flat;
  EXPECT_GT(std::min(shares[0], shares[1]), 20) << flat;
  const std::string empty = dir_ / "empty symfs";
  std::filesystem::create_directories(empty);
  EXPECT_EQ(Report({"--no-children", "--sort", "sym", "--symfs", empty}), flat);
  // Their name picks them both.
  const std::string picked = Report({"--no-children", "--sort", "sym", "--symbols", "spin"});
  EXPECT_EQ(std::ranges::count_if(Lines(picked),
                                  [](const std::string& line) {
                                    return line.find("[.] spin@0x") != std::string::npos;
                                  }),
            2)
      << picked;
}

#if defined(WORKLOAD_GO_NAMES_PATH)
TEST_F(FunctionNamesTest, GoNames) {
  RecordCommand({WORKLOAD_GO_NAMES_PATH, "0.6"});
  const std::string flat = Report({"--children", "--sort", "sym"});
  ExpectRows(flat, {"main.alpha", "main.(*Worker).spin"}, 10);
}
#else
TEST_F(FunctionNamesTest, GoNames) {
  GTEST_SKIP() << "go was not found when the build was configured (scripts/setup.sh installs "
                  "golang-go with the test packages)";
}
#endif

}  // namespace
}  // namespace sample::e2e
