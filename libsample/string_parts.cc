#include "libsample/string_parts.h"

#include <cctype>

#include <fmt/format.h>

namespace sample {

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kBlanks = " \t\r\n";
  const size_t begin = text.find_first_not_of(kBlanks);
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(kBlanks);
  return text.substr(begin, end - begin + 1);
}

std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string HexBytes(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::byte b : bytes) {
    out += kDigits[std::to_integer<unsigned>(b) >> 4];
    out += kDigits[std::to_integer<unsigned>(b) & 0xf];
  }
  return out;
}

std::string Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string HumanBytes(uint64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  const auto b = static_cast<double>(bytes);
  if (b < 10 * kKiB) return fmt::format("{} B", bytes);
  if (b < 10 * kMiB) return fmt::format("{:.1f} KiB", b / kKiB);
  if (b < 10 * kGiB) return fmt::format("{:.1f} MiB", b / kMiB);
  return fmt::format("{:.1f} GiB", b / kGiB);
}

}  // namespace sample
