// OwnBuildIdentity: this build of sample (the running program's build-id)
// and of the DWARF libraries it loaded (libdw's and libelf's), so that a
// cache another build wrote (whose symbolizer may name things otherwise)
// is not taken (the annotate cache, the recorder's frame cache): "" when
// the program's build-id cannot be read (then nothing is cached).
#pragma once

#include <string>

namespace sample {

const std::string& OwnBuildIdentity();

}  // namespace sample
