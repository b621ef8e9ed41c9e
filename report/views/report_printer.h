// ReportPrinter: the one interface every output format implements over the
// same computed views (flat profile sections with call graphs, header,
// statistics, per-sample script). RunReport calls the views asked for, in
// that order, then Finish() for the whole output. Implementations:
// TextPrinter (perf report --stdio layout) and JsonPrinter (one document).
#pragma once

#include <string>
#include <vector>

#include "report/views/event_sections.h"
#include "report/views/header_view.h"
#include "report/views/script_view.h"

namespace sample::report {

class ReportPrinter {
 public:
  virtual ~ReportPrinter() = default;
  virtual void Header(const HeaderView& header) = 0;
  virtual void Stats(const HeaderView& header, const LoadStats& stats) = 0;
  virtual void Sections(const std::vector<EventSection>& sections) = 0;
  virtual void Script(const ScriptView& script) = 0;
  // The complete output; call once, after the views.
  virtual std::string Finish() = 0;
};

}  // namespace sample::report
