// fmt's compiled part, built from Debian's libfmt-dev headers into our
// archive instead of linked from libfmt.so: Debian ships no libfmt.a, and
// with no shared C++ library left sample-record links libstdc++ in too
// (record/meson.build), starting ~1.1 ms of CPU sooner on every recording.
// What fmt/format.h declares and leaves to its library: format-inl.h's
// out-of-line functions, and the template instances format.h names
// `extern` or declares without a body.
#include <fmt/format-inl.h>

#include <locale>

namespace fmt {
inline namespace v9 {
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> char;
template auto decimal_point_impl(locale_ref) -> wchar_t;

}  // namespace detail
}  // namespace v9
}  // namespace fmt
