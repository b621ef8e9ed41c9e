// The precompiled header of the test binaries (tests/meson.build): the
// headers nearly every test file includes, GoogleTest's above all, parsed
// once per binary instead of once per file. Only headers from outside the
// project belong here: a project header would make every test file rebuild
// when it changes. Each test file still includes what it uses. No include
// guard: the compiler reads this file as the main file of its own compile.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
