// The HTML page's annotation: the annotate view (annotate_view.h) of the
// page's first event, as the "annotate" member of the embedded JSON
// (html_data.h), which the page's annotate panel (html/annotate.js) draws.
// The hottest functions holding kPageCoverage of the samples counted
// toward functions are annotated, at most kPageMaxFunctions: the page
// stays small, and a function left out says so in the panel.
//
// Compact, one row a line: an instruction is [offset from the function's
// start, text, weight, place], a place an index into one table of (file,
// line, inlined call) shared by all functions, a file an index into a
// table of paths. Source text is embedded only for the lines within
// kContextLines of a line with samples of a function whose source files
// may be read, from files of the owners its binary vouches for
// (AnnotatedFunction::source_owners: never those a recording's own tables
// name), each file read once. A function of
// more than kWholeFunction instructions keeps only those within
// kContextInstructions of a sampled one; each run left out is one row
// saying how many (they have no samples, so the shares still add up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "report/export/export_input.h"
#include "report/views/annotate_view.h"

namespace sample::report {

inline constexpr double kPageCoverage = 0.95;
inline constexpr size_t kPageMaxFunctions = 50;
inline constexpr uint32_t kContextLines = 2;
inline constexpr size_t kWholeFunction = 300;
inline constexpr size_t kContextInstructions = 10;
inline constexpr size_t kMaxSourceLineBytes = 300;  // longer lines are cut (minified code)

// What the page annotates: the hottest functions of `input`'s first
// section, with the bounds above.
AnnotateOptions PageAnnotateOptions(const ExportInput& input);

// Appends `"annotate":{...}` (layout: html_annotation.cc). `page_funcs[i]`:
// the page's function numbers ("funcs" rows) of view.functions[i];
// `period`: instructions weighed by period rather than samples, as the
// page's flame graph is.
void AppendHtmlAnnotation(const AnnotateView& view, const std::vector<std::vector<int>>& page_funcs,
                          bool period, std::string& out);

}  // namespace sample::report
