// The precompiled header of the product's libraries (libsample, formats,
// record, report, top; see meson.build): the standard headers most of their
// files include, and fmt, whose format.h alone was a quarter of a small
// file's compile. Only headers from outside the project belong here: a
// project header would make every file rebuild when it changes. Each file
// still includes what it uses, and builds without this header. No include
// guard: the compiler reads this file as the main file of its own compile.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
