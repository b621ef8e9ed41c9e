#include "libsample/events/probe_events.h"

#include <linux/hw_breakpoint.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "libsample/events/name_suggestions.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample {
namespace {

namespace fs = std::filesystem;

// The function named `symbol` in `elf`: an exact (demangled) name, else a
// name without its parameter list ("ns::Foo::bar" for "ns::Foo::bar(int)").
Result<const ElfSymbol*> FindFunction(const ElfSymbols& elf, std::string_view symbol,
                                      const std::string& path) {
  // Demangled once each.
  std::vector<std::string> all;
  all.reserve(elf.symbols().size());
  for (const ElfSymbol& s : elf.symbols()) all.push_back(s.name());
  std::vector<const ElfSymbol*> matches;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == symbol) matches.push_back(&elf.symbols()[i]);
  }
  if (matches.empty()) {
    for (size_t i = 0; i < all.size(); ++i) {
      if (std::string_view(all[i]).substr(0, all[i].find('(')) == symbol) {
        matches.push_back(&elf.symbols()[i]);
      }
    }
  }
  if (matches.size() == 1) return matches[0];
  if (matches.empty()) {
    std::vector<NameCandidate> candidates;
    for (const std::string& name : all) {
      candidates.push_back({name.substr(0, name.find('(')), name});
    }
    const std::vector<std::string> close = CloseMatches(symbol, candidates);
    return Fail(fmt::format(
        "no function '{}' in {}{}", symbol, path,
        close.empty() ? "" : fmt::format("; did you mean: {}?", fmt::join(close, ", "))));
  }
  std::vector<std::string> names;
  for (const ElfSymbol* s : matches) names.push_back(s->name());
  return Fail(fmt::format("'{}' is ambiguous in {}: {}; give the full name or a 0x address", symbol,
                          path, Abbreviated(names, 8)));
}

}  // namespace

Result<void> ParseBreakpoint(const RawEvent& raw, EventSpec* spec, std::string_view* mods) {
  std::string_view rest = raw.body.substr(std::string_view("mem:").size());
  const size_t address_end = std::min(rest.find_first_of("/:"), rest.size());
  auto address = ParseTermNumber(rest.substr(0, address_end));
  if (!address) {
    return Fail(fmt::format("bad breakpoint address '{}' in '{}': {}", rest.substr(0, address_end),
                            raw.text, address.error().message));
  }
  rest.remove_prefix(address_end);
  std::optional<uint64_t> length;
  if (rest.starts_with('/')) {
    const size_t length_end = std::min(rest.find(':'), rest.size());
    auto parsed = ParseTermNumber(rest.substr(1, length_end - 1));
    if (!parsed || (*parsed != 1 && *parsed != 2 && *parsed != 4 && *parsed != 8)) {
      return Fail(fmt::format("bad breakpoint length '{}' in '{}': must be 1, 2, 4 or 8",
                              rest.substr(1, length_end - 1), raw.text));
    }
    length = *parsed;
    rest.remove_prefix(length_end);
  }
  std::string_view access = "rw";
  if (rest.starts_with(':')) {
    const std::string_view word = rest.substr(1, rest.find(':', 1) - 1);
    if (!word.empty() && word.find_first_not_of("rwx") == std::string_view::npos) {
      access = word;
      rest.remove_prefix(1 + word.size());
    }
  }
  if (rest.starts_with(':')) {
    *mods = rest.substr(1);
    rest = {};
  }
  if (!rest.empty()) {
    return Fail(
        fmt::format("unexpected '{}' in '{}': expected mem:ADDR[/LEN][:rwx]", rest, raw.text));
  }
  uint32_t type = 0;
  for (char c : access) {
    const uint32_t bit = c == 'r' ? HW_BREAKPOINT_R : c == 'w' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;
    if (type & bit) return Fail(fmt::format("'{}': '{}' given twice", raw.text, c));
    type |= bit;
  }
  if ((type & HW_BREAKPOINT_X) && (type & HW_BREAKPOINT_RW)) {
    return Fail(fmt::format("'{}': x cannot be combined with r or w", raw.text));
  }
  spec->attr.type = PERF_TYPE_BREAKPOINT;
  spec->attr.bp_type = type;
  spec->attr.bp_addr = *address;
  // The kernel wants sizeof(long) for execute breakpoints.
  spec->attr.bp_len =
      length.value_or(type == HW_BREAKPOINT_X ? sizeof(long) : uint64_t{HW_BREAKPOINT_LEN_4});
  return {};
}

Result<UprobeTarget> ParseUprobe(const RawEvent& raw, std::string_view* mods) {
  const bool retprobe = raw.body.starts_with("uretprobe:");
  std::string_view rest = raw.body.substr(raw.body.find(':') + 1);
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Fail(fmt::format("'{}': expected {}:PATH:SYMBOL[+OFFSET]", raw.text,
                            retprobe ? "uretprobe" : "uprobe"));
  }
  const std::string path(rest.substr(0, colon));
  std::string_view symbol = rest.substr(colon + 1);
  // Trailing ":mods", but not the last part of a C++ name ("ns::f").
  if (const size_t last = symbol.rfind(':'); last != std::string_view::npos && last > 0 &&
                                             symbol[last - 1] != ':' &&
                                             LooksLikeModifiers(symbol.substr(last + 1))) {
    *mods = symbol.substr(last + 1);
    symbol = symbol.substr(0, last);
  }
  uint64_t offset = 0;
  if (const size_t plus = symbol.rfind('+'); plus != std::string_view::npos) {
    if (auto parsed = ParseTermNumber(symbol.substr(plus + 1))) {
      offset = *parsed;
      symbol = symbol.substr(0, plus);
    }
  }
  if (symbol.empty()) return Fail(fmt::format("'{}': no symbol after the path", raw.text));
  std::error_code ec;
  const std::string absolute = fs::canonical(path, ec).string();
  if (ec) return Fail(fmt::format("'{}': cannot find {}: {}", raw.text, path, ec.message()));
  auto elf = ElfSymbols::Load(absolute);
  if (!elf) return Fail(fmt::format("'{}': {}", raw.text, elf.error().message));
  uint64_t vaddr = 0;
  if (symbol.starts_with("0x")) {
    auto parsed = ParseTermNumber(symbol);
    if (!parsed) return Fail(fmt::format("'{}': {}", raw.text, parsed.error().message));
    vaddr = *parsed;
  } else {
    auto function = FindFunction(*elf, symbol, absolute);
    if (!function) return Fail(fmt::format("'{}': {}", raw.text, function.error().message));
    if ((*function)->size != 0 && offset >= (*function)->size) {
      return Fail(fmt::format("'{}': offset {:#x} is past the end of {} ({} bytes)", raw.text,
                              offset, (*function)->name(), (*function)->size));
    }
    vaddr = (*function)->start;
  }
  const std::optional<uint64_t> file_offset = elf->VaddrToFileOffset(vaddr + offset);
  if (!file_offset) {
    return Fail(fmt::format("'{}': address {:#x} is not in the file's loaded contents", raw.text,
                            vaddr + offset));
  }
  return UprobeTarget{retprobe, absolute, *file_offset};
}

Result<void> ApplyUprobe(const UprobeTarget& target, const Pmu& pmu, std::string_view text,
                         EventSpec* spec) {
  spec->attr.type = pmu.type();
  if (target.retprobe) {
    const PmuFormat* bit = pmu.FindFormat("retprobe");
    if (bit == nullptr)
      return Fail(fmt::format("'{}': the uprobe PMU has no format/retprobe", text));
    if (auto applied = bit->Apply(1, &spec->attr); !applied) return applied;
  }
  spec->attr.config2 = target.file_offset;
  spec->uprobe_path = target.path;
  return {};
}

Result<KprobeTarget> ParseKprobe(const RawEvent& raw, std::string_view* mods) {
  KprobeTarget target;
  target.retprobe = raw.body.starts_with("kretprobe:");
  const std::string_view kind = target.retprobe ? "kretprobe" : "kprobe";
  std::string_view rest = raw.body.substr(raw.body.find(':') + 1);
  if (const size_t colon = rest.find(':'); colon != std::string_view::npos) {
    if (!LooksLikeModifiers(rest.substr(colon + 1))) {
      return Fail(fmt::format("bad modifiers '{}' in '{}'", rest.substr(colon + 1), raw.text));
    }
    *mods = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  }
  std::string_view function = rest;
  if (const size_t plus = rest.find('+'); plus != std::string_view::npos) {
    function = rest.substr(0, plus);
    auto offset = ParseTermNumber(rest.substr(plus + 1));
    if (!offset) {
      return Fail(fmt::format("bad offset '{}' in '{}': {}", rest.substr(plus + 1), raw.text,
                              offset.error().message));
    }
    if (target.retprobe && *offset != 0) {
      return Fail(fmt::format("'{}': a kretprobe probes a function's returns and takes no offset",
                              raw.text));
    }
    target.offset = *offset;
  }
  const bool valid = !function.empty() && std::all_of(function.begin(), function.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
  });
  if (!valid) {
    return Fail(
        fmt::format("'{}': expected {}:FUNCTION{} (a kernel function, as /proc/kallsyms names it)",
                    raw.text, kind, target.retprobe ? "" : "[+OFFSET]"));
  }
  target.function = std::string(function);
  return target;
}

Result<void> ApplyKprobe(const KprobeTarget& target, const Pmu& pmu, std::string_view text,
                         EventSpec* spec) {
  spec->attr.type = pmu.type();
  if (target.retprobe) {
    const PmuFormat* bit = pmu.FindFormat("retprobe");
    if (bit == nullptr)
      return Fail(fmt::format("'{}': the kprobe PMU has no format/retprobe", text));
    if (auto applied = bit->Apply(1, &spec->attr); !applied) return applied;
  }
  spec->attr.config2 = target.offset;
  spec->kprobe_function = target.function;
  return {};
}

}  // namespace sample
