#include "report/export/output_format.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include <fmt/format.h>

namespace sample::report {
namespace {

constexpr std::array<std::pair<OutputFormat, std::string_view>, 8> kNames = {{
    {OutputFormat::kText, "text"},
    {OutputFormat::kJson, "json"},
    {OutputFormat::kFolded, "folded"},
    {OutputFormat::kSvg, "svg"},
    {OutputFormat::kHtml, "html"},
    {OutputFormat::kPprof, "pprof"},
    {OutputFormat::kSpeedscope, "speedscope"},
    {OutputFormat::kGecko, "gecko"},
}};

// Longest suffixes first: ".speedscope.json" before ".json".
constexpr std::array<std::pair<std::string_view, OutputFormat>, 10> kExtensions = {{
    {".speedscope.json", OutputFormat::kSpeedscope},
    {".gecko.json", OutputFormat::kGecko},
    {".pb.gz", OutputFormat::kPprof},
    {".pprof", OutputFormat::kPprof},
    {".folded", OutputFormat::kFolded},
    {".html", OutputFormat::kHtml},
    {".htm", OutputFormat::kHtml},
    {".svg", OutputFormat::kSvg},
    {".json", OutputFormat::kJson},
    {".txt", OutputFormat::kText},
}};

}  // namespace

std::string_view FormatName(OutputFormat format) {
  for (const auto& [f, name] : kNames) {
    if (f == format) return name;
  }
  return "?";
}

Result<OutputFormat> ParseOutputFormat(std::string_view name) {
  std::string names;
  for (const auto& [format, known] : kNames) {
    if (known == name) return format;
    names += names.empty() ? "" : ", ";
    names += known;
  }
  return Fail("--format '" + std::string(name) + "': takes one of " + names);
}

std::optional<OutputFormat> FormatForPath(std::string_view path) {
  for (const auto& [extension, format] : kExtensions) {
    if (path.size() > extension.size() && path.ends_with(extension)) return format;
  }
  return std::nullopt;
}

Result<OutputFormat> FormatForOutput(std::string_view path) {
  if (auto format = FormatForPath(path)) return *format;
  const std::string_view name = path.substr(path.rfind('/') + 1);
  const size_t dot = name.rfind('.');
  // No extension: no dot, a dot file, or what follows the last dot holds
  // no letter (report.2024-12-07, v1.2).
  if (dot == std::string_view::npos || dot == 0 ||
      std::ranges::none_of(name.substr(dot + 1), [](char c) { return std::isalpha(c) != 0; })) {
    return OutputFormat::kText;
  }
  std::string known;
  for (const auto& [extension, format] : kExtensions) {
    known += fmt::format("{}{} ({})", known.empty() ? "" : ", ", extension, FormatName(format));
  }
  return Fail(fmt::format(
      "-o {}: '{}' names no output format; name the file {} or give --format", path,
      name.substr(dot), known));
}

}  // namespace sample::report
