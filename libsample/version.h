// The version line of the three programs (--version): the project's
// version and the git commit they were built from.
#pragma once

#include <string>
#include <string_view>

namespace sample {

// "sample-record 0.1.0 (commit 3f2b489c1a2d)"; "(commit unknown)" for a
// build made outside a git checkout.
std::string VersionLine(std::string_view program);

}  // namespace sample
