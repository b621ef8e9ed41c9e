// WriteOutputFile: sample-report's -o. Into a regular file (or where none
// is), the bytes go to PATH.tmp-PID first and are renamed over PATH once
// complete, so a failed or interrupted write leaves any earlier PATH as it
// was and no partial file behind. A character device or FIFO at PATH
// (/dev/null, /dev/stdout, a named pipe), directly or through a symlink, is
// written into, never replaced: as root, renaming over /dev/null would
// replace the device for everyone. A directory, socket or block device is
// refused, and so is a symlink another user planted in a sticky
// world-writable directory.
#pragma once

#include <string>
#include <string_view>

#include "libsample/result.h"

namespace sample::report {

// Errors name the path and the reason (errno).
Result<void> WriteOutputFile(const std::string& path, std::string_view bytes);

}  // namespace sample::report
