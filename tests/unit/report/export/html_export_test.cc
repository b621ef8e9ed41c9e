// Tests for --format html's embedded data (html_data.h: the exact JSON for
// a small profile, escaping, filters, recursion counted once) and for the
// page around it (html_export.h: one data block, the network policy, no
// URL anywhere). The page's behaviour in a browser is tested by
// tests/e2e/html_page_test.cc.
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/symbols/embedded_binary.h"
#include "report/export/export_input.h"
#include "report/export/html_annotation.h"
#include "report/export/html_data.h"
#include "report/export/html_export.h"
#include "report/export/xml_text.h"
#include "report/json/json_writer.h"
#include "tests/unit/temp_dir.h"

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
3,7,1,1]}],
"annotate":null}
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
  auto input =
      BuildExportInput(recording, SampleFilter(SampleFilterOptions{}), {}, false, warnings);
  ASSERT_TRUE(input) << input.error().message;
  const std::string data = BuildHtmlData(*input, HeaderView{});
  // funcs: outer 0, main 1 (the table's order); rows [func,self,total].
  EXPECT_THAT(data, HasSubstr("\"table\":[\n[0,3,3],\n[1,0,3]]")) << data;
  EXPECT_THAT(data, HasSubstr("[\"spin (inlined)\",\"/bin/prog\",\"inlined\"]")) << data;
}

}  // namespace
}  // namespace sample::report

namespace sample::report {
namespace {

AnnotatedInstruction Ins(uint64_t address, std::string text, uint64_t samples, std::string file,
                         uint32_t line, std::vector<std::string> inlined = {}) {
  AnnotatedInstruction in;
  in.address = address;
  in.text = std::move(text);
  in.samples = samples;
  in.period = samples * 1000;
  in.file = std::move(file);
  in.line = line;
  in.inlined = std::move(inlined);
  return in;
}

// The annotation's layout: instructions as [offset, text, weight, place],
// places and files numbered once, source text only around sampled lines
// (in runs), a function without code with its note, every string escaped.
TEST_F(HtmlExportTest, AnnotationIsCompactAndEscaped) {
  testing::TempDir dir("html annotate");
  std::string source;
  for (int line = 1; line <= 14; ++line) {
    source += line == 4 ? "  x <<= 1; /* \xff */\n" : "line " + std::to_string(line) + "\n";
  }
  dir.Write("hot.c", source);
  const std::string file = (dir.path() / "hot.c").string();
  AnnotateView view;
  view.event = "cpu-clock";
  AnnotatedFunction hot;
  hot.function = main_;
  hot.name = "main";
  hot.dso = "/bin/p<r>og";
  hot.samples = 4;
  hot.period = 4000;
  hot.start = 0x401000;
  hot.origin = "the binary";
  hot.source_readable = true;  // a binary found here that vouches for any source file
  hot.source_owners.any = true;
  hot.instructions = {Ins(0x401000, "push   %rbp", 0, file, 3),
                      Ins(0x401001, "add    $0x1,%eax", 3, file, 4),
                      Ins(0x401004, "cmp    %eax,<x>", 1, file, 10, {"spin", "outer"}),
                      Ins(0x401006, "ret", 0, "", 0)};
  AnnotatedFunction cold;
  cold.function = rec_;
  cold.name = "rec";
  cold.dso = "/bin/p<r>og";
  cold.samples = 1;
  cold.period = 1000;
  cold.note = "no code of /bin/p<r>og";
  view.functions = {hot, cold};

  const std::string data = BuildHtmlData(Build(), HeaderView{}, &view);
  std::string quoted_file;
  AppendJsonString(quoted_file, file, JsonStringUse::kInScript);
  const std::string expected =
      R"("annotate":{"event":"cpu-clock","coverage":95,"max_functions":50,"context":2,
"files":[)" +
      quoted_file + R"(],
"places":[
[0,3,""],
[0,4,""],
[0,10,"spin"]],
"text":[
[0,2,["line 2","line 3","  x \u003c\u003c= 1; /* \\xff */","line 5","line 6"]],
[0,8,["line 8","line 9","line 10","line 11","line 12"]]],
"functions":[
{"funcs":[0],"name":"main","dso":"/bin/p\u003cr\u003eog","samples":4,"weight":4,"start":"401000","origin":"the binary","note":"","unplaced":0,
"ins":[
[0,"push   %rbp",0,0],
[1,"add    $0x1,%eax",3,1],
[4,"cmp    %eax,\u003cx\u003e",1,2],
[6,"ret",0,-1]]}
,{"funcs":[3],"name":"rec","dso":"/bin/p\u003cr\u003eog","samples":1,"weight":1,"start":"0","origin":"","note":"no code of /bin/p\u003cr\u003eog","unplaced":0,
"ins":[]}]}}
)";
  ASSERT_GE(data.size(), expected.size());
  EXPECT_EQ(data.substr(data.size() - expected.size()), expected) << data;
  EXPECT_THAT(data, HasSubstr("\"sections\":[\n{\"name\":\"cpu-clock\""));

  // Weighed by period, as the page's flame graph then is.
  ExportInput input = Build();
  input.options.weight = ExportWeight::kPeriod;
  const std::string by_period = BuildHtmlData(input, HeaderView{}, &view);
  EXPECT_THAT(by_period, HasSubstr("\"samples\":4,\"weight\":4000,"));
  EXPECT_THAT(by_period, HasSubstr("\n[1,\"add    $0x1,%eax\",3000,1],"));
  // Without an annotation the member is null.
  EXPECT_THAT(BuildHtmlData(Build(), HeaderView{}), HasSubstr("]}],\n\"annotate\":null}\n"));
}

// A long function keeps the instructions around its sampled ones; each run
// left out is one row that counts them.
TEST_F(HtmlExportTest, AnnotationOfALongFunctionLeavesOutRunsWithoutSamples) {
  AnnotateView view;
  view.event = "cpu-clock";
  AnnotatedFunction f;
  f.function = main_;
  f.name = "main";
  f.samples = 5;
  f.start = 0x1000;
  for (uint64_t i = 0; i < 400; ++i) f.instructions.push_back(Ins(0x1000 + i, "nop", 0, "", 0));
  f.instructions[200].samples = 5;
  view.functions = {f};
  const std::string data = BuildHtmlData(Build(), HeaderView{}, &view);
  const size_t kept = 2 * kContextInstructions + 1;
  EXPECT_THAT(data, HasSubstr("\"ins\":[\n[0,null,190],\n[190,\"nop\",0,-1],\n"));
  EXPECT_THAT(data, HasSubstr("\n[200,\"nop\",5,-1],\n"));
  EXPECT_THAT(data, HasSubstr(",\n[210,\"nop\",0,-1],\n[211,null,189]]}"));
  EXPECT_EQ(Count(data, "\"nop\""), kept);
}

}  // namespace
}  // namespace sample::report

namespace sample::report {
namespace {

constexpr uint64_t kSpin = 0x401000;      // where the fake binary's spin() starts
constexpr uint64_t kSpinOffset = 0x1000;  // its file offset

// A binary known only from what the recording embedded: spin(), a loop.
std::shared_ptr<EmbeddedBinary> SpinBinary() {
  auto binary = std::make_shared<EmbeddedBinary>();
  binary->path = "/nonexistent/spin";
  binary->segments = {{kSpinOffset, 0x1000, kSpin, 0x1000, true}};
  std::vector<std::byte> code;
  for (int b : {0x31, 0xc0,                    // 401000 xor %eax,%eax
                0x83, 0xc0, 0x01,              // 401002 add $0x1,%eax
                0x3d, 0x10, 0x27, 0x00, 0x00,  // 401005 cmp $0x2710,%eax
                0x75, 0xf6,                    // 40100a jne 401002
                0xc3}) {                       // 40100c ret
    code.push_back(static_cast<std::byte>(b));
  }
  binary->code = {{kSpin, code}};
  binary->functions = {{kSpin, code.size(), "spin"}};
  binary->addresses = {{kSpinOffset + 2, {AddressFrame{"spin", "/src/spin.c", 7, false, 2}}},
                       {kSpinOffset + 5, {AddressFrame{"spin", "/src/spin.c", 8, false, 5}}}};
  binary->Normalize();
  return binary;
}

// Through the exporter, as sample-report -o x.html runs it: the hottest
// functions holding 95% of the samples are annotated from the code the
// recording embedded, with the page's function numbers; the rest are not.
TEST(HtmlAnnotationTest, ExporterAnnotatesTheHottestFunctionsFromEmbeddedCode) {
  Recording recording;
  Profile& p = recording.profile;
  p.set_event_names({"cpu-clock", "task-clock"});
  p.set_dso_names({"/nonexistent/spin", "/nonexistent/other"});
  const uint32_t spin = p.InternFunction(0, "spin", false, true);
  const uint32_t other = p.InternFunction(1, "other", false, true);
  ProfileSample s;
  s.comm = p.InternComm("spin");
  s.period = 1000;
  auto add = [&](uint32_t function, uint64_t at, int count) {
    for (int i = 0; i < count; ++i) {
      const uint32_t frames[] = {function};
      const FrameAddress addresses[] = {{kSpin + at, at, kSpinOffset + at}};
      p.AddSample(s, frames, addresses);
    }
  };
  add(spin, 2, 15);
  add(spin, 5, 3);
  add(spin, 10, 1);
  add(other, 2, 1);  // 19 of 20 samples are spin's: 95%, so other is left out
  s.event = 1;
  add(spin, 5, 2);
  recording.embedded.Add(SpinBinary());

  std::vector<std::string> warnings;
  auto input = BuildExportInput(recording, SampleFilter(), {}, false, warnings);
  ASSERT_TRUE(input) << input.error().message;
  BinaryLocatorOptions binaries;
  binaries.files.symfs = "/nonexistent-html-annotation-symfs";
  binaries.files.use_debuginfod = false;
  input->binaries = &binaries;
  HtmlExporter exporter;
  auto page = exporter.Export(*input);
  ASSERT_TRUE(page) << page.error().message;
  // funcs: spin 0, other 1 (the table's order).
  EXPECT_THAT(*page, HasSubstr("\n{\"funcs\":[0],\"name\":\"spin\",\"dso\":\"/nonexistent/spin\","
                               "\"samples\":19,\"weight\":19,\"start\":\"401000\","));
  EXPECT_THAT(*page, HasSubstr("\n\"ins\":[\n[0,\"xor    %eax,%eax\",0,-1],\n"
                               "[2,\"add    $0x1,%eax\",15,0],\n"
                               "[5,\"cmp    $0x2710,%eax\",3,1],\n"
                               "[10,\"jne    401002 \\u003cspin+0x2\\u003e\",1,-1],\n"
                               "[12,\"ret\",0,-1]]}]}}\n"));
  EXPECT_THAT(*page, HasSubstr("\"places\":[\n[0,7,\"\"],\n[0,8,\"\"]],\n"));
  EXPECT_THAT(*page, Not(HasSubstr("\"name\":\"other\"")));
  EXPECT_EQ(Count(*page, "<script"), 2u);

  // --event task-clock: the page's one section, and the annotation, are its.
  input = BuildExportInput(recording, SampleFilter(), {.event = "task-clock"}, false, warnings);
  ASSERT_TRUE(input) << input.error().message;
  input->binaries = &binaries;
  page = exporter.Export(*input);
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_THAT(*page, HasSubstr("\"annotate\":{\"event\":\"task-clock\","));
  EXPECT_THAT(*page, HasSubstr("\"name\":\"spin\",\"dso\":\"/nonexistent/spin\",\"samples\":2,"));
  EXPECT_THAT(*page, HasSubstr("\n[5,\"cmp    $0x2710,%eax\",2,1],\n"));
}

}  // namespace
}  // namespace sample::report
