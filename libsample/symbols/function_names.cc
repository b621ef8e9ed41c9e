#include "libsample/symbols/function_names.h"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "libsample/comma_list.h"

namespace sample {
namespace {

constexpr size_t kNone = std::string_view::npos;

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}

// `word` at `at`, not part of a longer identifier on either side.
bool WordAt(std::string_view text, size_t at, std::string_view word) {
  if (text.substr(at, word.size()) != word) return false;
  if (at > 0 && IsIdentifierChar(text[at - 1])) return false;
  const size_t end = at + word.size();
  return end == text.size() || !IsIdentifierChar(text[end]);
}

// What libiberty prints in front of names that are not functions of the
// program's own ("vtable for A", "non-virtual thunk to A::f()"); it prints
// the name after them with its parameters with or without DMGL_PARAMS.
constexpr std::array<std::string_view, 20> kSpecialPrefixes = {
    "vtable for ",
    "VTT for ",
    "construction vtable for ",
    "typeinfo for ",
    "typeinfo name for ",
    "typeinfo fn for ",
    "non-virtual thunk to ",
    "virtual thunk to ",
    "covariant return thunk to ",
    "java Class for ",
    "guard variable for ",
    "TLS init function for ",
    "TLS wrapper function for ",
    "reference temporary #",
    "hidden alias for ",
    "transaction clone for ",
    "non-transaction clone for ",
    "template parameter object for ",
    "initializer for module ",
    "java resource ",
};

// Qualifiers libiberty prints after a function's parameter list (and after
// a type: "char const*"); "noexcept" and "throw" may take a parenthesized
// operand.
constexpr std::array<std::string_view, 8> kQualifiers = {
    "const", "volatile", "restrict", "noexcept", "throw", "transaction_safe", "&&", "&",
};

// The qualifier starting at `at`, or empty.
std::string_view QualifierAt(std::string_view text, size_t at) {
  for (std::string_view q : kQualifiers) {
    if (q[0] == '&' ? text.substr(at, q.size()) == q : WordAt(text, at, q)) return q;
  }
  return {};
}

// Operators whose spelling holds brackets, longest first so that
// "operator<<=" is not read as "operator<" and "<=".
constexpr std::array<std::string_view, 13> kBracketOperators = {
    "<<=", ">>=", "<=>", "->*", "()", "[]", "<<", ">>", "<=", ">=", "->", "<", ">",
};

// Where the spelling of the operator whose keyword "operator" starts at `at`
// ends, or kNone for a conversion operator ("operator int", whose type runs
// on to its empty parameter list).
size_t OperatorEnd(std::string_view text, size_t at) {
  size_t i = at + 8;  // "operator"
  if (i == text.size()) return i;
  for (std::string_view word : {" new[]", " delete[]", " new", " delete", " co_await"}) {
    if (text.substr(i, word.size()) == word &&
        (i + word.size() == text.size() || !IsIdentifierChar(text[i + word.size()]))) {
      return i + word.size();
    }
  }
  if (text.substr(i, 3) == "\"\" ") {  // a literal operator: operator"" _km
    i += 3;
    while (i < text.size() && IsIdentifierChar(text[i])) ++i;
    return i;
  }
  if (text[i] == ' ') return kNone;
  for (std::string_view op : kBracketOperators) {
    if (text.substr(i, op.size()) == op) {
      i += op.size();
      // "operator< <int>": libiberty parts an operator ending in '<' from
      // its template arguments by a space, which belongs to the name.
      if (text.substr(i, 2) == " <") ++i;
      return i;
    }
  }
  return i;  // operator+, operator== ...: no bracket, scanned as they come
}

// What one pass over a demangled name learns of its outermost level (outside
// every bracket): its parenthesized groups, the spaces that can end a return
// type, and the spans of operator names.
struct Outline {
  struct Span {
    size_t begin = 0;
    size_t end = 0;  // one past: for a group, its ')'
  };
  std::vector<Span> groups;
  // Spaces not inside an operator's name and not before a qualifier: in a
  // libiberty name the last of them ends the return type.
  std::vector<size_t> type_ends;
  std::vector<Span> operators;  // "operator()", "operator int (*)()"

  bool InOperator(size_t at) const {
    for (const Span& op : operators) {
      if (at >= op.begin && at < op.end) return true;
    }
    return false;
  }
  // The group opening at `begin`, or nullptr (groups do not overlap: they
  // are in order).
  const Span* GroupAt(size_t begin) const {
    auto it = std::lower_bound(groups.begin(), groups.end(), begin,
                               [](const Span& g, size_t at) { return g.begin < at; });
    return it != groups.end() && it->begin == begin ? &*it : nullptr;
  }
};

// A conversion operator's type ends at its empty parameter list: "()"
// followed by the end, qualifiers or the "::" of a local name.
bool ConversionParametersAt(std::string_view text, size_t at) {
  if (text.substr(at, 2) != "()") return false;
  const size_t after = at + 2;
  return after == text.size() || text[after] == ' ' || text.substr(after, 2) == "::";
}

std::optional<Outline> Scan(std::string_view text) {
  Outline outline;
  std::vector<char> open;     // the brackets enclosing the position
  size_t conversion = kNone;  // where an outermost conversion operator began
  size_t group_begin = 0;
  size_t after_operator = kNone;  // the position just past an operator's name
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == 'o' && WordAt(text, i, "operator")) {
      const size_t end = OperatorEnd(text, i);
      if (end == kNone) {
        if (open.empty() && conversion == kNone) conversion = i;
        i += 8;
      } else {
        if (open.empty()) outline.operators.push_back({i, end});
        i = after_operator = end;
      }
      continue;
    }
    if (open.empty() && text.substr(i).starts_with("(anonymous namespace)")) {
      i += 21;
      continue;
    }
    switch (c) {
      case '(':
        if (open.empty()) {
          group_begin = i;
          if (conversion != kNone && ConversionParametersAt(text, i)) {
            outline.operators.push_back({conversion, i});
            conversion = kNone;
          }
        }
        open.push_back(c);
        break;
      case '[':
      case '{':
        open.push_back(c);
        break;
      case '<':
        // After a parenthesized operand, '<' compares ("(1)<(2)"); after
        // "operator()" it opens template arguments.
        if (i == 0 || text[i - 1] != ')' || i == after_operator) open.push_back(c);
        break;
      case '>':
        if (!open.empty() && open.back() == '<') open.pop_back();
        break;
      case ')':
      case ']':
      case '}': {
        const char opener = c == ')' ? '(' : c == ']' ? '[' : '{';
        while (!open.empty() && open.back() == '<') open.pop_back();  // an unclosed '<' compared
        if (open.empty() || open.back() != opener) return std::nullopt;
        open.pop_back();
        if (open.empty() && c == ')') outline.groups.push_back({group_begin, i});
        break;
      }
      case ' ':
        // (An operator's own spaces were skipped with its name.)
        if (open.empty() && conversion == kNone && QualifierAt(text, i + 1).empty()) {
          outline.type_ends.push_back(i);
        }
        break;
      default:
        break;
    }
    ++i;
  }
  if (!open.empty()) return std::nullopt;
  if (conversion != kNone) outline.operators.push_back({conversion, text.size()});
  return outline;
}

// Whether text[from, to) holds only qualifiers, each after a space
// (" const &&", " noexcept(true)").
bool OnlyQualifiers(std::string_view text, size_t from, size_t to, const Outline& outline) {
  size_t i = from;
  while (i < to) {
    if (text[i] != ' ') return false;
    const std::string_view q = QualifierAt(text, i + 1);
    if (q.empty()) return false;
    i += 1 + q.size();
    if (i < to && text[i] == '(' && (q == "noexcept" || q == "throw")) {
      const Outline::Span* operand = outline.GroupAt(i);
      if (operand == nullptr) return false;
      i = operand->end + 1;
    }
  }
  return true;
}

// A group right after "noexcept" or "throw" is the qualifier's operand.
bool IsQualifierOperand(std::string_view text, size_t group_begin) {
  const std::string_view before = text.substr(0, group_begin);
  return before.ends_with(" noexcept") || before.ends_with(" throw");
}

// The declarator inside "RET (*NAME(PARAMS))(PARAMS)" or "RET (&NAME(PARAMS)) [3]"
// (a template function returning a pointer to a function, a member or an
// array) without its pointer operators: "NAME(PARAMS)".
std::string_view DeclaratorName(std::string_view inner) {
  // A pointer to member: "ns::A::*name(...)".
  size_t depth = 0;
  for (size_t i = 0; i + 2 < inner.size(); ++i) {
    const char c = inner[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0) --depth;
    if (depth == 0 && inner.substr(i, 3) == "::*") {
      inner.remove_prefix(i + 3);
      break;
    }
    if (depth == 0 && (c == '(' || c == ' ')) break;
  }
  while (!inner.empty() && (inner[0] == '*' || inner[0] == '&' || inner[0] == ' ')) {
    inner.remove_prefix(1);
  }
  for (std::string_view q : {"const ", "volatile "}) {
    if (inner.starts_with(q)) inner.remove_prefix(q.size());
  }
  return inner;
}

std::optional<std::string> ShortenFunction(std::string_view text, unsigned depth);

// The name of a function whose outermost level is `outline` of `text`.
std::optional<std::string> ShortenOutlined(std::string_view text, const Outline& outline,
                                           unsigned depth) {
  // The last group that is not a qualifier's operand is the parameter list
  // if only qualifiers follow it.
  const Outline::Span* params = nullptr;
  for (auto it = outline.groups.rbegin(); it != outline.groups.rend(); ++it) {
    if (IsQualifierOperand(text, it->begin)) continue;
    params = &*it;
    break;
  }
  if (params == nullptr) return std::nullopt;
  const std::string_view after = text.substr(params->end + 1);
  // "int (&f<int>(int)) [3]": a function returning a reference to an array.
  if (after.starts_with(" [") && after.ends_with("]") &&
      after.find_first_of("[]", 2) == after.size() - 1) {
    const std::string_view inner = text.substr(params->begin + 1, params->end - params->begin - 1);
    return ShortenFunction(DeclaratorName(inner), depth + 1);
  }
  if (!OnlyQualifiers(text, params->end + 1, text.size(), outline)) return std::nullopt;
  // "void (*f<int>(int))(int)": the group before the parameters is the
  // declarator that holds the name (unless it is part of a conversion
  // operator's type, "operator int (*)(int)()").
  if (params->begin > 0 && text[params->begin - 1] == ')' &&
      !outline.InOperator(params->begin - 1)) {
    if (params != &outline.groups.front() && (params - 1)->end + 1 == params->begin) {
      const Outline::Span& g = *(params - 1);
      const std::string_view inner = text.substr(g.begin + 1, g.end - g.begin - 1);
      return ShortenFunction(DeclaratorName(inner), depth + 1);
    }
  }
  // Before the parameters: the return type of a template function, then
  // the name, which has no outermost space outside operator names and
  // qualifiers (an enclosing function of a local name has no return type).
  size_t name_begin = 0;
  for (size_t space : outline.type_ends) {
    if (space < params->begin) name_begin = space + 1;
  }
  if (name_begin >= params->begin) return std::nullopt;
  return std::string(text.substr(name_begin, params->begin - name_begin));
}

std::optional<std::string> ShortenFunction(std::string_view text, unsigned depth) {
  if (depth > 4 || text.empty()) return std::nullopt;
  const std::optional<Outline> outline = Scan(text);
  if (!outline) return std::nullopt;
  return ShortenOutlined(text, *outline, depth);
}

// The length of `text` without its clone suffixes (" [clone .cold]").
size_t WithoutCloneSuffixes(std::string_view text) {
  size_t end = text.size();
  for (;;) {
    const std::string_view head = text.substr(0, end);
    if (!head.ends_with(']')) return end;
    const size_t at = head.rfind(" [clone .");
    if (at == kNone || head.find_first_of("[] ", at + 8) != head.size() - 1) return end;
    end = at;
  }
}

}  // namespace

std::string WithoutParameters(std::string_view demangled) {
  // "f(int)@plt", "f(int)@@GLIBCXX_3.4": the part before '@'.
  std::string_view body = demangled;
  size_t at = body.rfind('@');
  while (at != kNone && at > 0 && body[at - 1] == '@') --at;  // "@@VERSION"
  if (at != kNone && body.find_first_of("() ", at) == kNone) body = body.substr(0, at);
  const size_t clone_end = WithoutCloneSuffixes(body);
  const std::string_view function = body.substr(0, clone_end);
  const bool may_have_parameters =
      !function.empty() && (function.back() == ')' || function.back() == ']' ||
                            !QualifierAt(function, function.rfind(' ') + 1).empty());
  if (!may_have_parameters) {
    return std::string(demangled);  // no parameter list: C, Rust, Go, variables
  }
  for (std::string_view prefix : kSpecialPrefixes) {
    if (function.starts_with(prefix)) return std::string(demangled);
  }
  std::optional<std::string> name = ShortenFunction(function, 0);
  if (!name) return std::string(demangled);
  name->append(demangled.substr(clone_end));
  return *name;
}

std::vector<std::string> SplitFunctionList(std::string_view text) {
  std::vector<std::string> names;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // An operator's own brackets ("operator<<", "operator->") open nothing.
    if (c == 'o' && WordAt(text, i, "operator")) {
      const size_t end = OperatorEnd(text, i);
      if (end != kNone) {
        i = end - 1;
        continue;
      }
    }
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
    if (depth < 0) break;
    if (c == ',' && depth == 0) {
      names.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) {
    names.clear();
    for (std::string_view part : SplitCommaList(text)) names.emplace_back(part);
    return names;
  }
  names.emplace_back(text.substr(start));
  return names;
}

}  // namespace sample
