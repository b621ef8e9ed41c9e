// JsonWriter: builds one JSON document as text, pretty-printed with two
// spaces of indentation so that golden files diff line by line. Strings are
// escaped per RFC 8259; doubles are written with a fixed number of decimals
// (never NaN or infinity). Misuse (a value where a key is due) is a
// programming error, checked by assert. Owns the text until Take().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sample::report {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Uint(uint64_t value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value, int decimals = 2);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  // Key and value in one call.
  template <typename T>
  JsonWriter& Field(std::string_view key, const T& value) {
    Key(key);
    if constexpr (std::is_same_v<T, bool>) {
      return Bool(value);
    } else if constexpr (std::is_floating_point_v<T>) {
      return Double(value);
    } else if constexpr (std::is_integral_v<T>) {
      return Uint(static_cast<uint64_t>(value));
    } else {
      return String(value);
    }
  }

  std::string Take();

 private:
  void BeforeValue();
  void Close(char bracket);
  void AppendEscaped(std::string_view value);

  struct Level {
    bool array;
    size_t count;
  };
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

// Where a JSON string goes: a document of its own, or inside an HTML
// <script> element, where '<', '>', '&', DEL and U+2028/9 are escaped too so
// that no name can close the element or start markup.
enum class JsonStringUse { kDocument, kInScript };

// Appends `text` as one JSON string literal ("..." with escapes): the one
// escaper of every JSON the report writes. Control characters are escaped,
// valid UTF-8 is kept, any other byte becomes the text \xNN.
void AppendJsonString(std::string& out, std::string_view text,
                      JsonStringUse use = JsonStringUse::kDocument);

// `text` as one JSON string literal, for writers that assemble large
// documents by hand.
std::string JsonQuoted(std::string_view text);

// `value` as "0x1f": how the documents write addresses, configs and masks
// (as strings: a JSON number loses precision above 2^53).
std::string Hex(uint64_t value);

}  // namespace sample::report
