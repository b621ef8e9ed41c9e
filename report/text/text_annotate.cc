#include "report/text/text_annotate.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "libsample/percent.h"
#include "libsample/string_parts.h"
#include "report/views/source_files.h"

namespace sample::report {
namespace {

// The text of a source line of `f`, when its file may be read
// (AnnotatedFunction::source_owners).
std::optional<std::string_view> TextOf(SourceFiles& sources, const AnnotatedFunction& f,
                                       const std::string& file, uint32_t line) {
  return sources.Line(file, line, f.source_owners);
}

void SourceLine(std::string& out, SourceFiles& sources, const AnnotatedFunction& f,
                const std::string& file, uint32_t line) {
  if (const auto text = TextOf(sources, f, file, line)) {
    out += fmt::format("         : {:<4} {}\n", line, *text);
  } else if (line != 0) {
    out += fmt::format("         : {:<4} {}:{}\n", line, Basename(file), line);
  }
}

void Heading(std::string& out, const AnnotateView& view, const AnnotatedFunction& f,
             const char* what) {
  const std::string title =
      fmt::format(" Percent |\t{} of {} for {} ({} samples, percent: local period)", what,
                  Basename(f.dso), view.event, f.samples);
  out += title + "\n" + std::string(title.size() + 8, '-') + "\n";
}

// Why source text or instructions are left out, a line each.
void Notes(std::string& out, const AnnotatedFunction& f) {
  const bool lines = std::ranges::any_of(
      f.instructions, [](const AnnotatedInstruction& in) { return in.line != 0; });
  if (lines && !f.source_note.empty()) {
    out += fmt::format("         : {}\n", f.source_note);
  }
  if (!f.cut.empty()) out += fmt::format("         : {}\n", f.cut);
}

void Instructions(std::string& out, SourceFiles& sources, const AnnotatedFunction& f) {
  Notes(out, f);
  out += fmt::format("         :\t{:016x} <{}>:\n", f.start, f.name);
  std::optional<std::string> function;  // the inlined call (or the function) shown last
  std::optional<std::pair<std::string, uint32_t>> place;
  for (const AnnotatedInstruction& in : f.instructions) {
    if (in.left_out != 0) {
      out +=
          fmt::format("         :   ... {} instructions without samples left out\n", in.left_out);
      continue;
    }
    const std::string& now = in.inlined.empty() ? f.name : in.inlined.front();
    if (function != now) {
      out += fmt::format("         : {}():\n", now);
      function = now;
      place.reset();
    }
    if (in.line != 0 && place != std::pair(in.file, in.line)) {
      SourceLine(out, sources, f, in.file, in.line);
      place = std::pair(in.file, in.line);
    }
    out += fmt::format("{:8.2f} :   {:x}:   {}\n", Percentage(in.period, f.period), in.address,
                       in.text);
  }
  if (f.unplaced_samples != 0) {
    out += fmt::format("         : {} samples at addresses that start no instruction above\n",
                       f.unplaced_samples);
  }
}

// One row per source line the function's code comes from, by file and line.
void SourceOnly(std::string& out, SourceFiles& sources, const AnnotatedFunction& f) {
  std::map<std::pair<std::string, uint32_t>, uint64_t> period;  // ordered by file, line
  uint64_t without = 0;
  for (const AnnotatedInstruction& in : f.instructions) {
    if (in.line == 0) {
      without += in.period;
    } else {
      period[{in.file, in.line}] += in.period;
    }
  }
  for (const auto& [place, p] : period) {
    const auto text = TextOf(sources, f, place.first, place.second);
    out += fmt::format("{:8.2f} : {}:{:<5} {}\n", Percentage(p, f.period), Basename(place.first),
                       place.second, text.value_or(""));
  }
  if (without != 0) {
    out += fmt::format("{:8.2f} : (no source line)\n", Percentage(without, f.period));
  }
}

}  // namespace

std::string FormatAnnotate(const AnnotateView& view, bool source_only) {
  std::string out;
  SourceFiles sources;
  if (view.functions.empty()) {
    return view.event.empty()
               ? "# no samples\n"
               : fmt::format("# no samples of {} in user code to annotate\n", view.event);
  }
  for (const AnnotatedFunction& f : view.functions) {
    if (!out.empty()) out += "\n";
    Heading(out, view, f, source_only ? "Source code" : "Source code & Disassembly");
    if (!f.note.empty()) {
      out += fmt::format("         : {} ({}): not annotated: {}\n", f.name, f.dso, f.note);
      continue;
    }
    if (source_only) {
      Notes(out, f);
      out += fmt::format("         : {}():\n", f.name);
      SourceOnly(out, sources, f);
    } else {
      Instructions(out, sources, f);
    }
  }
  return out;
}

}  // namespace sample::report
