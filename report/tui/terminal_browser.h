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

#include <string>

#include "report/load/recording.h"
#include "report/report_options.h"

namespace sample::report {

// Whether the browser can run on this terminal: terminfo knows $TERM.
// False with the reason (naming TERM) otherwise.
bool TerminalBrowserUsable(std::string* why);

// Runs until the user quits; returns the exit status (0; 128 + N after
// signal N; 1, said on stderr, when the terminal cannot be set up).
int RunTerminalBrowser(const Recording& recording, const ReportOptions& options);

}  // namespace sample::report
