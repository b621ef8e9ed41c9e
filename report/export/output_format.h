// OutputFormat: what sample-report writes, named as --format names it, and
// which one an output file's extension asks for when --format is not given.
//   text, json          the report's views (ReportPrinter)
//   folded, svg, html,  the samples' stacks as flame graphs and the files
//   pprof, speedscope,  other profilers read (Exporter, exporter.h)
//   gecko
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "libsample/result.h"

namespace sample::report {

enum class OutputFormat { kText, kJson, kFolded, kSvg, kHtml, kPprof, kSpeedscope, kGecko };

// "text", "json", "folded", ... as --format spells it.
std::string_view FormatName(OutputFormat format);

// The format --format NAME asks for; the error lists the names.
Result<OutputFormat> ParseOutputFormat(std::string_view name);

// The format an output path's extension names: .svg, .html (.htm), .pb.gz
// (.pprof), .folded, .speedscope.json, .gecko.json, .json, .txt; nullopt
// for any other.
std::optional<OutputFormat> FormatForPath(std::string_view path);

// The format -o PATH asks for when --format is not given: its
// extension's, text for a name without one (/dev/null, report, and
// report.2024-12-07: what follows the last dot has no letter); an
// extension that names no format (fg.png, out.log) is refused with the
// list.
Result<OutputFormat> FormatForOutput(std::string_view path);

// An export of the samples (not one of the report's views).
inline bool IsExport(OutputFormat format) {
  return format != OutputFormat::kText && format != OutputFormat::kJson;
}

// An export that lays samples out in time (speedscope's and the Firefox
// Profiler's timelines): its samples cannot be merged (LoadOptions::merge_samples).
inline bool ExportsSampleTimes(OutputFormat format) {
  return format == OutputFormat::kSpeedscope || format == OutputFormat::kGecko;
}

// Bytes no terminal should be sent (gzip-compressed pprof).
inline bool IsBinary(OutputFormat format) { return format == OutputFormat::kPprof; }

}  // namespace sample::report
