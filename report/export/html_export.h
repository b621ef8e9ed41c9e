// HtmlExporter (--format html, -o x.html): one self-contained page that
// opens offline: the header facts, a sortable function table, a flame graph
// per event section (zoom on click), the callers and callees of a selected
// function, a search that highlights matches and sums their share, and the
// annotated source and instructions of the hottest functions, opened in a
// panel by clicking a function (html_annotation.h). The page's script and
// style (report/export/html/*.js, *.css, embedded at build time) are
// inline, its data is the JSON of html_data.h, and a
// Content-Security-Policy meta tag forbids every network request.
#pragma once

#include "report/export/exporter.h"

namespace sample::report {

class HtmlExporter final : public Exporter {
 public:
  Result<std::string> Export(const ExportInput& input) override;
};

}  // namespace sample::report
