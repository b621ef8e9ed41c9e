// JsonPrinter: every view as one JSON document (--format json). The
// top-level object has "format": "sample-report", "version": 1 and one key
// per view asked for: "header", "stats", "sections" (flat profiles with
// call graphs) and "script". Field names are stable; they are listed in the
// README's usage section. 64-bit addresses are hex strings (JSON numbers
// lose precision past 2^53); periods and counts are integers; percentages
// are numbers with two decimals, as in the text output.
#pragma once

#include <string>

#include "report/json/json_writer.h"
#include "report/views/view_options.h"
#include "report/views/report_printer.h"

namespace sample::report {

class JsonPrinter : public ReportPrinter {
 public:
  JsonPrinter(const Recording& recording, const ViewOptions& view);

  void Header(const HeaderView& header) override;
  void Stats(const HeaderView& header, const LoadStats& stats) override;
  void Sections(const std::vector<EventSection>& sections) override;
  void Script(const ScriptView& script) override;
  std::string Finish() override;

 private:
  // Header and stats objects (json_header.cc).
  void Event(const EventInfo& event);
  void Toggles(const std::vector<ToggleInfo>& toggles);
  void Counts(const CountsInfo& counts);
  void Control(const ControlInfo& control);
  void StatsSectionsJson(const LoadStats& stats);
  void Section(const EventSection& section);
  void Entry(const EventSection& section, const FlatEntry& entry);
  void CallGraph(const EventSection& section, const CallNode& root);
  void Branches(const CallNode& node, uint64_t total);
  void FunctionFields(uint32_t function);
  void DataFields(const DataLocation& location);
  void TraceValueJson(const TraceValue& value);

  const Recording& recording_;
  const ViewOptions& view_;
  JsonWriter json_;
};

}  // namespace sample::report
