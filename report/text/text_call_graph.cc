#include "report/text/text_call_graph.h"

#include <fmt/format.h>

#include "libsample/percent.h"
#include "report/text/display_text.h"
#include "report/views/event_sections.h"

namespace sample::report {
namespace {

// graph and fractal trees.
class TreeDrawer {
 public:
  TreeDrawer(const Profile& profile, const CallGraphTextOptions& options, std::string& out)
      : profile_(profile), options_(options), out_(out) {}

  void DrawRoot(const CallNode& root) {
    const std::string indent(options_.indent, ' ');
    const auto shown = Shown(root);
    if (shown.empty()) return;
    // A tree of the entry alone says nothing (self samples of a function
    // with no callers or callees above the threshold).
    if (shown.size() == 1 && shown[0]->period == root.period && Shown(*shown[0]).empty()) return;
    out_ += indent + "|\n";
    if (shown.size() == 1 && shown[0]->period == root.period) {
      out_ += indent + "---" + Name(*shown[0]) + "\n";
      DrawChildren(*shown[0], indent + "   ");
    } else {
      DrawBranches(root, shown, indent);
    }
    out_ += "\n";
  }

 private:
  // The share a branch is shown with: of the total, or of its parent.
  double Share(const CallNode& node, const CallNode& parent) const {
    return BranchShare(options_.spec, node.period, parent.period, options_.total);
  }

  std::vector<const CallNode*> Shown(const CallNode& node) const {
    std::vector<const CallNode*> shown;
    for (const CallNode& c : node.children) {
      if (c.period != 0 && Share(c, node) >= options_.spec.threshold) shown.push_back(&c);
    }
    return shown;
  }

  std::string Name(const CallNode& node) const {
    return OneLine(FunctionLabel(profile_.function(node.function)));
  }

  void DrawChildren(const CallNode& node, const std::string& prefix) {
    const auto shown = Shown(node);
    if (shown.empty()) return;
    if (shown.size() == 1 && shown[0]->period == node.period) {
      // A chain without branching continues straight down.
      out_ += prefix + Name(*shown[0]) + "\n";
      DrawChildren(*shown[0], prefix);
      return;
    }
    DrawBranches(node, shown, prefix);
  }

  void DrawBranches(const CallNode& parent, const std::vector<const CallNode*>& shown,
                    const std::string& prefix) {
    for (size_t i = 0; i < shown.size(); ++i) {
      const bool last = i + 1 == shown.size();
      const std::string pct = PercentText(Share(*shown[i], parent));
      out_ += prefix + "|\n";
      out_ += prefix + (last ? " --" : "|--") + pct + "--" + Name(*shown[i]) + "\n";
      const std::string child_prefix =
          prefix + (last ? " " : "|") + std::string(pct.size() + 4, ' ');
      DrawChildren(*shown[i], child_prefix);
    }
  }

  const Profile& profile_;
  const CallGraphTextOptions& options_;
  std::string& out_;
};

}  // namespace

void AppendCallGraph(const Profile& profile, const CallNode& root,
                     const CallGraphTextOptions& options, std::string& out) {
  switch (options.spec.mode) {
    case CallGraphMode::kNone:
      return;
    case CallGraphMode::kGraph:
    case CallGraphMode::kFractal:
      TreeDrawer(profile, options, out).DrawRoot(root);
      return;
    case CallGraphMode::kFlat: {
      const std::string frame_indent(options.indent + 4, ' ');
      for (const EndingChain& chain : EndingChains(root)) {
        const double share = Percentage(chain.period, options.total);
        if (share < options.spec.threshold) continue;
        out += fmt::format("{:>{}}\n", PercentText(share), options.indent + 5);
        for (const CallNode* node : chain.nodes) {
          out += frame_indent + OneLine(FunctionLabel(profile.function(node->function))) + "\n";
        }
        out += "\n";
      }
      return;
    }
    case CallGraphMode::kFolded:
      for (const EndingChain& chain : EndingChains(root)) {
        const double share = Percentage(chain.period, options.total);
        if (share < options.spec.threshold) continue;
        std::string line = PercentText(share) + " ";
        for (size_t i = 0; i < chain.nodes.size(); ++i) {
          if (i != 0) line += ';';
          line += OneLine(FunctionLabel(profile.function(chain.nodes[i]->function)));
        }
        out += line + "\n";
      }
      return;
  }
}

}  // namespace sample::report
