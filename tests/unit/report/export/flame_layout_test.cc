// Tests for the flame graph's geometry (FlameLayout): widths proportional
// to the weights, children inside their parents, narrow frames cut,
// --icicle's flipped levels, kind colours and the per-node colour hook;
// the XML escaping every SVG name goes through; and the SVG writer's
// labels and escaping on a small synthetic recording. The SVG of a real
// recording is checked in tests/golden/svg_export_test.cc.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/export/export_input.h"
#include "report/export/flame_layout.h"
#include "report/export/svg_export.h"
#include "report/export/xml_text.h"

namespace sample::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two commands: "prog" main -> work (3 samples, period 100 each) and main
// -> sys -> kernel (1 sample, period 700); "other" jitted (1 sample, 200).
class FlameLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Profile& p = recording_.profile;
    p.set_event_names({"cpu-clock"});
    p.set_dso_names({"[unknown]", "[kernel.kallsyms]", "/bin/prog", "/tmp/perf-7.map"});
    main_ = p.InternFunction(2, "main", false, true);
    work_ = p.InternFunction(2, "work", false, true);
    sys_ = p.InternFunction(1, "do_syscall_64", true, true);
    jit_ = p.InternFunction(3, "jitted", false, true);
    prog_ = p.InternComm("prog");
    other_ = p.InternComm("other");
    for (int i = 0; i < 3; ++i) Add(prog_, 100, {work_, main_});
    Add(prog_, 700, {sys_, main_});
    Add(other_, 200, {jit_});
  }
  void Add(uint32_t comm, uint64_t period, std::vector<uint32_t> frames) {
    ProfileSample s;
    s.comm = comm;
    s.period = period;
    recording_.profile.AddSample(s, frames);
  }
  ExportInput Input(ExportOptions options = {}) {
    std::vector<std::string> warnings;
    auto input =
        BuildExportInput(recording_, SampleFilter(SampleFilterOptions{}), options, true, warnings);
    EXPECT_TRUE(input) << input.error().message;
    return *input;
  }
  // The drawn frames by label ("prog/main": a function under its command).
  static std::map<std::string, FlameFrame> ByLabel(const FlameLayout& layout) {
    std::map<std::string, FlameFrame> out;
    for (const FlameFrame& f : layout.frames) out.emplace(f.label, f);
    return out;
  }

  Recording recording_;
  uint32_t main_ = 0, work_ = 0, sys_ = 0, jit_ = 0, prog_ = 0, other_ = 0;
};

TEST_F(FlameLayoutTest, WidthsAreProportionalToSamplesOrPeriod) {
  const ExportInput input = Input();
  const StackTree tree = BuildFlameTree(input);
  FlameLayoutOptions options;  // 1200 px, 10 px margins: 1180 px for all
  auto frames = ByLabel(LayoutFlame(input, tree, options));
  EXPECT_DOUBLE_EQ(frames.at("all").width, 1180.0);
  EXPECT_DOUBLE_EQ(frames.at("all").x, 10.0);
  EXPECT_DOUBLE_EQ(frames.at("prog").width, 1180.0 * 4 / 5);
  EXPECT_DOUBLE_EQ(frames.at("work").width, 1180.0 * 3 / 5);
  EXPECT_DOUBLE_EQ(frames.at("jitted").width, 1180.0 / 5);
  EXPECT_EQ(frames.at("work").samples, 3u);
  EXPECT_EQ(frames.at("work").weight, 3u);

  options.weight = ExportWeight::kPeriod;  // 1200 in all
  const FlameLayout by_period = LayoutFlame(input, tree, options);
  EXPECT_EQ(by_period.total, 1200u);
  EXPECT_EQ(by_period.total_samples, 5u);
  frames = ByLabel(by_period);
  EXPECT_DOUBLE_EQ(frames.at("do_syscall_64").width, 1180.0 * 700 / 1200);
  EXPECT_DOUBLE_EQ(frames.at("work").width, 1180.0 * 300 / 1200);
  EXPECT_EQ(frames.at("work").weight, 300u);
  EXPECT_EQ(frames.at("work").samples, 3u);
}

TEST_F(FlameLayoutTest, MergingEqualStacksFirstGivesTheSameTreeAsOneSampleAtATime) {
  ExportOptions options;
  // --max-stack 1 cuts stacks to their leaf: different interned stacks, cut
  // to the same length, stay apart by where they start.
  for (size_t max_stack : {size_t{0}, size_t{1}}) {
    options.max_stack = max_stack;
    const ExportInput input = Input(options);
    const StackTree merged = BuildFlameTree(input);
    StackTree plain(/*by_comm=*/true);
    for (uint32_t index : input.sections.front().samples) {
      const ProfileSample& s = input.sample(index);
      plain.Add(s.comm, input.Frames(s), s.period);
    }
    plain.Sort(input.profile());
    ASSERT_EQ(merged.nodes().size(), plain.nodes().size()) << max_stack;
    for (size_t i = 0; i < plain.nodes().size(); ++i) {
      const StackNode& a = merged.node(i);
      const StackNode& b = plain.node(i);
      EXPECT_EQ(a.function, b.function);
      EXPECT_EQ(a.comm, b.comm);
      EXPECT_EQ(a.total_samples, b.total_samples);
      EXPECT_EQ(a.total_period, b.total_period);
      EXPECT_EQ(a.self_samples, b.self_samples);
      EXPECT_EQ(a.self_period, b.self_period);
      EXPECT_EQ(a.children, b.children);
    }
  }
  EXPECT_EQ(BuildFlameTree(Input()).node(StackTree::kRoot).total_samples, 5u);
}

TEST_F(FlameLayoutTest, RootThenCommandsThenFunctionsOutermostFirstChildrenInsideParents) {
  const ExportInput input = Input();
  const StackTree tree = BuildFlameTree(input);
  const FlameLayout layout = LayoutFlame(input, tree, {});
  ASSERT_EQ(layout.frames.size(), 7u);  // all, other, jitted, prog, main, do_syscall_64, work
  EXPECT_EQ(layout.frames[0].label, "all");
  EXPECT_EQ(layout.frames[1].label, "other");  // siblings by name, left to right
  EXPECT_EQ(layout.frames[3].label, "prog");
  EXPECT_EQ(layout.frames[4].label, "main");
  EXPECT_EQ(layout.frames[4].depth, 2u);
  EXPECT_EQ(layout.max_depth, 3u);
  std::map<uint32_t, const FlameFrame*> by_node;
  for (const FlameFrame& f : layout.frames) by_node[f.node] = &f;
  for (const FlameFrame& f : layout.frames) {
    if (f.node == StackTree::kRoot) continue;
    const FlameFrame& parent = *by_node.at(tree.node(f.node).parent);
    EXPECT_EQ(f.depth, parent.depth + 1) << f.label;
    EXPECT_GE(f.x, parent.x - 1e-9) << f.label;
    EXPECT_LE(f.x + f.width, parent.x + parent.width + 1e-9) << f.label;
  }
  // Siblings follow each other without gaps or overlap.
  auto frames = ByLabel(layout);
  EXPECT_DOUBLE_EQ(frames.at("prog").x, frames.at("other").x + frames.at("other").width);
  EXPECT_DOUBLE_EQ(frames.at("work").x,
                   frames.at("do_syscall_64").x + frames.at("do_syscall_64").width);
  EXPECT_EQ(frames.at("work").dso, "/bin/prog");
  EXPECT_EQ(frames.at("work").kind, FrameKind::kUser);
  EXPECT_EQ(frames.at("do_syscall_64").kind, FrameKind::kKernel);
  EXPECT_EQ(frames.at("jitted").kind, FrameKind::kJit);
  EXPECT_EQ(frames.at("prog").kind, std::nullopt);
  EXPECT_EQ(frames.at("prog").dso, "");
}

TEST_F(FlameLayoutTest, FramesNarrowerThanTheMinimumAreCutWithTheirChildren) {
  // 20000 more samples in prog's work: other (1 of 20005) is 0.059 px wide.
  for (int i = 0; i < 20000; ++i) Add(prog_, 100, {work_, main_});
  const ExportInput input = Input();
  const StackTree tree = BuildFlameTree(input);
  const FlameLayout layout = LayoutFlame(input, tree, {});
  auto frames = ByLabel(layout);
  EXPECT_EQ(frames.count("other"), 0u);
  EXPECT_EQ(frames.count("jitted"), 0u);         // its child, never visited
  EXPECT_EQ(frames.count("do_syscall_64"), 0u);  // 1 sample too
  EXPECT_EQ(frames.count("work"), 1u);
  EXPECT_EQ(layout.omitted, 2u);  // other, do_syscall_64: the roots of what was cut

  // Just under the frames' width (1180 / 20005 = 0.059 px): drawn.
  FlameLayoutOptions options;
  options.min_width = 0.058;
  EXPECT_EQ(LayoutFlame(input, tree, options).frames.size(), 7u);
  options.min_width = 0.06;
  EXPECT_EQ(LayoutFlame(input, tree, options).frames.size(), 4u);
}

TEST_F(FlameLayoutTest, NoMinimumDrawsEveryFrame) {
  for (int i = 0; i < 20000; ++i) Add(prog_, 100, {work_, main_});
  const ExportInput input = Input();
  FlameLayoutOptions options;
  options.min_width = 0;
  const FlameLayout layout = LayoutFlame(input, BuildFlameTree(input), options);
  EXPECT_EQ(layout.frames.size(), 7u);
  EXPECT_EQ(layout.omitted, 0u);
}

TEST_F(FlameLayoutTest, IcicleFlipsLevelsRootAtTheTop) {
  const ExportInput input = Input();
  const StackTree tree = BuildFlameTree(input);
  FlameLayoutOptions options;
  const FlameLayout flame = LayoutFlame(input, tree, options);
  options.icicle = true;
  const FlameLayout icicle = LayoutFlame(input, tree, options);
  ASSERT_EQ(flame.frames.size(), icicle.frames.size());
  EXPECT_DOUBLE_EQ(flame.height, 4 * 16.0);
  EXPECT_DOUBLE_EQ(icicle.height, flame.height);
  for (size_t i = 0; i < flame.frames.size(); ++i) {
    const FlameFrame& f = flame.frames[i];
    const FlameFrame& g = icicle.frames[i];
    EXPECT_DOUBLE_EQ(f.y, (flame.max_depth - f.depth) * 16.0) << f.label;
    EXPECT_DOUBLE_EQ(g.y, g.depth * 16.0) << g.label;
    EXPECT_DOUBLE_EQ(f.x, g.x);
    EXPECT_DOUBLE_EQ(f.width, g.width);
  }
  EXPECT_DOUBLE_EQ(flame.frames[0].y, 3 * 16.0);  // the root at the bottom
  EXPECT_DOUBLE_EQ(icicle.frames[0].y, 0.0);
}

TEST_F(FlameLayoutTest, ColoursFollowTheKindAndTheNameAndCanBeOverridden) {
  // The same name and kind: the same colour, in every run.
  EXPECT_EQ(FrameColour(FrameKind::kUser, "main"), FrameColour(FrameKind::kUser, "main"));
  EXPECT_NE(FrameColour(FrameKind::kUser, "main"), FrameColour(FrameKind::kUser, "work"));
  for (const char* name : {"a", "main", "do_syscall_64", "x::y<int>()"}) {
    const Rgb user = FrameColour(FrameKind::kUser, name);
    EXPECT_GT(user.r, user.b) << name;  // warm
    const Rgb kernel = FrameColour(FrameKind::kKernel, name);
    EXPECT_GT(kernel.b, kernel.r) << name;  // blue
    const Rgb jit = FrameColour(FrameKind::kJit, name);
    EXPECT_GT(jit.g, jit.r) << name;  // green
    EXPECT_GT(jit.g, jit.b) << name;
    const Rgb inlined = FrameColour(FrameKind::kInlined, name);
    EXPECT_GT(inlined.g, inlined.r) << name;  // aqua
    EXPECT_GT(inlined.b, inlined.r) << name;
    const Rgb unknown = FrameColour(FrameKind::kUnknown, name);
    EXPECT_EQ(unknown.r, unknown.g) << name;  // grey
    EXPECT_EQ(unknown.g, unknown.b) << name;
  }

  const ExportInput input = Input();
  const StackTree tree = BuildFlameTree(input);
  FlameLayoutOptions options;
  options.colour = [this](const StackTree& t, uint32_t node) -> std::optional<Rgb> {
    if (t.node(node).function == work_) return Rgb{1, 2, 3};
    return std::nullopt;
  };
  auto frames = ByLabel(LayoutFlame(input, tree, options));
  EXPECT_EQ(frames.at("work").colour, (Rgb{1, 2, 3}));
  EXPECT_EQ(frames.at("main").colour, FrameColour(FrameKind::kUser, "main"));
}

// A million samples over 20000 distinct stacks (5 to 40 frames of 3000
// functions, a few stacks hot, most seen a handful of times; few shared
// prefixes, so worse than most real profiles): the frames under 0.1 px are
// cut, so the SVG stays some megabytes.
TEST(FlameLayoutScaleTest, AMillionSamplesGiveASmallSvg) {
  Recording recording;
  Profile& p = recording.profile;
  p.set_event_names({"cpu-clock"});
  p.set_dso_names({"/bin/big"});
  std::vector<uint32_t> functions;
  for (int i = 0; i < 3000; ++i) {
    functions.push_back(p.InternFunction(0, "function_" + std::to_string(i), false, true));
  }
  const uint32_t comm = p.InternComm("big");
  uint64_t state = 42;
  auto next = [&state] {  // a fixed LCG: the same profile every run
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  std::vector<std::vector<uint32_t>> stacks(20000);
  for (auto& stack : stacks) {
    // Outermost frames from a few choices, so stacks share prefixes.
    const size_t depth = 5 + next() % 36;
    for (size_t d = 0; d < depth; ++d) stack.push_back(functions[next() % (d < 3 ? 4 : 3000)]);
    std::reverse(stack.begin(), stack.end());  // leaf first
  }
  for (int i = 0; i < 1000000; ++i) {
    const uint64_t r = next() % 20000;
    ProfileSample s;
    s.comm = comm;
    s.period = 1;
    p.AddSample(s, stacks[r * r / 20000]);  // skewed to the first stacks
  }
  std::vector<std::string> warnings;
  auto input = BuildExportInput(recording, SampleFilter(SampleFilterOptions{}), {}, true, warnings);
  ASSERT_TRUE(input);
  const StackTree tree = BuildFlameTree(*input);
  const FlameLayout layout = LayoutFlame(*input, tree, {});
  const auto start = std::chrono::steady_clock::now();
  const std::string svg = SvgExporter().Export(*input).value();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(layout.total, 1000000u);
  EXPECT_GT(tree.nodes().size(), 100000u);
  EXPECT_GT(layout.omitted, 0u);
  // Every frame drawn would be 293k frames, some 45 MB.
  EXPECT_LT(layout.frames.size() * 5, tree.nodes().size());
  EXPECT_LT(svg.size(), 8u << 20);
  std::printf(
      "[ measured ] %zu tree nodes, %zu frames drawn, %zu cut, %zu bytes of SVG in %.2f s\n",
      tree.nodes().size(), layout.frames.size(), layout.omitted, svg.size(), took.count());
}

TEST(XmlTextTest, EscapesReservedCharactersAndReplacesWhatXmlCannotHold) {
  EXPECT_EQ(XmlEscape("operator<<(a&b, \"c\", 'd')>"),
            "operator&lt;&lt;(a&amp;b, &quot;c&quot;, &#39;d&#39;)&gt;");
  EXPECT_EQ(XmlEscape("tab\tline\n"), "tab\tline\n");
  EXPECT_EQ(XmlEscape("bell\x07"), "bell\xEF\xBF\xBD");
  EXPECT_EQ(XmlEscape("caf\xC3\xA9 \xE2\x82\xAC"), "caf\xC3\xA9 \xE2\x82\xAC");  // é €
  EXPECT_EQ(XmlEscape("bad\xFF!"), "bad\xEF\xBF\xBD!");
  EXPECT_EQ(XmlEscape("cut\xC3"), "cut\xEF\xBF\xBD");                            // a torn character
  EXPECT_EQ(XmlEscape("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong NUL
  EXPECT_EQ(XmlEscape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(Utf8Prefix("caf\xC3\xA9s", 4), "caf\xC3\xA9");
  EXPECT_EQ(Utf8Prefix("ab", 5), "ab");
  EXPECT_EQ(Utf8Length("caf\xC3\xA9"), 4u);
}

TEST_F(FlameLayoutTest, SvgEscapesNamesAndFitsLabelsToTheirFrames) {
  const uint32_t op =
      recording_.profile.InternFunction(2, "operator<<(std::ostream&, Thing const&)", false, true);
  for (int i = 0; i < 5; ++i) Add(prog_, 100, {op, main_});
  const ExportInput input = Input();
  const std::string svg = SvgExporter().Export(input).value();
  EXPECT_THAT(svg, HasSubstr("operator&lt;&lt;(std::ostream&amp;, Thing const&amp;)"));
  EXPECT_THAT(svg, Not(HasSubstr("operator<<")));
  EXPECT_THAT(svg, HasSubstr("<text id=\"title\" x=\"600\" y=\"24\" text-anchor=\"middle\">"
                             "Flame graph of cpu-clock: 10 samples</text>"));
  EXPECT_THAT(svg, HasSubstr("(command line not recorded)"));
  // jitted: 1 of 10 samples, 118 px: "jitted" fits whole.
  EXPECT_THAT(svg, HasSubstr(">jitted</text>"));
  // A frame too narrow for three characters has no label; a wider one is
  // cut with "..": 1180 px / 10000 samples a frame.
  FlameLayoutOptions options;
  const StackTree tree = BuildFlameTree(input);
  FlameLayout layout = LayoutFlame(input, tree, options);
  for (FlameFrame& f : layout.frames) {
    if (f.label == "jitted") f.width = 20;         // (20 - 6) / 7.08: 1 character
    if (f.label == "other") f.width = 50;          // 6 characters: "oth.." would be 5; "other" fits
    if (f.label == "do_syscall_64") f.width = 60;  // 7 characters: "do_sy.."
  }
  FlameSvgText text{"t", "s", "samples"};
  text.frame_note = [](const FlameFrame& f) {
    return f.label == "main" ? std::string("+5.00% against <base>") : std::string();
  };
  const std::string drawn = WriteFlameSvg(layout, options, text);
  EXPECT_THAT(drawn, HasSubstr("<title>main\n/bin/prog (user)\n9 samples, 90.00%\n"
                               "+5.00% against &lt;base&gt;</title>"));
  EXPECT_THAT(drawn, HasSubstr("<title>work\n/bin/prog (user)\n3 samples, 30.00%</title>"));
  EXPECT_THAT(drawn, Not(HasSubstr(">jitted</text>")));
  EXPECT_THAT(drawn, HasSubstr(">other</text>"));
  EXPECT_THAT(drawn, HasSubstr(">do_sy..</text>"));
}

}  // namespace
}  // namespace sample::report
