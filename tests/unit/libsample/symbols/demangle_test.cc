// Tests for Demangle: C++ and both Rust manglings, on name strings.
#include "libsample/symbols/demangle.h"

#include <gtest/gtest.h>

namespace sample {
namespace {

TEST(DemangleRustTest, LegacyNamesLoseTheirHash) {
  EXPECT_EQ(Demangle("_ZN7mycrate6module8function17h0123456789abcdefE"),
            "mycrate::module::function");
  EXPECT_EQ(Demangle("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h1a2b3c4d5e6f7a8bE"),
            "std::rt::lang_start::{{closure}}");
  EXPECT_EQ(
      Demangle("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
               "closure$u7d$$u7d$$GT$17h0a1b2c3d4e5f6a7bE"),
      "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
}

TEST(DemangleRustTest, V0Names) {
  EXPECT_EQ(Demangle("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
  EXPECT_EQ(Demangle("_RNvNtCs9ltgdHTiPiY_4core3ptr13drop_in_placeB4_"),
            "core::ptr::drop_in_place");
}

TEST(DemangleRustTest, PltSuffixIsKept) {
  EXPECT_EQ(Demangle("_ZN7mycrate3foo17h0123456789abcdefE@plt"), "mycrate::foo@plt");
  EXPECT_EQ(Demangle("_RNvCs1234_7mycrate3foo@plt"), "mycrate::foo@plt");
}

TEST(DemangleRustTest, InvalidRustNamesAreUnchanged) {
  EXPECT_EQ(Demangle("_R"), "_R");
  EXPECT_EQ(Demangle("_RNvC"), "_RNvC");
  EXPECT_EQ(Demangle("_Rust_is_not_mangled"), "_Rust_is_not_mangled");
}

}  // namespace
}  // namespace sample
