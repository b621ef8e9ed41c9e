// Runtime control (-D -1, --control): the FIFO's command lines, the option,
// the kControl chunk (codec and a file round trip), the enabled periods the report
// builds from the switches, and --header's lines for them.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "formats/chunk_codec.h"
#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "record/control/control_fifo.h"
#include "report/views/enabled_periods.h"
#include "report/views/header_view.h"
#include "report/json/json_printer.h"
#include "report/report_options.h"
#include "report/text/text_header.h"
#include "tests/unit/temp_dir.h"

namespace sample {
namespace {

using record::ControlCommand;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Kind = record::ControlCommand::Kind;

TEST(ControlCommandTest, EnableAndDisableWithAndWithoutAnEvent) {
  EXPECT_EQ(record::ParseControlCommand("enable").kind, Kind::kEnable);
  EXPECT_EQ(record::ParseControlCommand("enable").event, "");
  EXPECT_EQ(record::ParseControlCommand("disable").kind, Kind::kDisable);
  const ControlCommand one = record::ParseControlCommand("  enable   cpu-clock:u \r");
  EXPECT_EQ(one.kind, Kind::kEnable);
  EXPECT_EQ(one.event, "cpu-clock:u");
  const ControlCommand off = record::ParseControlCommand("disable\ttask-clock");
  EXPECT_EQ(off.kind, Kind::kDisable);
  EXPECT_EQ(off.event, "task-clock");
  EXPECT_EQ(record::ParseControlCommand("stop").kind, Kind::kStop);
  EXPECT_EQ(record::ParseControlCommand("ping").kind, Kind::kPing);
  EXPECT_EQ(record::ParseControlCommand(" snapshot ").kind, Kind::kSnapshot);
  EXPECT_EQ(record::ParseControlCommand("snapshot now").kind, Kind::kUnknown);
}

TEST(ControlCommandTest, AnythingElseIsUnknown) {
  for (const char* line : {"", "   ", "enabled", "Enable", "e", "stop now", "ping 1", "snapshots",
                           "disable-all", "\x1b[2J"}) {
    EXPECT_EQ(record::ParseControlCommand(line).kind, Kind::kUnknown) << line;
  }
}

TEST(ControlCommandTest, LinesAreSplitWhateverTheWritesSizes) {
  std::string partial;
  bool skipping = false;
  std::vector<std::string> lines;
  record::SplitControlLines("ena", partial, skipping, lines);
  EXPECT_TRUE(lines.empty());
  record::SplitControlLines("ble\ndisable\nenable cpu", partial, skipping, lines);
  EXPECT_THAT(lines, ElementsAre("enable", "disable"));
  record::SplitControlLines("-clock\n\n", partial, skipping, lines);
  EXPECT_THAT(lines, ElementsAre("enable", "disable", "enable cpu-clock", ""));
  EXPECT_TRUE(partial.empty());
}

TEST(ControlCommandTest, AnOverlongLineIsDroppedUpToItsEnd) {
  std::string partial;
  bool skipping = false;
  std::vector<std::string> lines;
  const std::string long_piece(record::ControlFifo::kMaxLine, 'x');
  record::SplitControlLines(long_piece, partial, skipping, lines);
  record::SplitControlLines(long_piece, partial, skipping, lines);
  EXPECT_LE(partial.size(), record::ControlFifo::kMaxLine);
  record::SplitControlLines("yy\nenable\n", partial, skipping, lines);
  EXPECT_THAT(lines, ElementsAre("enable"));
}

TEST(ControlSpecTest, FifoPathsAndRefusals) {
  auto both = record::ParseControlSpec("fifo:/tmp/ctl,/tmp/ack");
  ASSERT_TRUE(both.has_value()) << both.error().message;
  EXPECT_EQ(both->control, "/tmp/ctl");
  EXPECT_EQ(both->ack, "/tmp/ack");
  auto one = record::ParseControlSpec("fifo:ctl");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->control, "ctl");
  EXPECT_EQ(one->ack, "");
  EXPECT_THAT(record::ParseControlSpec("fd:3,4").error().message, HasSubstr("not supported"));
  EXPECT_THAT(record::ParseControlSpec("ctl").error().message, HasSubstr("fifo:CTL"));
  EXPECT_FALSE(record::ParseControlSpec("fifo:").has_value());
  EXPECT_FALSE(record::ParseControlSpec("fifo:ctl,").has_value());
}

TEST(ControlSpecTest, OnlyFifosOpenAndAnswersArrive) {
  testing::TempDir dir;
  const std::string ctl = (dir.path() / "ctl").string();
  const std::string ack = (dir.path() / "ack").string();
  const std::string plain = (dir.path() / "plain").string();
  ASSERT_EQ(mkfifo(ctl.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo(ack.c_str(), 0600), 0);
  dir.Write("plain", "enable\n");
  auto refused = record::ControlFifo::Open({plain, ""});
  ASSERT_FALSE(refused.has_value());
  EXPECT_THAT(refused.error().message, HasSubstr(plain + " is not a FIFO"));
  EXPECT_THAT(record::ControlFifo::Open({ctl, plain}).error().message, HasSubstr("not a FIFO"));
  EXPECT_THAT(record::ControlFifo::Open({(dir.path() / "none").string(), ""}).error().message,
              HasSubstr("mkfifo"));

  auto fifo = record::ControlFifo::Open({ctl, ack});
  ASSERT_TRUE(fifo.has_value()) << fifo.error().message;
  EXPECT_TRUE(fifo->ReadLines().empty());  // nothing yet, and no end of file
  {
    const int writer = open(ctl.c_str(), O_WRONLY);
    ASSERT_GE(writer, 0);
    ASSERT_EQ(write(writer, "enable\ndis", 10), 10);
    close(writer);  // a writer gone is no end of file for the recorder
  }
  EXPECT_THAT(fifo->ReadLines(), ElementsAre("enable"));
  const int writer = open(ctl.c_str(), O_WRONLY);
  ASSERT_EQ(write(writer, "able\n", 5), 5);
  close(writer);
  EXPECT_THAT(fifo->ReadLines(), ElementsAre("disable"));
  const int reader = open(ack.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  fifo->Answer(true);
  fifo->Answer(false);
  char answers[16] = {};
  EXPECT_EQ(read(reader, answers, sizeof(answers)), 8);
  EXPECT_STREQ(answers, "ack\nerr\n");
  close(reader);
}

format::ControlEntry Switch(uint64_t time, uint32_t action, uint32_t event) {
  return {time, action, event};
}

TEST(ControlChunkTest, RoundTripsAndRefusesBadBytes) {
  const std::vector<format::ControlEntry> entries = {
      Switch(100, format::kControlEnable, format::kControlAllEvents),
      Switch(250, format::kControlDisable, 1)};
  const auto bytes = format::EncodeControl(entries);
  ASSERT_EQ(bytes.size(), 32u);
  auto decoded = format::DecodeControl(bytes, 1000);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[1].time_ns, 250u);
  EXPECT_EQ((*decoded)[1].action, format::kControlDisable);
  EXPECT_EQ((*decoded)[1].event, 1u);

  auto torn = format::DecodeControl(std::span(bytes).first(20), 1000);
  ASSERT_FALSE(torn.has_value());
  EXPECT_THAT(torn.error().message, HasSubstr("offset 1000"));
  auto bad = format::EncodeControl({Switch(1, 7, 0)});
  auto unknown = format::DecodeControl(bad, 64);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_THAT(unknown.error().message, HasSubstr("unknown action 7"));
  EXPECT_THAT(unknown.error().message, HasSubstr("offset 64"));
}

std::vector<EventDesc> Events() {
  EventDesc cpu, task, dummy;
  cpu.name = "cpu-clock";
  cpu.attr.type = PERF_TYPE_SOFTWARE;
  cpu.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  task.name = "task-clock";
  task.attr.type = PERF_TYPE_SOFTWARE;
  task.attr.config = PERF_COUNT_SW_TASK_CLOCK;
  dummy.name = "dummy";
  dummy.attr.type = PERF_TYPE_SOFTWARE;
  dummy.attr.config = PERF_COUNT_SW_DUMMY;
  return {cpu, task, dummy};
}

TEST(ControlChunkTest, FileRoundTripAcrossChunks) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "control.sample").string();
  auto writer = format::SampleFileWriter::Create(path, {});
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents(Events()));
  (*writer)->Submit(format::ChunkType::kControl,
                    format::EncodeControl({Switch(10, format::kControlEnable, 0)}), 1);
  (*writer)->Submit(format::ChunkType::kControl,
                    format::EncodeControl({Switch(20, format::kControlDisable, 0)}), 1);
  ASSERT_TRUE((*writer)->Finish(format::Trailer{}).has_value());
  writer->reset();
  auto reader = format::SampleFileReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  EXPECT_TRUE(reader->warnings().empty());
  ASSERT_EQ(reader->control().size(), 2u);
  EXPECT_EQ(reader->control()[0].time_ns, 10u);
  EXPECT_EQ(reader->control()[1].action, format::kControlDisable);
  EXPECT_TRUE(reader->record_chunks().empty());
}

TEST(EnabledPeriodsTest, AllOnAndOffMakeWindowsAndAnOpenOneEndsAtTheEnd) {
  const auto w = report::BuildEnabledPeriods(
      {Switch(100, format::kControlEnable, format::kControlAllEvents),
       Switch(300, format::kControlDisable, format::kControlAllEvents),
       Switch(350, format::kControlDisable, format::kControlAllEvents),  // already off
       Switch(500, format::kControlEnable, format::kControlAllEvents)},
      Events(), 900);
  ASSERT_EQ(w.periods.size(), 2u);
  EXPECT_EQ(w.periods[0].start_ns, 100u);
  EXPECT_EQ(w.periods[0].end_ns, 300u);
  EXPECT_TRUE(w.periods[0].events.empty());
  EXPECT_EQ(w.periods[1].start_ns, 500u);
  EXPECT_EQ(w.periods[1].end_ns, 900u);
  EXPECT_EQ(w.enabled_ns, 600u);
}

TEST(EnabledPeriodsTest, OneEventOnNamesItAndUnknownEventsAreIgnored) {
  const auto w = report::BuildEnabledPeriods(
      {Switch(200, format::kControlDisable, format::kControlAllEvents),  // sorted by time
       Switch(100, format::kControlEnable, 1),
       Switch(150, format::kControlEnable, 2),  // the dummy: not a sampling event
       Switch(160, format::kControlEnable, 99)},
      Events(), 900);
  ASSERT_EQ(w.periods.size(), 1u);
  EXPECT_EQ(w.periods[0].start_ns, 100u);
  EXPECT_EQ(w.periods[0].end_ns, 200u);
  EXPECT_THAT(w.periods[0].events, ElementsAre(1u));
  EXPECT_EQ(w.ignored, 2u);
}

TEST(EnabledPeriodsTest, NoSwitchesNoWindows) {
  EXPECT_TRUE(report::BuildEnabledPeriods({}, Events(), 900).periods.empty());
}

TEST(EnabledPeriodsTest, HeaderShowsTheWindowsInTextAndJson) {
  report::Recording recording;
  recording.events = Events();
  recording.profile.set_event_names({"cpu-clock", "task-clock", "dummy"});
  recording.stats.first_time = 1'000'000'000;
  recording.stats.last_time = 5'000'000'000;
  recording.control = {Switch(1'500'000'000, format::kControlEnable, format::kControlAllEvents),
                       Switch(2'000'000'000, format::kControlDisable, format::kControlAllEvents),
                       Switch(3'000'000'000, format::kControlEnable, 1),
                       Switch(4'020'000'000, format::kControlDisable, format::kControlAllEvents)};
  const report::HeaderView view = report::BuildHeaderView(recording);
  const std::string text = report::FormatHeaderText(view);
  EXPECT_THAT(text, HasSubstr("# enabled        : 2 windows, 1.520 s of 4.000 s\n"));
  EXPECT_THAT(text, HasSubstr("# window         : 0.500 s to 1.000 s (0.500 s)\n"));
  EXPECT_THAT(text, HasSubstr("# window         : 2.000 s to 3.020 s (1.020 s), events on: "
                              "task-clock\n"));

  const report::ViewOptions options;
  report::JsonPrinter printer(recording, options);
  printer.Header(view);
  const std::string json = printer.Finish();
  for (const char* field : {"\"enabled\": {", "\"enabled_s\": 1.520000", "\"total_s\": 4.000000",
                            "\"start_s\": 2.000000", "\"end_s\": 3.020000", "\"task-clock\""}) {
    EXPECT_THAT(json, HasSubstr(field)) << json;
  }

  recording.control.clear();
  EXPECT_THAT(report::FormatHeaderText(report::BuildHeaderView(recording)),
              Not(HasSubstr("enabled")));
}

}  // namespace
}  // namespace sample
