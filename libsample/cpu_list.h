// CPU lists in the kernel's notation ("0-3,8,10-11"), as in
// /sys/devices/system/cpu/online and perf's -C option.
#pragma once

#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

// Sorted, without duplicates. Errors name the offending part.
Result<std::vector<int>> ParseCpuList(std::string_view text);

// CPUs the kernel has online now.
Result<std::vector<int>> OnlineCpus();

}  // namespace sample
