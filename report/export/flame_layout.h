// FlameLayout: the geometry of a flame graph, apart from how it is drawn.
// A StackTree of the kept samples (the root "all", one node per command,
// then functions outermost first) becomes a list of rectangles: each
// frame's x and width in pixels proportional to its weight (samples, or
// period with --folded-weight period), its depth and y (the root at the
// bottom, or at the top for --icicle), its label, kind and colour. Frames
// narrower than a minimum width are left out with everything above them,
// so a recording of a million samples still gives a small drawing.
//
// The SVG writer (svg_export.h) draws a FlameLayout; other renderers and a
// differential flame graph (widths from one recording, colours from the
// change against another) reuse it through FlameLayoutOptions::colour.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/model/stack_tree.h"
#include "report/export/export_input.h"

namespace sample::report {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

struct FlameFrame {
  uint32_t node = 0;              // StackTree node id
  uint32_t depth = 0;             // 0: the root
  double x = 0;                   // left edge, px from the image's left edge
  double width = 0;               // px
  double y = 0;                   // top edge, px from the top of the frames' area
  std::string label;              // "all", the command, or the function's label; not escaped
  std::string dso;                // the function's DSO; "" for the root and commands
  std::optional<FrameKind> kind;  // nullopt for the root and commands
  uint64_t samples = 0;           // samples whose stack passes through the frame
  uint64_t weight = 0;            // what the width measures: samples or period
  Rgb colour;
};

// A node's colour in place of its kind's (a differential flame graph's
// colour by change); nullopt keeps the kind's colour.
using FlameColour = std::function<std::optional<Rgb>(const StackTree& tree, uint32_t node)>;

struct FlameLayoutOptions {
  double image_width = 1200;  // px, the margins included
  double margin = 10;         // px left and right of the frames
  double frame_height = 16;   // px per level, the gap included
  double min_width = 0.1;     // px; narrower frames are left out, and their children
  bool icicle = false;        // the root at the top, callees below
  ExportWeight weight = ExportWeight::kSamples;
  FlameColour colour;  // optional
};

struct FlameLayout {
  std::vector<FlameFrame> frames;  // parents before children, siblings left to right
  uint64_t total = 0;              // the root's weight
  uint64_t total_samples = 0;      // the root's samples
  uint32_t max_depth = 0;          // of the drawn frames
  double height = 0;               // of the frames' area: (max_depth + 1) * frame_height
  size_t omitted = 0;              // subtrees left out as too narrow
};

// The kept samples of input's first section merged from the root, one node
// per command first, children sorted by name.
StackTree BuildFlameTree(const ExportInput& input);

FlameLayout LayoutFlame(const ExportInput& input, const StackTree& tree,
                        const FlameLayoutOptions& options);

// A frame's colour: its kind's hue (user warm red to yellow, kernel blue,
// JIT green, inlined aqua, unknown grey; the root and commands violet),
// shaded by a hash of its name, so a function has the same colour in every
// graph and neighbours with different names differ.
Rgb FrameColour(std::optional<FrameKind> kind, std::string_view name);

}  // namespace sample::report
