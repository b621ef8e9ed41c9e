// The SVG flame graph of a real recording (split.data: main -> run_round ->
// compute_sixty/thirty/ten, 60/30/10% of the time), read back with an XML
// parser (svg_frames.py, python3): the expected frames at the expected
// places, widths from the sample counts the text report gives for the same
// samples, the title with the event and the recorded command line, names
// escaped, and filters keeping only the kept samples. Then, when chromium
// is installed, the file is opened in a headless browser to prove that its
// script runs: a search and a zoom given on the URL change the drawing.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/golden/run_in_dir.h"

namespace sample::golden {
namespace {

using sample::testing::RunResult;

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kGoldenDir = GOLDEN_DIR;
const std::string kReport = SAMPLE_REPORT_PATH;


std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `argv` (found on PATH) in the golden directory. 127: the program is
// not there.
RunResult RunIn(const std::vector<std::string>& argv) {
  return sample::testing::RunInDir(kGoldenDir, argv);
}

std::vector<std::string> Split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  return out;
}

// The tab-separated fields of a line of svg_frames.py, the empty ones too:
// Split drops an empty last field, and a frame whose title is empty is
// still a frame.
std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
    out.push_back(line.substr(start, tab - start));
  }
  out.push_back(line.substr(start));
  return out;
}

struct Frame {
  double x = 0, y = 0, width = 0;
  uint64_t weight = 0;
  std::string label, title;
  std::string path;  // "all;split;...;name": its ancestors' names and its own
};

struct Svg {
  std::string bytes;
  std::string title;
  std::map<std::string, std::string> texts;  // by id
  uint64_t total = 0;
  std::vector<Frame> frames;  // document order
  std::map<std::string, size_t> by_path;
};

// The first line of a frame's title: its name.
std::string NameOf(const Frame& f) { return f.title.substr(0, f.title.find(" | ")); }

// `extra` arguments to sample-report -i split.data -o FILE.svg, read back.
Svg ExportSvg(const std::vector<std::string>& extra, const std::string& data = "split.data") {
  const std::string path = "/tmp/svg-test-" + std::to_string(getpid()) + ".svg";
  std::vector<std::string> argv = {kReport, "-i", data, "--symfs", "symfs", "-o", path};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Svg svg;
  const RunResult report = RunIn(argv);
  EXPECT_EQ(report.status, 0) << report.out;
  svg.bytes = ReadFile(path);
  const RunResult parsed = RunIn({"python3", kGoldenDir + "/svg_frames.py", path});
  unlink(path.c_str());
  if (parsed.status == 127) return svg;  // the caller skips
  EXPECT_EQ(parsed.status, 0) << parsed.out;
  std::vector<std::string> names_at_depth;
  // Each line is one of the kinds svg_frames.py prints, with its number of
  // fields: anything else fails, since a frame dropped here would shift the
  // paths of every frame after it.
  static const std::map<std::string, size_t> kFieldCounts = {
      {"title", 2}, {"text", 3}, {"total", 3}, {"frame", 7}};
  const std::vector<std::string> lines = Split(parsed.out, '\n');
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::vector<std::string> f = Fields(lines[n]);
    const auto kind = kFieldCounts.find(f[0]);
    if (kind == kFieldCounts.end() || f.size() != kind->second) {
      ADD_FAILURE() << "svg_frames.py line " << n + 1 << " is not a title, text, total or frame "
                    << "line of the right length: '" << lines[n] << "'";
      continue;
    }
    if (f[0] == "title") svg.title = f[1];
    if (f[0] == "text") svg.texts[f[1]] = f[2];
    if (f[0] == "total") svg.total = std::stoull(f[1]);
    if (f[0] != "frame") continue;
    Frame frame{std::stod(f[1]), std::stod(f[2]), std::stod(f[3]), std::stoull(f[4]), f[5], f[6]};
    // Levels are 16 px apart, counted from the root's (the first frame).
    const double root_y = svg.frames.empty() ? frame.y : svg.frames[0].y;
    const auto depth = static_cast<size_t>(std::lround(std::fabs(frame.y - root_y) / 16));
    names_at_depth.resize(depth + 1);
    names_at_depth[depth] = NameOf(frame);
    for (size_t d = 0; d <= depth; ++d) frame.path += (d ? ";" : "") + names_at_depth[d];
    svg.by_path[frame.path] = svg.frames.size();
    svg.frames.push_back(std::move(frame));
  }
  return svg;
}

// Samples per "comm;symbol" in the text report (children: every sample
// whose stack holds the symbol), with the same filters.
std::map<std::string, uint64_t> TextCounts(const std::vector<std::string>& filters,
                                           uint64_t* total) {
  std::vector<std::string> argv = {kReport,    "-i",         "split.data", "--symfs",
                                   "symfs",    "--children", "-n",         "--sort",
                                   "comm,sym", "-g",         "none"};
  argv.insert(argv.end(), filters.begin(), filters.end());
  const RunResult run = RunIn(argv);
  EXPECT_EQ(run.status, 0) << run.out;
  std::map<std::string, uint64_t> counts;
  for (const std::string& line : Split(run.out, '\n')) {
    std::istringstream words(line);
    std::string children, self, samples, comm, kind, symbol;
    if (line.starts_with("# Samples: ")) *total = std::stoull(line.substr(11));
    if (line.empty() || line.starts_with("#")) continue;
    // A row that does not parse would drop its counts without a word.
    if (!(words >> children >> self >> samples >> comm >> kind)) {
      ADD_FAILURE() << "not a row of the text report: '" << line << "'";
      continue;
    }
    std::getline(words >> std::ws, symbol);
    counts[comm + ";" + symbol] = std::stoull(samples);
  }
  return counts;
}

const char* kSplitPath = "all;split;[unknown] 0x27249;main;run_round";

class SvgExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunIn({"python3", "-c", "import xml.etree.ElementTree"}).status != 0) {
      GTEST_SKIP() << "python3 with xml.etree is not installed (scripts/setup.sh installs it)";
    }
  }
};

TEST_F(SvgExportTest, FramesAndWidthsFollowTheTextReportsCounts) {
  const Svg svg = ExportSvg({});
  ASSERT_FALSE(svg.frames.empty()) << svg.bytes.substr(0, 2000);
  uint64_t total = 0;
  const auto counts = TextCounts({}, &total);
  ASSERT_EQ(total, 302u);
  EXPECT_EQ(svg.total, total);
  ASSERT_EQ(svg.frames[0].path, "all");
  EXPECT_DOUBLE_EQ(svg.frames[0].width, 1180);
  const std::string split = kSplitPath;
  ASSERT_EQ(svg.by_path.count(split), 1u) << svg.bytes;
  const Frame& round = svg.frames[svg.by_path.at(split)];
  EXPECT_EQ(round.weight, counts.at("split;run_round"));
  const std::map<std::string, double> share = {
      {"compute_sixty", 0.6}, {"compute_thirty", 0.3}, {"compute_ten", 0.1}};
  for (const auto& [name, expected_share] : share) {
    SCOPED_TRACE(name);
    ASSERT_EQ(svg.by_path.count(split + ";" + name), 1u);
    const Frame& f = svg.frames[svg.by_path.at(split + ";" + name)];
    const uint64_t samples = counts.at("split;" + name);
    EXPECT_EQ(f.weight, samples);
    EXPECT_THAT(f.title, HasSubstr(std::to_string(samples) + " samples"));
    EXPECT_THAT(f.title, HasSubstr("split (user)"));  // the DSO and kind
    // 1180 px for the 302 samples, 2 decimals.
    EXPECT_NEAR(f.width, 1180.0 * samples / total, 0.006);
    // 60/30/10% of run_round's width, within two samples of rounding.
    EXPECT_NEAR(f.width / round.width, expected_share, 2.0 / round.weight);
    EXPECT_GE(f.x, round.x);
    EXPECT_LE(f.x + f.width, round.x + round.width + 0.01);
  }
  EXPECT_EQ(svg.frames[svg.by_path.at(split + ";compute_sixty")].label, "compute_sixty");
  EXPECT_EQ(svg.by_path.count("all;taskset"), 1u);
}

TEST_F(SvgExportTest, TitleHoldsTheEventAndTheCommandLineEscaped) {
  const Svg svg = ExportSvg({});
  ASSERT_FALSE(svg.frames.empty());
  const RunResult header = RunIn({kReport, "-i", "split.data", "--header-only"});
  const size_t line = header.out.find("# cmdline ");
  ASSERT_NE(line, std::string::npos) << header.out;
  const size_t at = header.out.find(": ", line) + 2;
  const std::string cmdline = header.out.substr(at, header.out.find('\n', at) - at);
  ASSERT_THAT(cmdline, HasSubstr(" & "));  // the case worth escaping
  EXPECT_EQ(svg.texts.at("subtitle"), cmdline);
  EXPECT_THAT(svg.texts.at("title"), HasSubstr("cpu-clock"));
  EXPECT_THAT(svg.title, HasSubstr("cpu-clock"));
  EXPECT_THAT(svg.title, HasSubstr(cmdline));
  EXPECT_THAT(svg.bytes, HasSubstr("0.15 &amp; taskset"));
  EXPECT_THAT(svg.bytes, Not(HasSubstr("0.15 & taskset")));
}

TEST_F(SvgExportTest, FiltersKeepOnlyTheKeptSamples) {
  const std::vector<std::string> filters = {"--comm", "split",  "--pid",
                                            "2243",   "--time", "10%-60%"};
  const Svg svg = ExportSvg(filters);
  ASSERT_FALSE(svg.frames.empty());
  uint64_t total = 0;
  const auto counts = TextCounts(filters, &total);
  ASSERT_GT(total, 0u);
  ASSERT_LT(total, 302u);
  EXPECT_EQ(svg.total, total);
  EXPECT_EQ(svg.frames[0].weight, total);
  EXPECT_THAT(svg.texts.at("title"), HasSubstr(std::to_string(total) + " samples"));
  EXPECT_EQ(svg.by_path.count("all;taskset"), 0u);
  for (const Frame& f : svg.frames) EXPECT_TRUE(f.path.starts_with("all;split") || f.path == "all");
  const Frame& sixty = svg.frames[svg.by_path.at(std::string(kSplitPath) + ";compute_sixty")];
  EXPECT_EQ(sixty.weight, counts.at("split;compute_sixty"));
  EXPECT_NEAR(sixty.width, 1180.0 * sixty.weight / total, 0.006);
}

TEST_F(SvgExportTest, DiffColoursEachPathByItsChangeWithNewWidths) {
  // Against itself: every path unchanged, grey, widths as without --diff.
  const Svg plain = ExportSvg({});
  const Svg same = ExportSvg({"--diff", "split.data"});
  ASSERT_FALSE(same.frames.empty());
  ASSERT_EQ(same.frames.size(), plain.frames.size());
  EXPECT_THAT(same.texts.at("title"), HasSubstr("Differential flame graph of cpu-clock"));
  for (size_t i = 0; i < same.frames.size(); ++i) {
    EXPECT_EQ(same.frames[i].width, plain.frames[i].width);
    EXPECT_THAT(same.frames[i].title, HasSubstr("+0.00 points against the baseline"));
  }
  EXPECT_THAT(same.bytes, HasSubstr("fill=\"#e6e6e6\""));
  EXPECT_THAT(same.bytes, Not(HasSubstr("fill=\"#ff")));

  // group.data records split without call chains: its samples sit on
  // split;compute_* directly, so split.data's deep paths are all new (red)
  // and the baseline's own paths are counted as missing.
  const Svg diff = ExportSvg({"--diff", "group.data"});
  ASSERT_FALSE(diff.frames.empty());
  const Frame& sixty = diff.frames[diff.by_path.at(std::string(kSplitPath) + ";compute_sixty")];
  EXPECT_EQ(sixty.width, plain.frames[plain.by_path.at(std::string(kSplitPath) +
                                                       ";compute_sixty")].width);
  EXPECT_THAT(sixty.title, HasSubstr("+59.60 points against the baseline (0 samples there)"));
  EXPECT_THAT(diff.texts.at("subtitle"), HasSubstr("baseline samples on paths this recording lacks"));
}

TEST_F(SvgExportTest, IcicleDrawsTheRootOnTop) {
  const Svg flame = ExportSvg({});
  const Svg icicle = ExportSvg({"--icicle"});
  ASSERT_FALSE(flame.frames.empty());
  ASSERT_EQ(icicle.frames.size(), flame.frames.size());
  for (const Frame& f : icicle.frames) EXPECT_GE(f.y, icicle.frames[0].y) << f.path;
  for (const Frame& f : flame.frames) EXPECT_LE(f.y, flame.frames[0].y) << f.path;
  EXPECT_EQ(icicle.by_path.count(std::string(kSplitPath) + ";compute_sixty"), 1u);
  EXPECT_THAT(icicle.texts.at("title"), HasSubstr("Icicle graph"));
}

// The value of attribute `name` in the first element that has
// `marker`, from the DOM chromium dumps.
std::string Attribute(const std::string& dom, const std::string& marker, const std::string& name) {
  const size_t at = dom.find(marker);
  if (at == std::string::npos) return "";
  const size_t tag_end = dom.find('>', dom.find("<rect", at));
  const std::string tag = dom.substr(at, tag_end - at);
  const size_t value = tag.find(" " + name + "=\"");
  if (value == std::string::npos) return "";
  const size_t begin = value + name.size() + 3;
  return tag.substr(begin, tag.find('"', begin) - begin);
}

TEST_F(SvgExportTest, ItsScriptSearchesAndZoomsInAHeadlessBrowser) {
  if (RunIn({"chromium", "--version"}).status == 127) {
    GTEST_SKIP() << "chromium is not installed (SAMPLE_SETUP_TESTS=1 scripts/setup.sh installs "
                    "it)";
  }
  const Svg svg = ExportSvg({});
  ASSERT_FALSE(svg.frames.empty());
  // The first frame above compute_sixty: 1 sample, too narrow for a label.
  const std::string sixty = std::string(kSplitPath) + ";compute_sixty";
  const size_t target = svg.by_path.at(sixty + ";[unknown] 0xcf438");
  ASSERT_EQ(svg.frames[target + 1].label, "");
  const std::string path = "/tmp/svg-test-browser-" + std::to_string(getpid()) + ".svg";
  std::ofstream(path, std::ios::binary) << svg.bytes;
  const RunResult run = RunIn(
      {"timeout", "120", "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
       "file://" + path + "?s=(main|_ten|_sixty)$&z=" + std::to_string(target)});
  unlink(path.c_str());
  ASSERT_EQ(run.status, 0) << run.out;
  // The script ran to its end...
  EXPECT_THAT(run.out.substr(0, run.out.find('>')), HasSubstr("data-ready=\"1\""));
  // ...searched: main's 300 samples, compute_sixty's and compute_ten's
  // inside them not counted twice...
  EXPECT_THAT(run.out, HasSubstr(">Matched: 99.34% (300 of 302 samples)</text>"));
  EXPECT_EQ(Attribute(run.out, "<title>main\n", "fill"), "#e600e6");
  EXPECT_EQ(Attribute(run.out, "<title>compute_ten\n", "fill"), "#e600e6");
  EXPECT_NE(Attribute(run.out, "<title>compute_thirty\n", "fill"), "#e600e6");
  EXPECT_NE(Attribute(run.out, "<title>compute_thirty\n", "fill"), "");
  // ...and zoomed into the frame: it and its callees full width (labels
  // made for the frames that had none), its callers too, faded, the rest
  // hidden, "Reset zoom" shown.
  EXPECT_EQ(Attribute(run.out, "<title>entry_SYSCALL_64_after_hwframe\n", "width"), "1180.00");
  EXPECT_THAT(run.out, HasSubstr(">entry_SYSCALL_64_after_hwframe</text>"));
  EXPECT_THAT(run.out, HasSubstr(">_raw_spin_unlock_irqrestore</text>"));
  EXPECT_EQ(Attribute(run.out, "<title>compute_sixty\n", "width"), "1180.00");
  EXPECT_EQ(Attribute(run.out, "<title>run_round\n", "width"), "1180.00");
  EXPECT_THAT(run.out,
              HasSubstr("<g class=\"f parent\" data-w=\"180\" style=\"\"><title>compute_sixty"));
  EXPECT_THAT(run.out, HasSubstr("style=\"display: none;\"><title>compute_ten"));
  EXPECT_THAT(run.out, HasSubstr("style=\"\">Reset zoom</text>"));
}

}  // namespace
}  // namespace sample::golden
