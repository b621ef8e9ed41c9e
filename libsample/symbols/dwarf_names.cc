#include "libsample/symbols/dwarf_names.h"

#include <dwarf.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "libsample/symbols/demangle.h"

namespace sample {
namespace {

// Bounds the recursion (an enclosing function's name, a parameter's type,
// a type's scope) on a malformed file; real names nest a few levels. The
// descent to a DIE is bounded by kMaxDieDepth.
constexpr unsigned kMaxDepth = 16;

const char* StringAttr(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

const char* OwnName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  return dwarf_formstring(dwarf_attr(die, DW_AT_name, &attr));
}

bool Ref(Dwarf_Die* die, unsigned int name, Dwarf_Die* out) {
  Dwarf_Attribute attr;
  return dwarf_attr(die, name, &attr) != nullptr && dwarf_formref_die(&attr, out) != nullptr;
}

bool Flag(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  bool value = false;
  return dwarf_formflag(dwarf_attr(die, name, &attr), &value) == 0 && value;
}

// The DIE that declares `die`'s function where its scope is: an inlined
// call's abstract origin, a definition's declaration (DW_AT_specification,
// inside its class or namespace) and so on, to the last one.
Dwarf_Die Declaration(Dwarf_Die die) {
  for (int i = 0; i < 8; ++i) {
    Dwarf_Die next;
    if (!Ref(&die, DW_AT_abstract_origin, &next) && !Ref(&die, DW_AT_specification, &next)) break;
    die = next;
  }
  return die;
}

bool IsTypeScope(int tag) {
  switch (tag) {
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_interface_type:
    case DW_TAG_enumeration_type:
      return true;
    default:
      return false;
  }
}

// GCC spells some base types in an order of its own ("long unsigned int");
// the demangler writes them as the mangling's builtin names.
std::string BaseTypeName(std::string_view dwarf) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"long int", "long"},
      {"long unsigned int", "unsigned long"},
      {"short int", "short"},
      {"short unsigned int", "unsigned short"},
      {"long long int", "long long"},
      {"long long unsigned int", "unsigned long long"},
      {"__int128 unsigned", "unsigned __int128"},
  };
  for (const auto& [from, to] : kNames) {
    if (dwarf == from) return std::string(to);
  }
  return std::string(dwarf);
}

// The operator() of a lambda's closure type (an unnamed class with one), or
// false.
bool LambdaCall(Dwarf_Die* type, Dwarf_Die* call) {
  if (OwnName(type) != nullptr || dwarf_child(type, call) != 0) return false;
  do {
    const char* name = OwnName(call);
    if (dwarf_tag(call) == DW_TAG_subprogram && name != nullptr &&
        std::string_view(name) == "operator()") {
      return true;
    }
  } while (dwarf_siblingof(call, call) == 0);
  return false;
}

}  // namespace

// A DIE's subtree lies between its offset and its next sibling's, so each
// level descends into the last child at or before `die`. A parent's
// children are listed once (the siblings walk libdw needs to reach them),
// so a unit of thousands of top-level functions (Go's, a C++ file's) costs
// one walk, not one per name.
std::vector<Dwarf_Die> DwarfNames::ParentChain(Dwarf_Die* die) {
  std::vector<Dwarf_Die> chain;
  Dwarf_Die root;
  if (dwarf_diecu(die, &root, nullptr, nullptr) == nullptr) return chain;
  const Dwarf_Off target = dwarf_dieoffset(die);
  if (dwarf_dieoffset(&root) == target) return chain;
  chain.push_back(root);
  for (unsigned level = 0; level < kMaxDieDepth; ++level) {
    const Children& children = ChildrenOf(&chain.back());
    auto after = std::upper_bound(children.offsets.begin(), children.offsets.end(), target);
    if (after == children.offsets.begin()) return {};
    const size_t i = static_cast<size_t>(after - children.offsets.begin()) - 1;
    // Past a sibling link going back: `die` is not where the list could say.
    if (children.cut && i + 1 == children.offsets.size()) return {};
    if (children.offsets[i] == target) return chain;
    chain.push_back(children.dies[i]);
  }
  return {};
}

const DwarfNames::Children& DwarfNames::ChildrenOf(Dwarf_Die* parent) {
  auto [it, added] = children_.try_emplace(parent->addr);
  Children& children = it->second;
  if (!added) return children;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return children;
  do {
    const Dwarf_Off offset = dwarf_dieoffset(&child);
    // A sibling link going back (malformed) ends the list.
    if (!children.offsets.empty() && offset <= children.offsets.back()) {
      children.cut = true;
      break;
    }
    children.offsets.push_back(offset);
    children.dies.push_back(child);
  } while (dwarf_siblingof(&child, &child) == 0);
  return children;
}

bool DwarfNames::cplusplus() const {
  switch (language_) {
    case DW_LANG_C_plus_plus:
    case DW_LANG_C_plus_plus_03:
    case DW_LANG_C_plus_plus_11:
    case DW_LANG_C_plus_plus_14:
    case DW_LANG_ObjC_plus_plus:
      return true;
    default:
      return false;
  }
}

bool DwarfNames::has_scopes() const {
  switch (language_) {
    case -1:  // unknown: names stay as DWARF gives them
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
    case DW_LANG_Mips_Assembler:
    case 0x2c:        // DW_LANG_C17, newer than some dwarf.h
    case DW_LANG_Go:  // names come qualified ("main.(*T).run")
      return false;
    default:
      return true;
  }
}

std::string DwarfNames::FunctionName(Dwarf_Die* die) { return FunctionNameAt(die, 0); }

std::string DwarfNames::FunctionNameAt(Dwarf_Die* die, unsigned depth) {
  const char* linkage = StringAttr(die, DW_AT_linkage_name);
  if (linkage == nullptr) linkage = StringAttr(die, DW_AT_MIPS_linkage_name);
  if (linkage != nullptr) return Demangle(linkage);
  if (!has_scopes() || depth > kMaxDepth) {
    const char* plain = StringAttr(die, DW_AT_name);
    return plain != nullptr ? plain : "";
  }
  Dwarf_Die declaration = Declaration(*die);
  auto cached = function_names_.find(NameKey{declaration.addr, depth});
  if (cached != function_names_.end()) return cached->second;
  std::string name;
  if (const char* plain = StringAttr(&declaration, DW_AT_name)) {
    name = ScopePrefix(ParentChain(&declaration), depth) + plain;
    if (cplusplus()) {
      name += ParameterList(&declaration, depth);
      if (IsConstMember(&declaration)) name += " const";
    }
  }
  function_names_.emplace(NameKey{declaration.addr, depth}, name);
  return name;
}

std::string DwarfNames::ScopePrefix(std::vector<Dwarf_Die> chain, unsigned depth) {
  std::string prefix;
  // Innermost first, so that an enclosing function, whose name carries its
  // own scopes, ends the walk.
  for (size_t i = chain.size(); i-- > 0;) {
    Dwarf_Die& scope = chain[i];
    const int tag = dwarf_tag(&scope);
    std::string part;
    if (tag == DW_TAG_subprogram) {
      part = FunctionNameAt(&scope, depth + 1);
      if (!part.empty()) prefix.insert(0, part + "::");
      break;
    }
    if (tag == DW_TAG_namespace) {
      const char* name = OwnName(&scope);
      part = name != nullptr ? name : "(anonymous namespace)";
    } else if (IsTypeScope(tag) && i > 0) {
      part = LocalTypeName(&scope, &chain[i - 1], depth);
    } else {
      continue;  // the unit, lexical blocks, ...
    }
    prefix.insert(0, part + "::");
  }
  return prefix;
}

std::string DwarfNames::LocalTypeName(Dwarf_Die* type, Dwarf_Die* parent, unsigned depth) {
  if (const char* name = OwnName(type)) return name;
  Dwarf_Die call;
  if (!LambdaCall(type, &call)) return "{unnamed type}";
  const std::string parameters = ParameterList(&call, depth);
  // The closure's number: 1 + the closures before it in the same scope
  // with the same parameters.
  unsigned number = 1;
  Dwarf_Die sibling;
  if (dwarf_child(parent, &sibling) == 0) {
    do {
      if (sibling.addr == type->addr) break;
      Dwarf_Die other_call;
      if (IsTypeScope(dwarf_tag(&sibling)) && LambdaCall(&sibling, &other_call) &&
          ParameterList(&other_call, depth) == parameters) {
        ++number;
      }
    } while (dwarf_siblingof(&sibling, &sibling) == 0);
  }
  return fmt::format("{{lambda{}#{}}}", parameters, number);
}

std::string DwarfNames::QualifiedTypeName(Dwarf_Die* type, unsigned depth) {
  auto cached = type_names_.find(NameKey{type->addr, depth});
  if (cached != type_names_.end()) return cached->second;
  std::vector<Dwarf_Die> chain = ParentChain(type);
  std::string name = "?";
  if (!chain.empty()) {
    Dwarf_Die parent = chain.back();
    name = ScopePrefix(std::move(chain), depth + 1) + LocalTypeName(type, &parent, depth + 1);
  }
  type_names_.emplace(NameKey{type->addr, depth}, name);
  return name;
}

// The type `die` (a parameter, a pointer, ...) refers to by DW_AT_type, as
// the demangler writes it; `top_level` drops const and volatile, which are
// not part of a function's signature.
std::string DwarfNames::TypeOf(Dwarf_Die* die, unsigned depth, bool top_level) {
  Dwarf_Die type;
  if (!Ref(die, DW_AT_type, &type)) return "void";
  if (depth > kMaxDepth) return "?";
  switch (dwarf_tag(&type)) {
    case DW_TAG_base_type:
    case DW_TAG_unspecified_type: {
      const char* name = OwnName(&type);
      return name != nullptr ? BaseTypeName(name) : "?";
    }
    case DW_TAG_pointer_type:
      return TypeOf(&type, depth + 1, false) + "*";
    case DW_TAG_reference_type:
      return TypeOf(&type, depth + 1, false) + "&";
    case DW_TAG_rvalue_reference_type:
      return TypeOf(&type, depth + 1, false) + "&&";
    case DW_TAG_const_type:
      return TypeOf(&type, depth + 1, top_level) + (top_level ? "" : " const");
    case DW_TAG_volatile_type:
      return TypeOf(&type, depth + 1, top_level) + (top_level ? "" : " volatile");
    case DW_TAG_typedef:  // mangled names hold what a typedef stands for
      return TypeOf(&type, depth + 1, top_level);
    default:
      if (IsTypeScope(dwarf_tag(&type))) return QualifiedTypeName(&type, depth + 1);
      // Arrays, function and member pointers: not spelled out.
      const char* name = OwnName(&type);
      return name != nullptr ? name : "?";
  }
}

std::string DwarfNames::ParameterList(Dwarf_Die* function, unsigned depth) {
  std::string list;
  Dwarf_Die child;
  if (dwarf_child(function, &child) == 0) {
    do {
      const int tag = dwarf_tag(&child);
      std::string parameter;
      if (tag == DW_TAG_formal_parameter && !Flag(&child, DW_AT_artificial)) {
        parameter = TypeOf(&child, depth + 1, true);
      } else if (tag == DW_TAG_unspecified_parameters) {
        parameter = "...";
      } else {
        continue;
      }
      if (!list.empty()) list += ", ";
      list += parameter;
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  return "(" + list + ")";
}

// A member function whose `this` (the artificial first parameter) points
// to const.
bool DwarfNames::IsConstMember(Dwarf_Die* function) {
  Dwarf_Die child;
  if (dwarf_child(function, &child) != 0) return false;
  do {
    if (dwarf_tag(&child) != DW_TAG_formal_parameter) continue;
    if (!Flag(&child, DW_AT_artificial)) return false;
    // GCC's lambda closures take `this` as a const pointer to const.
    Dwarf_Die pointer, pointee;
    if (!Ref(&child, DW_AT_type, &pointer)) return false;
    for (int i = 0; i < 4 && (dwarf_tag(&pointer) == DW_TAG_const_type ||
                              dwarf_tag(&pointer) == DW_TAG_volatile_type);
         ++i) {
      if (!Ref(&pointer, DW_AT_type, &pointer)) return false;
    }
    return dwarf_tag(&pointer) == DW_TAG_pointer_type && Ref(&pointer, DW_AT_type, &pointee) &&
           dwarf_tag(&pointee) == DW_TAG_const_type;
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

}  // namespace sample
