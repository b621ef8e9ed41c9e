#include "report/diff_printer.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/json_writer.h"

namespace sample::report {
namespace {

// One column of the table: perf diff's percentage columns are at least 8
// (Baseline) or 7 (Delta) wide; all as wide as their widest cell.
struct Column {
  std::string title;
  bool right_aligned = true;
  size_t min_width = 0;
  std::vector<std::string> cells;
  size_t Width() const {
    size_t w = std::max(title.size(), min_width);
    for (const std::string& c : cells) w = std::max(w, c.size());
    return w;
  }
};

// A row of the table: the first column after the lead character and a
// space, the others two spaces apart, no spaces after the last.
template <typename CellOf>
std::string Row(const std::vector<Column>& columns, const std::vector<size_t>& widths, char lead,
                CellOf cell_of) {
  std::string line(1, lead);
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string cell = cell_of(i);
    const std::string pad(widths[i] - std::min(widths[i], cell.size()), ' ');
    line += i == 0 ? " " : "  ";
    if (columns[i].right_aligned) {
      line += pad + cell;
    } else {
      line += cell;
      if (i + 1 != columns.size()) line += pad;
    }
  }
  return line + "\n";
}

std::string Percent(double value) { return fmt::format("{:.2f}%", value); }

std::vector<Column> Columns(const DiffSection& section, bool periods) {
  std::vector<Column> columns = {{"Baseline", true, 8, {}}, {"Base samples", true, 0, {}}};
  if (periods) columns.push_back({"Base period", true, 0, {}});
  columns.push_back({"Delta", true, 7, {}});
  columns.push_back({"Samples", true, 0, {}});
  if (periods) columns.push_back({"Period", true, 0, {}});
  columns.push_back({"Shared Object", false, 0, {}});
  columns.push_back({"Symbol", false, 0, {}});
  for (const DiffEntry& e : section.entries) {
    size_t c = 0;
    // As perf diff: a function new in the second recording has no baseline
    // share but a base count of 0; one gone from it has no delta and no
    // new counts (its delta would be -Baseline).
    columns[c++].cells.push_back(e.before.present ? Percent(e.before.share) : "");
    columns[c++].cells.push_back(fmt::format("{}", e.before.samples));
    if (periods) columns[c++].cells.push_back(fmt::format("{}", e.before.period));
    columns[c++].cells.push_back(e.after.present ? fmt::format("{:+.2f}%", e.delta) : "");
    columns[c++].cells.push_back(e.after.present ? fmt::format("{}", e.after.samples) : "");
    if (periods)
      columns[c++].cells.push_back(e.after.present ? fmt::format("{}", e.after.period) : "");
    columns[c++].cells.push_back(e.dso);
    columns[c++].cells.push_back((e.kernel ? "[k] " : "[.] ") + e.symbol);
  }
  return columns;
}

void AppendSection(std::string& out, const DiffSection& section, bool periods) {
  fmt::format_to(std::back_inserter(out), "# Event '{}'\n#\n", section.event);
  fmt::format_to(std::back_inserter(out), "# Samples: {} in the baseline, {} in the new file\n",
                 section.before.samples, section.after.samples);
  fmt::format_to(std::back_inserter(out),
                 "# Event count (approx.): {} in the baseline, {} in the new file\n#\n",
                 section.before.period, section.after.period);
  const std::vector<Column> columns = Columns(section, periods);
  std::vector<size_t> widths;
  for (const Column& c : columns) widths.push_back(c.Width());
  out += Row(columns, widths, '#', [&](size_t i) { return columns[i].title; });
  out += Row(columns, widths, '#', [&](size_t i) { return std::string(widths[i], '.'); });
  out += "#\n";
  for (size_t r = 0; r < section.entries.size(); ++r) {
    out += Row(columns, widths, ' ', [&](size_t i) { return columns[i].cells[r]; });
  }
}

void SideJson(JsonWriter& json, const char* key, const DiffSide& side) {
  json.Key(key);
  if (!side.present) {
    json.Null();
    return;
  }
  json.BeginObject()
      .Field("share", side.share)
      .Field("samples", side.samples)
      .Field("period", side.period)
      .EndObject();
}

}  // namespace

std::string DiffText(const DiffHeading& heading, const std::vector<DiffSection>& sections,
                     bool periods) {
  std::string out;
  fmt::format_to(std::back_inserter(out), "# Data files:\n#  [0] {} (Baseline)\n#  [1] {}\n#\n",
                 heading.baseline_path, heading.new_path);
  if (heading.children) out += "# Children: each function's share includes its callees' time\n#\n";
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i != 0) out += "\n";
    AppendSection(out, sections[i], periods);
  }
  return out;
}

std::string DiffJson(const DiffHeading& heading, const std::vector<DiffSection>& sections) {
  JsonWriter json;
  json.BeginObject()
      .Field("format", "sample-report-diff")
      .Field("version", 1)
      .Field("baseline", heading.baseline_path)
      .Field("new", heading.new_path)
      .Field("children", heading.children);
  json.Key("sections").BeginArray();
  for (const DiffSection& s : sections) {
    json.BeginObject().Field("event", s.event);
    json.Key("baseline")
        .BeginObject()
        .Field("samples", s.before.samples)
        .Field("period", s.before.period)
        .EndObject();
    json.Key("new")
        .BeginObject()
        .Field("samples", s.after.samples)
        .Field("period", s.after.period)
        .EndObject();
    json.Key("entries").BeginArray();
    for (const DiffEntry& e : s.entries) {
      json.BeginObject().Field("symbol", e.symbol).Field("dso", e.dso).Field("kernel", e.kernel);
      SideJson(json, "baseline", e.before);
      SideJson(json, "new", e.after);
      json.Field("delta", e.delta).EndObject();
    }
    json.EndArray().EndObject();
  }
  json.EndArray().EndObject();
  return json.Take();
}

}  // namespace sample::report
