#include "report/export/flame_layout.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>
#include <utility>

namespace sample::report {
namespace {

// FNV-1a: stable across runs and machines (std::hash is neither promised).
uint64_t NameHash(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// HSL (hue in degrees, saturation and lightness in [0, 1]) to RGB.
Rgb FromHsl(double hue, double saturation, double lightness) {
  const double c = (1 - std::fabs(2 * lightness - 1)) * saturation;
  const double h = std::fmod(hue, 360.0) / 60.0;
  const double x = c * (1 - std::fabs(std::fmod(h, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (h < 1) {
    r = c, g = x;
  } else if (h < 2) {
    r = x, g = c;
  } else if (h < 3) {
    g = c, b = x;
  } else if (h < 4) {
    g = x, b = c;
  } else if (h < 5) {
    r = x, b = c;
  } else {
    r = c, b = x;
  }
  const double m = lightness - c / 2;
  auto byte = [m](double v) { return static_cast<uint8_t>(std::lround((v + m) * 255)); };
  return Rgb{byte(r), byte(g), byte(b)};
}

struct Hue {
  double from, span, saturation;
};

Hue HueOf(std::optional<FrameKind> kind) {
  if (!kind) return {265, 20, 0.35};  // the root and commands
  switch (*kind) {
    case FrameKind::kUser:
      return {0, 50, 0.80};
    case FrameKind::kKernel:
      return {195, 30, 0.65};
    case FrameKind::kJit:
      return {90, 45, 0.55};
    case FrameKind::kInlined:
      return {170, 15, 0.60};
    case FrameKind::kUnknown:
      return {0, 0, 0.0};
  }
  return {0, 0, 0.0};
}

std::string NodeLabel(const ExportInput& input, const StackNode& node) {
  if (node.function != StackNode::kNone)
    return FunctionLabel(input.profile().function(node.function));
  if (node.comm != StackNode::kNone) return input.profile().comm(node.comm);
  return "all";
}

}  // namespace

Rgb FrameColour(std::optional<FrameKind> kind, std::string_view name) {
  const Hue hue = HueOf(kind);
  const uint64_t h = NameHash(name);
  const double along = static_cast<double>(h & 0xffff) / 0xffff;
  const double light = static_cast<double>((h >> 16) & 0xffff) / 0xffff;
  return FromHsl(hue.from + along * hue.span, hue.saturation, 0.58 + 0.14 * light);
}

StackTree BuildFlameTree(const ExportInput& input) {
  return BuildStackTree(input, input.sections.front(), /*by_comm=*/true);
}

FlameLayout LayoutFlame(const ExportInput& input, const StackTree& tree,
                        const FlameLayoutOptions& options) {
  const bool period = options.weight == ExportWeight::kPeriod;
  auto weight_of = [&](const StackNode& n) { return period ? n.total_period : n.total_samples; };
  FlameLayout layout;
  layout.total = weight_of(tree.node(StackTree::kRoot));
  layout.total_samples = tree.node(StackTree::kRoot).total_samples;
  const double scale =
      layout.total == 0 ? 0 : (options.image_width - 2 * options.margin) / layout.total;
  // Pre-order, children left to right. A frame's x comes from the weight of
  // everything left of it, not from summed rounded widths, so frames never
  // drift off their parents.
  std::vector<std::pair<uint32_t, uint64_t>> pending = {{StackTree::kRoot, 0}};  // node, offset
  while (!pending.empty()) {
    const auto [id, offset] = pending.back();
    pending.pop_back();
    const StackNode& node = tree.node(id);
    const uint64_t weight = weight_of(node);
    const double width = static_cast<double>(weight) * scale;
    if (width < options.min_width || (weight == 0 && id != StackTree::kRoot)) {
      ++layout.omitted;
      continue;
    }
    FlameFrame frame;
    frame.node = id;
    frame.depth = node.depth;
    frame.x = options.margin + static_cast<double>(offset) * scale;
    frame.width = width;
    frame.label = NodeLabel(input, node);
    if (node.function != StackNode::kNone) {
      frame.kind = input.Kind(node.function);
      frame.dso = input.profile().dso_name(input.profile().function(node.function).dso);
    }
    frame.samples = node.total_samples;
    frame.weight = weight;
    std::optional<Rgb> colour;
    if (options.colour) colour = options.colour(tree, id);
    frame.colour = colour ? *colour : FrameColour(frame.kind, frame.label);
    layout.max_depth = std::max(layout.max_depth, frame.depth);
    layout.frames.push_back(std::move(frame));
    // Children's offsets, pushed right to left so the leftmost pops first.
    std::vector<std::pair<uint32_t, uint64_t>> children;
    uint64_t child_offset = offset;
    for (uint32_t child : node.children) {
      children.emplace_back(child, child_offset);
      child_offset += weight_of(tree.node(child));
    }
    pending.insert(pending.end(), children.rbegin(), children.rend());
  }
  layout.height = (layout.max_depth + 1) * options.frame_height;
  for (FlameFrame& frame : layout.frames) {
    const uint32_t level = options.icicle ? frame.depth : layout.max_depth - frame.depth;
    frame.y = level * options.frame_height;
  }
  return layout;
}

}  // namespace sample::report
