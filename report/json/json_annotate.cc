#include "report/json/json_annotate.h"

#include <fmt/format.h>

#include "report/json/json_writer.h"

namespace sample::report {
namespace {

std::string BytesText(const std::vector<std::byte>& bytes) {
  std::string out;
  for (std::byte b : bytes) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{:02x}", static_cast<unsigned>(b));
  }
  return out;
}

void Instruction(JsonWriter& json, const AnnotatedInstruction& in) {
  if (in.left_out != 0) {
    // A run of instructions without samples left out of a big function.
    json.BeginObject().Field("address", Hex(in.address)).Field("left_out", in.left_out).EndObject();
    return;
  }
  json.BeginObject()
      .Field("address", Hex(in.address))
      .Field("bytes", BytesText(in.bytes))
      .Field("text", in.text)
      .Field("samples", in.samples)
      .Field("period", in.period);
  json.Key("file");
  if (in.line != 0) {
    json.String(in.file).Field("line", in.line);
  } else {
    json.Null().Key("line").Null();
  }
  json.Key("inlined").BeginArray();
  for (const std::string& name : in.inlined) json.String(name);
  json.EndArray().EndObject();
}

}  // namespace

std::string AnnotateJson(const AnnotateView& view) {
  JsonWriter json;
  json.BeginObject().Key("annotate").BeginObject();
  json.Field("event", view.event)
      .Field("samples", view.event_samples)
      .Field("percent", "local period");
  json.Key("functions").BeginArray();
  for (const AnnotatedFunction& f : view.functions) {
    json.BeginObject()
        .Field("name", f.name)
        .Field("dso", f.dso)
        .Field("samples", f.samples)
        .Field("period", f.period)
        .Field("start", Hex(f.start))
        .Field("end", Hex(f.end))
        .Field("origin", f.origin);
    if (!f.note.empty()) json.Field("note", f.note);
    if (!f.cut.empty()) json.Field("cut", f.cut);
    if (!f.source_note.empty()) json.Field("source_note", f.source_note);
    json.Field("unplaced_samples", f.unplaced_samples);
    json.Key("instructions").BeginArray();
    for (const AnnotatedInstruction& in : f.instructions) Instruction(json, in);
    json.EndArray().EndObject();
  }
  json.EndArray().EndObject().EndObject();
  return json.Take() + "\n";
}

}  // namespace sample::report
