#include "report/text_printer.h"

#include <algorithm>

#include <fmt/format.h>

namespace sample::report {
namespace {

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Percent(uint64_t part, uint64_t total) {
  return fmt::format("{:.2f}%", total == 0 ? 0.0 : 100.0 * double(part) / double(total));
}

struct Column {
  std::string title;
  bool right_aligned;
  std::vector<std::string> cells;
  size_t width() const {
    size_t w = title.size();
    for (const std::string& c : cells) w = std::max(w, c.size());
    return w;
  }
};

class TreePrinter {
 public:
  TreePrinter(const Profile& profile, uint64_t total, double threshold, std::string& out)
      : profile_(profile), total_(total), threshold_(threshold), out_(out) {}

  void PrintRoot(const CallNode& root, const std::string& indent) {
    const auto shown = Shown(root);
    if (shown.empty()) return;
    out_ += indent + "|\n";
    if (shown.size() == 1 && shown[0]->period == root.period) {
      out_ += indent + "---" + Name(*shown[0]) + "\n";
      PrintChildren(*shown[0], indent + "   ");
    } else {
      PrintBranches(shown, indent);
    }
    out_ += "\n";
  }

 private:
  std::vector<const CallNode*> Shown(const CallNode& node) const {
    std::vector<const CallNode*> shown;
    for (const CallNode& c : node.children) {
      if (total_ != 0 && 100.0 * double(c.period) / double(total_) >= threshold_)
        shown.push_back(&c);
    }
    return shown;
  }

  std::string Name(const CallNode& node) const { return profile_.function(node.function).name; }

  void PrintChildren(const CallNode& node, const std::string& prefix) {
    const auto shown = Shown(node);
    if (shown.empty()) return;
    if (shown.size() == 1 && shown[0]->period == node.period) {
      // A chain without branching continues straight down.
      out_ += prefix + Name(*shown[0]) + "\n";
      PrintChildren(*shown[0], prefix);
      return;
    }
    PrintBranches(shown, prefix);
  }

  void PrintBranches(const std::vector<const CallNode*>& shown, const std::string& prefix) {
    for (size_t i = 0; i < shown.size(); ++i) {
      const bool last = i + 1 == shown.size();
      const std::string pct = Percent(shown[i]->period, total_);
      out_ += prefix + "|\n";
      out_ += prefix + (last ? " --" : "|--") + pct + "--" + Name(*shown[i]) + "\n";
      const std::string child_prefix =
          prefix + (last ? " " : "|") + std::string(pct.size() + 4, ' ');
      PrintChildren(*shown[i], child_prefix);
    }
  }

  const Profile& profile_;
  uint64_t total_;
  double threshold_;
  std::string& out_;
};

}  // namespace

std::string FormatTextReport(const Recording& recording, const std::vector<FlatEntry>& entries,
                             const TextOptions& options) {
  const Profile& profile = recording.profile;
  const LoadStats& stats = recording.stats;
  const uint64_t total = profile.total_period(options.event);
  std::string out;
  out += fmt::format("# Samples: {} of event '{}'\n", profile.sample_count(options.event),
                     profile.event_name(options.event));
  out += fmt::format("# Event count (approx.): {}\n", total);
  out += fmt::format("# Lost samples: {}\n", stats.lost_samples);
  if (stats.unknown_frames != 0) {
    out += fmt::format("# Unresolved frames: {} of {} shown as [unknown]\n", stats.unknown_frames,
                       stats.frames);
  }
  if (!recording.finalized) out += "# Warning: the file was not finalized; partial recording\n";
  out += "#\n";

  std::vector<Column> columns;
  if (options.children) {
    columns.push_back({"Children", true, {}});
    columns.push_back({"Self", true, {}});
  } else {
    columns.push_back({"Overhead", true, {}});
  }
  columns.push_back({"Samples", true, {}});
  for (SortKey key : options.sort_keys) {
    switch (key) {
      case SortKey::kComm:
        columns.push_back({"Command", false, {}});
        break;
      case SortKey::kPid:
        columns.push_back({"Pid", true, {}});
        break;
      case SortKey::kTid:
        columns.push_back({"Tid", true, {}});
        break;
      case SortKey::kCpu:
        columns.push_back({"CPU", true, {}});
        break;
      case SortKey::kDso:
        columns.push_back({"Shared Object", false, {}});
        break;
      case SortKey::kSym:
        columns.push_back({"Symbol", false, {}});
        break;
    }
  }

  std::vector<const FlatEntry*> shown;
  for (const FlatEntry& e : entries) {
    const uint64_t period = options.children ? e.children_period : e.self_period;
    if (total == 0 || 100.0 * double(period) / double(total) < options.percent_limit) continue;
    if (period == 0) continue;
    shown.push_back(&e);
    size_t c = 0;
    if (options.children) {
      columns[c++].cells.push_back(Percent(e.children_period, total));
      columns[c++].cells.push_back(Percent(e.self_period, total));
      columns[c++].cells.push_back(fmt::format("{}", e.children_samples));
    } else {
      columns[c++].cells.push_back(Percent(e.self_period, total));
      columns[c++].cells.push_back(fmt::format("{}", e.self_samples));
    }
    for (SortKey key : options.sort_keys) {
      std::string cell;
      switch (key) {
        case SortKey::kComm:
          cell = profile.comm(e.comm);
          break;
        case SortKey::kPid:
          cell = fmt::format("{}", e.pid);
          break;
        case SortKey::kTid:
          cell = fmt::format("{}", e.tid);
          break;
        case SortKey::kCpu:
          cell = fmt::format("{:03}", e.cpu);
          break;
        case SortKey::kDso:
          cell = Basename(profile.dso_name(e.dso));
          break;
        case SortKey::kSym: {
          const Function& f = profile.function(e.function);
          cell = (f.kernel ? "[k] " : "[.] ") + f.name;
          break;
        }
      }
      columns[c++].cells.push_back(std::move(cell));
    }
  }

  std::vector<size_t> widths;
  for (const Column& c : columns) widths.push_back(c.width());
  auto row = [&](auto cell_of, char lead) {
    std::string line(1, lead);
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string cell = cell_of(i);
      const bool last = i + 1 == columns.size();
      line += "  ";
      if (columns[i].right_aligned) {
        line += std::string(widths[i] - std::min(widths[i], cell.size()), ' ') + cell;
      } else {
        line += cell;
        if (!last) line += std::string(widths[i] - std::min(widths[i], cell.size()), ' ');
      }
    }
    return line + "\n";
  };
  out += row([&](size_t i) { return columns[i].title; }, '#');
  out += row([&](size_t i) { return std::string(columns[i].title.size(), '.'); }, '#');
  out += "#\n";
  const std::string indent(widths[0] + 5, ' ');
  for (size_t r = 0; r < shown.size(); ++r) {
    out += row([&](size_t i) { return columns[i].cells[r]; }, ' ');
    if (options.call_graph) {
      TreePrinter(profile, total, options.graph_threshold, out).PrintRoot(shown[r]->tree, indent);
    }
  }
  return out;
}

}  // namespace sample::report
