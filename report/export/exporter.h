// Exporter: the one interface of every export of the samples (folded
// stacks, flame graphs, pprof, speedscope, ...), beside ReportPrinter,
// which prints the report's views. An exporter turns an ExportInput (the
// kept samples of each section, their stacks cut to --max-stack) into the
// bytes of one file; RunReport writes them to -o or standard output.
#pragma once

#include <memory>
#include <string>

#include "libsample/result.h"
#include "report/export/export_input.h"
#include "report/export/output_format.h"

namespace sample::report {

class Exporter {
 public:
  virtual ~Exporter() = default;
  // The format draws one profile: BuildExportInput keeps one section.
  virtual bool single_section() const { return false; }
  // The whole file.
  virtual Result<std::string> Export(const ExportInput& input) = 0;
};

// The exporter of `format` (IsExport(format)).
Result<std::unique_ptr<Exporter>> MakeExporter(OutputFormat format);

}  // namespace sample::report
