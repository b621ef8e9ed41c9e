#include "tests/unit/captured_stack.h"

#include <elfutils/libdw.h>
#include <gelf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/x86_frame_rule.h"

namespace sample::testing {
namespace {

CapturedStack* g_captured = nullptr;
uint64_t g_stack_end = 0;  // where the main thread's stack mapping ends

uint64_t MainStackEnd() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.ends_with("[stack]")) {
      return std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    }
  }
  return 0;
}

#if defined(__x86_64__)
// Reads the raw stack as the kernel does, ASan's redzones included (its
// memcpy interceptor would stop there under scripts/test_sanitized.sh);
// volatile, so that the loop does not become a memcpy call.
__attribute__((noinline, no_sanitize_address)) void CopyRawStack(std::byte* out, uint64_t from,
                                                                 size_t size) {
  const volatile std::byte* in = reinterpret_cast<const volatile std::byte*>(from);
  for (size_t i = 0; i < size; ++i) out[i] = in[i];
}

// Without frame pointers, so only CFI (not rbp) finds the callers.
__attribute__((noinline, optimize("omit-frame-pointer"))) void CaptureLeaf() {
  // perf order: AX BX CX DX SI DI BP SP IP R8..R15. Only the registers CFI
  // may need are captured; the scratch ones are zero.
  uint64_t r[17] = {};
  asm volatile(
      "lea 0(%%rip), %%rax\n\t"
      "mov %%rax, 64(%0)\n\t"
      "mov %%rsp, 56(%0)\n\t"
      "mov %%rbp, 48(%0)\n\t"
      "mov %%rbx, 8(%0)\n\t"
      "mov %%r12, 104(%0)\n\t"
      "mov %%r13, 112(%0)\n\t"
      "mov %%r14, 120(%0)\n\t"
      "mov %%r15, 128(%0)\n\t"
      :
      : "r"(r)
      : "rax", "memory");
  g_captured->perf_regs.assign(r, r + 17);
  // Like the kernel, copy no further than the stack's end.
  const size_t size = std::min<uint64_t>(kCapturedCopy, g_stack_end - r[7]);
  g_captured->stack.resize(size);
  CopyRawStack(g_captured->stack.data(), r[7], size);
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void LevelThree() {
  g_captured->return_addresses[0] = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  CaptureLeaf();
  asm volatile("" ::: "memory");  // not a tail call
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void LevelTwo() {
  g_captured->return_addresses[1] = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  LevelThree();
  asm volatile("" ::: "memory");
}

// Saves rbx (its CFI says where), so that a walk knows rbx again in its
// caller, SampleTestRealignedCall, whose CFA it is: libdw's x86_64 ABI
// defaults leave an rbx no rule mentions undefined (elfutils'
// x86_64_abi_cfi names register 0 where it means rbx), and so do the
// cached rules read from it.
__attribute__((noinline, optimize("omit-frame-pointer"))) void LevelOne() {
  g_captured->return_addresses[2] = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  asm volatile("" ::: "rbx", "memory");
  LevelTwo();
  asm volatile("" ::: "memory");
}
#endif

}  // namespace

#if defined(__x86_64__)
// Calls `fn` on a stack aligned to 64 bytes, keeping the unaligned rsp in
// rbx, which its CFI makes the CFA's register as glibc's lazy-binding
// resolver (_dl_runtime_resolve_xsavec) does.
extern "C" void SampleTestRealignedCall(void (*fn)());
asm(R"(
  .pushsection .text
  .p2align 4
  .globl SampleTestRealignedCall
  .hidden SampleTestRealignedCall
  .type SampleTestRealignedCall, @function
SampleTestRealignedCall:
  .cfi_startproc
  push %rbx
  .cfi_def_cfa_offset 16
  .cfi_offset %rbx, -16
  mov %rsp, %rbx
  .cfi_def_cfa_register %rbx
  and $-64, %rsp
  call *%rdi
  mov %rbx, %rsp
  .cfi_def_cfa_register %rsp
  pop %rbx
  .cfi_def_cfa_offset 8
  ret
  .cfi_endproc
  .size SampleTestRealignedCall, .-SampleTestRealignedCall
  .popsection
)");
#endif

// With a frame pointer, whatever the build's flags: a pc past its
// prologue is one where a frame-pointer chain skips nothing.
__attribute__((noinline, optimize("no-omit-frame-pointer"))) bool CaptureStack(CapturedStack* out) {
#if !defined(__x86_64__)
  (void)out;
  return false;
#else
  g_stack_end = MainStackEnd();
  if (g_stack_end == 0) return false;
  g_captured = out;
  SampleTestRealignedCall(&LevelOne);
  g_captured = nullptr;
  return true;
#endif
}

std::vector<SelfMapping> SelfExecutableMappings() {
  std::vector<SelfMapping> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode;
    // The path is the rest of the line: the checkout's may hold spaces.
    std::getline(in >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] != '/') continue;
    out.push_back({std::stoull(range.substr(0, range.find('-')), nullptr, 16),
                   std::stoull(range.substr(range.find('-') + 1), nullptr, 16),
                   std::stoull(offset, nullptr, 16), path});
  }
  return out;
}

UnwindSpace SelfSpace() {
  UnwindSpace space;
  space.version = 1;
  for (const SelfMapping& mapping : SelfExecutableMappings()) {
    UnwindModule m;
    m.start = mapping.start;
    m.end = mapping.end;
    auto bias = ElfLoadBias(mapping.path, m.start, mapping.pgoff);
    if (!bias) continue;
    m.bias = *bias;
    m.binary = mapping.path;
    space.modules.push_back(m);
  }
  return space;
}

EmbeddedBinary EmbedCfi(const UnwindModule& module, const std::vector<uint64_t>& pcs) {
  EmbeddedBinary binary;
  binary.path = module.binary;
  auto file = ElfFile::Open(module.binary);
  EXPECT_TRUE(file.has_value()) << file.error().message;
  if (!file) return binary;
  binary.fixed_address = file->ehdr().e_type == ET_EXEC;
  size_t count = 0;
  EXPECT_EQ(elf_getphdrnum(file->get(), &count), 0);
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(file->get(), static_cast<int>(i), &phdr) == nullptr ||
        phdr.p_type != PT_LOAD) {
      continue;
    }
    binary.segments.push_back(
        {phdr.p_offset, phdr.p_filesz, phdr.p_vaddr, phdr.p_memsz, (phdr.p_flags & PF_X) != 0});
  }
  Dwarf* dwarf = dwarf_begin_elf(file->get(), DWARF_C_READ, nullptr);
  Dwarf_CFI* sources[] = {dwarf_getcfi_elf(file->get()), dwarf ? dwarf_getcfi(dwarf) : nullptr};
  for (size_t i = 0; i < pcs.size(); ++i) {
    const uint64_t lookup = i == 0 ? pcs[i] : pcs[i] - 1;
    if (lookup < module.start || lookup >= module.end) continue;
    for (Dwarf_CFI* cfi : sources) {
      Dwarf_Frame* frame = nullptr;
      if (cfi == nullptr || dwarf_cfi_addrframe(cfi, lookup - module.bias, &frame) != 0) continue;
      CfiRow row;
      Dwarf_Addr start = 0, end = 0;
      dwarf_frame_info(frame, &start, &end, nullptr);
      row.start = start;
      row.end = end;
      row.rule = ReadX86FrameRule(frame);
      free(frame);
      binary.cfi.push_back(row);
      break;
    }
  }
  if (dwarf != nullptr) dwarf_end(dwarf);
  binary.Normalize();
  return binary;
}

}  // namespace sample::testing
