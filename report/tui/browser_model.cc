#include "report/tui/browser_model.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "libsample/percent.h"
#include "libsample/string_parts.h"
#include "report/text/display_text.h"
#include "report/text/text_printer.h"
#include "report/text/text_table.h"

namespace sample::report {
namespace {

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

BrowserModel::BrowserModel(const Recording& recording, ViewOptions view, SampleFilterSpec filters)
    : recording_(recording), view_(std::move(view)), filters_(std::move(filters)) {
  // Rows unfold into their call graphs: ask for them whatever -g said.
  if (!view_.call_graph || view_.call_graph->mode == CallGraphMode::kNone) {
    CallGraphSpec spec;
    if (view_.call_graph) spec.order = view_.call_graph->order;
    view_.call_graph = spec;
  }
  Rebuild();
}

SampleFilterSpec BrowserModel::Filters() const {
  SampleFilterSpec spec = filters_;
  for (const ZoomStep& zoom : zooms_) {
    switch (zoom.zoom) {
      case Zoom::kThread:
        spec.lists.tids = {zoom.value};
        break;
      case Zoom::kDso:
        spec.lists.dsos = {zoom.text};
        break;
      case Zoom::kComm:
        spec.lists.comms = {zoom.text};
        break;
    }
  }
  return spec;
}

void BrowserModel::Rebuild() {
  const SampleFilter filter(Filters(), recording_.profile);
  sections_ = BuildEventSections(recording_, view_, filter);
  // The event asked for, if it has a section (a live interval may have
  // none of its samples: the next one shows it again).
  section_ = 0;
  for (size_t i = 0; i < sections_.size(); ++i) {
    if (event_ && sections_[i].event == *event_) section_ = i;
  }
  if (!event_ && !sections_.empty()) event_ = sections_.front().event;
  shown_.clear();
  row_text_.clear();
  heading_.clear();
  if (!sections_.empty()) {
    const EventSection& section = sections_[section_];
    shown_ = ShownEntries(section, view_.percent_limit);
    const TextTable table(TableColumns(section, shown_, recording_.profile, view_));
    heading_ = FirstLine(table.Heading());
    for (size_t i = 0; i < shown_.size(); ++i) row_text_.push_back(FirstLine(table.Row(i)));
  }
  unfolded_.clear();
  cursor_ = 0;
  Relayout();
}

void BrowserModel::Relayout() {
  lines_.clear();
  nodes_.clear();
  std::vector<uint32_t> path;
  for (uint32_t row = 0; row < shown_.size(); ++row) {
    path = {row};
    const bool unfolded = unfolded_.contains(path);
    lines_.push_back(BrowserLine{row_text_[row], 0, HasShownChild(shown_[row]->tree), unfolded});
    nodes_.push_back(Node{path});
    if (unfolded) AddNodeLines(shown_[row]->tree, path);
  }
  if (cursor_ >= lines_.size()) cursor_ = lines_.empty() ? 0 : lines_.size() - 1;
}

bool BrowserModel::HasShownChild(const CallNode& node) const {
  const double threshold = view_.call_graph ? view_.call_graph->threshold : 0.0;
  const uint64_t base = sections_[section_].percent_base;
  return std::ranges::any_of(node.children, [&](const CallNode& child) {
    return Percentage(child.period, base) >= threshold;
  });
}

void BrowserModel::AddNodeLines(const CallNode& node, std::vector<uint32_t>& path) {
  const EventSection& section = sections_[section_];
  const double threshold = view_.call_graph ? view_.call_graph->threshold : 0.0;
  for (uint32_t i = 0; i < node.children.size(); ++i) {
    const CallNode& child = node.children[i];
    const double share = Percentage(child.period, section.percent_base);
    if (share < threshold) continue;
    path.push_back(i);
    const bool unfolded = unfolded_.contains(path);
    const bool foldable = HasShownChild(child);
    const std::string marker = !foldable ? "  " : unfolded ? "- " : "+ ";
    std::string text =
        fmt::format("{:{}}{}{:>7}  {}", "", 2 * path.size(), marker, PercentText(share),
                    OneLine(FunctionLabel(recording_.profile.function(child.function))));
    lines_.push_back(BrowserLine{std::move(text), path.size() - 1, foldable, unfolded});
    nodes_.push_back(Node{path});
    if (unfolded) AddNodeLines(child, path);
    path.pop_back();
  }
}

const CallNode* BrowserModel::NodeAt(const std::vector<uint32_t>& path) const {
  if (path.empty() || path[0] >= shown_.size()) return nullptr;
  const CallNode* node = &shown_[path[0]]->tree;
  for (size_t i = 1; i < path.size(); ++i) {
    if (path[i] >= node->children.size()) return nullptr;
    node = &node->children[path[i]];
  }
  return node;
}

std::string BrowserModel::Title() const {
  if (sections_.empty()) return "No samples";
  const EventSection& s = sections_[section_];
  std::string title =
      fmt::format("Samples: {} of event '{}', Event count (approx.): {}, Lost: {}", s.flat.samples,
                  OneLine(s.title), s.flat.period, recording_.stats.lost_samples);
  for (const ZoomStep& zoom : zooms_) title += " | " + zoom.label;
  return title;
}

void BrowserModel::Move(long delta) {
  message_.clear();
  if (lines_.empty()) return;
  const long last = static_cast<long>(lines_.size()) - 1;
  cursor_ = static_cast<size_t>(std::clamp(static_cast<long>(cursor_) + delta, 0L, last));
}

void BrowserModel::Toggle() {
  message_.clear();
  if (lines_.empty()) return;
  if (lines_[cursor_].unfolded) {
    Fold();
  } else {
    Unfold();
  }
}

bool BrowserModel::Unfold() {
  message_.clear();
  if (lines_.empty() || !lines_[cursor_].foldable || lines_[cursor_].unfolded) return false;
  // A chain without branches unfolds whole (a row's first level is often
  // the row's own function alone), as perf's browser shows it.
  std::vector<uint32_t> path = nodes_[cursor_].path;
  for (const CallNode* node = NodeAt(path); node != nullptr && !node->children.empty();) {
    unfolded_.insert(path);
    if (node->children.size() != 1) break;
    path.push_back(0);
    node = &node->children[0];
  }
  Relayout();
  return true;
}

bool BrowserModel::Fold() {
  message_.clear();
  if (lines_.empty()) return false;
  const std::vector<uint32_t> path = nodes_[cursor_].path;
  if (lines_[cursor_].unfolded) {
    // This node and everything unfolded under it.
    std::erase_if(unfolded_, [&](const std::vector<uint32_t>& p) {
      return p.size() >= path.size() && std::equal(path.begin(), path.end(), p.begin());
    });
    Relayout();
    return true;
  }
  if (path.size() < 2) return false;
  const std::vector<uint32_t> parent(path.begin(), path.end() - 1);
  for (size_t i = cursor_; i-- > 0;) {
    if (nodes_[i].path == parent) {
      cursor_ = i;
      return true;
    }
  }
  return false;
}

bool BrowserModel::Search(const std::string& pattern) {
  message_.clear();
  try {
    search_.emplace(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error&) {
    search_.reset();
    message_ = fmt::format("not a regular expression: {}", OneLine(pattern));
    return false;
  }
  for (size_t k = 0; k < lines_.size(); ++k) {
    const size_t i = (cursor_ + k) % lines_.size();
    if (std::regex_search(lines_[i].text, *search_)) {
      cursor_ = i;
      return true;
    }
  }
  message_ = fmt::format("no match for {}", OneLine(pattern));
  return false;
}

bool BrowserModel::SearchNext() {
  message_.clear();
  if (!search_) {
    message_ = "no search yet: / searches";
    return false;
  }
  for (size_t k = 1; k <= lines_.size(); ++k) {
    const size_t i = (cursor_ + k) % lines_.size();
    if (std::regex_search(lines_[i].text, *search_)) {
      cursor_ = i;
      return true;
    }
  }
  message_ = "no other match";
  return false;
}

std::optional<uint32_t> BrowserModel::DominantThread(const FlatEntry& entry) const {
  if (entry.tid != FlatEntry::kAny) return entry.tid;
  const Profile& profile = recording_.profile;
  const uint32_t event = sections_[section_].event;
  std::map<uint32_t, uint64_t> period_by_tid;
  // The samples of the row's keys (its function anywhere in the chain: a
  // self row's samples are among them, and so are its callers' threads).
  for (const ProfileSample& s : profile.samples()) {
    if (s.event != event) continue;
    if ((entry.comm != FlatEntry::kAny && s.comm != entry.comm) ||
        (entry.pid != FlatEntry::kAny && s.pid != entry.pid) ||
        (entry.cpu != FlatEntry::kAny && s.cpu != entry.cpu) ||
        (entry.data != FlatEntry::kAny && s.data != entry.data) ||
        (entry.data_dso != FlatEntry::kAny &&
         profile.data_location(s.data).dso != entry.data_dso)) {
      continue;
    }
    const auto frames = profile.frames(s);
    if (frames.empty()) continue;
    if (entry.function != FlatEntry::kAny
            ? std::find(frames.begin(), frames.end(), entry.function) == frames.end()
            : entry.dso != FlatEntry::kAny && profile.function(frames[0]).dso != entry.dso) {
      continue;
    }
    period_by_tid[s.tid] += s.period;
  }
  if (period_by_tid.empty()) return std::nullopt;
  return std::max_element(period_by_tid.begin(), period_by_tid.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

bool BrowserModel::ZoomIn(Zoom zoom) {
  message_.clear();
  if (lines_.empty()) return false;
  const FlatEntry& entry = *shown_[nodes_[cursor_].path[0]];
  const Profile& profile = recording_.profile;
  ZoomStep step{zoom, "", 0, ""};
  switch (zoom) {
    case Zoom::kThread: {
      const auto tid = DominantThread(entry);
      if (!tid) {
        message_ = "no thread to zoom into";
        return false;
      }
      step.value = *tid;
      step.label = fmt::format("Thread: {}", *tid);
      break;
    }
    case Zoom::kDso: {
      uint32_t dso = entry.dso;
      if (dso == FlatEntry::kAny && entry.function != FlatEntry::kAny) {
        dso = profile.function(entry.function).dso;
      }
      if (dso == FlatEntry::kAny) {
        message_ = "no shared object to zoom into";
        return false;
      }
      step.text = profile.dso_name(dso);
      step.label = "DSO: " + OneLine(Basename(step.text));
      break;
    }
    case Zoom::kComm:
      if (entry.comm == FlatEntry::kAny) {
        message_ = "the rows are not by command (--sort comm)";
        return false;
      }
      step.text = profile.comm(entry.comm);
      step.label = "Command: " + OneLine(step.text);
      break;
  }
  zooms_.push_back(std::move(step));
  Rebuild();
  return true;
}

bool BrowserModel::ZoomOut() {
  message_.clear();
  if (zooms_.empty()) return false;
  zooms_.pop_back();
  Rebuild();
  return true;
}

bool BrowserModel::NextEvent() {
  message_.clear();
  if (sections_.size() < 2) {
    message_ = "the recording has one event with samples";
    return false;
  }
  event_ = sections_[(section_ + 1) % sections_.size()].event;
  Rebuild();
  return true;
}

std::vector<uint32_t> BrowserModel::PathKey(const std::vector<uint32_t>& path) const {
  const FlatEntry& e = *shown_[path[0]];
  std::vector<uint32_t> key = {e.comm,     e.pid,     e.tid,      e.cpu, e.dso,
                               e.function, e.srcline, e.data_dso, e.data};
  const CallNode* node = &e.tree;
  for (size_t i = 1; i < path.size() && path[i] < node->children.size(); ++i) {
    node = &node->children[path[i]];
    key.push_back(node->function);
  }
  return key;
}

void BrowserModel::Reload() {
  // What the lines stand for; after an interval without rows, what they
  // stood for before it.
  std::set<std::vector<uint32_t>> unfolded = carried_unfolded_;
  std::optional<std::vector<uint32_t>> cursor = carried_cursor_;
  if (!lines_.empty()) {
    unfolded.clear();
    for (const std::vector<uint32_t>& path : unfolded_) unfolded.insert(PathKey(path));
    cursor = PathKey(nodes_[cursor_].path);
  }
  const size_t old_cursor = cursor_;
  Rebuild();
  carried_unfolded_.clear();
  carried_cursor_.reset();
  if (lines_.empty()) {
    carried_unfolded_ = std::move(unfolded);
    carried_cursor_ = std::move(cursor);
    return;
  }
  // Unfold again, top-down (a node shows once its parent is unfolded),
  // whatever is still there.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (lines_[i].foldable && unfolded.contains(PathKey(nodes_[i].path))) {
      unfolded_.insert(nodes_[i].path);
      Relayout();
    }
  }
  cursor_ = std::min(old_cursor, lines_.empty() ? 0 : lines_.size() - 1);
  for (size_t i = 0; cursor && i < nodes_.size(); ++i) {
    if (PathKey(nodes_[i].path) == *cursor) {
      cursor_ = i;
      break;
    }
  }
}

std::optional<std::string> BrowserModel::CursorFunction() const {
  if (lines_.empty()) return std::nullopt;
  const std::vector<uint32_t>& path = nodes_[cursor_].path;
  uint32_t function = FlatEntry::kAny;
  if (path.size() == 1) {
    function = shown_[path[0]]->function;
  } else if (const CallNode* node = NodeAt(path)) {
    function = node->function;
  }
  if (function == FlatEntry::kAny) return std::nullopt;
  const Function& f = recording_.profile.function(function);
  if (!f.known) return std::nullopt;
  return f.name;
}

}  // namespace sample::report
