#include "report/export/exporter.h"

#include <fmt/format.h>

#include "report/export/folded_export.h"
#include "report/export/gecko_export.h"
#include "report/export/html_export.h"
#include "report/export/pprof_export.h"
#include "report/export/speedscope_export.h"
#include "report/export/svg_export.h"

namespace sample::report {

Result<std::unique_ptr<Exporter>> MakeExporter(OutputFormat format) {
  switch (format) {
    case OutputFormat::kFolded: return std::make_unique<FoldedExporter>();
    case OutputFormat::kSpeedscope: return std::make_unique<SpeedscopeExporter>();
    case OutputFormat::kGecko: return std::make_unique<GeckoExporter>();
    case OutputFormat::kSvg: return std::make_unique<SvgExporter>();
    case OutputFormat::kPprof: return std::make_unique<PprofExporter>();
    case OutputFormat::kHtml: return std::make_unique<HtmlExporter>();
    default: break;
  }
  return Fail(fmt::format("--format {}: not available in this build", FormatName(format)));
}

}  // namespace sample::report
