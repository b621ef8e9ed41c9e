// TerminalBrowserUsable (terminal_browser.h), apart: <term.h> defines
// macros named after terminfo capabilities ("lines", "columns") that the
// browser's own code must not meet.
#include "report/tui/terminal_browser.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "report/text/display_text.h"

// Last: after every header that could name a capability.
#include <ncurses.h>
#include <term.h>

namespace sample::report {

bool TerminalBrowserUsable(std::string* why) {
  int status = 0;
  if (setupterm(nullptr, STDOUT_FILENO, &status) == OK) {
    del_curterm(cur_term);
    return true;
  }
  const char* term = std::getenv("TERM");
  *why = term == nullptr || *term == '\0'
             ? std::string("TERM is not set")
             : fmt::format("the terminal type TERM={} is not one terminfo knows", OneLine(term));
  return false;
}

}  // namespace sample::report
