#include "libsample/cli/command_line.h"

#include <algorithm>

#include <fmt/format.h>
#include <boost/program_options.hpp>

namespace po = boost::program_options;

namespace sample::cli {

namespace {

// The widest name column --help aligns the help to; longer names push
// their help further right on their own line.
constexpr size_t kNameColumn = 34;

// "  -F, --freq <n>", "      --call-graph <mode>", "  -g".
std::string NameColumn(const Option& option) {
  std::string out = "  ";
  if (option.short_name != 0) {
    out += fmt::format("-{}", option.short_name);
    if (!option.long_name.empty()) out += ", ";
  } else {
    out += "    ";
  }
  if (!option.long_name.empty()) out += "--" + option.long_name;
  switch (option.arity) {
    case Arity::kFlag:
      break;
    case Arity::kOptional:
      out += option.long_name.empty() ? fmt::format("[<{}>]", option.value_name)
                                      : fmt::format("[=<{}>]", option.value_name);
      break;
    case Arity::kList:
      // A name already in brackets is shown as written: "<base> [<new>]".
      if (option.value_name.starts_with('<')) {
        out += " " + option.value_name;
        break;
      }
      out += option.list_needs_word ? fmt::format(" <{}>...", option.value_name)
                                    : fmt::format(" [<{}>...]", option.value_name);
      break;
    case Arity::kOne:
    case Arity::kRepeated:
      out += fmt::format(" <{}>", option.value_name);
      break;
  }
  return out;
}

// Boost's name for an option: "freq,F", ",g".
std::string BoostNames(const Option& option) {
  std::string names = option.long_name;
  if (option.short_name != 0) names += fmt::format(",{}", option.short_name);
  return names;
}

po::value_semantic* Semantic(const Option& option) {
  switch (option.arity) {
    case Arity::kFlag:
      return po::bool_switch();
    case Arity::kOne:
      return po::value<std::string>();
    case Arity::kOptional:
      return po::value<std::string>()->implicit_value(option.implicit);
    case Arity::kRepeated:
      return po::value<std::vector<std::string>>()->composing();
    case Arity::kList: {
      auto* list = po::value<std::vector<std::string>>()->multitoken()->composing();
      return option.list_needs_word ? list : list->zero_tokens();
    }
  }
  return nullptr;
}

// Whether `word` spells `option` alone ("-F", "--freq").
bool SpellsAlone(const Option& option, std::string_view word) {
  return (option.short_name != 0 && word.size() == 2 && word[0] == '-' &&
          word[1] == option.short_name) ||
         (!option.long_name.empty() && word.starts_with("--") && word.substr(2) == option.long_name);
}

// "--freq=V" or "-FV": the option and its value in one word.
std::string Joined(const Option& option, const std::string& value) {
  return option.long_name.empty() ? fmt::format("-{}{}", option.short_name, value)
                                  : fmt::format("--{}={}", option.long_name, value);
}

Result<void> Apply(const Option& option, const std::vector<std::string>& values) {
  switch (option.arity) {
    case Arity::kFlag:
      return option.on_flag();
    case Arity::kOne:
    case Arity::kRepeated: {
      for (const std::string& value : values) TRY(option.on_value(value));
      return {};
    }
    case Arity::kOptional:
      return option.on_value(values.empty() ? option.implicit : values.front());
    case Arity::kList:
      return option.on_list(values);
  }
  return {};
}

}  // namespace

Group& Group::Add(std::string_view names, Option option) {
  const size_t comma = names.find(',');
  option.long_name = std::string(names.substr(0, comma));
  if (comma != std::string_view::npos && comma + 1 < names.size()) {
    option.short_name = names[comma + 1];
  }
  options_.push_back(std::move(option));
  return *this;
}

Group& Group::Flag(std::string_view names, std::string help, FlagAction action) {
  return Add(names, Option{.arity = Arity::kFlag, .help = std::move(help),
                           .on_flag = std::move(action)});
}

Group& Group::Flag(std::string_view names, std::string help, bool* target) {
  return Flag(names, std::move(help), [target]() -> Result<void> {
    *target = true;
    return {};
  });
}

Group& Group::Value(std::string_view names, std::string value_name, std::string help,
                    ValueAction action) {
  return Add(names, Option{.arity = Arity::kOne, .value_name = std::move(value_name),
                           .help = std::move(help), .on_value = std::move(action)});
}

Group& Group::Value(std::string_view names, std::string value_name, std::string help,
                    std::string* target) {
  return Value(names, std::move(value_name), std::move(help),
               [target](const std::string& value) -> Result<void> {
                 *target = value;
                 return {};
               });
}

Group& Group::Optional(std::string_view names, std::string value_name, std::string implicit,
                       std::string help, ValueAction action) {
  return Add(names, Option{.arity = Arity::kOptional, .value_name = std::move(value_name),
                           .implicit = std::move(implicit), .help = std::move(help),
                           .on_value = std::move(action)});
}

Group& Group::Repeated(std::string_view names, std::string value_name, std::string help,
                       ValueAction action) {
  return Add(names, Option{.arity = Arity::kRepeated, .value_name = std::move(value_name),
                           .help = std::move(help), .on_value = std::move(action)});
}

Group& Group::List(std::string_view names, std::string value_name, bool needs_word,
                   std::string help, ListAction action) {
  return Add(names, Option{.arity = Arity::kList, .value_name = std::move(value_name),
                           .list_needs_word = needs_word, .help = std::move(help),
                           .on_list = std::move(action)});
}

Group& Group::NextWordIsValue(std::function<bool(std::string_view word)> accepts) {
  options_.back().next_word_is_value = std::move(accepts);
  return *this;
}

Group& Group::Informational() {
  options_.back().informational = true;
  return *this;
}

Group& Group::Check(cli::Check check) {
  checks_.push_back(std::move(check));
  return *this;
}

Group& CommandLine::AddGroup(std::string heading) {
  groups_.push_back(std::make_unique<Group>(std::move(heading)));
  return *groups_.back();
}

std::vector<const Option*> CommandLine::AllOptions() const {
  std::vector<const Option*> out;
  for (const auto& group : groups_) {
    for (const Option& option : group->options()) out.push_back(&option);
  }
  return out;
}

const Option* CommandLine::Find(std::string_view word) const {
  for (const auto& group : groups_) {
    for (const Option& option : group->options()) {
      if (SpellsAlone(option, word)) return &option;
    }
  }
  return nullptr;
}

Result<Given> CommandLine::Parse(const std::vector<std::string>& args,
                                 std::vector<std::string>* command) const {
  // Values that look like options are joined to theirs; an optional value
  // given as the next word (-g caller, --list-events 'sched:*') too.
  std::vector<std::string> ours;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (command != nullptr && word == "--") {
      ++i;
      break;
    }
    if (command != nullptr && (word.size() < 2 || word[0] != '-')) break;
    const Option* option = Find(word);
    const bool has_next = i + 1 < args.size();
    if (option != nullptr && has_next &&
        (option->arity == Arity::kOne || option->arity == Arity::kRepeated)) {
      const std::string& value = args[++i];
      if (value.starts_with("-")) {
        ours.push_back(Joined(*option, value));
      } else {
        ours.push_back(word);
        ours.push_back(value);
      }
      continue;
    }
    if (option != nullptr && option->arity == Arity::kOptional) {
      // Boost would take any next word as the value: only the words the
      // option accepts are; a bare option gets its implicit value.
      const bool next_is_value = has_next && option->next_word_is_value &&
                                 option->next_word_is_value(args[i + 1]);
      if (next_is_value || !option->implicit.empty()) {
        ours.push_back(Joined(*option, next_is_value ? args[++i] : option->implicit));
        continue;
      }
      // "--opt=" is no value to Boost: the bare word, with no word after
      // it that Boost could take.
      if (command == nullptr && has_next && !args[i + 1].starts_with("-")) {
        return Fail(fmt::format("unexpected argument '{}': it is no option", args[i + 1]));
      }
      ours.push_back(word);
      continue;
    }
    ours.push_back(word);
  }
  if (command != nullptr) command->assign(args.begin() + static_cast<long>(i), args.end());

  po::options_description desc;
  for (const auto& group : groups_) {
    for (const Option& option : group->options()) {
      desc.add_options()(BoostNames(option).c_str(), Semantic(option), "");
    }
  }
  po::parsed_options parsed(&desc);
  try {
    parsed = po::command_line_parser(ours).options(desc).run();
    po::variables_map vm;
    po::store(parsed, vm);  // refuses a single-valued option given twice
  } catch (const po::error& e) {
    return Fail(e.what());
  }
  std::vector<std::pair<const Option*, const std::vector<std::string>*>> found;
  bool informational = false;
  for (const po::option& word : parsed.options) {
    // Boost names a short-only option "-g".
    const std::string key = word.string_key.starts_with("-") ? word.string_key.substr(1)
                                                             : word.string_key;
    if (word.position_key >= 0) {
      const std::string text = word.value.empty() ? "" : word.value.front();
      return Fail(fmt::format("unexpected argument '{}': it is no option", text));
    }
    const Option* option = nullptr;
    for (const Option* candidate : AllOptions()) {
      if (candidate->key() == key) option = candidate;
    }
    if (option == nullptr) return Fail(fmt::format("unrecognised option '{}'", word.string_key));
    found.emplace_back(option, &word.value);
    informational = informational || option->informational;
  }
  // --help answers whatever else was given, and nothing else is checked.
  Given given;
  for (const auto& [option, values] : found) {
    if (informational && !option->informational) continue;
    given.Add(option->key(), *values);
    TRY(Apply(*option, *values));
  }
  if (informational) return given;
  for (const auto& group : groups_) {
    for (const cli::Check& check : group->checks()) TRY(check(given));
  }
  for (const cli::Check& check : checks_) TRY(check(given));
  return given;
}

std::string CommandLine::Help() const {
  size_t width = 0;
  for (const Option* option : AllOptions()) {
    const size_t name = NameColumn(*option).size();
    if (name <= kNameColumn) width = std::max(width, name);
  }
  std::string out = usage_;
  for (const auto& group : groups_) {
    if (group->options().empty()) continue;
    out += fmt::format("\n{}:\n", group->heading());
    for (const Option& option : group->options()) {
      const std::string name = NameColumn(option);
      out += fmt::format("{:<{}}  {}\n", name, width, option.help);
    }
  }
  return out;
}

Group& AddInformationGroup(CommandLine& line, bool* help, bool* version) {
  return line.AddGroup("Information")
      .Flag("help,h", "show this help", help)
      .Informational()
      .Flag("version", "print the version and the commit built from", version)
      .Informational();
}

std::vector<std::string> Arguments(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) out.emplace_back(argv[i]);
  return out;
}

}  // namespace sample::cli
