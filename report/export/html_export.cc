#include "report/export/html_export.h"

#include <fmt/format.h>

#include <optional>

#include "report/export/html_annotation.h"
#include "report/export/html_assets.h"
#include "report/export/html_data.h"
#include "report/export/xml_text.h"
#include "report/views/header_view.h"

namespace sample::report {
namespace {

// No fetch, image, font, frame or form target may leave the page: only its
// own inline script and style run. 'unsafe-inline' is what inline means
// here; there is nothing else for an injected script to reach.
constexpr std::string_view kPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'";

}  // namespace

Result<std::string> HtmlExporter::Export(const ExportInput& input) {
  const HeaderView header = BuildHeaderView(*input.recording);
  // The annotate panel's data: read only when the runner says how binaries
  // are found (input.binaries), as --annotate would find them.
  std::optional<AnnotateView> annotation;
  if (input.binaries != nullptr) {
    TRY_ASSIGN(annotation, BuildAnnotateView(*input.recording, PageAnnotateOptions(input),
                                             input.filter, *input.binaries));
  }
  const std::string title =
      header.cmdline.empty() ? "sample report" : "sample report: " + header.cmdline;
  std::string out;
  fmt::format_to(std::back_inserter(out),
                 "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                 "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n"
                 "<meta name=\"viewport\" content=\"width=device-width\">\n"
                 "<title>{}</title>\n<style>\n",
                 kPolicy, XmlEscape(title));
  out += html_assets::kStyle;
  out += "</style>\n</head>\n<body>\n";
  out += html_assets::kBody;
  out += "<script type=\"application/json\" id=\"sample-data\">\n";
  out += BuildHtmlData(input, header, annotation ? &*annotation : nullptr);
  out += "</script>\n<script>\n";
  out += html_assets::kScript;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace sample::report
