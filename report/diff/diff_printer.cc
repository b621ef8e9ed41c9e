#include "report/diff/diff_printer.h"

#include <algorithm>

#include <fmt/format.h>

#include "libsample/percent.h"
#include "report/json/json_writer.h"
#include "report/text/display_text.h"
#include "report/text/text_table.h"

namespace sample::report {
namespace {

std::vector<TextColumn> Columns(const DiffSection& section, bool periods) {
  std::vector<TextColumn> columns = {{"Baseline", true, 8, {}}, {"Base samples", true, 0, {}}};
  if (periods) columns.push_back({"Base period", true, 0, {}});
  columns.push_back({"Delta", true, 7, {}});
  columns.push_back({"Samples", true, 0, {}});
  if (periods) columns.push_back({"Period", true, 0, {}});
  const bool data = section.data_object;
  if (data) columns.push_back({"Data Object", false, 0, {}});
  columns.push_back({"Shared Object", false, 0, {}});
  columns.push_back({"Symbol", false, 0, {}});
  for (const DiffEntry& e : section.entries) {
    size_t c = 0;
    // As perf diff: a function new in the second recording has no baseline
    // share but a base count of 0; one gone from it has no delta and no
    // new counts (its delta would be -Baseline).
    columns[c++].cells.push_back(e.before.present ? PercentText(e.before.share) : "");
    columns[c++].cells.push_back(fmt::format("{}", e.before.samples));
    if (periods) columns[c++].cells.push_back(fmt::format("{}", e.before.period));
    columns[c++].cells.push_back(e.after.present ? fmt::format("{:+.2f}%", e.delta) : "");
    columns[c++].cells.push_back(e.after.present ? fmt::format("{}", e.after.samples) : "");
    if (periods)
      columns[c++].cells.push_back(e.after.present ? fmt::format("{}", e.after.period) : "");
    if (data) columns[c++].cells.push_back(OneLine(e.data_object));
    columns[c++].cells.push_back(OneLine(e.dso));
    columns[c++].cells.push_back((e.kernel ? "[k] " : "[.] ") + OneLine(e.symbol));
  }
  return columns;
}

void AppendSection(std::string& out, const DiffSection& section, bool periods) {
  fmt::format_to(std::back_inserter(out), "# Event '{}'\n#\n", OneLine(section.event));
  fmt::format_to(std::back_inserter(out), "# Samples: {} in the baseline, {} in the new file\n",
                 section.before.samples, section.after.samples);
  fmt::format_to(std::back_inserter(out),
                 "# Event count (approx.): {} in the baseline, {} in the new file\n#\n",
                 section.before.period, section.after.period);
  const TextTable table(Columns(section, periods));
  out += table.Heading();
  for (size_t r = 0; r < section.entries.size(); ++r) out += table.Row(r);
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
                 OneLine(heading.baseline_path), OneLine(heading.new_path));
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
      if (s.data_object) json.Field("data_dso", e.data_object);
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
