#include "report/json/json_writer.h"

#include <cassert>
#include <cmath>

#include <fmt/format.h>

#include "report/text/display_text.h"

namespace sample::report {

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  assert(stack_.back().array && "a value inside an object needs a key");
  out_ += stack_.back().count++ == 0 ? "\n" : ",\n";
  out_.append(2 * stack_.size(), ' ');
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  stack_.push_back({false, 0});
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  stack_.push_back({true, 0});
  return *this;
}

void JsonWriter::Close(char bracket) {
  assert(!stack_.empty() && !after_key_);
  const bool empty = stack_.back().count == 0;
  stack_.pop_back();
  if (!empty) {
    out_ += '\n';
    out_.append(2 * stack_.size(), ' ');
  }
  out_ += bracket;
}

JsonWriter& JsonWriter::EndObject() {
  assert(!stack_.back().array);
  Close('}');
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  assert(stack_.back().array);
  Close(']');
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  assert(!stack_.empty() && !stack_.back().array && !after_key_);
  out_ += stack_.back().count++ == 0 ? "\n" : ",\n";
  out_.append(2 * stack_.size(), ' ');
  AppendEscaped(key);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendEscaped(value);
  return *this;
}

void JsonWriter::AppendEscaped(std::string_view value) {
  out_ += '"';
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Valid UTF-8 as it is; any other byte (a binary named caf\xe9)
      // would make the document invalid: shown as the text \xNN
      // (display_text.h), its backslash escaped.
      const size_t length = Utf8SequenceAt(value, i);
      if (length == 0) {
        out_ += fmt::format("\\\\x{:02x}", static_cast<unsigned char>(c));
      } else {
        out_.append(value, i, length);
        i += length - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out_ += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          out_ += c;
        }
    }
  }
  out_ += '"';
}

JsonWriter& JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  out_ += fmt::format("{}", value);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += fmt::format("{}", value);
  return *this;
}

JsonWriter& JsonWriter::Double(double value, int decimals) {
  BeforeValue();
  out_ += std::isfinite(value) ? fmt::format("{:.{}f}", value, decimals) : "null";
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

std::string JsonWriter::Take() {
  assert(stack_.empty());
  out_ += '\n';
  return std::move(out_);
}

std::string JsonQuoted(std::string_view text) {
  JsonWriter json;
  json.String(text);
  std::string out = json.Take();
  out.pop_back();  // Take()'s final line break
  return out;
}

}  // namespace sample::report
