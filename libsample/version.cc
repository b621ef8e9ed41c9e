#include "libsample/version.h"

#include <fmt/format.h>

#include "libsample/build_commit.h"

namespace sample {

std::string VersionLine(std::string_view program) {
  return fmt::format("{} {} (commit {})", program, SAMPLE_VERSION, SAMPLE_BUILD_COMMIT);
}

}  // namespace sample
