#include "report/text_printer.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/text_call_graph.h"

namespace sample::report {
namespace {

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct Column {
  std::string title;
  bool right_aligned;
  std::vector<std::string> cells;
  size_t min_width = 0;  // perf keeps percentage columns 8 wide
  size_t width() const {
    size_t w = std::max(title.size(), min_width);
    for (const std::string& c : cells) w = std::max(w, c.size());
    return w;
  }
};

// The leader's percentage, then each group member's, as perf --group.
std::string Shares(uint64_t period, const std::vector<uint64_t>& members, const EventSection& s) {
  std::string cell =
      fmt::format("{:>7}", fmt::format("{:.2f}%", Percentage(period, s.percent_base)));
  for (size_t m = 0; m < members.size(); ++m) {
    cell +=
        fmt::format("  {:>7}", fmt::format("{:.2f}%", Percentage(members[m], s.member_bases[m])));
  }
  return cell;
}

// The leader's period, then each member's, each as wide as its event's
// total so that the parts line up from row to row.
std::string Periods(uint64_t period, const std::vector<uint64_t>& members, const EventSection& s) {
  auto width = [](uint64_t total) { return fmt::format("{}", total).size(); };
  std::string cell = fmt::format("{:>{}}", period, width(s.flat.period));
  for (size_t m = 0; m < members.size(); ++m) {
    cell += fmt::format("  {:>{}}", members[m], width(s.flat.member_periods[m]));
  }
  return cell;
}

std::string SortKeyTitle(SortKey key) {
  switch (key) {
    case SortKey::kComm:
      return "Command";
    case SortKey::kPid:
      return "Pid";
    case SortKey::kTid:
      return "Tid";
    case SortKey::kCpu:
      return "CPU";
    case SortKey::kDso:
      return "Shared Object";
    case SortKey::kSym:
      return "Symbol";
    case SortKey::kSrcline:
      return "Source:Line";
  }
  return "";
}

std::string SortKeyCell(const Profile& profile, const FlatEntry& e, SortKey key) {
  switch (key) {
    case SortKey::kComm:
      return profile.comm(e.comm);
    case SortKey::kPid:
      return fmt::format("{}", e.pid);
    case SortKey::kTid:
      return fmt::format("{}", e.tid);
    case SortKey::kCpu:
      return fmt::format("{:03}", e.cpu);
    case SortKey::kDso:
      return Basename(profile.dso_name(e.dso));
    case SortKey::kSym: {
      const Function& f = profile.function(e.function);
      return (f.kernel ? "[k] " : "[.] ") + FunctionLabel(f);
    }
    case SortKey::kSrcline:
      return profile.srcline(e.srcline);
  }
  return "";
}

}  // namespace

void TextPrinter::Header(const HeaderView& header) { out_ += FormatHeaderText(header); }

void TextPrinter::Stats(const HeaderView& header, const LoadStats& stats) {
  out_ += FormatStatsText(header, stats);
}

void TextPrinter::Script(const ScriptView& script) { out_ += FormatScriptText(script); }

void TextPrinter::Sections(const std::vector<EventSection>& sections) {
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i != 0) out_ += "\n\n";
    Section(sections[i]);
  }
}

void TextPrinter::Section(const EventSection& s) {
  const Profile& profile = recording_.profile;
  const LoadStats& stats = recording_.stats;
  out_ += fmt::format("# Samples: {} of event{} '{}'\n", s.flat.samples,
                      s.members.empty() ? "" : "s", s.title);
  std::string count = fmt::format("# Event count (approx.): {}", s.flat.period);
  if (!s.members.empty()) {
    count += fmt::format(" ({})", profile.event_name(s.event));
    for (size_t m = 0; m < s.members.size(); ++m) {
      count += fmt::format(", {} ({})", s.flat.member_periods[m], profile.event_name(s.members[m]));
    }
  }
  out_ += count + "\n";
  out_ += fmt::format("# Lost samples: {}\n", stats.lost_samples);
  if (s.unknown_frames != 0) {
    out_ += fmt::format("# Unresolved frames: {} of {} shown as [unknown]\n", s.unknown_frames,
                        s.frames);
  }
  if (!recording_.finalized) out_ += "# Warning: the file was not finalized; partial recording\n";
  if (s.filtered) {
    out_ +=
        fmt::format("# Filtered: {} of {} samples kept; percentages of the {}\n", s.flat.samples,
                    s.all_samples, view_.relative_percentage ? "kept samples" : "whole event");
  }
  out_ += "#\n";

  std::vector<Column> columns;
  if (s.children) {
    columns.push_back({"Children", true, {}, 8});
    columns.push_back({"Self", true, {}, 8});
  } else {
    columns.push_back({"Overhead", true, {}, 8});
  }
  if (view_.show_nr_samples) columns.push_back({"Samples", true, {}});
  if (view_.show_total_period) columns.push_back({"Period", true, {}});
  for (SortKey key : view_.sort_keys) columns.push_back({SortKeyTitle(key), false, {}});

  const std::vector<const FlatEntry*> shown = ShownEntries(s, view_.percent_limit);
  for (const FlatEntry* entry : shown) {
    const FlatEntry& e = *entry;
    size_t c = 0;
    if (s.children) {
      columns[c++].cells.push_back(Shares(e.children_period, e.member_children, s));
      columns[c++].cells.push_back(Shares(e.self_period, e.member_self, s));
    } else {
      columns[c++].cells.push_back(Shares(e.self_period, e.member_self, s));
    }
    if (view_.show_nr_samples) {
      columns[c++].cells.push_back(
          fmt::format("{}", s.children ? e.children_samples : e.self_samples));
    }
    if (view_.show_total_period) {
      columns[c++].cells.push_back(s.children ? Periods(e.children_period, e.member_children, s)
                                              : Periods(e.self_period, e.member_self, s));
    }
    for (SortKey key : view_.sort_keys) columns[c++].cells.push_back(SortKeyCell(profile, e, key));
  }

  std::vector<size_t> widths;
  for (const Column& c : columns) widths.push_back(c.width());
  auto row = [&](auto cell_of, char lead) {
    std::string line(1, lead);
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string cell = cell_of(i);
      const bool last = i + 1 == columns.size();
      const std::string pad(widths[i] - std::min(widths[i], cell.size()), ' ');
      line += i == 0 ? " " : "  ";
      if (columns[i].right_aligned) {
        line += pad + cell;
      } else {
        line += cell;
        if (!last) line += pad;
      }
    }
    return line + "\n";
  };
  out_ += row([&](size_t i) { return columns[i].title; }, '#');
  out_ += row([&](size_t i) { return std::string(widths[i], '.'); }, '#');
  out_ += "#\n";
  CallGraphText graph;
  if (s.call_graph) {
    graph.spec = *view_.call_graph;
    graph.total = s.percent_base;
  }
  for (size_t r = 0; r < shown.size(); ++r) {
    out_ += row([&](size_t i) { return columns[i].cells[r]; }, ' ');
    if (s.call_graph) AppendCallGraph(profile, shown[r]->tree, graph, out_);
  }
}

}  // namespace sample::report
