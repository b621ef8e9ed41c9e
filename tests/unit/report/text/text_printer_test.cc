// Tests for the text printer's parts that need more than one event to show:
// per-section header lines, group members in --script. The Recording is
// built in code (events, a Profile with hand-made stacks), so what each
// part must say is known.
#include "report/text/text_printer.h"

#include <linux/perf_event.h>

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/model/sample_filter.h"
#include "report/views/event_sections.h"
#include "report/report_options.h"
#include "report/views/script_view.h"
#include "report/text/text_script.h"

namespace sample::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two ungrouped events recorded with call chains; each sample's stack is
// given leaf first as function ids of `recording.profile`.
class TwoEventRecording {
 public:
  TwoEventRecording() {
    Profile& profile = recording_.profile;
    profile.set_dso_names({"/bin/prog"});
    for (const char* name : {"cpu-clock", "task-clock"}) {
      EventDesc event;
      event.name = name;
      event.attr.type = PERF_TYPE_SOFTWARE;
      event.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                               PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
      recording_.events.push_back(event);
    }
    profile.set_event_names({"cpu-clock", "task-clock"});
    recording_.callchains = true;
    recording_.finalized = true;
    main_ = profile.InternFunction(0, "main", false, true);
    work_ = profile.InternFunction(0, "work", false, true);
    inlined_ = profile.InternFunction(0, "helper", false, true, /*inlined=*/true);
    unknown_ = profile.InternFunction(0, "[unknown] 0x10", false, false);
  }

  void AddSample(uint32_t event, uint32_t pid, std::vector<uint32_t> frames,
                 std::vector<MemberCount> reads = {}) {
    ProfileSample sample;
    sample.event = event;
    sample.pid = sample.tid = pid;
    sample.comm = recording_.profile.InternComm("prog");
    sample.time = ++time_;
    sample.period = 1000;
    recording_.profile.AddSample(sample, frames, {}, reads);
    // What the loader counts for the whole file: every address once.
    for (uint32_t f : frames) {
      if (!recording_.profile.function(f).inlined) ++recording_.stats.frames;
      if (!recording_.profile.function(f).known) ++recording_.stats.unknown_frames;
    }
  }

  std::string Text(const ViewOptions& view, const SampleFilter& filter = {}) const {
    TextPrinter printer(recording_, view);
    printer.Sections(BuildEventSections(recording_, view, filter));
    return printer.Finish();
  }

  std::string Script() const {
    return FormatScriptText(BuildScriptView(recording_, SampleFilter(), 0));
  }

  const Recording& recording() const { return recording_; }
  uint32_t Intern(const std::string& name) {
    return recording_.profile.InternFunction(0, name, false, true);
  }

  uint32_t main_ = 0, work_ = 0, inlined_ = 0, unknown_ = 0;

 private:
  Recording recording_;
  uint64_t time_ = 0;
};

// The '#' header of the section whose "# Samples" line names `event`.
std::string SectionHeader(const std::string& text, const std::string& event) {
  const size_t start = text.find("of event '" + event + "'");
  if (start == std::string::npos) return "";
  const size_t end = text.find("\n#\n", start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(TextPrinterTest, UnresolvedFramesAreCountedPerEventSection) {
  TwoEventRecording r;
  // cpu-clock: two samples, each with an unknown caller (2 of 4 frames).
  r.AddSample(0, 7, {r.work_, r.unknown_});
  r.AddSample(0, 7, {r.inlined_, r.work_, r.unknown_});  // the inlined call is no frame
  // task-clock: every frame named.
  r.AddSample(1, 8, {r.work_, r.main_});
  ViewOptions view;
  view.children = false;
  const std::string text = r.Text(view);

  EXPECT_THAT(SectionHeader(text, "cpu-clock"),
              HasSubstr("# Unresolved frames: 2 of 4 shown as [unknown]"))
      << text;
  EXPECT_THAT(SectionHeader(text, "task-clock"), Not(HasSubstr("Unresolved"))) << text;
}

TEST(TextPrinterTest, UnresolvedFramesCountOnlyTheKeptSamples) {
  TwoEventRecording r;
  r.AddSample(0, 7, {r.work_, r.unknown_});
  r.AddSample(0, 9, {r.work_, r.main_});
  r.AddSample(1, 9, {r.unknown_});
  ViewOptions view;
  view.children = false;
  SampleFilterOptions keep_pid_7;
  keep_pid_7.pids = {7};
  const std::string text = r.Text(view, SampleFilter(keep_pid_7));

  EXPECT_THAT(SectionHeader(text, "cpu-clock"),
              HasSubstr("# Unresolved frames: 1 of 2 shown as [unknown]"))
      << text;
  // task-clock keeps no sample: no section at all, or one without the line.
  EXPECT_THAT(SectionHeader(text, "task-clock"), Not(HasSubstr("Unresolved"))) << text;
}

// A group leader's sample (-e '{cpu-clock,task-clock}:S') is followed by
// one entry per member, with the member's count and the same frames, as
// perf script prints it; a sample without reads stays alone.
TEST(TextPrinterTest, ScriptShowsEachGroupMembersCountWithTheLeadersChain) {
  TwoEventRecording r;
  r.AddSample(0, 7, {r.work_, r.main_}, {MemberCount{1, 1234}});
  r.AddSample(0, 7, {r.main_});
  EXPECT_EQ(r.Script(),
            "prog     7 [000]     0.000000:       1000 cpu-clock:\n"
            "\t               0 work (/bin/prog)\n"
            "\t               0 main (/bin/prog)\n"
            "\n"
            "prog     7 [000]     0.000000:       1234 task-clock:\n"
            "\t               0 work (/bin/prog)\n"
            "\t               0 main (/bin/prog)\n"
            "\n"
            "prog     7 [000]     0.000000:       1000 cpu-clock:\n"
            "\t               0 main (/bin/prog)\n"
            "\n");
}

// A 1 MB name (a crafted perf map's) prints as its first 4 KiB, cut at a
// character's start, and says how long it was: printed at every frame of
// every sample, such names made gigabytes of --script.
TEST(TextPrinterTest, ScriptCutsLongNames) {
  TwoEventRecording r;
  const std::string name =
      std::string(kMaxScriptNameBytes - 1, 'x') + "\xc3\xa9" + std::string(size_t{1} << 20, 'y');
  const uint32_t jit = r.Intern(name);
  for (int i = 0; i < 100; ++i) r.AddSample(0, 7, {jit, r.main_});
  const std::string text = r.Script();
  EXPECT_LT(text.size(), 100 * 2 * (kMaxScriptNameBytes + 200));
  const std::string cut =
      fmt::format("\t               0 {}[... cut at {} of {} bytes] (/bin/prog)\n",
                  std::string(kMaxScriptNameBytes - 1, 'x'), kMaxScriptNameBytes - 1, name.size());
  EXPECT_THAT(text, HasSubstr(cut));
  EXPECT_THAT(text, HasSubstr("\t               0 main (/bin/prog)\n"));
}

// The text goes to the sink a sample at a time, in whole lines, and stops
// at the first piece the sink refuses (the reader went away).
TEST(TextPrinterTest, ScriptIsWrittenPieceByPieceUntilTheSinkStops) {
  TwoEventRecording r;
  for (int i = 0; i < 50; ++i) r.AddSample(0, 7, {r.work_, r.main_}, {MemberCount{1, 7}});
  const ScriptView view = BuildScriptView(r.recording(), SampleFilter(), 0);
  std::string joined;
  size_t pieces = 0;
  EXPECT_TRUE(WriteScriptText(view, [&](std::string_view text) {
    EXPECT_TRUE(text.ends_with("\n")) << text;
    joined += text;
    ++pieces;
    return true;
  }));
  EXPECT_EQ(pieces, 50u);
  EXPECT_EQ(joined, r.Script());
  size_t calls = 0;
  EXPECT_FALSE(WriteScriptText(view, [&](std::string_view) { return ++calls < 3; }));
  EXPECT_EQ(calls, 3u);
}

}  // namespace
}  // namespace sample::report
