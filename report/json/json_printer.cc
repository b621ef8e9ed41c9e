#include "report/json/json_printer.h"

#include <fmt/format.h>

#include "report/views/sort_keys.h"

namespace sample::report {
JsonPrinter::JsonPrinter(const Recording& recording, const ViewOptions& view)
    : recording_(recording), view_(view) {
  json_.BeginObject();
  json_.Field("format", "sample-report").Field("version", 1);
}

std::string JsonPrinter::Finish() {
  json_.EndObject();
  return json_.Take();
}

void JsonPrinter::Sections(const std::vector<EventSection>& sections) {
  json_.Key("sections").BeginArray();
  for (const EventSection& s : sections) Section(s);
  json_.EndArray();
}

void JsonPrinter::Section(const EventSection& s) {
  const Profile& profile = recording_.profile;
  json_.BeginObject();
  json_.Field("event", profile.event_name(s.event)).Field("title", s.title);
  json_.Key("group_members").BeginArray();
  for (size_t m = 0; m < s.members.size(); ++m) {
    json_.BeginObject()
        .Field("event", profile.event_name(s.members[m]))
        .Field("period", s.flat.member_periods[m])
        .Field("percent_base", s.member_bases[m])
        .EndObject();
  }
  json_.EndArray();
  json_.Field("samples", s.flat.samples)
      .Field("period", s.flat.period)
      .Field("all_samples", s.all_samples)
      .Field("filtered", s.filtered)
      .Field("percent_base", s.percent_base)
      .Field("lost_samples", recording_.stats.lost_samples)
      .Field("children", s.children);
  // Only for the pseudo-events of time and bytes, so other sections read
  // as before.
  if (s.time_weighted) json_.Field("period_unit", "ns");
  if (s.unit == PeriodUnit::kBytes) json_.Field("period_unit", "bytes");
  if (s.tid != FlatEntry::kAny) json_.Field("tid", s.tid);
  json_.Key("sort_keys").BeginArray();
  for (SortKey key : view_.sort_keys) json_.String(SortKeyName(key));
  json_.EndArray();
  if (s.call_graph) {
    const CallGraphSpec& spec = *view_.call_graph;
    json_.Key("call_graph").BeginObject();
    json_.Field("mode", CallGraphModeName(spec.mode)).Field("threshold", spec.threshold);
    const FlatOptions order_of{.children = s.children, .order = spec.order};
    json_.Field("order", EffectiveOrder(order_of) == CallOrder::kCaller ? "caller" : "callee");
    json_.EndObject();
  }
  json_.Key("entries").BeginArray();
  for (const FlatEntry* e : ShownEntries(s, view_.percent_limit)) Entry(s, *e);
  json_.EndArray();
  json_.EndObject();
}

void JsonPrinter::FunctionFields(uint32_t function) {
  const Profile& profile = recording_.profile;
  const Function& f = profile.function(function);
  json_.Field("symbol", f.name)
      .Field("dso", profile.dso_name(f.dso))
      .Field("kernel", f.kernel)
      .Field("known", f.known)
      .Field("inlined", f.inlined);
}

// symbol_daddr's: the address, its mapping and the symbol holding it.
void JsonPrinter::DataFields(const DataLocation& location) {
  const Profile& profile = recording_.profile;
  json_.Field("data_address", Hex(location.address))
      .Field("data_dso", profile.dso_name(location.dso));
  if (location.symbol != 0) {
    json_.Field("data_symbol", profile.data_symbol(location.symbol))
        .Field("data_symbol_offset", location.symbol_offset);
  }
}

void JsonPrinter::Entry(const EventSection& s, const FlatEntry& e) {
  const Profile& profile = recording_.profile;
  json_.BeginObject();
  json_.Field("overhead",
              Percentage(s.children ? e.children_period : e.self_period, s.percent_base));
  json_.Field("self", Percentage(e.self_period, s.percent_base))
      .Field("self_period", e.self_period)
      .Field("self_samples", e.self_samples);
  if (s.children) {
    json_.Field("children", Percentage(e.children_period, s.percent_base))
        .Field("children_period", e.children_period)
        .Field("children_samples", e.children_samples);
  }
  if (e.comm != FlatEntry::kAny) json_.Field("comm", profile.comm(e.comm));
  if (e.pid != FlatEntry::kAny) json_.Field("pid", e.pid);
  if (e.tid != FlatEntry::kAny) json_.Field("tid", e.tid);
  if (e.cpu != FlatEntry::kAny) json_.Field("cpu", e.cpu);
  if (e.function != FlatEntry::kAny) {
    FunctionFields(e.function);
  } else if (e.dso != FlatEntry::kAny) {
    json_.Field("dso", profile.dso_name(e.dso));
  }
  if (e.srcline != FlatEntry::kAny) json_.Field("srcline", profile.srcline(e.srcline));
  if (e.data != FlatEntry::kAny) {
    DataFields(profile.data_location(e.data));
  } else if (e.data_dso != FlatEntry::kAny) {
    json_.Field("data_dso", profile.dso_name(e.data_dso));
  }
  if (!s.members.empty()) {
    json_.Key("group_members").BeginArray();
    for (size_t m = 0; m < s.members.size(); ++m) {
      json_.BeginObject()
          .Field("event", profile.event_name(s.members[m]))
          .Field("self", Percentage(e.member_self[m], s.member_bases[m]))
          .Field("self_period", e.member_self[m]);
      if (s.children) {
        json_.Field("children", Percentage(e.member_children[m], s.member_bases[m]))
            .Field("children_period", e.member_children[m]);
      }
      json_.EndObject();
    }
    json_.EndArray();
  }
  if (s.call_graph) CallGraph(s, e.tree);
  json_.EndObject();
}

void JsonPrinter::CallGraph(const EventSection& s, const CallNode& root) {
  const CallGraphSpec& spec = *view_.call_graph;
  const Profile& profile = recording_.profile;
  if (spec.mode == CallGraphMode::kFlat || spec.mode == CallGraphMode::kFolded) {
    json_.Key("chains").BeginArray();
    for (const EndingChain& chain : EndingChains(root)) {
      const double share = BranchShare(spec, chain.period, root.period, s.percent_base);
      if (share < spec.threshold) continue;
      json_.BeginObject().Field("percent", share).Field("period", chain.period);
      json_.Key("frames").BeginArray();
      for (const CallNode* node : chain.nodes)
        json_.String(FunctionLabel(profile.function(node->function)));
      json_.EndArray().EndObject();
    }
    json_.EndArray();
    return;
  }
  json_.Key("callchain");
  Branches(root, s.percent_base);
}

// The shown children of `node`, each with its own shown children.
void JsonPrinter::Branches(const CallNode& node, uint64_t total) {
  const CallGraphSpec& spec = *view_.call_graph;
  json_.BeginArray();
  for (const CallNode& c : node.children) {
    const double share = BranchShare(spec, c.period, node.period, total);
    if (c.period == 0 || share < spec.threshold) continue;
    json_.BeginObject();
    FunctionFields(c.function);
    json_.Field("percent", share).Field("period", c.period).Field("samples", c.samples);
    json_.Key("branches");
    Branches(c, total);
    json_.EndObject();
  }
  json_.EndArray();
}

// A tracepoint field: integers as numbers, pointers as "0x..." strings,
// strings as strings (already plain ASCII), lists as arrays, bytes as a
// hex string, a field past the payload's end as null.
void JsonPrinter::TraceValueJson(const TraceValue& value) {
  json_.Key(value.field->name);
  auto number = [&](uint64_t n, TraceValue::Kind kind) {
    if (kind == TraceValue::Kind::kSigned) {
      json_.Int(static_cast<int64_t>(n));
    } else if (kind == TraceValue::Kind::kHex) {
      json_.String(Hex(n));
    } else {
      json_.Uint(n);
    }
  };
  switch (value.kind) {
    case TraceValue::Kind::kSigned:
    case TraceValue::Kind::kUnsigned:
    case TraceValue::Kind::kHex:
      number(value.number, value.kind);
      break;
    case TraceValue::Kind::kString:
    case TraceValue::Kind::kBytes:
      json_.String(value.text);
      break;
    case TraceValue::Kind::kList:
      json_.BeginArray();
      for (uint64_t e : value.elements) number(e, value.element_kind);
      json_.EndArray();
      break;
    case TraceValue::Kind::kMissing:
      json_.Null();
      break;
  }
}

void JsonPrinter::Script(const ScriptView& script) {
  const Profile& profile = *script.profile;
  json_.Key("script").BeginArray();
  for (const ProfileSample* s : script.samples) {
    json_.BeginObject()
        .Field("comm", profile.comm(s->comm))
        .Field("pid", s->pid)
        .Field("tid", s->tid)
        .Field("cpu", s->cpu)
        .Field("time_ns", s->time)
        .Field("period", s->period)
        .Field("event", profile.event_name(s->event));
    json_.Key("frames").BeginArray();
    for (const ScriptFrame& f : script.Frames(*s)) {
      json_.BeginObject()
          .Field("ip", Hex(f.ip))
          .Field("symbol", f.function->known ? f.function->name : "[unknown]");
      json_.Key("offset");
      if (f.symbol_offset != FrameAddress::kNoOffset) {
        json_.Uint(f.symbol_offset);
      } else {
        json_.Null();
      }
      json_.Field("dso", *f.dso).EndObject();
    }
    json_.EndArray();
    if (const auto fields = script.TraceFields(*s); !fields.empty()) {
      json_.Key("fields").BeginObject();
      for (const TraceValue& value : fields) TraceValueJson(value);
      json_.EndObject();
    }
    if (s->reads_count != 0) {
      json_.Key("group_members").BeginArray();
      for (const MemberCount& read : profile.reads(*s)) {
        json_.BeginObject()
            .Field("event", profile.event_name(read.event))
            .Field("count", read.count)
            .EndObject();
      }
      json_.EndArray();
    }
    json_.EndObject();
  }
  json_.EndArray();
  // Only when asked for (--show-switch-events, --show-all-records).
  if (script.sideband.empty()) return;
  json_.Key("records").BeginArray();
  for (const ScriptSideband& r : script.sideband) {
    json_.BeginObject()
        .Field("comm", *r.comm)
        .Field("tid", r.tid)
        .Field("cpu", r.cpu)
        .Field("time_ns", r.time)
        .Field("record", r.text)
        .EndObject();
  }
  json_.EndArray();
}

}  // namespace sample::report
