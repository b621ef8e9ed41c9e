// Tests of --format html over the golden recordings (tests/golden): the
// JSON the page embeds, against a golden, for a filtered export (it must
// hold exactly the samples the same filters keep in the folded export), and
// the page itself in headless Chromium: opened as file://...#selftest, the
// page's own script (report/html/selftest.js) checks the drawn flame graph,
// the search (compute_ten's share, compared here with the text report's),
// a click's zoom, the annotate panel it opens (shares adding up to 100, the
// hottest instruction highlighted, Escape and the close button, a
// function left out saying why) and the absence of errors, and writes the
// results into the DOM that --dump-dom prints. A screenshot is kept as an
// artifact under build/tests/html/. Skipped, with the reason, without Chromium.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/golden/json_check.h"
#include "tests/golden/run_in_dir.h"

namespace sample {
namespace {

using sample::testing::RunResult;

using golden::IsValidJson;

const std::string kGoldenDir = GOLDEN_DIR;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kArtifacts = ARTIFACT_DIR;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs argv in the golden directory; standard output captured, standard
// error discarded (Chromium's is noisy), killed after `timeout_s`.
RunResult RunIn(std::vector<std::string> args, int timeout_s = 120) {
  args.insert(args.begin(), {"timeout", std::to_string(timeout_s)});
  return sample::testing::RunInDir(kGoldenDir, args, /*keep_err=*/false);
}

// The text between `begin` and the next `end` after it ("" when absent).
std::string Between(const std::string& text, const std::string& begin, const std::string& end) {
  const size_t from = text.find(begin);
  if (from == std::string::npos) return "";
  const size_t to = text.find(end, from + begin.size());
  return to == std::string::npos ? "" : text.substr(from + begin.size(), to - from - begin.size());
}

std::string EmbeddedData(const std::string& page) {
  return Between(page, "<script type=\"application/json\" id=\"sample-data\">\n", "</script>");
}

// Writes split.data's page (with `filters`) to build/tests/html/NAME.html.
std::string ExportPage(const std::string& name, std::vector<std::string> filters = {}) {
  std::filesystem::create_directories(kArtifacts);
  const std::string path = kArtifacts + "/" + name + ".html";
  std::vector<std::string> args = {kReport, "-i", "split.data", "--symfs", "symfs", "-o", path};
  args.insert(args.end(), filters.begin(), filters.end());
  const RunResult run = RunIn(args);
  EXPECT_EQ(run.status, 0);
  return path;
}

const std::vector<std::string> kFilters = {"--pid",  "2243",    "--cpu",       "1",
                                           "--time", "10%-60%", "--max-stack", "4"};

TEST(HtmlDataTest, FilteredExportMatchesTheGoldenAndHoldsOnlyKeptSamples) {
  const std::string data = EmbeddedData(ReadFile(ExportPage("split_filtered", kFilters)));
  ASSERT_FALSE(data.empty());
  std::string error;
  EXPECT_TRUE(IsValidJson(data, &error)) << error;

  // The folded export of the same filters counts the kept samples.
  std::vector<std::string> folded = {kReport, "-i",       "split.data", "--symfs",
                                     "symfs", "--format", "folded"};
  folded.insert(folded.end(), kFilters.begin(), kFilters.end());
  const RunResult run = RunIn(folded);
  ASSERT_EQ(run.status, 0);
  uint64_t kept = 0;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);)
    kept += std::stoull(line.substr(line.rfind(' ')));
  ASSERT_GT(kept, 0u);
  ASSERT_LT(kept, 302u);  // the filters narrow split.data's 302 samples
  EXPECT_NE(data.find(",\"samples\":" + std::to_string(kept) + ",\"period\":"), std::string::npos)
      << "expected " << kept << " kept samples in\n"
      << data;
  EXPECT_NE(data.find("\"nodes\":[\n-1,-1," + std::to_string(kept) + ",0,"), std::string::npos);
  EXPECT_EQ(data.find("\"taskset\""), std::string::npos);  // pid 2243 never ran taskset's code

  const std::string expected_path = kGoldenDir + "/expected/html_data_filtered.json";
  const char* update = std::getenv("SAMPLE_GOLDEN_UPDATE");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(expected_path, std::ios::binary) << data;
    GTEST_SKIP() << "rewrote " << expected_path;
  }
  EXPECT_EQ(data, ReadFile(expected_path))
      << "differs from " << expected_path << " (SAMPLE_GOLDEN_UPDATE=1 rewrites it)";
}

// Debian's chromium, or $SAMPLE_CHROMIUM; "" when there is none.
std::string Chromium() {
  if (const char* given = std::getenv("SAMPLE_CHROMIUM")) return given;
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// Chromium headless with no network: in a network namespace of its own
// when we may make one (root), and with every host name unresolvable.
std::vector<std::string> Headless(const std::string& chromium) {
  std::vector<std::string> args;
  if (RunIn({"unshare", "--net", "true"}, 10).status == 0) args = {"unshare", "--net"};
  args.insert(args.end(),
              {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-extensions", "--disable-sync", "--disable-background-networking",
               "--host-resolver-rules=MAP * ~NOTFOUND",
               "--user-data-dir=" + kArtifacts + "/chromium-profile"});
  return args;
}

// compute_ten's Children% in the text report of split.data.
double TextReportShare(const std::string& function) {
  const RunResult run = RunIn({kReport, "-i", "split.data", "--symfs", "symfs", "--sort", "sym"});
  std::smatch m;
  const std::regex line("\\s*([0-9.]+)%\\s+[0-9.]+%\\s+\\[\\.\\] " + function + "\\n");
  return std::regex_search(run.out, m, line) ? std::stod(m[1]) : -1;
}

TEST(HtmlPageTest, SelfTestPassesInHeadlessChromium) {
  const std::string chromium = Chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it "
                    "with SAMPLE_SETUP_TESTS=1)";
  const std::string page = ExportPage("split");
  std::vector<std::string> args = Headless(chromium);
  args.push_back("--dump-dom");
  args.push_back("file://" + page + "#selftest");
  const RunResult run = RunIn(args);
  ASSERT_EQ(run.status, 0) << run.out;
  std::string result = Between(run.out, "<pre id=\"selftest\">", "</pre>");
  ASSERT_FALSE(result.empty()) << "no self-test result in the dumped DOM:\n"
                               << run.out.substr(0, 2000);
  result = std::regex_replace(result, std::regex("&lt;"), "<");
  result = std::regex_replace(result, std::regex("&gt;"), ">");
  result = std::regex_replace(result, std::regex("&amp;"), "&");
  std::string error;
  ASSERT_TRUE(IsValidJson(result, &error)) << error << "\n" << result;
  for (const char* check :
       {"drawn compute_sixty", "drawn compute_thirty", "drawn compute_ten", "table rows",
        "search finds compute_ten", "click zooms", "click selects", "annotate opens",
        "annotate shares add up", "annotate hottest", "annotate source lines", "escape closes",
        "table row opens", "not annotated says why", "close button closes", "no errors"}) {
    EXPECT_NE(result.find(std::string("{\"name\":\"") + check + "\",\"pass\":true"),
              std::string::npos)
        << check << " failed or missing in " << result;
  }
  EXPECT_NE(result.find("\"ok\":true"), std::string::npos) << result;
  EXPECT_NE(result.find("\"errors\":[]"), std::string::npos) << result;

  std::smatch m;
  ASSERT_TRUE(std::regex_search(result, m, std::regex("\"share\":([0-9.eE+-]+)"))) << result;
  const double expected = TextReportShare("compute_ten");
  ASSERT_GT(expected, 5.0);  // ~10% of split's samples
  EXPECT_NEAR(std::stod(m[1]), expected, 0.006) << "the text report says " << expected << "%";
}

// Filters that keep nothing: the page opens, says so and logs no error.
TEST(HtmlPageTest, AnEmptyExportOpensWithoutErrors) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  std::vector<std::string> args = Headless(chromium);
  args.push_back("--dump-dom");
  args.push_back("file://" + ExportPage("split_empty", {"--pid", "1"}) + "#selftest");
  const RunResult run = RunIn(args);
  ASSERT_EQ(run.status, 0);
  EXPECT_NE(run.out.find("0 samples, 0 frames; width is samples (no samples)"), std::string::npos)
      << run.out.substr(0, 3000);
  EXPECT_NE(run.out.find("{\"name\":\"no errors\",\"pass\":true"), std::string::npos)
      << Between(run.out, "<pre id=\"selftest\">", "</pre>");
  EXPECT_NE(run.out.find("\"errors\":[]"), std::string::npos);
}

TEST(HtmlPageTest, ScreenshotIsKeptAsAnArtifact) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  const std::string page = ExportPage("split");
  const std::string png = kArtifacts + "/split.png";
  std::filesystem::remove(png);
  std::vector<std::string> args = Headless(chromium);
  args.insert(args.end(), {"--screenshot=" + png, "--window-size=1400,1000", "file://" + page});
  ASSERT_EQ(RunIn(args).status, 0);
  const std::string bytes = ReadFile(png);
  ASSERT_GT(bytes.size(), 10000u) << png;
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
}

}  // namespace
}  // namespace sample
