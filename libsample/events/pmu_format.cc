#include "libsample/events/pmu_format.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "libsample/string_parts.h"

namespace sample {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) {
    const int err = errno;
    return Fail(fmt::format("cannot read {}: {}", path.string(), std::strerror(err)), err);
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A bit number 0..63 of a format range.
Result<int> ParseBit(std::string_view text, std::string_view whole) {
  int bit = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bit);
  if (ec != std::errc() || end != text.data() + text.size() || bit < 0 || bit > 63) {
    return Fail(fmt::format("bad bit '{}' in format '{}' (bits are 0..63)", text, whole));
  }
  return bit;
}

__u64* FieldOf(PmuFormat::Field field, perf_event_attr* attr) {
  switch (field) {
    case PmuFormat::Field::kConfig1:
      return &attr->config1;
    case PmuFormat::Field::kConfig2:
      return &attr->config2;
    case PmuFormat::Field::kConfig:
      break;
  }
  return &attr->config;
}

std::string_view FieldName(PmuFormat::Field field) {
  switch (field) {
    case PmuFormat::Field::kConfig1:
      return "config1";
    case PmuFormat::Field::kConfig2:
      return "config2";
    case PmuFormat::Field::kConfig:
      break;
  }
  return "config";
}

// Sysfs event files that annotate an event rather than define one.
bool IsEventAnnotation(std::string_view name) {
  for (std::string_view suffix : {".scale", ".unit", ".per-pkg", ".snapshot"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      return true;
    }
  }
  return false;
}

std::vector<fs::path> SortedEntries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

Result<uint64_t> ParseTermNumber(std::string_view text) {
  int base = 10;
  std::string_view digits = text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return Fail(ec == std::errc::result_out_of_range
                    ? fmt::format("number '{}' does not fit in 64 bits", text)
                    : fmt::format("'{}' is not a number (decimal or 0x hex)", text));
  }
  return value;
}

Result<std::vector<PmuTerm>> ParsePmuTerms(std::string_view text) {
  std::vector<PmuTerm> terms;
  if (text.empty()) return terms;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view term = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (term.empty()) return Fail(fmt::format("empty term in '{}'", text));
    const size_t equals = term.find('=');
    PmuTerm parsed;
    parsed.key = std::string(term.substr(0, equals));
    if (parsed.key.empty()) return Fail(fmt::format("term '{}' has no name", term));
    if (equals != std::string_view::npos) parsed.value = std::string(term.substr(equals + 1));
    terms.push_back(std::move(parsed));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return terms;
}

Result<PmuFormat> PmuFormat::Parse(std::string_view name, std::string_view text) {
  const std::string_view whole = Trim(text);
  const size_t colon = whole.find(':');
  if (colon == std::string_view::npos) {
    return Fail(fmt::format("format '{}' is '{}', not FIELD:BITS", name, whole));
  }
  PmuFormat format;
  format.name_ = std::string(name);
  const std::string_view field = whole.substr(0, colon);
  if (field == "config") {
    format.field_ = Field::kConfig;
  } else if (field == "config1") {
    format.field_ = Field::kConfig1;
  } else if (field == "config2") {
    format.field_ = Field::kConfig2;
  } else {
    return Fail(fmt::format("format '{}' ('{}') uses field '{}'; known: config, config1, config2",
                            name, whole, field));
  }
  std::string_view ranges = whole.substr(colon + 1);
  if (ranges.empty()) return Fail(fmt::format("format '{}' ('{}') has no bits", name, whole));
  while (!ranges.empty()) {
    const size_t comma = ranges.find(',');
    const std::string_view range = ranges.substr(0, comma);
    ranges = comma == std::string_view::npos ? std::string_view() : ranges.substr(comma + 1);
    if (comma != std::string_view::npos && ranges.empty()) {
      return Fail(fmt::format("format '{}' ('{}') ends with a comma", name, whole));
    }
    const size_t dash = range.find('-');
    TRY_ASSIGN(auto low, ParseBit(range.substr(0, dash), whole));
    int high = low;
    if (dash != std::string_view::npos) {
      TRY_ASSIGN(auto parsed, ParseBit(range.substr(dash + 1), whole));
      high = parsed;
    }
    if (high < low) {
      return Fail(fmt::format("format '{}' ('{}') has the range {} backwards", name, whole, range));
    }
    for (int bit = low; bit <= high; ++bit) format.mask_ |= uint64_t{1} << bit;
  }
  return format;
}

int PmuFormat::width() const { return std::popcount(mask_); }

Result<void> PmuFormat::Apply(uint64_t value, perf_event_attr* attr) const {
  if (width() < 64 && (value >> width()) != 0) {
    return Fail(fmt::format("value {:#x} does not fit term '{}' ({}: {} bits, at most {:#x})",
                            value, name_, ToString(), width(), (uint64_t{1} << width()) - 1));
  }
  __u64* target = FieldOf(field_, attr);
  *target &= ~mask_;
  for (int bit = 0; bit < 64 && value != 0; ++bit) {
    if ((mask_ >> bit & 1) == 0) continue;
    if (value & 1) *target |= uint64_t{1} << bit;
    value >>= 1;
  }
  return {};
}

std::string PmuFormat::ToString() const {
  std::vector<std::string> ranges;
  for (int bit = 0; bit < 64;) {
    if ((mask_ >> bit & 1) == 0) {
      ++bit;
      continue;
    }
    int high = bit;
    while (high + 1 < 64 && (mask_ >> (high + 1) & 1)) ++high;
    ranges.push_back(high == bit ? fmt::format("{}", bit) : fmt::format("{}-{}", bit, high));
    bit = high + 1;
  }
  return fmt::format("{}:{}", FieldName(field_), fmt::join(ranges, ","));
}

Result<Pmu> Pmu::Load(const std::string& sysfs_root, std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos) {
    return Fail(fmt::format("'{}' is not a PMU name", name));
  }
  const fs::path dir = fs::path(sysfs_root) / "bus/event_source/devices" / std::string(name);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Fail(fmt::format("no PMU '{}' ({} does not exist)", name, dir.string()), ENOENT);
  }
  Pmu pmu;
  pmu.name_ = std::string(name);
  TRY_ASSIGN(auto type_text, ReadSmallFile(dir / "type"));
  const std::string_view type = Trim(type_text);
  const auto [end, parse_ec] = std::from_chars(type.data(), type.data() + type.size(), pmu.type_);
  if (type.empty() || parse_ec != std::errc() || end != type.data() + type.size()) {
    return Fail(fmt::format("{}: '{}' is not a PMU type number", (dir / "type").string(), type));
  }
  for (const fs::path& path : SortedEntries(dir / "format")) {
    TRY_ASSIGN(auto text, ReadSmallFile(path));
    auto format = PmuFormat::Parse(path.filename().string(), text);
    if (!format) {
      // Newer kernels add fields (config3) that perf_event_attr here lacks:
      // the PMU stays usable, only that term is refused, with this reason.
      pmu.broken_formats_.emplace(path.filename().string(),
                                  fmt::format("{}: {}", path.string(), format.error().message));
      continue;
    }
    pmu.formats_.emplace(path.filename().string(), std::move(*format));
  }
  for (const fs::path& path : SortedEntries(dir / "events")) {
    const std::string event = path.filename().string();
    if (IsEventAnnotation(event)) continue;
    auto text = ReadSmallFile(path);
    // Some event files are root-only; an event we cannot read is one we
    // cannot offer, not a reason to refuse the whole PMU.
    if (!text) continue;
    pmu.events_.emplace(event, std::string(Trim(*text)));
  }
  return pmu;
}

std::vector<std::string> Pmu::List(const std::string& sysfs_root) {
  std::vector<std::string> names;
  for (const fs::path& path : SortedEntries(fs::path(sysfs_root) / "bus/event_source/devices")) {
    names.push_back(path.filename().string());
  }
  return names;
}

const PmuFormat* Pmu::FindFormat(std::string_view term) const {
  const auto it = formats_.find(term);
  return it == formats_.end() ? nullptr : &it->second;
}

const std::string* Pmu::BrokenFormat(std::string_view term) const {
  const auto it = broken_formats_.find(term);
  return it == broken_formats_.end() ? nullptr : &it->second;
}

const std::string* Pmu::FindEvent(std::string_view name) const {
  const auto it = events_.find(name);
  return it == events_.end() ? nullptr : &it->second;
}

std::vector<std::string> Pmu::FormatNames() const {
  std::vector<std::string> names;
  for (const auto& [name, format] : formats_) names.push_back(name);
  return names;
}

std::vector<std::string> Pmu::EventNames() const {
  std::vector<std::string> names;
  for (const auto& [name, terms] : events_) names.push_back(name);
  return names;
}

Result<std::vector<std::string>> Pmu::ExpandEvents(std::vector<PmuTerm>* terms) const {
  std::vector<PmuTerm> expanded;
  std::vector<std::string> required;
  for (PmuTerm& term : *terms) {
    const std::string* event = nullptr;
    if (!term.value && FindFormat(term.key) == nullptr) event = FindEvent(term.key);
    if (event == nullptr) {
      expanded.push_back(std::move(term));
      continue;
    }
    auto event_terms = ParsePmuTerms(*event);
    if (!event_terms) {
      return Fail(fmt::format("PMU '{}' event '{}' ('{}'): {}", name_, term.key, *event,
                              event_terms.error().message));
    }
    for (PmuTerm& event_term : *event_terms) {
      if (event_term.value == "?") {
        required.push_back(event_term.key);
      } else {
        expanded.push_back(std::move(event_term));
      }
    }
  }
  *terms = std::move(expanded);
  return required;
}

}  // namespace sample
