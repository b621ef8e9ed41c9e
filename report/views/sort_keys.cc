#include "report/views/sort_keys.h"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "libsample/comma_list.h"

namespace sample::report {
namespace {

// In the order the error message lists them.
constexpr std::array<std::pair<SortKey, std::string_view>, 10> kSortKeyNames = {{
    {SortKey::kComm, "comm"},
    {SortKey::kPid, "pid"},
    {SortKey::kTid, "tid"},
    {SortKey::kDso, "dso"},
    {SortKey::kSym, "sym"},
    {SortKey::kCpu, "cpu"},
    {SortKey::kSrcline, "srcline"},
    {SortKey::kInline, "inline"},
    {SortKey::kDsoDaddr, "dso_daddr"},
    {SortKey::kSymbolDaddr, "symbol_daddr"},
}};

}  // namespace

Result<std::vector<SortKey>> ParseSortKeys(std::string_view text) {
  std::vector<SortKey> keys;
  for (const std::string_view name : SplitCommaList(text)) {
    auto it = std::find_if(kSortKeyNames.begin(), kSortKeyNames.end(),
                           [&](const auto& entry) { return entry.second == name; });
    if (it == kSortKeyNames.end()) {
      std::vector<std::string_view> valid;
      for (const auto& entry : kSortKeyNames) valid.push_back(entry.second);
      return Fail(fmt::format("unknown sort key '{}' (valid: {})", name, fmt::join(valid, ", ")));
    }
    keys.push_back(it->first);
  }
  const bool sym = std::find(keys.begin(), keys.end(), SortKey::kSym) != keys.end();
  if (sym && std::find(keys.begin(), keys.end(), SortKey::kInline) != keys.end()) {
    return Fail("sort keys 'sym' and 'inline' both name the row's function: give one");
  }
  return keys;
}

Result<void> CheckDataSortKeys(const std::vector<SortKey>& keys, bool data_addresses,
                               std::string_view path) {
  if (data_addresses) return {};
  for (SortKey key : keys) {
    if (key != SortKey::kDsoDaddr && key != SortKey::kSymbolDaddr) continue;
    return Fail(fmt::format(
        "--sort {}: {} has no data addresses; record with sample-record -d (or perf record -d)",
        SortKeyName(key), path));
  }
  return {};
}

std::string_view SortKeyName(SortKey key) {
  for (const auto& [k, name] : kSortKeyNames) {
    if (k == key) return name;
  }
  return "";
}

}  // namespace sample::report
