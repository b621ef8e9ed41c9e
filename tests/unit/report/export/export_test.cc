// Tests for what every export shares: the format names and extensions, the
// samples an export is given (event choice, filters, --max-stack, weights),
// the merged stack tree flame graphs draw, the folded exporter, and -o's
// file writing.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/model/stack_tree.h"
#include "report/export/export_input.h"
#include "report/export/exporter.h"
#include "report/output_file.h"
#include "report/export/output_format.h"
#include "tests/unit/symbolizer_test_util.h"

namespace sample::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OutputFormatTest, NamesRoundTripAndUnknownNamesListTheKnownOnes) {
  for (auto format : {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kFolded,
                      OutputFormat::kSvg, OutputFormat::kHtml, OutputFormat::kPprof,
                      OutputFormat::kSpeedscope, OutputFormat::kGecko}) {
    auto parsed = ParseOutputFormat(FormatName(format));
    ASSERT_TRUE(parsed) << FormatName(format);
    EXPECT_EQ(*parsed, format);
  }
  auto bad = ParseOutputFormat("flamegraph");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "--format 'flamegraph': takes one of text, json, folded, svg, html, pprof, "
            "speedscope, gecko");
}

TEST(OutputFormatTest, TheExtensionPicksTheFormatLongestSuffixFirst) {
  EXPECT_EQ(FormatForPath("out.svg"), OutputFormat::kSvg);
  EXPECT_EQ(FormatForPath("dir.d/out.html"), OutputFormat::kHtml);
  EXPECT_EQ(FormatForPath("cpu.pb.gz"), OutputFormat::kPprof);
  EXPECT_EQ(FormatForPath("x.folded"), OutputFormat::kFolded);
  EXPECT_EQ(FormatForPath("x.speedscope.json"), OutputFormat::kSpeedscope);
  EXPECT_EQ(FormatForPath("x.gecko.json"), OutputFormat::kGecko);
  EXPECT_EQ(FormatForPath("x.json"), OutputFormat::kJson);
  EXPECT_EQ(FormatForPath("report.txt"), OutputFormat::kText);
  EXPECT_EQ(FormatForPath("x.gz"), std::nullopt);
  EXPECT_EQ(FormatForPath(".svg"), std::nullopt);  // a name that is only an extension
  // -o without --format: a known extension's format, text without one,
  // and an extension that names none refused with the list.
  EXPECT_EQ(FormatForOutput("fg.svg"), OutputFormat::kSvg);
  for (const char* plain : {"/dev/null", "report", ".hidden", "report.2024-12-07", "v1.2"}) {
    EXPECT_EQ(FormatForOutput(plain), OutputFormat::kText) << plain;
  }
  for (const char* unknown : {"fg.png", "out.log", "dir.d/sample.data"}) {
    const auto refused = FormatForOutput(unknown);
    ASSERT_FALSE(refused) << unknown;
    EXPECT_NE(refused.error().message.find(".svg (svg)"), std::string::npos)
        << refused.error().message;
  }
  EXPECT_TRUE(IsBinary(OutputFormat::kPprof));
  EXPECT_FALSE(IsExport(OutputFormat::kJson));
  EXPECT_TRUE(IsExport(OutputFormat::kFolded));
}

// A recording of two commands, one event with samples and a group member
// without (its counts ride on the leader's samples), one unused event.
class ExportInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Profile& p = recording_.profile;
    p.set_event_names({"cpu-clock", "task-clock", "page-faults"});
    p.set_group_members(0, {1});
    p.set_dso_names({"[unknown]", "[kernel.kallsyms]", "/bin/prog", "/tmp/perf-7.map"});
    main_ = p.InternFunction(2, "main", false, true);
    work_ = p.InternFunction(2, "work", false, true);
    inl_ = p.InternFunction(2, "helper", false, true, /*inlined=*/true);
    sys_ = p.InternFunction(1, "do_syscall_64", true, true);
    jit_ = p.InternFunction(3, "jitted", false, true);
    unknown_ = p.InternFunction(2, "[unknown] 0x10", false, false);
    prog_ = p.InternComm("prog");
    other_ = p.InternComm("other");
    recording_.metadata = {{"cmdline", "sample-record -g ./prog"}};
    Add(prog_, 10, 100, {work_, main_});
    Add(prog_, 11, 100, {work_, main_});
    Add(prog_, 12, 300, {sys_, inl_, work_, main_});
    Add(other_, 13, 50, {jit_, unknown_});
  }
  void Add(uint32_t comm, uint32_t pid, uint64_t period, std::vector<uint32_t> frames) {
    ProfileSample s;
    s.comm = comm;
    s.pid = s.tid = pid;
    s.period = period;
    s.time = pid * 1000;
    recording_.profile.AddSample(s, frames);
  }
  Result<ExportInput> Build(ExportOptions options = {}, SampleFilterOptions filter = {},
                            bool single = false) {
    warnings_.clear();
    return BuildExportInput(recording_, SampleFilter(std::move(filter)), options, single,
                            warnings_);
  }

  Recording recording_;
  std::vector<std::string> warnings_;
  uint32_t main_ = 0, work_ = 0, inl_ = 0, sys_ = 0, jit_ = 0, unknown_ = 0;
  uint32_t prog_ = 0, other_ = 0;
};

TEST_F(ExportInputTest, OneSectionPerEventWithSamplesHoldingTheKeptSamplesInOrder) {
  auto input = Build();
  ASSERT_TRUE(input) << input.error().message;
  ASSERT_EQ(input->sections.size(), 1u);
  EXPECT_EQ(input->sections[0].name, "cpu-clock");
  EXPECT_THAT(input->sections[0].samples, ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(input->sections[0].period, 550u);
  EXPECT_EQ(input->command_line, "sample-record -g ./prog");

  SampleFilterOptions only_prog;
  only_prog.comms = {"prog"};
  only_prog.pids = {11, 12};
  input = Build({}, only_prog);
  ASSERT_TRUE(input);
  EXPECT_THAT(input->sections[0].samples, ElementsAre(1, 2));
  EXPECT_EQ(input->sections[0].period, 400u);
}

TEST_F(ExportInputTest, EventIsChosenByNameAndAMemberOrUnknownNameIsRefused) {
  ExportOptions options;
  options.event = "page-faults";
  auto input = Build(options);
  ASSERT_TRUE(input);
  EXPECT_EQ(input->sections[0].name, "page-faults");
  EXPECT_TRUE(input->sections[0].samples.empty());

  options.event = "task-clock";
  input = Build(options);
  ASSERT_FALSE(input);
  EXPECT_EQ(input.error().message,
            "--event 'task-clock': it has no samples of its own, its counts ride on "
            "cpu-clock's (--event cpu-clock)");

  options.event = "cycles";
  input = Build(options);
  ASSERT_FALSE(input);
  EXPECT_EQ(input.error().message,
            "--event 'cycles': the recording has no such event (it has: cpu-clock, "
            "task-clock, page-faults)");
}

TEST_F(ExportInputTest, SingleProfileFormatsKeepTheFirstEventAndSaySo) {
  ProfileSample s;
  s.event = 2;
  s.period = 1;
  recording_.profile.AddSample(s, std::vector<uint32_t>{main_});
  auto input = Build({}, {}, /*single=*/false);
  ASSERT_TRUE(input);
  EXPECT_EQ(input->sections.size(), 2u);
  EXPECT_TRUE(warnings_.empty());
  input = Build({}, {}, /*single=*/true);
  ASSERT_TRUE(input);
  ASSERT_EQ(input->sections.size(), 1u);
  EXPECT_THAT(warnings_, ElementsAre("this format draws one event: showing cpu-clock, not "
                                     "page-faults (choose with --event NAME)"));
}

TEST_F(ExportInputTest, FramesAreCutByMaxStackAndWeightsAndKindsFollowTheOptions) {
  ExportOptions options;
  options.max_stack = 2;
  auto input = Build(options);
  ASSERT_TRUE(input);
  const ProfileSample& deep = input->sample(2);
  EXPECT_THAT(std::vector<uint32_t>(input->Frames(deep).begin(), input->Frames(deep).end()),
              ElementsAre(sys_, inl_));
  EXPECT_EQ(input->Addresses(deep).size(), 2u);
  EXPECT_EQ(input->Weight(deep), 1u);
  input->options.weight = ExportWeight::kPeriod;
  EXPECT_EQ(input->Weight(deep), 300u);
  EXPECT_EQ(input->Kind(main_), FrameKind::kUser);
  EXPECT_EQ(input->Kind(inl_), FrameKind::kInlined);
  EXPECT_EQ(input->Kind(sys_), FrameKind::kKernel);
  EXPECT_EQ(input->Kind(jit_), FrameKind::kJit);
  EXPECT_EQ(input->Kind(unknown_), FrameKind::kUnknown);
}

TEST_F(ExportInputTest, FoldedGivesOneSortedLinePerCommAndStack) {
  auto input = Build();
  ASSERT_TRUE(input);
  auto exporter = MakeExporter(OutputFormat::kFolded);
  ASSERT_TRUE(exporter);
  EXPECT_TRUE((*exporter)->single_section());
  auto text = (*exporter)->Export(*input);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text,
            "other;[unknown] 0x10;jitted 1\n"
            "prog;main;work 2\n"
            "prog;main;work;helper (inlined);do_syscall_64 1\n");
  input->options.weight = ExportWeight::kPeriod;
  input->options.max_stack = 1;  // stacks that become equal are summed
  text = (*exporter)->Export(*input);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text,
            "other;jitted 50\n"
            "prog;do_syscall_64 300\n"
            "prog;work 200\n");
}

TEST_F(ExportInputTest, StackTreeMergesFromTheRootPerCommand) {
  StackTree tree(/*by_comm=*/true);
  const Profile& p = recording_.profile;
  for (const ProfileSample& s : p.samples()) tree.Add(s.comm, p.frames(s), s.period);
  tree.Sort(p);
  const StackNode& root = tree.node(StackTree::kRoot);
  EXPECT_EQ(root.total_samples, 4u);
  EXPECT_EQ(root.total_period, 550u);
  ASSERT_EQ(root.children.size(), 2u);
  const StackNode& other = tree.node(root.children[0]);  // sorted: "other" < "prog"
  const StackNode& prog = tree.node(root.children[1]);
  EXPECT_EQ(p.comm(other.comm), "other");
  EXPECT_EQ(p.comm(prog.comm), "prog");
  EXPECT_EQ(prog.total_samples, 3u);
  ASSERT_EQ(prog.children.size(), 1u);
  const StackNode& main = tree.node(prog.children[0]);
  EXPECT_EQ(main.function, main_);
  EXPECT_EQ(main.depth, 2u);
  ASSERT_EQ(main.children.size(), 1u);
  const StackNode& work = tree.node(main.children[0]);
  EXPECT_EQ(work.total_samples, 3u);
  EXPECT_EQ(work.self_samples, 2u);
  EXPECT_EQ(work.self_period, 200u);
  EXPECT_EQ(work.total_period, 500u);
  EXPECT_EQ(tree.max_depth(), 5u);  // root, prog, main, work, helper, do_syscall_64

  StackTree plain(/*by_comm=*/false);
  for (const ProfileSample& s : p.samples()) plain.Add(s.comm, p.frames(s), s.period);
  plain.Sort(p);
  ASSERT_EQ(plain.node(StackTree::kRoot).children.size(), 2u);
  EXPECT_EQ(plain.node(plain.node(StackTree::kRoot).children[0]).function, unknown_);
}

TEST(OutputFileTest, WritesTheWholeFileAndLeavesNoTemporary) {
  sample::testing::ScratchDir dir;
  const std::string path = dir / "out.folded";
  ASSERT_TRUE(WriteOutputFile(path, "old\n"));
  ASSERT_TRUE(WriteOutputFile(path, "a;b 1\n"));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "a;b 1\n");
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

TEST(OutputFileTest, AnUnwritablePathIsNamedWithTheReason) {
  sample::testing::ScratchDir dir;
  const std::string path = dir / "no-such-dir/out.svg";
  auto written = WriteOutputFile(path, "x");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().message,
            "-o " + path + ": cannot create it: No such file or directory");
}

}  // namespace
}  // namespace sample::report
