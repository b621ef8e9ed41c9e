// TextPrinter: the text output, in perf report --stdio's layout: per event a
// header of '#' comment lines, then the flat profile table, and under each
// entry (with -g) its call graph. The sections are TextPrinter's own (in
// text_printer.cc); the other views it appends from their own files:
// --header's '#' block (text_header.h), --stats' counts (text_stats.h),
// --script's perf-script lines (text_script.h) and the call-graph drawing
// under an entry (text_call_graph.h). Owns the text until Finish().
#pragma once

#include <string>

#include "report/views/view_options.h"
#include "report/text/text_table.h"
#include "report/views/report_printer.h"

namespace sample::report {

// The table of a section's entries `shown`, as the text report prints it:
// the shares (children and self with --children), -n's samples,
// --show-total-period's periods, a cell for each sort key. (Also the rows
// of the terminal browser.)
std::vector<TextColumn> TableColumns(const EventSection& s, const std::vector<const FlatEntry*>& shown,
                                     const Profile& profile, const ViewOptions& view);

class TextPrinter : public ReportPrinter {
 public:
  TextPrinter(const Recording& recording, const ViewOptions& view)
      : recording_(recording), view_(view) {}

  void Header(const HeaderView& header) override;
  void Stats(const HeaderView& header, const LoadStats& stats) override;
  void Sections(const std::vector<EventSection>& sections) override;
  void Script(const ScriptView& script) override;
  std::string Finish() override { return std::move(out_); }

 private:
  void Section(const EventSection& section);

  const Recording& recording_;
  const ViewOptions& view_;
  std::string out_;
};

}  // namespace sample::report
