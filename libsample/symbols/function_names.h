// FunctionNames: a demangled C++ function name as perf prints it, without
// its parameter list.
//
// We demangle with parameter lists (DMGL_PARAMS: "twice(int)" and
// "twice(double)" are two functions), and names also reach the report
// already demangled that way: from DWARF (DwarfNames spells an inline
// frame's "name(params)" as the demangler would) and from recordings that
// embed the names their recorder computed. perf prints names as libiberty
// does without DMGL_PARAMS: no parameter list, no trailing qualifiers
// ("const", "&&", "noexcept"), and for a template function no return type.
// WithoutParameters turns the first spelling into the second on the text,
// so it works on names from every one of those places; the unit test checks
// it against libiberty itself on every symbol of libstdc++.
//
// One difference from libiberty, on purpose: a GCC clone's suffix stays
// ("work [clone .constprop.0]", "f [clone .cold]"). libiberty drops it
// without DMGL_PARAMS, which makes a function's cold part read as the
// function itself; the clone is a symbol of its own and its row should say
// so.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sample {

// `demangled` (libiberty's DMGL_PARAMS | DMGL_ANSI spelling) without the
// outermost function's return type, parameter list and qualifiers:
// "int ns::twice<int>(int)" -> "ns::twice<int>",
// "ns::A::operator()(int) const" -> "ns::A::operator()",
// "f(int)::{lambda()#1}::operator()() const [clone .isra.0]" ->
// "f(int)::{lambda()#1}::operator() [clone .isra.0]". A version or "@plt"
// suffix stays. Anything that is not a function with a parameter list
// (C, Rust and Go names, variables, "vtable for A", a name the scan cannot
// read) comes back unchanged.
std::string WithoutParameters(std::string_view demangled);

// A comma list of function names (--symbols) split at the commas that are
// not inside a name's brackets: "acc::twice(long, long),main" is two names.
// A list whose brackets do not balance splits at every comma.
std::vector<std::string> SplitFunctionList(std::string_view text);

}  // namespace sample
