#include "libsample/symbols/plt_stubs.h"

#include <elf.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "libsample/symbols/elf_file.h"

namespace sample {
namespace {

// What a GOT slot is bound to: a .dynsym symbol, or for R_*_IRELATIVE the
// address of an ifunc resolver (which is where the ifunc symbol points).
struct SlotTarget {
  size_t dynsym_index = 0;
  uint64_t ifunc = 0;
};

// GOT slot address -> target, from every relocation section against `dynsym`
// (.rela.plt for lazy slots, .rela.dyn for the GLOB_DAT slots of .plt.got).
// `irelative` is the machine's R_*_IRELATIVE type.
std::unordered_map<uint64_t, SlotTarget> GotSlots(Elf* elf, Elf_Scn* dynsym, uint64_t irelative) {
  std::unordered_map<uint64_t, SlotTarget> slots;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_link != elf_ndxscn(dynsym)) continue;
    if (shdr.sh_type != SHT_RELA && shdr.sh_type != SHT_REL) continue;
    const bool rela = shdr.sh_type == SHT_RELA;
    Elf_Data* data = elf_getdata(scn, nullptr);
    const size_t size = gelf_fsize(elf, rela ? ELF_T_RELA : ELF_T_REL, 1, EV_CURRENT);
    if (data == nullptr || size == 0) continue;
    for (size_t i = 0; i < data->d_size / size; ++i) {
      // gelf_getrel(a) widen an ELF32 r_info to the 64-bit split GELF_R_* use.
      GElf_Rela r{};
      if (rela) {
        if (gelf_getrela(data, static_cast<int>(i), &r) == nullptr) continue;
      } else {
        GElf_Rel rel;
        if (gelf_getrel(data, static_cast<int>(i), &rel) == nullptr) continue;
        r.r_offset = rel.r_offset;
        r.r_info = rel.r_info;
      }
      const uint64_t type = GELF_R_TYPE(r.r_info);
      if (GELF_R_SYM(r.r_info) != 0) {
        slots[r.r_offset] = SlotTarget{GELF_R_SYM(r.r_info), 0};
      } else if (rela && type == irelative) {
        slots[r.r_offset] = SlotTarget{0, static_cast<uint64_t>(r.r_addend)};
      }
    }
  }
  return slots;
}

uint32_t ReadLe32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// The GOT slot an x86 PLT entry at `vaddr` jumps through: "jmp *slot(%rip)"
// on x86_64; "jmp *slot" or "jmp *offset(%ebx)" (PIC, %ebx = GOT) on i386;
// optionally after endbr64/endbr32 and a bnd prefix.
std::optional<uint64_t> PltEntrySlot(const unsigned char* p, size_t size, uint64_t vaddr, bool is64,
                                     uint64_t got) {
  size_t at = 0;
  if (size >= 4 && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && (p[3] & 0xfe) == 0xfa) at = 4;
  if (at < size && p[at] == 0xf2) ++at;
  if (at + 6 > size || p[at] != 0xff) return std::nullopt;
  const uint32_t disp = ReadLe32(p + at + 2);
  if (is64 && p[at + 1] == 0x25) {
    return vaddr + at + 6 + static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(disp)));
  }
  if (!is64 && p[at + 1] == 0x25) return disp;
  if (!is64 && p[at + 1] == 0xa3) return static_cast<uint32_t>(got + disp);
  return std::nullopt;
}

// The PLT sections' entry size: sh_entsize, or 16 where it is unset.
uint64_t PltEntrySize(const GElf_Shdr& shdr) { return shdr.sh_entsize >= 8 ? shdr.sh_entsize : 16; }

constexpr const char* kPltSections[] = {".plt", ".plt.sec", ".plt.got"};

}  // namespace

size_t PltEntryCount(Elf* elf, const GElf_Ehdr& ehdr) {
  if (ehdr.e_machine != EM_X86_64 && ehdr.e_machine != EM_386) return 0;
  size_t count = 0;
  for (const char* section : kPltSections) {
    Elf_Scn* scn = FindElfSection(elf, section);
    GElf_Shdr shdr;
    Elf_Data* data = scn ? elf_getdata(scn, nullptr) : nullptr;
    if (data == nullptr || data->d_buf == nullptr || gelf_getshdr(scn, &shdr) == nullptr) continue;
    count += data->d_size / PltEntrySize(shdr);
  }
  return count;
}

std::vector<PltStub> FindPltStubs(Elf* elf, const GElf_Ehdr& ehdr,
                                  const std::vector<ElfSymbol>& symbols) {
  std::vector<PltStub> stubs;
  const bool is64 = ehdr.e_machine == EM_X86_64;
  if (!is64 && ehdr.e_machine != EM_386) return stubs;
  Elf_Scn* dynsym = FindElfSectionOfType(elf, SHT_DYNSYM);
  GElf_Shdr dynsym_shdr;
  Elf_Data* dynsym_data = dynsym ? elf_getdata(dynsym, nullptr) : nullptr;
  if (dynsym_data == nullptr || gelf_getshdr(dynsym, &dynsym_shdr) == nullptr) return stubs;
  const std::unordered_map<uint64_t, SlotTarget> slots =
      GotSlots(elf, dynsym, is64 ? R_X86_64_IRELATIVE : R_386_IRELATIVE);
  if (slots.empty()) return stubs;
  uint64_t got = 0;
  GElf_Shdr shdr;
  Elf_Scn* got_scn = FindElfSection(elf, ".got.plt");
  if (got_scn == nullptr) got_scn = FindElfSection(elf, ".got");
  if (got_scn != nullptr && gelf_getshdr(got_scn, &shdr) != nullptr) got = shdr.sh_addr;

  auto slot_name = [&](const SlotTarget& target) -> std::string {
    if (target.dynsym_index == 0) {
      auto it = std::lower_bound(symbols.begin(), symbols.end(), target.ifunc,
                                 [](const ElfSymbol& s, uint64_t v) { return s.start < v; });
      // Unversioned, as .dynsym names it ("memcpy", where a debug file's
      // .symtab says "memcpy@@GLIBC_2.14").
      if (it == symbols.end() || it->start != target.ifunc) return "";
      return std::string(it->mangled.substr(0, it->mangled.find('@'))) + "@plt";
    }
    GElf_Sym sym;
    if (gelf_getsym(dynsym_data, static_cast<int>(target.dynsym_index), &sym) == nullptr) return "";
    const char* name = elf_strptr(elf, dynsym_shdr.sh_link, sym.st_name);
    return name == nullptr || *name == '\0' ? "" : std::string(name) + "@plt";
  };

  for (const char* section : kPltSections) {
    Elf_Scn* scn = FindElfSection(elf, section);
    Elf_Data* data = scn ? elf_getdata(scn, nullptr) : nullptr;
    if (data == nullptr || data->d_buf == nullptr || gelf_getshdr(scn, &shdr) == nullptr) continue;
    const uint64_t entry = PltEntrySize(shdr);
    const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
    for (uint64_t offset = 0; offset + entry <= data->d_size; offset += entry) {
      const uint64_t vaddr = shdr.sh_addr + offset;
      const auto slot = PltEntrySlot(bytes + offset, entry, vaddr, is64, got);
      const auto target = slot ? slots.find(*slot) : slots.end();
      if (target == slots.end()) continue;
      std::string name = slot_name(target->second);
      if (!name.empty()) stubs.push_back(PltStub{vaddr, entry, std::move(name)});
    }
  }
  return stubs;
}

}  // namespace sample
