#include "libsample/events/trace_format.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "libsample/string_parts.h"

namespace sample {
namespace {

bool ParseU32(std::string_view text, uint32_t* out) {
  text = Trim(text);
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// The value of "key:value" among the ';'-separated parts of a field line.
bool FindPart(std::string_view line, std::string_view key, std::string_view* value) {
  size_t start = 0;
  while (start <= line.size()) {
    const size_t end = std::min(line.find(';', start), line.size());
    const std::string_view part = Trim(line.substr(start, end - start));
    if (part.starts_with(key) && part.size() > key.size() && part[key.size()] == ':') {
      *value = part.substr(key.size() + 1);
      return true;
    }
    start = end + 1;
  }
  return false;
}

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "unsigned int fd", "char comm[16]", "__data_loc char[] name".
Result<void> ParseDeclaration(std::string_view decl, TraceField* field) {
  decl = Trim(decl);
  std::string_view brackets;
  bool array = false;
  // A trailing [N] after the name (not the "[]" of __data_loc TYPE[]).
  if (decl.ends_with(']')) {
    const size_t open = decl.rfind('[');
    if (open != std::string_view::npos && open > 0 && IsIdentifierChar(decl[open - 1])) {
      brackets = decl.substr(open + 1, decl.size() - open - 2);
      array = true;
      decl = Trim(decl.substr(0, open));
    }
  }
  size_t name_begin = decl.size();
  while (name_begin > 0 && IsIdentifierChar(decl[name_begin - 1])) --name_begin;
  if (name_begin == decl.size()) return Fail("no field name");
  field->name = std::string(decl.substr(name_begin));
  field->type = std::string(Trim(decl.substr(0, name_begin)));
  const std::string_view type = field->type;
  const bool dynamic = type.starts_with("__data_loc") || type.starts_with("__rel_loc");
  field->relative = type.starts_with("__rel_loc");
  // Text is `char`; `unsigned char` and u8 arrays hold bytes (addresses).
  const bool is_char = type.find("char") != std::string_view::npos &&
                       type.find("unsigned") == std::string_view::npos &&
                       type.find('*') == std::string_view::npos;
  if (dynamic) {
    field->kind = is_char ? TraceField::Kind::kDynString : TraceField::Kind::kDynBytes;
    return {};
  }
  if (!array) {
    if (type.find('*') != std::string_view::npos) {
      field->kind = TraceField::Kind::kPointer;
    } else {
      field->kind = TraceField::Kind::kInteger;
    }
    return {};
  }
  if (is_char) {
    field->kind = TraceField::Kind::kCharArray;
    ParseU32(brackets, &field->array_length);
    return {};
  }
  uint32_t length = 0;
  if (ParseU32(brackets, &length) && length != 0) {
    field->array_length = length;
    field->kind = TraceField::Kind::kArray;
  } else {
    field->kind = TraceField::Kind::kBytes;
  }
  return {};
}

bool IsScalarSize(uint32_t size) { return size == 1 || size == 2 || size == 4 || size == 8; }

uint64_t ReadUnsigned(const std::byte* p, uint32_t size) {
  uint64_t value = 0;
  std::memcpy(&value, p, size);  // little-endian hosts
  return value;
}

uint64_t SignExtend(uint64_t value, uint32_t size) {
  if (size >= 8) return value;
  const uint64_t sign = uint64_t{1} << (size * 8 - 1);
  return (value ^ sign) - sign;
}

std::string EscapedString(std::span<const std::byte> bytes) {
  std::string out;
  for (std::byte b : bytes) {
    const auto c = static_cast<unsigned char>(b);
    if (c == 0) break;
    if (c <= 0x20 || c > 0x7e || c == '\\') {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

TraceValue::Kind ScalarKind(const TraceField& field) {
  if (field.kind == TraceField::Kind::kPointer) return TraceValue::Kind::kHex;
  return field.is_signed ? TraceValue::Kind::kSigned : TraceValue::Kind::kUnsigned;
}

TraceValue Decode(const TraceField& field, std::span<const std::byte> raw) {
  TraceValue v;
  v.field = &field;
  if (uint64_t{field.offset} + field.size > raw.size()) return v;  // kMissing
  const std::span<const std::byte> bytes = raw.subspan(field.offset, field.size);
  switch (field.kind) {
    case TraceField::Kind::kInteger:
    case TraceField::Kind::kPointer:
      if (!IsScalarSize(field.size)) break;
      v.kind = ScalarKind(field);
      v.number = ReadUnsigned(bytes.data(), field.size);
      if (v.kind == TraceValue::Kind::kSigned) v.number = SignExtend(v.number, field.size);
      return v;
    case TraceField::Kind::kCharArray:
      v.kind = TraceValue::Kind::kString;
      v.text = EscapedString(bytes);
      return v;
    case TraceField::Kind::kArray: {
      const uint32_t element = field.size / field.array_length;
      if (!IsScalarSize(element) || element * field.array_length != field.size) break;
      v.kind = TraceValue::Kind::kList;
      v.element_kind = field.is_signed ? TraceValue::Kind::kSigned : TraceValue::Kind::kUnsigned;
      for (uint32_t i = 0; i < field.array_length; ++i) {
        uint64_t e = ReadUnsigned(bytes.data() + size_t{i} * element, element);
        if (field.is_signed) e = SignExtend(e, element);
        v.elements.push_back(e);
      }
      return v;
    }
    case TraceField::Kind::kDynString:
    case TraceField::Kind::kDynBytes: {
      if (field.size != 4) break;
      const auto loc = static_cast<uint32_t>(ReadUnsigned(bytes.data(), 4));
      uint64_t begin = loc & 0xffff;
      const uint64_t length = loc >> 16;
      if (field.relative) begin += uint64_t{field.offset} + field.size;
      if (begin + length > raw.size()) return v;  // kMissing
      const auto data = raw.subspan(begin, length);
      if (field.kind == TraceField::Kind::kDynString) {
        v.kind = TraceValue::Kind::kString;
        v.text = EscapedString(data);
      } else {
        v.kind = TraceValue::Kind::kBytes;
        v.text = HexBytes(data);
      }
      return v;
    }
    case TraceField::Kind::kBytes:
      break;
  }
  v.kind = TraceValue::Kind::kBytes;
  v.text = HexBytes(bytes);
  return v;
}

std::string NumberText(uint64_t number, TraceValue::Kind kind) {
  switch (kind) {
    case TraceValue::Kind::kSigned:
      return fmt::format("{}", static_cast<int64_t>(number));
    case TraceValue::Kind::kHex:
      return fmt::format("{:#x}", number);
    default:
      return fmt::format("{}", number);
  }
}

}  // namespace

Result<TraceFormat> ParseTraceFormat(std::string_view text) {
  TraceFormat format;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.starts_with("name:")) {
      format.name = std::string(Trim(line.substr(5)));
    } else if (line.starts_with("ID:")) {
      const std::string_view id = Trim(line.substr(3));
      std::from_chars(id.data(), id.data() + id.size(), format.id);
    } else if (line.starts_with("field:")) {
      std::string_view decl, offset, size, is_signed;
      const size_t semicolon = line.find(';');
      decl = line.substr(6, semicolon == std::string_view::npos ? line.size() : semicolon - 6);
      TraceField field;
      if (auto parsed = ParseDeclaration(decl, &field); !parsed) {
        return Fail(
            fmt::format("format line {}: {} in '{}'", line_number, parsed.error().message, line));
      }
      if (!FindPart(line, "offset", &offset) || !ParseU32(offset, &field.offset) ||
          !FindPart(line, "size", &size) || !ParseU32(size, &field.size)) {
        return Fail(fmt::format("format line {}: no offset or size in '{}'", line_number, line));
      }
      uint32_t signed_flag = 0;
      if (FindPart(line, "signed", &is_signed)) ParseU32(is_signed, &signed_flag);
      field.is_signed = signed_flag != 0;
      format.fields.push_back(std::move(field));
    }
  }
  if (format.fields.empty()) return Fail("the format declares no fields");
  return format;
}

std::vector<TraceValue> DecodeTraceFields(const TraceFormat& format,
                                          std::span<const std::byte> raw) {
  std::vector<TraceValue> values;
  for (const TraceField& field : format.fields) {
    if (!field.common()) values.push_back(Decode(field, raw));
  }
  return values;
}

std::string TraceValueText(const TraceValue& value) {
  switch (value.kind) {
    case TraceValue::Kind::kSigned:
    case TraceValue::Kind::kUnsigned:
    case TraceValue::Kind::kHex:
      return NumberText(value.number, value.kind);
    case TraceValue::Kind::kString:
    case TraceValue::Kind::kBytes:
      return value.text;
    case TraceValue::Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < value.elements.size(); ++i) {
        if (i != 0) out += ',';
        out += NumberText(value.elements[i], value.element_kind);
      }
      return out + "]";
    }
    case TraceValue::Kind::kMissing:
      break;
  }
  return "?";
}

std::string TraceFieldsText(const std::vector<TraceValue>& values) {
  std::string out;
  for (const TraceValue& value : values) {
    if (!out.empty()) out += ' ';
    out += value.field->name + "=" + TraceValueText(value);
  }
  return out;
}

}  // namespace sample
