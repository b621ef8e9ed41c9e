#include "libsample/cli/command_line.h"

#include <gtest/gtest.h>

namespace sample::cli {
namespace {

// A small program's options: a target group and an output group.
struct Toy {
  std::string output;
  std::vector<std::string> events;
  std::vector<std::pair<size_t, std::string>> filters;
  std::string delay;
  std::string mode = "unset";
  std::vector<std::string> inputs;
  bool quiet = false;
  bool help = false;
  int checks_run = 0;

  void Declare(CommandLine& line) {
    line.AddGroup("Sampling")
        .Repeated("event,e", "event", "an event", [this](const std::string& v) -> Result<void> {
          events.push_back(v);
          return {};
        })
        .Repeated("filter", "expr", "the filter of the -e before it",
                  [this](const std::string& v) -> Result<void> {
                    if (events.empty()) return Fail("--filter needs an -e before it");
                    filters.emplace_back(events.size() - 1, v);
                    return {};
                  })
        .Value("delay,D", "ms", "a delay", &delay)
        .Optional("call-graph,g", "mode", "graph", "call graphs",
                  [this](const std::string& v) -> Result<void> {
                    mode = v;
                    return {};
                  })
        .NextWordIsValue([](std::string_view word) { return word == "caller"; })
        .Check([this](const Given& given) -> Result<void> {
          ++checks_run;
          if (given.Has("delay") && delay == "0") return Fail("-D 0 is refused by the check");
          return {};
        });
    line.AddGroup("Output")
        .Value("output,o", "file", "the output file", &output)
        .List("input,i", "file", true, "input files",
              [this](const std::vector<std::string>& v) -> Result<void> {
                inputs.insert(inputs.end(), v.begin(), v.end());
                return {};
              })
        .Flag(",q", "quiet", &quiet);
    line.AddGroup("Information").Flag("help,h", "show this help", &help).Informational();
  }
};

Result<Given> ParseToy(Toy& toy, std::vector<std::string> args,
                       std::vector<std::string>* command = nullptr) {
  static const char* kUsage = "Usage: toy\n";
  CommandLine line(kUsage);
  toy.Declare(line);
  return line.Parse(args, command);
}

TEST(CommandLineTest, OptionsApplyInTheirOrderSoAFilterFollowsItsEvent) {
  Toy toy;
  auto given = ParseToy(toy, {"-e", "a", "--filter", "x", "-e", "b", "--filter=y", "-eb2"});
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(toy.events, (std::vector<std::string>{"a", "b", "b2"}));
  ASSERT_EQ(toy.filters.size(), 2u);
  EXPECT_EQ(toy.filters[0], (std::pair<size_t, std::string>{0, "x"}));
  EXPECT_EQ(toy.filters[1], (std::pair<size_t, std::string>{1, "y"}));
  EXPECT_TRUE(given->Has("event"));
  EXPECT_TRUE(given->Has("filter"));
  EXPECT_FALSE(given->Has("output"));
  EXPECT_EQ(toy.checks_run, 1);

  Toy early;
  auto refused = ParseToy(early, {"--filter", "x", "-e", "a"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "--filter needs an -e before it");
}

TEST(CommandLineTest, AValueThatLooksLikeAnOptionStaysItsOptionsValue) {
  Toy toy;
  auto given = ParseToy(toy, {"-D", "-1", "-o", "-weird"});
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(toy.delay, "-1");
  EXPECT_EQ(toy.output, "-weird");
}

TEST(CommandLineTest, TheCommandStartsAtTheFirstWordThatIsNoOption) {
  Toy toy;
  std::vector<std::string> command;
  auto given = ParseToy(toy, {"-D", "5", "-q", "ls", "-l", "-D", "3"}, &command);
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(toy.delay, "5");
  EXPECT_TRUE(toy.quiet);
  EXPECT_EQ(command, (std::vector<std::string>{"ls", "-l", "-D", "3"}));

  Toy dashes;
  command.clear();
  ASSERT_TRUE(ParseToy(dashes, {"-q", "--", "-x", "y"}, &command));
  EXPECT_EQ(command, (std::vector<std::string>{"-x", "y"}));
}

TEST(CommandLineTest, AnOptionalValueIsTheImplicitOneOrTheNextWordItAccepts) {
  Toy bare;
  ASSERT_TRUE(ParseToy(bare, {"-g"}));
  EXPECT_EQ(bare.mode, "graph");
  Toy next;
  ASSERT_TRUE(ParseToy(next, {"-g", "caller"}));
  EXPECT_EQ(next.mode, "caller");
  Toy joined;
  ASSERT_TRUE(ParseToy(joined, {"--call-graph=flat"}));
  EXPECT_EQ(joined.mode, "flat");
  // A word the option does not accept is not its value, and no other
  // word is taken silently.
  Toy other;
  auto given = ParseToy(other, {"-g", "stray"});
  ASSERT_FALSE(given);
  EXPECT_EQ(given.error().message, "unexpected argument 'stray': it is no option");
  EXPECT_EQ(other.mode, "unset");
}

TEST(CommandLineTest, ListsTakeWordsUpToTheNextOption) {
  Toy toy;
  ASSERT_TRUE(ParseToy(toy, {"-i", "a", "b", "-q", "-i", "c"}));
  EXPECT_EQ(toy.inputs, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(toy.quiet);
}

TEST(CommandLineTest, RepeatsUnknownOptionsAndChecksFailWithTheirNames) {
  Toy twice;
  auto repeated = ParseToy(twice, {"-o", "a", "-o", "b"});
  ASSERT_FALSE(repeated);
  EXPECT_NE(repeated.error().message.find("output"), std::string::npos)
      << repeated.error().message;
  Toy unknown;
  auto bad = ParseToy(unknown, {"--frobnicate"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--frobnicate"), std::string::npos) << bad.error().message;
  Toy checked;
  auto check = ParseToy(checked, {"-D", "0"});
  ASSERT_FALSE(check);
  EXPECT_EQ(check.error().message, "-D 0 is refused by the check");
  Toy missing;
  auto no_value = ParseToy(missing, {"-o"});
  ASSERT_FALSE(no_value);
  EXPECT_NE(no_value.error().message.find("output"), std::string::npos);
}

TEST(CommandLineTest, HelpSkipsTheOtherOptionsAndTheChecks) {
  Toy toy;
  auto given = ParseToy(toy, {"-D", "0", "--filter", "x", "--help"});
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_TRUE(toy.help);
  EXPECT_EQ(toy.checks_run, 0);
  EXPECT_EQ(toy.delay, "");
}

TEST(CommandLineTest, HelpListsEachGroupUnderItsHeadingOneLineAnOption) {
  Toy toy;
  CommandLine line("Usage: toy\n");
  toy.Declare(line);
  EXPECT_EQ(line.Help(),
            "Usage: toy\n"
            "\n"
            "Sampling:\n"
            "  -e, --event <event>        an event\n"
            "      --filter <expr>        the filter of the -e before it\n"
            "  -D, --delay <ms>           a delay\n"
            "  -g, --call-graph[=<mode>]  call graphs\n"
            "\n"
            "Output:\n"
            "  -o, --output <file>        the output file\n"
            "  -i, --input <file>...      input files\n"
            "  -q                         quiet\n"
            "\n"
            "Information:\n"
            "  -h, --help                 show this help\n");
  EXPECT_EQ(line.AllOptions().size(), 8u);
}

}  // namespace
}  // namespace sample::cli
