#include "report/tui/terminal_browser.h"

#include <langinfo.h>
#include <ncurses.h>
#include <unistd.h>

#include <chrono>
#include <clocale>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/text/display_text.h"
#include "report/text/text_annotate.h"
#include "report/tui/browser_model.h"
#include "report/tui/screen_text.h"
#include "report/views/annotate_view.h"

namespace sample::report {
namespace {

volatile std::sig_atomic_t g_stop = 0;

void OnStopSignal(int signal) { g_stop = signal; }

constexpr int kEscape = 27;
constexpr int kPollMs = 100;  // how often a pending signal is looked at

const char* const kHelp[] = {
    "Keys",
    "",
    "  Up/Down, k/j        move",
    "  PgUp/PgDn, Home/End move a page, to the top, to the bottom",
    "  Enter               unfold or fold the row's call graph",
    "  Right, +            unfold",
    "  Left, -             fold; on a folded line, go to its parent; at the top, zoom out",
    "  /                   search (a regular expression), n: the next match",
    "  t                   zoom into the row's thread",
    "  d                   zoom into the row's shared object",
    "  c                   zoom into the row's command",
    "  Esc                 zoom out (or close this page)",
    "  a                   annotate the row's function",
    "  e                   the next event",
    "  s                   (sample-top) save what was seen so far as a recording",
    "  ?                   this page",
    "  q                   quit (on a page: close it)",
};

// A text page over the rows: annotation or help.
struct Page {
  std::string title;
  std::vector<std::string> lines;
  size_t top = 0;
};

// Draws lines of the screen, cut to its width.
class Screen {
 public:
  explicit Screen(bool utf8) : text_(utf8) {}

  void Line(int y, const std::string& text, attr_t attr) const {
    const auto width = static_cast<size_t>(std::max(COLS, 1));
    std::string shown = text_.Fit(text, width);
    const size_t used = text_.Columns(shown);
    if (attr != A_NORMAL && used < width) shown.append(width - used, ' ');  // a full bar
    attron(attr);
    mvaddstr(y, 0, shown.c_str());
    attroff(attr);
  }

 private:
  ScreenText text_;
};

class Browser {
 public:
  Browser(const Recording& recording, const BrowseOptions& options, bool utf8, bool colors,
          LiveFeed* feed)
      : recording_(recording),
        options_(options),
        model_(recording, options.view, options.filters),
        screen_(utf8),
        colors_(colors),
        feed_(feed) {}

  void Run() {
    Draw();
    auto next_refresh = Clock::now() + RefreshInterval();
    while (g_stop == 0) {
      const int key = getch();
      if (feed_ != nullptr && feed_->ended()) return;
      if (feed_ != nullptr && Clock::now() >= next_refresh) {
        if (!feed_->Refresh()) return;
        model_.Reload();
        next_refresh = Clock::now() + RefreshInterval();
        if (key == ERR) Draw();
      }
      if (key == ERR) continue;  // the poll's timeout: look at g_stop again
      if (!Key(key)) return;
      Draw();
    }
  }

 private:
  // False to quit.
  bool Key(int key) {
    status_.clear();
    if (page_) return PageKey(key);
    if (key == 'q' || key == 'Q') return false;
    if (!MoveKey(key)) ActionKey(key);
    return true;
  }

  // The cursor's keys; false for any other.
  bool MoveKey(int key) {
    const long rows = RowsShown();
    switch (key) {
      case KEY_UP:
      case 'k':
        model_.Move(-1);
        return true;
      case KEY_DOWN:
      case 'j':
        model_.Move(1);
        return true;
      case KEY_PPAGE:
        model_.Move(-rows);
        return true;
      case KEY_NPAGE:
      case ' ':
        model_.Move(rows);
        return true;
      case KEY_HOME:
      case 'g':
        model_.Home();
        return true;
      case KEY_END:
      case 'G':
        model_.End();
        return true;
      default:
        return false;
    }
  }

  // Folding, zooms, search, the other views and pages.
  void ActionKey(int key) {
    switch (key) {
      case '\n':
      case '\r':
      case KEY_ENTER:
        model_.Toggle();
        break;
      case KEY_RIGHT:
      case '+':
        model_.Unfold();
        break;
      case KEY_LEFT:
      case '-':
        if (!model_.Fold()) model_.ZoomOut();
        break;
      case kEscape:
        if (!model_.ZoomOut()) status_ = "not zoomed";
        break;
      case '/':
        if (auto pattern = Prompt("/")) model_.Search(*pattern);
        break;
      case 'n':
        model_.SearchNext();
        break;
      case 't':
        model_.ZoomIn(BrowserModel::Zoom::kThread);
        break;
      case 'd':
        model_.ZoomIn(BrowserModel::Zoom::kDso);
        break;
      case 'c':
        model_.ZoomIn(BrowserModel::Zoom::kComm);
        break;
      case 'e':
        model_.NextEvent();
        break;
      case 'a':
        Annotate();
        break;
      case 's':
        status_ = feed_ != nullptr ? feed_->Save() : "s saves in sample-top; this is a recording";
        break;
      case '?':
      case 'h':
        page_ = Page{"Help", std::vector<std::string>(std::begin(kHelp), std::end(kHelp)), 0};
        break;
      case KEY_RESIZE:
        break;
      default:
        status_ = "? lists the keys";
        break;
    }
  }

  bool PageKey(int key) {
    Page& page = *page_;
    const auto rows = static_cast<size_t>(std::max(LINES - 2, 1));
    const size_t last = page.lines.size() > rows ? page.lines.size() - rows : 0;
    switch (key) {
      case 'q':
      case kEscape:
      case KEY_LEFT:
        page_.reset();
        break;
      case 'Q':
        return false;
      case KEY_UP:
      case 'k':
        if (page.top > 0) --page.top;
        break;
      case KEY_DOWN:
      case 'j':
        page.top = std::min(page.top + 1, last);
        break;
      case KEY_PPAGE:
        page.top = page.top > rows ? page.top - rows : 0;
        break;
      case KEY_NPAGE:
      case ' ':
        page.top = std::min(page.top + rows, last);
        break;
      case KEY_HOME:
      case 'g':
        page.top = 0;
        break;
      case KEY_END:
      case 'G':
        page.top = last;
        break;
      default:
        break;
    }
    return true;
  }

  void Annotate() {
    const std::optional<std::string> function = model_.CursorFunction();
    if (!function) {
      status_ = "no function on this line to annotate";
      return;
    }
    AnnotateOptions annotate;
    annotate.on = true;
    annotate.symbols = {*function};
    annotate.syntax = options_.syntax;
    // The samples the rows count: the zooms' filters included.
    const SampleFilter filter(model_.Filters(), recording_.profile);
    auto view = BuildAnnotateView(recording_, annotate, filter, options_.binaries);
    if (!view) {
      status_ = OneLine(view.error().message);
      return;
    }
    Page page{"Annotate " + OneLine(*function), {}, 0};
    const std::string text = ShowableText(FormatAnnotate(*view, false), true);
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(start, end - start);
      // Tabs as spaces to the next multiple of 8: the terminal's own
      // tab stops would not be cut at the screen's edge.
      for (size_t tab; (tab = line.find('\t')) != std::string::npos;) {
        line.replace(tab, 1, std::string(8 - tab % 8, ' '));
      }
      page.lines.push_back(std::move(line));
      start = end + 1;
    }
    page_ = std::move(page);
  }

  // Reads a line at the bottom; nullopt on Esc or an empty line.
  std::optional<std::string> Prompt(const std::string& lead) {
    std::string text;
    for (;;) {
      screen_.Line(LINES - 1, lead + text, A_NORMAL);
      clrtoeol();
      refresh();
      const int key = getch();
      if (g_stop != 0 || (feed_ != nullptr && feed_->ended())) return std::nullopt;
      if (key == ERR) continue;
      if (key == kEscape) return std::nullopt;
      if (key == '\n' || key == '\r' || key == KEY_ENTER) break;
      if (key == KEY_BACKSPACE || key == 127 || key == 8) {
        // Drop the last UTF-8 character.
        while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xc0) == 0x80) {
          text.pop_back();
        }
        if (!text.empty()) text.pop_back();
        continue;
      }
      if (key >= 32 && key < 256) text.push_back(static_cast<char>(key));
    }
    if (text.empty()) return std::nullopt;
    return text;
  }

  long RowsShown() const { return std::max(LINES - 3, 1); }

  using Clock = std::chrono::steady_clock;
  Clock::duration RefreshInterval() const {
    return std::chrono::milliseconds(feed_ != nullptr ? feed_->interval_ms() : 0);
  }

  void Draw() {
    erase();
    if (page_) {
      DrawPage(*page_);
    } else {
      DrawRows();
    }
    refresh();
  }

  void DrawPage(const Page& page) {
    screen_.Line(0, page.title + "   (q, Esc: back)", A_REVERSE);
    const auto rows = static_cast<size_t>(std::max(LINES - 2, 1));
    for (size_t i = 0; i < rows && page.top + i < page.lines.size(); ++i) {
      screen_.Line(static_cast<int>(i) + 1, page.lines[page.top + i], A_NORMAL);
    }
    screen_.Line(LINES - 1,
                 fmt::format("lines {}-{} of {}", page.lines.empty() ? 0 : page.top + 1,
                             std::min(page.top + rows, page.lines.size()), page.lines.size()),
                 A_NORMAL);
  }

  void DrawRows() {
    std::string title = model_.Title();
    if (feed_ != nullptr && !feed_->Note().empty()) title += " | " + feed_->Note();
    screen_.Line(0, title, A_REVERSE | A_BOLD);
    screen_.Line(1, model_.Heading(), A_BOLD);
    const auto& lines = model_.lines();
    const auto rows = static_cast<size_t>(RowsShown());
    // Keep the cursor on the screen, moving the view as little as needed.
    const size_t cursor = model_.cursor();
    if (cursor < top_) top_ = cursor;
    if (cursor >= top_ + rows) top_ = cursor - rows + 1;
    if (top_ + rows > lines.size()) top_ = lines.size() > rows ? lines.size() - rows : 0;
    for (size_t i = 0; i < rows && top_ + i < lines.size(); ++i) {
      const BrowserLine& line = lines[top_ + i];
      attr_t attr = A_NORMAL;
      if (top_ + i == cursor) {
        attr = colors_ ? COLOR_PAIR(1) | A_BOLD : A_REVERSE;
      } else if (line.depth > 0 && colors_) {
        attr = COLOR_PAIR(2);
      }
      screen_.Line(static_cast<int>(i) + 2, line.text, attr);
    }
    std::string status = !status_.empty()            ? status_
                         : !model_.message().empty() ? model_.message()
                                                     : "? keys  q quit";
    if (model_.zoomed()) status += "  (Esc: zoom out)";
    screen_.Line(LINES - 1, status, A_NORMAL);
  }

  const Recording& recording_;
  const BrowseOptions& options_;
  BrowserModel model_;
  Screen screen_;
  bool colors_;
  LiveFeed* feed_;  // null for a recording
  std::optional<Page> page_;
  std::string status_;
  size_t top_ = 0;
};

// Restores the terminal however the browser ends (an exception included).
struct Curses {
  Curses() {
    // newterm, not initscr: initscr exits the process on a terminal type
    // terminfo does not know.
    screen = newterm(nullptr, stdout, stdin);
    if (screen == nullptr) return;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    timeout(kPollMs);
    colors = has_colors();
    if (colors) {
      start_color();
      use_default_colors();
      init_pair(1, COLOR_WHITE, COLOR_BLUE);  // the cursor's line
      init_pair(2, COLOR_GREEN, -1);          // call-graph lines
    }
  }
  ~Curses() {
    if (screen == nullptr) return;
    endwin();
    delscreen(screen);
  }
  SCREEN* screen = nullptr;
  bool colors = false;
};

}  // namespace

namespace {

int RunBrowser(const Recording& recording, const BrowseOptions& options, LiveFeed* feed) {
  std::setlocale(LC_ALL, "");
  const bool utf8 = std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(signal, &action, nullptr);
  {
    Curses curses;
    if (curses.screen == nullptr) {
      fmt::print(stderr, "sample-report: the terminal could not be set up for the browser\n");
      return 1;
    }
    Browser browser(recording, options, utf8, curses.colors, feed);
    browser.Run();
  }
  // Killed by a signal: the shell's convention for the status.
  if (g_stop != 0) return 128 + g_stop;
  return feed != nullptr ? feed->exit_status() : 0;
}

}  // namespace

int RunTerminalBrowser(const Recording& recording, const BrowseOptions& options) {
  return RunBrowser(recording, options, nullptr);
}

int RunLiveBrowser(const Recording& recording, const BrowseOptions& options, LiveFeed& feed) {
  return RunBrowser(recording, options, &feed);
}

}  // namespace sample::report
