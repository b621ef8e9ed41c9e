// SvgExporter (--format svg, -o x.svg): an interactive flame graph in one
// self-contained SVG file. The root "all", then one frame per command, then
// functions outermost first; widths are samples, or period with
// --folded-weight period; --icicle draws the root at the top. Colours say
// the frame's kind (user, kernel, JIT, inlined, unknown). A title names the
// event and the recorded command line; hovering shows a frame's name, DSO,
// samples and share; clicking zooms; "Search" highlights the frames a
// regular expression matches and gives their share. One event: the first
// with samples, or --event's.
//
// WriteFlameSvg draws any FlameLayout (flame_layout.h), so that other
// flame graphs (a differential one, with colours of its own) share the
// drawing and its script (flame_svg_script.h).
#pragma once

#include <functional>
#include <string>

#include "report/export/exporter.h"
#include "report/export/flame_layout.h"

namespace sample::report {

struct FlameSvgText {
  std::string title;             // the heading
  std::string subtitle;          // under it (the recorded command line)
  std::string unit = "samples";  // what widths measure: "samples" or "period"
  // Optional: one more line for a frame's tooltip and details line (a
  // differential graph's change); "" adds none.
  std::function<std::string(const FlameFrame&)> frame_note;
};

// The <svg> element of `layout`, laid out with `options`, its script
// included; names escaped. No XML declaration, so that a page can embed it.
std::string WriteFlameSvg(const FlameLayout& layout, const FlameLayoutOptions& options,
                          const FlameSvgText& text);

class SvgExporter final : public Exporter {
 public:
  bool single_section() const override { return true; }
  Result<std::string> Export(const ExportInput& input) override;
};

}  // namespace sample::report
