// perf report's --sort argument: sort keys as the user types them
// ("comm,dso,sym"). The one table of their names, for parsing the option
// and for naming the keys in the JSON output.
#pragma once

#include <string_view>
#include <vector>

#include "libsample/model/flat_profile.h"
#include "libsample/result.h"

namespace sample::report {

// "comm,dso,sym" -> keys; errors name the unknown key and list valid ones.
Result<std::vector<SortKey>> ParseSortKeys(std::string_view text);

// The name a key is typed as: "comm", "sym", ...
std::string_view SortKeyName(SortKey key);

// An error naming the first data-address key (dso_daddr, symbol_daddr) of
// `keys` when the recording at `path` has no data addresses to sort by.
Result<void> CheckDataSortKeys(const std::vector<SortKey>& keys, bool data_addresses,
                               std::string_view path);

}  // namespace sample::report
