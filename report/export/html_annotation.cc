#include "report/export/html_annotation.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "report/json/json_writer.h"
#include "report/views/source_files.h"

// The member, one row a line:
//   "annotate":{"event":"cpu-clock","coverage":95,"max_functions":50,"context":2,
//   "files":["/src/split.c",...],
//   "places":[
//   [file,line,"call"],           file: into files (-1 and line 0: none);
//   ...],                         call: the innermost inlined call the
//                                 code came from, "" for the function's own
//   "text":[
//   [file,first,["text",...]],    lines first, first + 1, ... of files[file]
//   ...],
//   "functions":[                 hottest first
//   {"funcs":[2],"name":"f","dso":"/bin/p","samples":N,"weight":W,
//   "start":"401126","origin":"the binary","note":"",["cut":"...",]
//   ["source_note":"...",]"unplaced":U,
//   "ins":[
//   [offset,"text",weight,place], offset from start; place: into places (-1: none)
//   [offset,null,count],          `count` instructions without samples left out
//   ...]}
//   ,...]}
// A function's weight is its samples or period (as the page's); `unplaced`
// is the part at addresses that start no instruction; a function with a
// note has no instructions, the note says why; `cut` says why runs of its
// instructions were left out by the view (AnnotateBounds), `source_note`
// what text of its source files is not embedded and why (source_owners):
// each only when there is one.
namespace sample::report {
namespace {

void AppendString(std::string& out, std::string_view text) {
  AppendJsonString(out, text, JsonStringUse::kInScript);
}

// At most kMaxSourceLineBytes, not cutting a UTF-8 sequence.
std::string_view Cut(std::string_view line) {
  if (line.size() <= kMaxSourceLineBytes) return line;
  size_t n = kMaxSourceLineBytes;
  while (n > 0 && (static_cast<unsigned char>(line[n]) & 0xC0) == 0x80) --n;
  return line.substr(0, n);
}

// Files and source places numbered in order of first use, and the lines
// whose text the page gets.
class Places {
 public:
  int Of(const AnnotatedInstruction& in) {
    const std::string call = in.inlined.empty() ? "" : in.inlined.front();
    if (in.line == 0 && call.empty()) return -1;
    const int file = in.line == 0 ? -1 : File(in.file);
    const uint32_t line = file < 0 ? 0 : in.line;
    auto [it, added] = index_.try_emplace({file, line, call}, rows_.size());
    if (added) rows_.push_back({file, line, call});
    return static_cast<int>(it->second);
  }

  // Lines with samples and their neighbours get their text, if their
  // file's owner is one of `owners` (or of another function's naming it).
  void Sampled(const AnnotatedInstruction& in, const SourceOwners& owners) {
    if (in.line == 0 || in.file.empty()) return;
    const int file = File(in.file);
    owners_[file].Merge(owners);
    std::set<uint32_t>& lines = wanted_[file];
    const uint32_t from = in.line > kContextLines ? in.line - kContextLines : 1;
    const uint32_t to =
        in.line <= UINT32_MAX - kContextLines ? in.line + kContextLines : UINT32_MAX;
    for (uint64_t l = from; l <= to; ++l) lines.insert(static_cast<uint32_t>(l));
  }

  void Write(std::string& out) const {
    out += "\"files\":[";
    for (size_t i = 0; i < files_.size(); ++i) {
      if (i != 0) out += ',';
      AppendString(out, files_[i]);
    }
    out += "],\n\"places\":[";
    for (size_t i = 0; i < rows_.size(); ++i) {
      fmt::format_to(std::back_inserter(out), "{}\n[{},{},", i == 0 ? "" : ",",
                     std::get<0>(rows_[i]), std::get<1>(rows_[i]));
      AppendString(out, std::get<2>(rows_[i]));
      out += ']';
    }
    out += "],\n\"text\":[";
    WriteText(out);
    out += "],\n";
  }

 private:
  int File(const std::string& path) {
    auto [it, added] = file_index_.try_emplace(path, files_.size());
    if (added) files_.push_back(path);
    return static_cast<int>(it->second);
  }

  // Runs of consecutive wanted lines that have text, each file read once.
  void WriteText(std::string& out) const {
    SourceFiles sources;
    bool first_run = true;
    for (const auto& [file, lines] : wanted_) {
      bool open = false;
      uint32_t next = 0;
      for (uint32_t line : lines) {
        const auto text = sources.Line(files_[file], line, owners_.at(file));
        if (open && (!text || line != next)) {
          out += "]]";
          open = false;
        }
        if (!text) continue;
        if (!open) {
          fmt::format_to(std::back_inserter(out), "{}\n[{},{},[", first_run ? "" : ",", file, line);
          first_run = false;
          open = true;
        } else {
          out += ',';
        }
        AppendString(out, Cut(*text));
        next = line + 1;
      }
      if (open) out += "]]";
    }
  }

  using Key = std::tuple<int, uint32_t, std::string>;
  std::vector<std::string> files_;
  std::map<std::string, size_t> file_index_;
  std::vector<Key> rows_;
  std::map<Key, size_t> index_;
  std::map<int, std::set<uint32_t>> wanted_;  // by file
  std::map<int, SourceOwners> owners_;        // whose file each may be
};

// Which instructions the page gets: all of a function of up to
// kWholeFunction, else those within kContextInstructions of a sampled one.
std::vector<bool> Kept(const std::vector<AnnotatedInstruction>& ins) {
  std::vector<bool> keep(ins.size(), ins.size() <= kWholeFunction);
  if (ins.size() <= kWholeFunction) return keep;
  constexpr size_t kNone = SIZE_MAX;
  for (size_t i = 0, last = kNone; i < ins.size(); ++i) {
    if (ins[i].samples != 0) last = i;
    if (last != kNone && i - last <= kContextInstructions) keep[i] = true;
  }
  for (size_t i = ins.size(), last = kNone; i-- > 0;) {
    if (ins[i].samples != 0) last = i;
    if (last != kNone && last - i <= kContextInstructions) keep[i] = true;
  }
  return keep;
}

void WriteInstructions(const AnnotatedFunction& f, bool period, Places& places, std::string& out) {
  const std::vector<bool> keep = Kept(f.instructions);
  bool first = true;
  auto row = [&] {
    out += first ? "\n[" : ",\n[";
    first = false;
  };
  // Rows the page leaves out and those the view did (left_out) make one.
  const auto out_of_page = [&](size_t i) { return !keep[i] || f.instructions[i].left_out != 0; };
  for (size_t i = 0; i < f.instructions.size();) {
    const AnnotatedInstruction& in = f.instructions[i];
    if (out_of_page(i)) {
      uint64_t skipped = 0;
      for (; i < f.instructions.size() && out_of_page(i); ++i) {
        skipped += std::max<uint64_t>(f.instructions[i].left_out, 1);
      }
      row();
      fmt::format_to(std::back_inserter(out), "{},null,{}]", in.address - f.start, skipped);
      continue;
    }
    // Only the source files the view may read (source_owners) get text.
    if (in.samples != 0 && f.source_readable) places.Sampled(in, f.source_owners);
    row();
    fmt::format_to(std::back_inserter(out), "{},", in.address - f.start);
    AppendString(out, in.text);
    fmt::format_to(std::back_inserter(out), ",{},{}]", period ? in.period : in.samples,
                   places.Of(in));
    ++i;
  }
}

void WriteFunction(const AnnotatedFunction& f, const std::vector<int>& funcs, bool period,
                   Places& places, std::string& out) {
  out += "{\"funcs\":[";
  for (size_t i = 0; i < funcs.size(); ++i)
    fmt::format_to(std::back_inserter(out), "{}{}", i == 0 ? "" : ",", funcs[i]);
  out += "],\"name\":";
  AppendString(out, f.name);
  out += ",\"dso\":";
  AppendString(out, f.dso);
  uint64_t placed_period = 0;
  for (const AnnotatedInstruction& in : f.instructions) placed_period += in.period;
  const uint64_t unplaced =
      period ? (f.period > placed_period ? f.period - placed_period : 0) : f.unplaced_samples;
  fmt::format_to(std::back_inserter(out), ",\"samples\":{},\"weight\":{},\"start\":\"{:x}\",",
                 f.samples, period ? f.period : f.samples, f.start);
  out += "\"origin\":";
  AppendString(out, f.origin);
  out += ",\"note\":";
  AppendString(out, f.note);
  // Only when there is something to say: the page of an ordinary
  // recording's binaries stays as it was.
  if (!f.cut.empty()) {
    out += ",\"cut\":";
    AppendString(out, f.cut);
  }
  if (!f.source_note.empty()) {
    out += ",\"source_note\":";
    AppendString(out, f.source_note);
  }
  fmt::format_to(std::back_inserter(out), ",\"unplaced\":{},\n\"ins\":[", unplaced);
  WriteInstructions(f, period, places, out);
  out += "]}";
}

}  // namespace

AnnotateOptions PageAnnotateOptions(const ExportInput& input) {
  AnnotateOptions options;
  options.on = true;
  options.max_functions = kPageMaxFunctions;
  options.coverage = kPageCoverage;
  if (!input.sections.empty()) options.event = input.sections.front().event;
  return options;
}

void AppendHtmlAnnotation(const AnnotateView& view, const std::vector<std::vector<int>>& page_funcs,
                          bool period, std::string& out) {
  Places places;
  std::string functions = "\"functions\":[";
  for (size_t i = 0; i < view.functions.size(); ++i) {
    functions += i == 0 ? "\n" : "\n,";
    WriteFunction(view.functions[i], i < page_funcs.size() ? page_funcs[i] : std::vector<int>{},
                  period, places, functions);
  }
  functions += "]}";
  out += "\"annotate\":{\"event\":";
  AppendString(out, view.event);
  fmt::format_to(std::back_inserter(out), ",\"coverage\":{},\"max_functions\":{},\"context\":{},\n",
                 static_cast<int>(kPageCoverage * 100 + 0.5), kPageMaxFunctions, kContextLines);
  places.Write(out);
  out += functions;
}

}  // namespace sample::report
