// WriteOutputFile: sample-report's -o. The bytes go to PATH.tmp-PID first
// and are renamed over PATH once complete, so a failed or interrupted write
// leaves any earlier PATH as it was and no partial file behind.
#pragma once

#include <string>
#include <string_view>

#include "libsample/result.h"

namespace sample::report {

// Errors name the path and the reason (errno).
Result<void> WriteOutputFile(const std::string& path, std::string_view bytes);

}  // namespace sample::report
