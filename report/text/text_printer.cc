#include "report/text/text_printer.h"

#include <algorithm>

#include <fmt/format.h>

#include "libsample/percent.h"
#include "libsample/string_parts.h"
#include "report/load/stack_unwinding.h"
#include "report/text/display_text.h"
#include "report/text/text_call_graph.h"
#include "report/text/text_header.h"
#include "report/text/text_script.h"
#include "report/text/text_stats.h"
#include "report/text/text_table.h"
#include "report/views/alloc_notes.h"

namespace sample::report {
namespace {

// The leader's percentage, then each group member's, as perf --group.
std::string Shares(uint64_t period, const std::vector<uint64_t>& members, const EventSection& s) {
  std::string cell = fmt::format("{:>7}", PercentText(Percentage(period, s.percent_base)));
  for (size_t m = 0; m < members.size(); ++m) {
    cell += fmt::format("  {:>7}", PercentText(Percentage(members[m], s.member_bases[m])));
  }
  return cell;
}

// The leader's period, then each member's, each as wide as its event's
// total so that the parts line up from row to row.
std::string Periods(uint64_t period, const std::vector<uint64_t>& members, const EventSection& s) {
  if (s.time_weighted) return FormatNs(period);  // no group members
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
    case SortKey::kInline:
      return "Symbol";
    case SortKey::kSrcline:
      return "Source:Line";
    case SortKey::kDsoDaddr:
      return "Data Object";
    case SortKey::kSymbolDaddr:
      return "Data Symbol";
    case SortKey::kCount:
      break;
  }
  return "";
}

std::string SortKeyCell(const Profile& profile, const FlatEntry& e, SortKey key) {
  switch (key) {
    case SortKey::kComm:
      return OneLine(profile.comm(e.comm));
    case SortKey::kPid:
      return fmt::format("{}", e.pid);
    case SortKey::kTid:
      return fmt::format("{}", e.tid);
    case SortKey::kCpu:
      return fmt::format("{:03}", e.cpu);
    case SortKey::kDso:
      return OneLine(Basename(profile.dso_name(e.dso)));
    case SortKey::kSym:
    case SortKey::kInline: {
      const Function& f = profile.function(e.function);
      return (f.kernel ? "[k] " : "[.] ") + OneLine(FunctionLabel(f));
    }
    case SortKey::kSrcline:
      return OneLine(profile.srcline(e.srcline));
    case SortKey::kDsoDaddr:
      return OneLine(Basename(profile.dso_name(e.data_dso)));
    case SortKey::kSymbolDaddr:
      return OneLine(DataSymbolLabel(profile, e.data));
    case SortKey::kCount:
      break;
  }
  return "";
}

// The '#' lines above an event's table: how many samples and how much they
// counted, what was lost or left out, and an empty '#' line.
std::string SectionComments(const EventSection& s, const Recording& recording,
                            bool relative_percentage) {
  const Profile& profile = recording.profile;
  std::string out = fmt::format("# Samples: {} of event{} '{}'\n", s.flat.samples,
                                s.members.empty() ? "" : "s", OneLine(s.title));
  std::string count = fmt::format("# Event count (approx.): {}", s.flat.period);
  if (s.time_weighted) {
    const char* what = s.event == recording.wall_event      ? "on and off the CPU"
                       : s.event == recording.off_cpu_event ? "blocked off the CPU"
                                                            : "preempted, waiting for a CPU";
    count = fmt::format("# Time: {} ({} ns) {}", FormatNs(s.flat.period), s.flat.period, what);
  }
  const std::vector<std::string> alloc = AllocSectionLines(s, recording);
  if (!alloc.empty()) {
    count = "# " + alloc.front();
    for (size_t i = 1; i < alloc.size(); ++i) count += "\n# " + alloc[i];
  }
  if (!s.members.empty()) {
    count += fmt::format(" ({})", OneLine(profile.event_name(s.event)));
    for (size_t m = 0; m < s.members.size(); ++m) {
      count += fmt::format(", {} ({})", s.flat.member_periods[m],
                           OneLine(profile.event_name(s.members[m])));
    }
  }
  out += count + "\n";
  out += fmt::format("# Lost samples: {}\n", recording.stats.lost_samples);
  if (s.unknown_frames != 0) {
    out += fmt::format("# Unresolved frames: {} of {} shown as [unknown]\n", s.unknown_frames,
                       s.frames);
  }
  if (!recording.finalized) out += "# Warning: the file was not finalized; partial recording\n";
  // Chains the stack copy completed are whole again.
  const uint64_t cut = recording.stats.cut_chains - recording.stats.unwind.cut_chains_completed;
  if (cut != 0) {
    out += fmt::format(
        "# Warning: {} call chains cut at {} frames; their callers are missing (sample-record "
        "--max-stack)\n",
        cut, recording.stats.chain_limit);
  }
  if (const std::optional<uint64_t> size = SmallerStackCopy(recording.stats.unwind)) {
    out += fmt::format(
        "# Note: 99% of the complete DWARF walks read {} bytes or less of the {}-byte stack copies; "
        "sample-record --call-graph dwarf,{} would keep their chains in less data\n",
        StackReachWithin(recording.stats.unwind, 0.99), recording.stats.unwind.stack_copy_size,
        *size);
  }
  if (s.filtered) {
    out += fmt::format("# Filtered: {} of {} samples kept; percentages of the {}\n", s.flat.samples,
                       s.all_samples, relative_percentage ? "kept samples" : "whole event");
  }
  return out + "#\n";
}

// The table's columns, empty: the shares (children and self with
// --children), -n's samples, --show-total-period's periods, a sort key each.
std::vector<TextColumn> EmptyColumns(const EventSection& s, const ViewOptions& view) {
  std::vector<TextColumn> columns;
  if (s.children) {
    columns.push_back({"Children", true, 8, {}});
    columns.push_back({"Self", true, 8, {}});
  } else {
    columns.push_back({"Overhead", true, 8, {}});
  }
  if (view.show_nr_samples) columns.push_back({"Samples", true, 0, {}});
  if (view.show_total_period) columns.push_back({"Period", true, 0, {}});
  for (SortKey key : view.sort_keys) columns.push_back({SortKeyTitle(key), false, 0, {}});
  return columns;
}

}  // namespace

std::vector<TextColumn> TableColumns(const EventSection& s, const std::vector<const FlatEntry*>& shown,
                                     const Profile& profile, const ViewOptions& view) {
  std::vector<TextColumn> columns = EmptyColumns(s, view);
  for (const FlatEntry* entry : shown) {
    const FlatEntry& e = *entry;
    size_t c = 0;
    if (s.children) {
      columns[c++].cells.push_back(Shares(e.children_period, e.member_children, s));
      columns[c++].cells.push_back(Shares(e.self_period, e.member_self, s));
    } else {
      columns[c++].cells.push_back(Shares(e.self_period, e.member_self, s));
    }
    if (view.show_nr_samples) {
      columns[c++].cells.push_back(
          fmt::format("{}", s.children ? e.children_samples : e.self_samples));
    }
    if (view.show_total_period) {
      columns[c++].cells.push_back(s.children ? Periods(e.children_period, e.member_children, s)
                                              : Periods(e.self_period, e.member_self, s));
    }
    for (SortKey key : view.sort_keys) columns[c++].cells.push_back(SortKeyCell(profile, e, key));
  }
  return columns;
}

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
  out_ += SectionComments(s, recording_, view_.relative_percentage);
  const std::vector<const FlatEntry*> shown = ShownEntries(s, view_.percent_limit);
  const TextTable table(TableColumns(s, shown, recording_.profile, view_));
  out_ += table.Heading();
  CallGraphTextOptions graph_options;
  if (s.call_graph) {
    graph_options.spec = *view_.call_graph;
    graph_options.total = s.percent_base;
  }
  for (size_t r = 0; r < shown.size(); ++r) {
    out_ += table.Row(r);
    if (s.call_graph) AppendCallGraph(recording_.profile, shown[r]->tree, graph_options, out_);
  }
}

}  // namespace sample::report
