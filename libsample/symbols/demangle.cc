#include "libsample/symbols/demangle.h"

#include <cstdlib>
#include <memory>

// libiberty.h declares basename(const char*) returning char* unless told
// that the C library declares it; glibc's <cstring> does (returning const
// char* in C++), and the two clash once <cstring> comes first, as it does
// in a unity build or after the precompiled header.
#define HAVE_DECL_BASENAME 1
#include <libiberty/demangle.h>

namespace sample {

std::string Demangle(std::string_view mangled) {
  // Only the two prefixes the mangling schemes use: cplus_demangle in auto
  // mode would otherwise try Java/D/GNAT rules on plain C names.
  if (!mangled.starts_with("_Z") && !mangled.starts_with("_R")) return std::string(mangled);
  // "_Z...@plt" or "_Z...@@VERSION": demangle the part before '@'.
  const size_t at = mangled.find('@');
  const std::string base(mangled.substr(0, at));
  // DMGL_PARAMS keeps C++ parameter lists ("twice<int>(int)"), which tell
  // overloads apart; without DMGL_VERBOSE the Rust legacy hash is dropped.
  std::unique_ptr<char, decltype(&std::free)> demangled(
      cplus_demangle(base.c_str(), DMGL_PARAMS | DMGL_ANSI), &std::free);
  if (demangled == nullptr) return std::string(mangled);
  std::string result(demangled.get());
  if (at != std::string_view::npos) result += mangled.substr(at);
  return result;
}

}  // namespace sample
