// BrowserModel: what the terminal browser shows and how its keys change it,
// without a terminal (the screen is terminal_browser.cc's; tests drive this
// directly).
//
// The rows are the text report's (the same sections, columns and sort
// keys); under a row, its call graph unfolds one level at a time, as -g
// orders it (callers or callees). Zooming into the row's thread, shared
// object or command adds a filter (as --tid, --dso, --comm) and rebuilds the
// rows; zooming out removes the last one. Search moves the cursor to the
// next row whose text matches a regular expression (ECMAScript, as the HTML
// page's search). A text page (annotation, help) covers the rows until it
// is closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "libsample/model/sample_filter.h"
#include "report/load/recording.h"
#include "libsample/model/sample_filter.h"
#include "report/views/view_options.h"
#include "report/views/event_sections.h"

namespace sample::report {

struct BrowserLine {
  std::string text;
  size_t depth = 0;       // 0: a row of the table; n: a call-graph node n levels under it
  bool foldable = false;  // has something to unfold
  bool unfolded = false;
};

class BrowserModel {
 public:
  enum class Zoom { kThread, kDso, kComm };

  // `view` and `filters` as the command line gave them; the browser asks
  // for call graphs (to unfold) whatever -g said.
  BrowserModel(const Recording& recording, ViewOptions view, SampleFilterSpec filters);

  // The event's title line: samples, lost samples, event, and the zooms.
  std::string Title() const;
  // The column titles.
  const std::string& Heading() const { return heading_; }
  const std::vector<BrowserLine>& lines() const { return lines_; }
  size_t cursor() const { return cursor_; }
  // A message for the status line after a key (a search that found
  // nothing, a zoom with nothing to zoom into); empty when none.
  const std::string& message() const { return message_; }

  void Move(long delta);  // clamped to the lines
  void Home() { cursor_ = 0; }
  void End() { cursor_ = lines_.empty() ? 0 : lines_.size() - 1; }

  // Enter: unfolds the cursor's line, or folds it when unfolded.
  void Toggle();
  // ->: unfolds (and on down a chain with no branch); <-: folds the line,
  // or, on a folded one, moves to its parent. False when nothing changed.
  bool Unfold();
  bool Fold();

  // Moves to the first line from the cursor (`from_next`: after it) whose
  // text matches; wraps around. False, with a message, if none does or the
  // pattern is not a regular expression.
  bool Search(const std::string& pattern);
  bool SearchNext();

  // Zooms into the cursor row's thread (the one with most of its period),
  // shared object or command; false, with a message, when the row has none.
  bool ZoomIn(Zoom zoom);
  // Undoes the last zoom; false when there is none.
  bool ZoomOut();
  bool zoomed() const { return !zooms_.empty(); }

  // The next event with samples (e); false when there is only one.
  bool NextEvent();

  // The filters the rows are of: the command line's and the zooms'.
  SampleFilterSpec Filters() const;

  // The function of the cursor's line (a row or a call-graph node), as
  // --annotate takes it.
  std::optional<std::string> CursorFunction() const;

  // The recording changed in place (a live view's next interval; its
  // functions keep their ids): the rows are made again, and the event,
  // the zooms, the unfolded lines and the cursor's line stay where they
  // still exist.
  void Reload();

 private:
  struct Node {  // a line's place: the row, then child indices in the tree
    std::vector<uint32_t> path;
  };
  struct ZoomStep {
    Zoom zoom;
    std::string label;  // "thread 1234", "libc.so.6", "comm split"
    uint32_t value = 0;
    std::string text;
  };

  void Rebuild();   // sections from the filters and zooms
  void Relayout();  // lines from the section and the unfolded set
  const CallNode* NodeAt(const std::vector<uint32_t>& path) const;
  void AddNodeLines(const CallNode& node, std::vector<uint32_t>& path);
  bool HasShownChild(const CallNode& node) const;  // a child at or over -g's threshold
  std::optional<uint32_t> DominantThread(const FlatEntry& entry) const;
  // What a line's path stands for whatever the rows' order: the row's
  // grouping values, then the functions of the nodes under it.
  std::vector<uint32_t> PathKey(const std::vector<uint32_t>& path) const;

  const Recording& recording_;
  ViewOptions view_;
  SampleFilterSpec filters_;
  std::vector<ZoomStep> zooms_;
  std::vector<EventSection> sections_;
  size_t section_ = 0;
  std::optional<uint32_t> event_;  // the event shown (e), kept when a reload has none of it
  // Reload's keys (PathKey) of the unfolded lines and the cursor's, kept
  // over intervals without rows.
  std::set<std::vector<uint32_t>> carried_unfolded_;
  std::optional<std::vector<uint32_t>> carried_cursor_;
  std::vector<const FlatEntry*> shown_;  // the section's rows
  std::set<std::vector<uint32_t>> unfolded_;
  std::string heading_;
  std::vector<std::string> row_text_;
  std::vector<BrowserLine> lines_;
  std::vector<Node> nodes_;  // parallel to lines_
  size_t cursor_ = 0;
  std::optional<std::regex> search_;
  std::string message_;
};

}  // namespace sample::report
