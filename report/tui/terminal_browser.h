// The interactive report on a terminal: BrowserModel's rows drawn with
// ncurses (Debian's libncurses-dev: the terminal library every distribution
// ships, with terminfo for every terminal, resizes and UTF-8 through its
// wide-character build; writing escape sequences ourselves would mean
// re-doing terminfo), keys read until q.
//
// Keys: arrows, j/k, PgUp/PgDn, Home/End move; Enter unfolds or folds a
// row's call graph, -> unfolds, <- folds (or goes to the parent line, or
// zooms out at the top); / searches (regex), n goes to the next match;
// t, d, c zoom into the row's thread, shared object, command, Esc zooms
// out; a annotates the row's function; e switches events; ? lists the
// keys; q quits at once. The terminal is restored on q, on an error and on
// SIGINT, SIGTERM, SIGHUP and SIGQUIT.
#pragma once

#include <cstdint>
#include <string>

#include "libsample/disasm/disassembler.h"
#include "libsample/model/sample_filter.h"
#include "libsample/symbols/recorded_binary.h"
#include "report/load/recording.h"
#include "report/views/view_options.h"

namespace sample::report {

// What the browser is given of sample-report's options.
struct BrowseOptions {
  ViewOptions view;
  SampleFilterSpec filters;  // the filters it starts with
  AsmSyntax syntax = AsmSyntax::kAtt;  // the annotate view's (-M)
  BinaryLocatorOptions binaries;       // where the annotate view reads code
};

// Whether the browser can run on this terminal: terminfo knows $TERM.
// False with the reason (naming TERM) otherwise.
bool TerminalBrowserUsable(std::string* why);

// Runs until the user quits; returns the exit status (0; 128 + N after
// signal N; 1, said on stderr, when the terminal cannot be set up).
int RunTerminalBrowser(const Recording& recording, const BrowseOptions& options);

// What a live view (sample-top) gives the browser: a recording that
// changes in place every interval, and a way to save it.
class LiveFeed {
 public:
  virtual ~LiveFeed() = default;
  virtual uint64_t interval_ms() const = 0;
  // Brings the recording to the next interval; false once the source has
  // ended (the recorder stopped: a signal, the targets' exit).
  virtual bool Refresh() = 0;
  // The s key: saves what was seen so far; a line for the status bar.
  virtual std::string Save() = 0;
  // A line for the title bar (lost samples, privileges); empty when none.
  virtual std::string Note() const = 0;
  // The exit status once the source has ended (128 + N after signal N).
  virtual int exit_status() const = 0;
  // Whether the source has ended: the browser looks every 100 ms, at the
  // search prompt too (a stop signal goes to the recorder, not to it).
  virtual bool ended() const = 0;
};

// The browser over `recording` (kept current by `feed`, which has filled
// it once already), refreshed every feed.interval_ms() until q or the
// feed's end. The same keys, and s.
int RunLiveBrowser(const Recording& recording, const BrowseOptions& options, LiveFeed& feed);

}  // namespace sample::report
