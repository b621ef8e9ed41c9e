// The names an error message offers when the user's name matches nothing:
// close matches of a misspelt name ("did you mean: cycles?"), by edit
// distance or substring, case-insensitively, and long lists of valid names
// cut short. Used for event, tracepoint and uprobe symbol names.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sample {

// A candidate for "did you mean": compared by `key`, shown as `shown`
// ("cache-misses" shown as "cpu/cache-misses/").
struct NameCandidate {
  std::string key;
  std::string shown;
};

// Candidates within a small edit distance of `query`, or containing it;
// closest first, at most eight, each shown once.
std::vector<std::string> CloseMatches(std::string_view query,
                                      const std::vector<NameCandidate>& candidates);

// The tail of an unknown-event message: "; did you mean: a, b?", or a
// pointer to --list-events when nothing is close.
std::string DidYouMean(const std::vector<std::string>& close);

// `names` joined with ", ", cut after `limit` with the total count.
std::string Abbreviated(const std::vector<std::string>& names, size_t limit);

}  // namespace sample
