#include "report/export/svg_export.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "report/export/flame_diff.h"
#include "report/export/flame_svg_script.h"
#include "report/export/xml_text.h"

namespace sample::report {
namespace {

constexpr double kTop = 56;  // px above the frames: title, subtitle, controls
constexpr double kBottom = 34;
constexpr double kLabelBaseline =
    11.5;  // px below a frame's top edge       // px below: the details and match lines
constexpr double kCharWidth = 7.08;  // px, an average character of 12 px Verdana

// One line of a frame's <title>: a line break inside a name would start
// the next line, which the script reads as the name's end.
std::string OneLine(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return text;
}

// The part of `label` that fits `width` px: whole, cut with "..", or
// nothing (the script's fit() applies the same rule after a zoom).
std::string FitLabel(const std::string& label, double width) {
  const double chars = std::floor((width - 6) / kCharWidth);
  if (chars < 0) return "";
  const auto fits = static_cast<size_t>(chars);
  if (Utf8Length(label) <= fits) return label;
  if (fits < 3) return "";
  return std::string(Utf8Prefix(label, fits - 2)) + "..";
}

// "name\nwhat it is\ncounts": the tooltip, and what the script shows.
std::string FrameTitle(const FlameFrame& frame, const FlameLayout& layout,
                       const FlameSvgText& text) {
  std::string title = OneLine(frame.label);
  if (frame.kind) {
    title += fmt::format("\n{} ({})", OneLine(frame.dso), FrameKindName(*frame.kind));
  } else if (frame.depth == 1) {
    title += "\ncommand";
  }
  const double share = layout.total == 0 ? 0 : 100.0 * frame.weight / layout.total;
  title += fmt::format("\n{} sample{}", frame.samples, frame.samples == 1 ? "" : "s");
  if (text.unit != "samples") title += fmt::format(", {} {}", text.unit, frame.weight);
  title += fmt::format(", {:.2f}%", share);
  const std::string note = text.frame_note ? text.frame_note(frame) : "";
  if (!note.empty()) title += "\n" + OneLine(note);
  return title;
}

// A frame too narrow for a label gets no <text> (most frames of a big
// graph): the script adds one when a zoom makes room.
void WriteFrame(const FlameFrame& frame, const FlameLayout& layout,
                const FlameLayoutOptions& options, const FlameSvgText& text, std::string& out) {
  const double y = kTop + frame.y;
  fmt::format_to(std::back_inserter(out),
                 "<g class=\"f\" data-w=\"{}\"><title>{}</title>"
                 "<rect x=\"{:.2f}\" y=\"{:g}\" width=\"{:.2f}\" height=\"{:g}\" "
                 "fill=\"#{:02x}{:02x}{:02x}\"/>",
                 frame.weight, XmlEscape(FrameTitle(frame, layout, text)), frame.x, y, frame.width,
                 options.frame_height - 1, frame.colour.r, frame.colour.g, frame.colour.b);
  const std::string label = FitLabel(OneLine(frame.label), frame.width);
  if (!label.empty()) {
    fmt::format_to(std::back_inserter(out), "<text x=\"{:.2f}\" y=\"{:g}\">{}</text>", frame.x + 3,
                   y + kLabelBaseline, XmlEscape(label));
  }
  out += "</g>\n";
}

// Appends formatted text to one string.
struct Put {
  std::string& out;
  template <typename... Args>
  void operator()(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
  }
};

}  // namespace

std::string WriteFlameSvg(const FlameLayout& layout, const FlameLayoutOptions& options,
                          const FlameSvgText& text) {
  const double width = options.image_width;
  const double height = kTop + layout.height + kBottom;
  std::string out;
  Put put{out};
  put("<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:g}\" "
      "height=\"{:g}\" viewBox=\"0 0 {:g} {:g}\">\n",
      width, height, width, height);
  put("<title>{}</title>\n",
      XmlEscape(text.subtitle.empty() ? text.title : text.title + " | " + text.subtitle));
  put("<style>{}</style>\n", kFlameSvgStyle);
  put("<script type=\"text/javascript\"><![CDATA[{}]]></script>\n", kFlameSvgScript);
  put("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fdfdf6\"/>\n");
  put("<text id=\"title\" x=\"{:g}\" y=\"24\" text-anchor=\"middle\">{}</text>\n", width / 2,
      XmlEscape(text.title));
  put("<text id=\"subtitle\" x=\"{:g}\" y=\"42\" text-anchor=\"middle\">{}</text>\n", width / 2,
      XmlEscape(text.subtitle));
  put("<text id=\"reset\" class=\"control\" x=\"{:g}\" y=\"24\" style=\"display:none\">"
      "Reset zoom</text>\n",
      options.margin);
  put("<text id=\"search\" class=\"control\" x=\"{:g}\" y=\"24\" text-anchor=\"end\">Search"
      "</text>\n",
      width - options.margin);
  const double bottom_line = kTop + layout.height + 22;
  put("<text id=\"details\" x=\"{:g}\" y=\"{:g}\"></text>\n", options.margin, bottom_line);
  put("<text id=\"matched\" x=\"{:g}\" y=\"{:g}\" text-anchor=\"end\"></text>\n",
      width - options.margin, bottom_line);
  put("<g id=\"frames\" data-width=\"{:g}\" data-margin=\"{:g}\" data-frame-height=\"{:g}\" "
      "data-char-width=\"{:g}\" data-baseline=\"{:g}\" data-total=\"{}\" data-unit=\"{}\">\n",
      width, options.margin, options.frame_height, kCharWidth, kLabelBaseline, layout.total,
      XmlEscape(text.unit));
  for (const FlameFrame& frame : layout.frames) WriteFrame(frame, layout, options, text, out);
  put("</g>\n</svg>\n");
  return out;
}

namespace {

// Red for a path that takes more of the new recording, blue for less, the
// more saturated the larger the change (the largest is full colour); paths
// that did not change are a pale grey, as differential flame graphs draw
// them.
Rgb DiffColour(double delta, double max_abs_delta) {
  const double strength = max_abs_delta > 0 ? std::min(1.0, std::abs(delta) / max_abs_delta) : 0;
  const auto fade = static_cast<uint8_t>(std::lround(230 - 200 * strength));
  if (delta > 0) return Rgb{255, fade, fade};
  if (delta < 0) return Rgb{fade, fade, 255};
  return Rgb{230, 230, 230};
}

std::string Title(const ExportInput& input, const FlameLayoutOptions& options, bool diff) {
  const ExportSection& section = input.sections.front();
  const uint64_t samples = section.sample_count;
  return fmt::format("{}{} of {}: {} sample{}", diff ? "Differential " : "",
                     options.icicle ? (diff ? "icicle graph" : "Icicle graph")
                                    : (diff ? "flame graph" : "Flame graph"),
                     section.name, samples, samples == 1 ? "" : "s");
}

}  // namespace

Result<std::string> SvgExporter::Export(const ExportInput& input) {
  FlameLayoutOptions options;
  options.icicle = input.options.icicle;
  options.weight = input.options.weight;
  FlameSvgText text;
  text.unit = options.weight == ExportWeight::kPeriod ? "period" : "samples";
  if (!input.sections.empty() && input.PeriodWeighted(input.sections.front().event)) {
    options.weight = ExportWeight::kPeriod;
    const PeriodUnit unit = EventPeriodUnit(*input.recording, input.sections.front().event);
    text.unit = unit == PeriodUnit::kBytes ? "bytes" : "ns";
  }
  text.title = Title(input, options, input.baseline != nullptr);
  text.subtitle = input.command_line.empty() ? "(command line not recorded)" : input.command_line;
  if (input.baseline == nullptr) {
    const StackTree tree = BuildFlameTree(input);
    return "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n" +
           WriteFlameSvg(LayoutFlame(input, tree, options), options, text);
  }
  // --diff: widths from the new recording, colours from each path's change
  // of share against the baseline.
  const FlameDiff diff(*input.baseline, input, 0, /*by_comm=*/true);
  options.colour = [&diff](const StackTree&, uint32_t node) -> std::optional<Rgb> {
    return DiffColour(diff.Delta(node), diff.max_abs_delta());
  };
  text.frame_note = [&diff](const FlameFrame& frame) {
    return fmt::format("{:+.2f} points against the baseline ({} samples there)",
                       diff.Delta(frame.node), diff.diff().baseline(frame.node).total_samples);
  };
  text.subtitle += fmt::format(" | red: larger share than in the baseline, blue: smaller");
  if (diff.diff().unmatched_samples() != 0) {
    text.subtitle += fmt::format(" | {} baseline samples on paths this recording lacks",
                                 diff.diff().unmatched_samples());
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n" +
         WriteFlameSvg(LayoutFlame(input, diff.tree(), options), options, text);
}

}  // namespace sample::report
