// Tests for WithoutParameters: checked against libiberty itself, which
// prints names without parameter lists when DMGL_PARAMS is off (as perf
// does), on hand-written tricky names and on every mangled symbol of
// libstdc++'s .dynsym; then the names it must leave alone.
#include "libsample/symbols/function_names.h"

#include <gtest/gtest.h>
// <string.h> (through gtest) declares basename(); libiberty.h would declare
// it again, differently, unless told that the C library has it.
#define HAVE_DECL_BASENAME 1
#include <libiberty/demangle.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libsample/symbols/elf_file.h"

namespace sample {
namespace {

std::optional<std::string> LibibertyDemangle(const std::string& mangled, int options) {
  std::unique_ptr<char, decltype(&std::free)> text(cplus_demangle(mangled.c_str(), options),
                                                   &std::free);
  if (text == nullptr) return std::nullopt;
  return std::string(text.get());
}

// What perf shows for `mangled` (libiberty without DMGL_PARAMS) with the
// clone suffixes that WithoutParameters keeps on purpose (function_names.h).
struct Expected {
  std::string with_parameters;
  std::string without;
};
std::optional<Expected> LibibertyPair(const std::string& mangled) {
  auto full = LibibertyDemangle(mangled, DMGL_PARAMS | DMGL_ANSI);
  auto brief = LibibertyDemangle(mangled, DMGL_ANSI);
  if (!full || !brief) return std::nullopt;
  const size_t clone = full->find(" [clone .");
  if (clone != std::string::npos && brief->find(" [clone .") == std::string::npos) {
    *brief += full->substr(clone);
  }
  return Expected{std::move(*full), std::move(*brief)};
}

// Every mangled name that libiberty demangles both ways: how many, and those
// where WithoutParameters disagrees with it.
struct Agreement {
  size_t checked = 0;
  std::vector<std::string> disagreements;
};
Agreement CheckAgainstLibiberty(const std::vector<std::string>& mangled) {
  Agreement out;
  for (const std::string& m : mangled) {
    const std::optional<Expected> expected = LibibertyPair(m);
    if (!expected) continue;
    ++out.checked;
    const std::string got = WithoutParameters(expected->with_parameters);
    if (got != expected->without) {
      out.disagreements.push_back(m + ": " + expected->with_parameters + " -> " + got +
                                  ", libiberty: " + expected->without);
    }
  }
  return out;
}

TEST(FunctionNamesTest, AgreesWithLibibertyOnTrickyNames) {
  const std::vector<std::string> mangled = {
      "_ZN3acc5MixerImE5churnEm",  // acc::Mixer<unsigned long>::churn(unsigned long)
      "_Z5twiceIiET_S0_",          // int twice<int>(int)
      "_Z5twiced",
      "_ZL4workli.constprop.0",  // work(long, int) [clone .constprop.0]
      "_Z1fi.isra.0.cold",       // two clone suffixes
      "_ZNK1A1fEv.cold",         // A::f() const [clone .cold]
      "_ZThn8_N1A1fEv",          // non-virtual thunk to A::f()
      "_ZTV1A",
      "_ZTI1A",
      "_ZGVZ1fvE1x",           // vtable, typeinfo, guard variable
      "_ZZ1fiE1x",             // f(int)::x, a variable
      "_ZZ1fvEN1S1gEv",        // f()::S::g(), a local class's member
      "_ZNK2ns1AclEi",         // ns::A::operator()(int) const
      "_ZN2ns1AclIiEEiT_S2_",  // int ns::A::operator()<int>(int, int)
      "_ZNK2ns1AltERKS0_",     // operator<
      "_ZN2ns1AlsEi",          // operator<<
      "_ZN2ns1ArSEi",          // operator>>=
      "_ZNK2ns1AssERKS0_",     // operator<=>
      "_ZN2ns1AptEv",          // operator->
      "_ZN2ns1ApmEi",          // operator->*
      "_ZN2ns1AnwEm",
      "_ZN2ns1AnaEm",
      "_ZdlPv",
      "_ZdaPvm",              // new, new[], delete
      "_ZltIiEbN2ns1AET_",    // bool operator< <int>(ns::A, int)
      "_Zli3_kmy",            // operator"" _km
      "_ZNK2ns1AcviEv",       // conversion: operator int
      "_ZNK2ns1AcvPFiiEEv",   // operator int (*)(int)
      "_ZNK2ns1AcvPT_IcEEv",  // template conversion: operator char*<char>
      "_ZN1AcvNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEv",
      "_ZZN1AcvNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEvENKUlvE_clEv",
      "_ZN2ns12_GLOBAL__N_14anonEi",  // (anonymous namespace)
      "_ZNK2ns12_GLOBAL__N_11B1fEv",
      "_ZZN2ns6localsEiENKUlicE0_clEic",          // {lambda(int, char)#2}::operator()
      "_ZZZN2ns6localsEiENKUlvE1_clEvENK1L1qEv",  // a local class in a lambda
      "_ZZ2tlIiEiT_ENKUlS0_E_clIlEEDaS0_",        // a generic lambda in a template
      "_ZN2ns2fpEPFviEMNS_1AEKFiiE",              // function and member pointer parameters
      "_Z1fPDoFviE",                              // a noexcept function pointer parameter
      "_ZN2ns5fnretIiEEPFviET_",                  // void (*ns::fnret<int>(int))(int)
      "_ZN2ns6memretIiEEMNS_1AEKFiiET_",          // int (ns::A::*ns::memret<int>(int))(int) const
      "_ZN2ns6arrretIiEERA3_iT_",                 // int (&ns::arrret<int>(int)) [3]
      "_Z1fIiEPFPFivEvEv",                        // int (*(*f<int>())())()
      "_ZN2ns8trailingIiEEDTplfp_Li1EET_",        // decltype ({parm#1}+(1)) ns::trailing<int>(int)
      "_Z1fIiEDcv",                               // decltype(auto) f<int>()
      "_ZN2ns7charargILc120EEEiv",                // ns::chararg<(char)120>()
      "_ZNKR2ns1A3getIiEET_S2_",                  // const &
      "_ZNO2ns1A3getIdEET_S2_",                   // &&
      "_ZNV2ns1A5plainEv",                        // volatile
      "_ZN2ns1AC1IlEET_",                         // a template constructor: no return type
      "_ZN1AD0Ev",
      "_ZN1A3fooB5cxx11Ev",
      "_Z3fooB5cxx11IiEiv",  // ABI tags
      "_ZN2ns5OuterIiE5InnerIcE4deepIdEET_icS5_",
      "_ZN2ns8variadicIJidPKcEEEiDpT_",
  };
  const Agreement agreement = CheckAgainstLibiberty(mangled);
  EXPECT_EQ(agreement.checked, mangled.size());
  EXPECT_TRUE(agreement.disagreements.empty()) << ::testing::PrintToString(agreement.disagreements);
}

// Every mangled .dynsym name of the C++ runtime the tests link with.
TEST(FunctionNamesTest, AgreesWithLibibertyOnLibstdcxx) {
  const std::string path = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
  auto file = ElfFile::Open(path);
  if (!file) GTEST_SKIP() << path << " is not readable here: " << file.error().message;
  std::vector<std::string> mangled;
  Elf_Scn* scn = FindElfSection(file->get(), ".dynsym");
  ASSERT_NE(scn, nullptr);
  GElf_Shdr shdr;
  ASSERT_NE(gelf_getshdr(scn, &shdr), nullptr);
  Elf_Data* data = elf_getdata(scn, nullptr);
  ASSERT_NE(data, nullptr);
  for (size_t i = 0; shdr.sh_entsize != 0 && i < shdr.sh_size / shdr.sh_entsize; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
    const char* name = elf_strptr(file->get(), shdr.sh_link, sym.st_name);
    if (name != nullptr && std::string_view(name).starts_with("_Z")) mangled.emplace_back(name);
  }
  const Agreement agreement = CheckAgainstLibiberty(mangled);
  EXPECT_GT(agreement.checked, 1000u);
  EXPECT_TRUE(agreement.disagreements.empty())
      << agreement.disagreements.size() << " of " << agreement.checked
      << ", first: " << agreement.disagreements.front();
}

TEST(FunctionNamesTest, Examples) {
  EXPECT_EQ(WithoutParameters("acc::Mixer<unsigned long>::churn(unsigned long)"),
            "acc::Mixer<unsigned long>::churn");
  EXPECT_EQ(WithoutParameters("get_ref_base_and_extent(tree_node*, poly_int_pod<1u, long>*, "
                              "poly_int_pod<1u, long>*, poly_int_pod<1u, long>*, bool*)"),
            "get_ref_base_and_extent");
  EXPECT_EQ(WithoutParameters("int twice<int>(int)"), "twice<int>");
  EXPECT_EQ(WithoutParameters("work(long, int) [clone .constprop.0]"), "work [clone .constprop.0]");
  // As DwarfNames spells an inlined call without a linkage name.
  EXPECT_EQ(WithoutParameters("(anonymous namespace)::helper(char const*)"),
            "(anonymous namespace)::helper");
  EXPECT_EQ(WithoutParameters("main::{lambda(int)#1}::operator()(int) const"),
            "main::{lambda(int)#1}::operator()");
}

TEST(FunctionNamesTest, KeepsVersionAndPltSuffixes) {
  EXPECT_EQ(WithoutParameters("ns::Lib::compute(int)@plt"), "ns::Lib::compute@plt");
  EXPECT_EQ(WithoutParameters("std::terminate()@@GLIBCXX_3.4"), "std::terminate@@GLIBCXX_3.4");
  EXPECT_EQ(WithoutParameters("puts@plt"), "puts@plt");
}

TEST(FunctionNamesTest, LeavesNamesWithoutParameterListsAlone) {
  for (const char* name : {
           "main",
           "do_work.cold",
           "mycrate::module::function",                      // C, Rust legacy
           "<rust_names::Thirty as rust_names::Job>::work",  // Rust v0
           "std::rt::lang_start::{{closure}}",
           "main.(*T).method",  // Rust, Go
           "main.F[go.shape.int]",
           "runtime.gcBgMarkWorker.func1",  // Go
           "vtable for A",
           "guard variable for f()::x",
           "non-virtual thunk to A::f()",
           "f(int)::x",
           "std::cout",
           "[unknown] 0x10",
           "",
       }) {
    EXPECT_EQ(WithoutParameters(name), name);
  }
}

TEST(FunctionNamesTest, UnbalancedTextComesBackUnchanged) {
  for (const char* name : {"f(int", "f)(int)", "f<int(int)", "((((", "))))", " ()"}) {
    EXPECT_EQ(WithoutParameters(name), name) << name;
  }
}

TEST(FunctionNamesTest, ListsSplitOutsideBrackets) {
  EXPECT_EQ(SplitFunctionList("acc::twice(long, long),main,std::map<int, int>::at"),
            (std::vector<std::string>{"acc::twice(long, long)", "main", "std::map<int, int>::at"}));
  EXPECT_EQ(SplitFunctionList("a,b"), (std::vector<std::string>{"a", "b"}));
  // An operator's own brackets open nothing.
  EXPECT_EQ(SplitFunctionList("operator<,f"), (std::vector<std::string>{"operator<", "f"}));
  EXPECT_EQ(SplitFunctionList("std::operator<<(std::ostream&, int),main"),
            (std::vector<std::string>{"std::operator<<(std::ostream&, int)", "main"}));
  EXPECT_EQ(
      SplitFunctionList("Foo::operator>(Foo const&, int),Foo::operator->() const"),
      (std::vector<std::string>{"Foo::operator>(Foo const&, int)", "Foo::operator->() const"}));
  // Unbalanced otherwise: every comma splits, as in other lists.
  EXPECT_EQ(SplitFunctionList("f(a,b"), (std::vector<std::string>{"f(a", "b"}));
}

}  // namespace
}  // namespace sample
