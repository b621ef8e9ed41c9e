#include "report/report_output.h"

#include <unordered_set>
#include <utility>

namespace sample::report {

std::vector<std::string> WithoutRepeats(std::vector<std::string> warnings) {
  std::unordered_set<std::string> seen;
  std::vector<std::string> out;
  for (std::string& warning : warnings) {
    if (seen.insert(warning).second) out.push_back(std::move(warning));
  }
  return out;
}

}  // namespace sample::report
