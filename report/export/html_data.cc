#include "report/export/html_data.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "libsample/model/stack_tree.h"
#include "report/export/html_annotation.h"
#include "report/json/json_writer.h"

// The document, one row a line:
//   {"version":1,
//   "header":{"command":...,"host":...,"os":...,"arch":...,"cpus":...,
//     "recorder":...,"date":...,"duration_s":...,"samples":...,"lost":...,
//     "finalized":...,"events":[["name",samples],...]},
//   "weight":"samples"|"period","icicle":false,
//   "funcs":[
//   ["name","dso","kind"],        kind: user|kernel|jit|inlined|unknown|comm
//   ...],
//   "sections":[
//   {"name":"cpu-clock","samples":N,"period":P,
//   "table":[
//   [func,self,total],            by total, then self, then name
//   ...],
//   "nodes":[                     flat, 4 numbers a node (parsed faster
//   -1,-1,total,self,             than an array each): the root, then
//   func,parent,total,self,       the others in preorder, children by
//   ...]}                         name; `parent` is a node's index
//   ,...],
//   "annotate":{...}|null}        html_annotation.h; null: none was made
// A command node (one per comm under the root) is a func of kind "comm".
namespace sample::report {
namespace {

// Every string of the document, escaped to be inert inside <script>.
void AppendScriptString(std::string& out, std::string_view text) {
  AppendJsonString(out, text, JsonStringUse::kInScript);
}

// Numbers the functions and commands the page shows, in order of first use.
class FuncTable {
 public:
  explicit FuncTable(const ExportInput& input) : input_(input) {}

  int Of(const StackNode& node) {
    if (node.function == StackNode::kNone && node.comm == StackNode::kNone) return -1;
    const bool comm = node.function == StackNode::kNone;
    return Index(comm, comm ? node.comm : node.function);
  }
  int OfFunction(uint32_t function) { return Index(false, function); }
  // The rows of the functions whose symbol is `symbol` (one per source
  // line when they are loaded); added when there is none.
  std::vector<int> OfSymbol(uint32_t symbol) {
    std::vector<int> out;
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (!rows_[i].comm && input_.profile().function(rows_[i].id).symbol == symbol) {
        out.push_back(static_cast<int>(i));
      }
    }
    if (out.empty()) out.push_back(OfFunction(symbol));
    return out;
  }
  std::string Label(uint32_t function) const {
    return FunctionLabel(input_.profile().function(function));
  }

  void Write(std::string& out) const {
    const Profile& profile = input_.profile();
    out += "\"funcs\":[";
    for (size_t i = 0; i < rows_.size(); ++i) {
      out += i == 0 ? "\n[" : ",\n[";
      if (rows_[i].comm) {
        AppendScriptString(out, profile.comm(rows_[i].id));
        out += ",\"\",\"comm\"]";
        continue;
      }
      const Function& f = profile.function(rows_[i].id);
      AppendScriptString(out, FunctionLabel(f));
      out += ',';
      AppendScriptString(out, profile.dso_name(f.dso));
      fmt::format_to(std::back_inserter(out), ",\"{}\"]", FrameKindName(input_.Kind(rows_[i].id)));
    }
    out += "],\n";
  }

 private:
  int Index(bool comm, uint32_t id) {
    auto& ids = comm ? comm_ids_ : function_ids_;
    auto [it, inserted] = ids.try_emplace(id, rows_.size());
    if (inserted) rows_.push_back({comm, id});
    return static_cast<int>(it->second);
  }

  struct Row {
    bool comm;
    uint32_t id;
  };
  const ExportInput& input_;
  std::vector<Row> rows_;
  std::unordered_map<uint32_t, size_t> function_ids_, comm_ids_;
};

void WriteNodes(const ExportInput& input, const StackTree& tree, FuncTable& funcs,
                std::string& out) {
  const bool period = input.options.weight == ExportWeight::kPeriod;
  // Preorder with an explicit stack; `number` maps tree ids to row numbers.
  std::vector<uint32_t> number(tree.nodes().size());
  std::vector<uint32_t> pending = {StackTree::kRoot};
  uint32_t next = 0;
  out += "\"nodes\":[";
  while (!pending.empty()) {
    const uint32_t id = pending.back();
    pending.pop_back();
    const StackNode& n = tree.node(id);
    number[id] = next++;
    const int64_t parent = n.parent == StackNode::kNone ? -1 : int64_t{number[n.parent]};
    fmt::format_to(std::back_inserter(out), "{}\n{},{},{},{}", id == StackTree::kRoot ? "" : ",",
                   funcs.Of(n), parent, period ? n.total_period : n.total_samples,
                   period ? n.self_period : n.self_samples);
    pending.insert(pending.end(), n.children.rbegin(), n.children.rend());
  }
  out += "]";
}

// Self and total per function, as the flat profile's rows: the function
// symbol holding each address (its inlined calls count as it); a sample
// counts once toward the total of each function on its stack, however
// often the function recurses.
void WriteTable(const ExportInput& input, const ExportSection& section, FuncTable& funcs,
                std::string& out) {
  struct KeyHash {
    size_t operator()(const std::array<uint32_t, 3>& k) const {
      return (size_t{k[0]} * 0x9E3779B97F4A7C15ull) ^ k[1] ^ (size_t{k[2]} << 32);
    }
  };
  // Samples sharing an interned stack share its functions: sum by stack first.
  std::unordered_map<std::array<uint32_t, 3>, uint64_t, KeyHash> by_stack;
  for (uint32_t index : section.samples) {
    const ProfileSample& s = input.sample(index);
    by_stack[{s.frames_begin, static_cast<uint32_t>(input.Frames(s).size()), s.frames_count}] +=
        input.Weight(s);
  }
  struct Sums {
    uint64_t self = 0, total = 0;
  };
  std::unordered_map<uint32_t, Sums> sums;
  std::vector<uint32_t> seen;
  for (const auto& [key, weight] : by_stack) {
    const auto frames =
        input.profile().frames(ProfileSample{.frames_begin = key[0], .frames_count = key[1]});
    if (frames.empty()) continue;
    // Holders are looked up in the whole chain: a --max-stack cut inside an
    // address's inlined calls does not change whose row they are.
    const auto chain =
        input.profile().frames(ProfileSample{.frames_begin = key[0], .frames_count = key[2]});
    sums[chain[HolderIndex(input.profile(), chain, 0)]].self += weight;
    HolderFrames(input.profile(), chain, frames.size(), seen);  // one pass over the chain
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (uint32_t f : seen) sums[f].total += weight;
  }
  struct Row {
    uint32_t function;
    Sums sums;
    std::string label;
  };
  std::vector<Row> rows;
  for (const auto& [f, s] : sums) rows.push_back({f, s, funcs.Label(f)});
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.sums.total != b.sums.total) return a.sums.total > b.sums.total;
    if (a.sums.self != b.sums.self) return a.sums.self > b.sums.self;
    return a.label != b.label ? a.label < b.label : a.function < b.function;
  });
  out += "\"table\":[";
  for (size_t i = 0; i < rows.size(); ++i) {
    fmt::format_to(std::back_inserter(out), "{}\n[{},{},{}]", i == 0 ? "" : ",",
                   funcs.OfFunction(rows[i].function), rows[i].sums.self, rows[i].sums.total);
  }
  out += "],\n";
}

void WriteHeader(const HeaderView& h, std::string& out) {
  auto field = [&](std::string_view key, std::string_view value) {
    fmt::format_to(std::back_inserter(out), "\"{}\":", key);
    AppendScriptString(out, value);
    out += ',';
  };
  out += "\"header\":{";
  field("command", h.cmdline);
  field("host", h.hostname);
  field("os", h.os_release.empty() ? h.os_version : h.os_release);
  field("arch", h.arch);
  field("cpus", h.cpus_online);
  field("recorder", h.recorder_version);
  field("date", h.start_time);
  fmt::format_to(std::back_inserter(out),
                 "\"duration_s\":{:.3f},\"samples\":{},\"lost\":{},\"finalized\":{},\"events\":[",
                 h.duration_s, h.samples, h.lost_samples, h.finalized);
  for (size_t i = 0; i < h.events.size(); ++i) {
    out += i == 0 ? "[" : ",[";
    AppendScriptString(out, h.events[i].name);
    fmt::format_to(std::back_inserter(out), ",{}]", h.events[i].samples);
  }
  out += "]},\n";
}

}  // namespace

std::string BuildHtmlData(const ExportInput& input, const HeaderView& header,
                          const AnnotateView* annotation) {
  std::string out = "{\"version\":1,\n";
  WriteHeader(header, out);
  fmt::format_to(std::back_inserter(out), "\"weight\":\"{}\",\"icicle\":{},\n",
                 input.options.weight == ExportWeight::kPeriod ? "period" : "samples",
                 input.options.icicle);
  // Sections first, so that the function numbers they assign are known
  // when the function list is written before them.
  FuncTable funcs(input);
  std::string sections = "\"sections\":[";
  for (size_t i = 0; i < input.sections.size(); ++i) {
    const ExportSection& section = input.sections[i];
    sections += i == 0 ? "\n{\"name\":" : ",\n{\"name\":";
    AppendScriptString(sections, section.name);
    fmt::format_to(std::back_inserter(sections), ",\"samples\":{},\"period\":{},\n",
                   section.sample_count, section.period);
    WriteTable(input, section, funcs, sections);
    WriteNodes(input, BuildStackTree(input, section, /*by_comm=*/true), funcs, sections);
    sections += "}";
  }
  sections += "],\n";
  std::string annotate = "\"annotate\":null";
  if (annotation != nullptr) {
    std::vector<std::vector<int>> page_funcs;
    for (const AnnotatedFunction& f : annotation->functions) {
      page_funcs.push_back(funcs.OfSymbol(f.function));
    }
    const bool period = input.options.weight == ExportWeight::kPeriod ||
                        input.PeriodWeighted(input.sections.front().event);
    annotate.clear();
    AppendHtmlAnnotation(*annotation, page_funcs, period, annotate);
  }
  funcs.Write(out);
  out += sections;
  out += annotate;
  out += "}\n";
  return out;
}

}  // namespace sample::report
