// Tests for --format html's embedded data (html_data.h: the exact JSON for
// a small profile, escaping, filters, recursion counted once) and for the
// page around it (html_export.h: one data block, the network policy, no
// URL anywhere). The page's behaviour in a browser is tested by
// tests/e2e/html_page_test.cc.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/export/export_input.h"
#include "report/export/html_data.h"
#include "report/export/html_export.h"
#include "report/export/xml_text.h"
#include "report/json/json_writer.h"

namespace sample::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

class HtmlExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Profile& p = recording_.profile;
    p.set_event_names({"cpu-clock"});
    p.set_dso_names({"[unknown]", "[kernel.kallsyms]", "/bin/p<r>og"});
    main_ = p.InternFunction(2, "main", false, true);
    op_ = p.InternFunction(2, "operator<<(a&, \"b\")</script>", false, true);
    rec_ = p.InternFunction(2, "rec", false, true);
    sys_ = p.InternFunction(1, "do_syscall_64", true, true);
    const uint32_t prog = p.InternComm("prog");
    const uint32_t other = p.InternComm("other");
    Add(prog, 10, {op_, main_});
    Add(prog, 10, {rec_, rec_, main_});
    Add(prog, 11, {sys_, op_, main_});
    Add(other, 12, {main_});
  }
  void Add(uint32_t comm, uint32_t pid, std::vector<uint32_t> frames) {
    ProfileSample s;
    s.comm = comm;
    s.pid = s.tid = pid;
    s.period = 1000 + pid;
    s.time = pid;
    recording_.profile.AddSample(s, frames);
  }
  ExportInput Build(SampleFilterOptions filter = {}) {
    std::vector<std::string> warnings;
    auto input = BuildExportInput(recording_, SampleFilter(std::move(filter)), {}, false, warnings);
    EXPECT_TRUE(input) << input.error().message;
    return *input;
  }

  Recording recording_;
  uint32_t main_ = 0, op_ = 0, rec_ = 0, sys_ = 0;
};

TEST_F(HtmlExportTest, DataHoldsFunctionsTableAndPreorderTree) {
  HeaderView header;
  header.cmdline = "sample-record -- sh -c 'a </script> & b'";
  header.hostname = "vm";
  header.samples = 4;
  header.events.emplace_back();
  header.events.back().name = "cpu-clock";
  header.events.back().samples = 4;
  const std::string data = BuildHtmlData(Build(), header);
  EXPECT_EQ(data, R"({"version":1,
"header":{"command":"sample-record -- sh -c 'a \u003c/script\u003e \u0026 b'","host":"vm","os":"","arch":"","cpus":"","recorder":"","date":"","duration_s":0.000,"samples":4,"lost":0,"finalized":false,"events":[["cpu-clock",4]]},
"weight":"samples","icicle":false,
"funcs":[
["main","/bin/p\u003cr\u003eog","user"],
["operator\u003c\u003c(a\u0026, \"b\")\u003c/script\u003e","/bin/p\u003cr\u003eog","user"],
["do_syscall_64","[kernel.kallsyms]","kernel"],
["rec","/bin/p\u003cr\u003eog","user"],
["other","","comm"],
["prog","","comm"]],
"sections":[
{"name":"cpu-clock","samples":4,"period":4043,
"table":[
[0,1,4],
[1,1,2],
[2,1,1],
[3,1,1]],
"nodes":[
-1,-1,4,0,
4,0,1,0,
0,1,1,1,
5,0,3,0,
0,3,3,0,
1,4,2,1,
2,5,1,1,
3,4,1,0,
3,7,1,1]}]}
)");
}

TEST_F(HtmlExportTest, FiltersKeepOnlyTheirSamplesAndPeriodWeighs) {
  SampleFilterOptions pid10;
  pid10.pids = {10};
  ExportInput input = Build(pid10);
  std::string data = BuildHtmlData(input, HeaderView{});
  EXPECT_THAT(data, HasSubstr("\"samples\":2,\"period\":2020,"));
  EXPECT_THAT(data, HasSubstr("\"nodes\":[\n-1,-1,2,0,\n3,0,2,0,"));
  EXPECT_THAT(data, Not(HasSubstr("\"other\"")));
  EXPECT_THAT(data, Not(HasSubstr("do_syscall_64")));

  input.options.weight = ExportWeight::kPeriod;
  data = BuildHtmlData(input, HeaderView{});
  EXPECT_THAT(data, HasSubstr("\"weight\":\"period\""));
  EXPECT_THAT(data, HasSubstr("\"nodes\":[\n-1,-1,2020,0,"));
}

TEST(HtmlDataTest, EveryEventWithSamplesGetsItsSection) {
  Recording recording;
  Profile& p = recording.profile;
  p.set_event_names({"cpu-clock", "page-faults", "task-clock"});
  p.set_dso_names({"/bin/prog"});
  const uint32_t f = p.InternFunction(0, "f", false, true);
  const uint32_t g = p.InternFunction(0, "g", false, true);
  const uint32_t comm = p.InternComm("prog");
  for (uint32_t event : {0u, 2u, 2u}) {
    ProfileSample s;
    s.event = event;
    s.comm = comm;
    s.period = 10;
    const std::vector<uint32_t> frames = {event == 0 ? f : g};
    p.AddSample(s, frames);
  }
  std::vector<std::string> warnings;
  auto input = BuildExportInput(recording, SampleFilter(), {}, false, warnings);
  ASSERT_TRUE(input) << input.error().message;
  const std::string data = BuildHtmlData(*input, HeaderView{});
  EXPECT_THAT(data, HasSubstr("\n{\"name\":\"cpu-clock\",\"samples\":1,\"period\":10,\n"));
  EXPECT_THAT(data, HasSubstr(",\n{\"name\":\"task-clock\",\"samples\":2,\"period\":20,\n"));
  EXPECT_THAT(data, Not(HasSubstr("page-faults\",\"samples\"")));
  EXPECT_TRUE(warnings.empty());
}

TEST(HtmlEscapeTest, ScriptSafeJsonAndHtmlText) {
  std::string out;
  // The JSON writer's one escaper, with what a <script> element needs too.
  AppendJsonString(out, "a\"\\\n\x01<>&\x7f\xe2\x80\xa8\xe2\x80\xa9\xc3\xa9\xff",
                   JsonStringUse::kInScript);
  EXPECT_EQ(out, R"("a\"\\\n\u0001\u003c\u003e\u0026\u007f\u2028\u2029)"
                 "\xc3\xa9"
                 R"(\\xff")");
  // Outside a script, only what JSON itself needs.
  EXPECT_EQ(JsonQuoted("<a>&\xe2\x80\xa8"), "\"<a>&\xe2\x80\xa8\"");
  // The page's <title> is escaped as the SVG's texts are (xml_text.h).
  EXPECT_EQ(XmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST_F(HtmlExportTest, PageIsSelfContainedAndForbidsTheNetwork) {
  recording_.metadata = {{"cmdline", "rec <b>&</b>"}};
  HtmlExporter exporter;
  auto page = exporter.Export(Build());
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_THAT(*page, HasSubstr("<meta http-equiv=\"Content-Security-Policy\" "
                               "content=\"default-src 'none'; "));
  EXPECT_THAT(*page, HasSubstr("<title>sample report: rec &lt;b&gt;&amp;&lt;/b&gt;</title>"));
  EXPECT_EQ(Count(*page, "<script"), 2u);  // the data and the script
  EXPECT_EQ(Count(*page, "</script"), 2u);
  EXPECT_EQ(Count(*page, "id=\"sample-data\""), 1u);
  for (const char* remote : {"http:", "https:", "//cdn", "src=", "href=", "url(", "@import",
                             "XMLHttpRequest", "fetch(", "WebSocket", "<link", "<img"}) {
    EXPECT_THAT(*page, Not(HasSubstr(remote))) << remote;
  }
  EXPECT_THAT(*page, Not(HasSubstr("operator<<")));
}

}  // namespace
}  // namespace sample::report

namespace sample::report {
namespace {

// The page's function table has the flat profile's rows: the function
// holding each address, its inlined calls counted as it.
TEST(HtmlTableTest, InlinedCallsCountAsTheFunctionHoldingThem) {
  Recording recording;
  Profile& p = recording.profile;
  p.set_event_names({"cpu-clock"});
  p.set_dso_names({"[unknown]", "[kernel.kallsyms]", "/bin/prog"});
  const uint32_t main = p.InternFunction(2, "main", false, true);
  const uint32_t outer = p.InternFunction(2, "outer", false, true);
  const uint32_t spin = p.InternFunction(2, "spin", false, true, /*inlined=*/true);
  ProfileSample s;
  s.comm = p.InternComm("prog");
  s.period = 1;
  for (int i = 0; i < 3; ++i) p.AddSample(s, std::vector<uint32_t>{spin, outer, main});
  std::vector<std::string> warnings;
  auto input = BuildExportInput(recording, SampleFilter(SampleFilterOptions{}), {}, false, warnings);
  ASSERT_TRUE(input) << input.error().message;
  const std::string data = BuildHtmlData(*input, HeaderView{});
  // funcs: outer 0, main 1 (the table's order); rows [func,self,total].
  EXPECT_THAT(data, HasSubstr("\"table\":[\n[0,3,3],\n[1,0,3]]")) << data;
  EXPECT_THAT(data, HasSubstr("[\"spin (inlined)\",\"/bin/prog\",\"inlined\"]")) << data;
}

}  // namespace
}  // namespace sample::report
