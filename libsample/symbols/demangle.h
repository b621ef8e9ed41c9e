// Demangle: symbol names made readable for people.
//
// C++ (Itanium ABI, `_Z...`), Rust legacy (`_ZN...17h<16 hex>E`, whose hash
// suffix is dropped, as perf does) and Rust v0 (`_R...`) names go through
// libiberty's cplus_demangle, the demangler binutils and gdb use; writing and
// maintaining a v0 demangler of our own would buy nothing. Reentrant: safe to
// call from several threads at once.
#pragma once

#include <string>
#include <string_view>

namespace sample {

// The readable form of `mangled`; anything that is not a valid mangled name is
// returned unchanged. A version or "@plt" suffix after '@' is kept.
std::string Demangle(std::string_view mangled);

}  // namespace sample
