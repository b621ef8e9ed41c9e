#include "libsample/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "libsample/comma_list.h"

namespace sample {
namespace {

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out >= 0;
}

}  // namespace

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  if (text.empty()) return Fail("empty CPU list");
  for (const std::string_view part : SplitCommaList(text)) {
    const size_t dash = part.find('-');
    int first, last;
    bool ok = dash == std::string_view::npos
                  ? ParseInt(part, &first) && (last = first, true)
                  : ParseInt(part.substr(0, dash), &first) && ParseInt(part.substr(dash + 1), &last);
    if (!ok || last < first || last > 65535) {
      return Fail(fmt::format("bad CPU list '{}': cannot parse '{}'", text, part));
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

Result<std::vector<int>> OnlineCpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Fail("cannot read /sys/devices/system/cpu/online");
  return ParseCpuList(text.str());
}

}  // namespace sample
