#include "report/json/json_writer.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>

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
  AppendJsonString(out_, value, JsonStringUse::kDocument);
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

void AppendJsonString(std::string& out, std::string_view text, JsonStringUse use) {
  const bool in_script = use == JsonStringUse::kInScript;
  out += '"';
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      // Valid UTF-8 as it is; any other byte (a binary named caf\xe9)
      // would make the document invalid: shown as the text \xNN
      // (display_text.h), its backslash escaped.
      const size_t length = Utf8SequenceAt(text, i);
      if (length == 0) {
        fmt::format_to(std::back_inserter(out), "\\\\x{:02x}", c);
      } else if (in_script && length == 3 && c == 0xe2 && text[i + 1] == '\x80' &&
                 (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
        // JSON allows U+2028/9 raw; older script parsers do not.
        out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      } else {
        out.append(text, i, length);
      }
      i += std::max<size_t>(length, 1) - 1;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        // In a <script> element, '<' could close it and '&' and '>' start
        // markup, whatever a name holds.
        if (c < 0x20 || (in_script && (c == '<' || c == '>' || c == '&' || c == 0x7f))) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

std::string JsonQuoted(std::string_view text) {
  std::string out;
  AppendJsonString(out, text, JsonStringUse::kDocument);
  return out;
}

std::string Hex(uint64_t value) { return fmt::format("{:#x}", value); }

}  // namespace sample::report
