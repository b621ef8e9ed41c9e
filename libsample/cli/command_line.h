// CommandLine: the options of sample-record, sample-report and sample-top,
// each declared once, in groups under a heading, with how its value is
// read and checked.
//
// A group is declared by a function of the part that owns the options
// (record/record_flags.h, report/report_flags.h) and taken whole by every
// program that offers it: sample-top takes sample-record's target,
// sampling and call-chain groups and sample-report's rows. Declaring an
// option says, in one place, its names, its value's name, one line of
// help and what it does to the options struct; the man pages keep the
// long text.
//
// Parsing (Parse) lets Boost.Program_options split the words (--opt=V,
// -oV, -o V, repeats refused), then applies every option in the order it
// was given (a --filter belongs to the -e before it), then runs the
// groups' checks, which see which options were given (Given). Errors are
// Fail()s whose message names the option, for the program's
// "sample-x: MESSAGE" and exit status 2.
//
// Help() is laid out as perf's -h: a heading a group, one line an option,
// "  -F, --freq <n>" then its help.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libsample/option_number.h"
#include "libsample/result.h"

namespace sample::cli {

// The options a command line gave, by long name (or the short letter of an
// option that has no long name: "g").
class Given {
 public:
  bool Has(std::string_view name) const { return names_.contains(name); }
  void Add(std::string name, std::vector<std::string> values) {
    names_.insert(name);
    in_order_.emplace_back(std::move(name), std::move(values));
  }
  // Each option as given, in order, with its words (empty for a flag or a
  // bare optional value).
  const std::vector<std::pair<std::string, std::vector<std::string>>>& in_order() const {
    return in_order_;
  }

 private:
  std::set<std::string, std::less<>> names_;
  std::vector<std::pair<std::string, std::vector<std::string>>> in_order_;
};

using ValueAction = std::function<Result<void>(const std::string& value)>;
using ListAction = std::function<Result<void>(const std::vector<std::string>& values)>;
using FlagAction = std::function<Result<void>()>;
using Check = std::function<Result<void>(const Given& given)>;

// How an option takes its value.
enum class Arity {
  kFlag,      // no value
  kOne,       // one value; given twice is refused
  kOptional,  // --opt or --opt=VALUE (bare: the implicit value)
  kRepeated,  // one value, repeatable (-e A -e B); applied each time
  kList,      // zero or more words up to the next option (-i A B, --annotate [SYM...])
};

struct Option {
  std::string long_name;  // "freq"; empty for a short-only option
  char short_name = 0;    // 'F'; 0 for a long-only option
  Arity arity = Arity::kFlag;
  std::string value_name;  // "n", shown as <n>
  std::string implicit;    // kOptional's value when given bare
  bool list_needs_word = false;  // kList: at least one word
  // kOptional: whether the word after a bare option is its value (perf's
  // "-g caller", "list 'sched:*'"); unset: only --opt=VALUE gives one.
  std::function<bool(std::string_view word)> next_word_is_value;
  // --help, --version: given, the checks do not run (the program prints and exits).
  bool informational = false;
  std::string help;              // one line
  ValueAction on_value;          // kOne, kOptional, kRepeated
  ListAction on_list;            // kList
  FlagAction on_flag;            // kFlag

  // "freq" or "g": the name Given knows it by.
  std::string key() const {
    return long_name.empty() ? std::string(1, short_name) : long_name;
  }
  // "-F" or "--freq": the spelling messages use (the short one when there is one).
  std::string spelled() const {
    return short_name != 0 ? std::string("-") + short_name : "--" + long_name;
  }
};

// The options under one heading of --help, and the checks that span them.
// `names` is "long,s" (either part may be empty: ",g", "call-graph").
class Group {
 public:
  explicit Group(std::string heading) : heading_(std::move(heading)) {}

  Group& Flag(std::string_view names, std::string help, FlagAction action);
  // Sets *target when given.
  Group& Flag(std::string_view names, std::string help, bool* target);
  Group& Value(std::string_view names, std::string value_name, std::string help,
               ValueAction action);
  // Stores the text as given.
  Group& Value(std::string_view names, std::string value_name, std::string help,
               std::string* target);
  Group& Optional(std::string_view names, std::string value_name, std::string implicit,
                  std::string help, ValueAction action);
  Group& Repeated(std::string_view names, std::string value_name, std::string help,
                  ValueAction action);
  Group& List(std::string_view names, std::string value_name, bool needs_word, std::string help,
              ListAction action);
  // The option declared last (kOptional) takes the next word as its value
  // when `accepts` says it is one.
  Group& NextWordIsValue(std::function<bool(std::string_view word)> accepts);
  // The option declared last only informs (--help, --version, --list-events).
  Group& Informational();
  // Runs after every option of the command line was applied, in the order
  // the groups and their checks were declared.
  Group& Check(cli::Check check);

  const std::string& heading() const { return heading_; }
  const std::vector<Option>& options() const { return options_; }
  const std::vector<cli::Check>& checks() const { return checks_; }

 private:
  Group& Add(std::string_view names, Option option);

  std::string heading_;
  std::vector<Option> options_;
  std::vector<cli::Check> checks_;
};

class CommandLine {
 public:
  // `usage` opens --help and follows every error ("Usage: sample-top [options] ...\n...").
  explicit CommandLine(std::string usage) : usage_(std::move(usage)) {}
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // A new group under `heading`; its options are listed in declaration order.
  Group& AddGroup(std::string heading);
  // A check of the whole command line, after every group's.
  void AddCheck(cli::Check check) { checks_.push_back(std::move(check)); }

  // Parses `args` (without the program's name). With `command`, the words
  // from the first one that is no option of ours (or after "--") are a
  // command to run, left out of the parse and returned there; an option's
  // value that starts with '-' (-D -1) stays its value.
  Result<Given> Parse(const std::vector<std::string>& args,
                      std::vector<std::string>* command = nullptr) const;

  // --help's text: the usage, then each group under its heading.
  std::string Help() const;
  const std::string& usage() const { return usage_; }
  // Every option, in declaration order (for tests and the man pages' check).
  std::vector<const Option*> AllOptions() const;

 private:
  const Option* Find(std::string_view word) const;

  std::string usage_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::vector<cli::Check> checks_;
};

// Actions for the usual options.
// Sets `target` to `value` when the flag is given.
template <typename T, typename U>
FlagAction Assign(T& target, U value) {
  return [&target, value]() -> Result<void> {
    target = value;
    return {};
  };
}
// Stores what `parse` makes of the text (a Result), or fails with its error.
template <typename T, typename Parse>
ValueAction Into(T& target, Parse parse) {
  return [&target, parse](const std::string& text) -> Result<void> {
    auto value = parse(text);
    if (!value) return tl::unexpected(std::move(value).error());
    target = static_cast<T>(*value);
    return {};
  };
}
// A whole number in `range`, named in messages as `option` spells it and
// `what` it counts (libsample/option_number.h).
template <typename T>
ValueAction Whole(T& target, const char* option, const char* what, WholeRange range) {
  return Into(target, [=](const std::string& text) {
    return ParseWholeOption(option, text, what, range);
  });
}
// A decimal number in `range`, likewise.
inline ValueAction Decimal(double& target, const char* option, const char* what,
                           DecimalRange range) {
  return Into(target, [=](const std::string& text) {
    return ParseDecimalOption(option, text, what, range);
  });
}

// The Information group every program ends with: --help and --version.
// Returns the group, for a program's own informational options.
Group& AddInformationGroup(CommandLine& line, bool* help, bool* version);

// argv[1..argc) as strings.
std::vector<std::string> Arguments(int argc, char** argv);

}  // namespace sample::cli
