// DwarfNames: the name a report shows for a function DIE (DW_TAG_subprogram
// or DW_TAG_inlined_subroutine), as fully qualified for an inlined call as
// for a function that was not inlined.
//
// - A linkage name (DW_AT_linkage_name, or DW_AT_MIPS_linkage_name, on the
//   DIE or reached through DW_AT_abstract_origin and DW_AT_specification)
//   is demangled: the symbol's own name, parameter list included.
// - Without one (C++ functions with internal linkage or in an anonymous
//   namespace, lambdas, what a compiler left out), C++ and other languages
//   with scopes get DW_AT_name qualified by the scopes enclosing the
//   function's declaration: namespaces ("(anonymous namespace)" when
//   unnamed), classes as DWARF spells them (template arguments included),
//   and an enclosing function by its own full name. In C++ the parameter
//   list follows, spelled as the demangler spells it ("(unsigned long)",
//   "(char const*)", " const" for a const member function), so that the name
//   reads as the demangled symbol of an out-of-line copy would. A lambda's
//   closure type is "{lambda(PARAMETERS)#N}", N counting the closures of the
//   same parameters in the same scope in DIE order (GCC numbers them in
//   that order too).
// - C functions (and units of unknown language) keep their DW_AT_name: C
//   has no scopes for functions, and the walk to find a DIE's parents is not
//   paid where it cannot change anything.
// - Go functions keep their DW_AT_name too: Go writes it qualified
//   ("main.(*T).run").
//
// libdw has no parent links: a declaration's enclosing scopes are found by
// descending from its unit's root into the child whose subtree holds it.
// Each parent's children are listed once, on first descent through it;
// names are cached by DIE. The caches hold DIE handles and addresses inside
// the Dwarf's sections, which must outlive this.
// Not thread-safe (the cache; libdw).
#pragma once

#include <elfutils/libdw.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sample {

// How deep a walk of a DIE tree goes (DwarfNames, DwarfUnitIndex): trees
// are shallow in practice; the limit only bounds the recursion on a
// malformed file.
inline constexpr unsigned kMaxDieDepth = 256;

class DwarfNames {
 public:
  // `language` is the DW_LANG_* of the unit the DIEs are looked up from
  // (dwarf_srclang of its root; -1 when unknown: names as DWARF has them).
  explicit DwarfNames(int language) : language_(language) {}

  // The function's name as described above; empty if DWARF names nothing.
  std::string FunctionName(Dwarf_Die* die);

 private:
  // A parent's children in DIE order, with their offsets.
  struct Children {
    std::vector<Dwarf_Off> offsets;
    std::vector<Dwarf_Die> dies;
    bool cut = false;  // a sibling link went back after the last one
  };

  std::string FunctionNameAt(Dwarf_Die* die, unsigned depth);
  // The DIEs from `die`'s unit root down to its parent, outermost first;
  // empty if `die` cannot be found under its root (malformed).
  std::vector<Dwarf_Die> ParentChain(Dwarf_Die* die);
  const Children& ChildrenOf(Dwarf_Die* parent);
  // "a::B::" for the scopes in `chain` (a DIE's parents, outermost first).
  std::string ScopePrefix(std::vector<Dwarf_Die> chain, unsigned depth);
  // A class's own name, or "{lambda(int)#1}", "{unnamed type}".
  std::string LocalTypeName(Dwarf_Die* type, Dwarf_Die* parent, unsigned depth);
  std::string QualifiedTypeName(Dwarf_Die* type, unsigned depth);
  std::string TypeOf(Dwarf_Die* die, unsigned depth, bool top_level);
  // "(int, char const*)": the types of the parameters that are not artificial.
  std::string ParameterList(Dwarf_Die* function, unsigned depth);
  static bool IsConstMember(Dwarf_Die* function);
  bool cplusplus() const;
  bool has_scopes() const;

  // A DIE's address in the section data (unique across units) and the
  // depth its name was made at: a name made deeper may have parts cut to
  // "?" (kMaxDepth), and must not stand for one made shallower, so that a
  // name never depends on the order of lookups.
  struct NameKey {
    const void* die = nullptr;
    unsigned depth = 0;
    bool operator==(const NameKey&) const = default;
  };
  struct NameKeyHash {
    size_t operator()(const NameKey& k) const {
      return std::hash<const void*>()(k.die) ^ (static_cast<size_t>(k.depth) * 0x9e3779b97f4a7c15);
    }
  };

  int language_;
  std::unordered_map<NameKey, std::string, NameKeyHash> function_names_;
  std::unordered_map<NameKey, std::string, NameKeyHash> type_names_;
  std::unordered_map<const void*, Children> children_;  // by the parent DIE's address
};

}  // namespace sample
