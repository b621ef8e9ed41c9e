// HtmlData: the data the --format html page embeds and draws from, as one
// JSON document safe to place inside a <script> element: every '<', '>' and
// '&' is written as a \u escape, so no function name can close the element
// or start markup. It holds the recording's header facts, the functions of
// the kept samples (name, DSO, kind), and per event section the function
// table (self and total) and the merged stack tree in preorder, and the
// annotation of the hottest functions (html_annotation.h). One row per
// line, so goldens diff line by line; numbers are integers (samples or
// periods, as --folded-weight says), percentages are the page's to compute.
#pragma once

#include <string>

#include "report/export/export_input.h"
#include "report/views/annotate_view.h"
#include "report/views/header_view.h"

namespace sample::report {

// The JSON document (see the layout comment in html_data.cc); `annotation`:
// the view PageAnnotateOptions asked for, or null (then "annotate":null).
std::string BuildHtmlData(const ExportInput& input, const HeaderView& header,
                          const AnnotateView* annotation = nullptr);

}  // namespace sample::report
