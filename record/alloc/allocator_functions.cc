#include "record/alloc/allocator_functions.h"

#include <fcntl.h>
#include <gelf.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/unique_fd.h"

extern char** environ;

namespace sample::record {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSize = "size=%di:u64";
constexpr std::string_view kPtr = "ptr=%di:x64";

constexpr std::array kFunctions = {
    AllocFunction{"malloc", "malloc", kSize, true, true},
    AllocFunction{"calloc", "calloc", "nmemb=%di:u64 size=%si:u64", true, true},
    AllocFunction{"realloc", "realloc", "ptr=%di:x64 size=%si:u64", true, true},
    AllocFunction{"reallocarray", "reallocarray", "ptr=%di:x64 nmemb=%si:u64 size=%dx:u64"},
    AllocFunction{"free", "free", kPtr, false, true},
    // The result is stored through memptr, which no probe can read: the
    // block is counted where it is allocated, never tracked to its free.
    AllocFunction{"posix_memalign", "posix_memalign", "memptr=%di:x64 align=%si:u64 size=%dx:u64",
                  false},
    AllocFunction{"aligned_alloc", "aligned_alloc", "align=%di:u64 size=%si:u64"},
    AllocFunction{"memalign", "memalign", "align=%di:u64 size=%si:u64"},
    AllocFunction{"valloc", "valloc", kSize},
    AllocFunction{"pvalloc", "pvalloc", kSize},
    // Anonymous memory (MAP_ANONYMOUS, 0x20): a block from mmap to munmap.
    // munmap's length is fetched as len, not size: it frees what it
    // unmaps, it allocates nothing. mmap64 is mmap on 64-bit machines (one
    // probe, named mmap, whichever name a program imports).
    AllocFunction{"mmap", "mmap", "size=%si:u64 flags=%cx:u64", true, false, "flags & 32"},
    AllocFunction{"mmap64", "mmap", "size=%si:u64 flags=%cx:u64", true, false, "flags & 32"},
    AllocFunction{"munmap", "munmap", "ptr=%di:x64 len=%si:u64", false},
    // libstdc++ (and libc++): operator new and delete, every variant.
    AllocFunction{"_Znwm", "op_new", kSize},
    AllocFunction{"_Znam", "op_new_array", kSize},
    AllocFunction{"_ZnwmRKSt9nothrow_t", "op_new_nothrow", kSize},
    AllocFunction{"_ZnamRKSt9nothrow_t", "op_new_array_nothrow", kSize},
    AllocFunction{"_ZnwmSt11align_val_t", "op_new_aligned", kSize},
    AllocFunction{"_ZnamSt11align_val_t", "op_new_array_aligned", kSize},
    AllocFunction{"_ZnwmSt11align_val_tRKSt9nothrow_t", "op_new_aligned_nothrow", kSize},
    AllocFunction{"_ZnamSt11align_val_tRKSt9nothrow_t", "op_new_array_aligned_nothrow", kSize},
    AllocFunction{"_ZdlPv", "op_delete", kPtr, false},
    AllocFunction{"_ZdaPv", "op_delete_array", kPtr, false},
    AllocFunction{"_ZdlPvm", "op_delete_sized", kPtr, false},
    AllocFunction{"_ZdaPvm", "op_delete_array_sized", kPtr, false},
    AllocFunction{"_ZdlPvRKSt9nothrow_t", "op_delete_nothrow", kPtr, false},
    AllocFunction{"_ZdaPvRKSt9nothrow_t", "op_delete_array_nothrow", kPtr, false},
    AllocFunction{"_ZdlPvSt11align_val_t", "op_delete_aligned", kPtr, false},
    AllocFunction{"_ZdaPvSt11align_val_t", "op_delete_array_aligned", kPtr, false},
    AllocFunction{"_ZdlPvmSt11align_val_t", "op_delete_sized_aligned", kPtr, false},
    AllocFunction{"_ZdaPvmSt11align_val_t", "op_delete_array_sized_aligned", kPtr, false},
    AllocFunction{"_ZdlPvSt11align_val_tRKSt9nothrow_t", "op_delete_aligned_nothrow", kPtr, false},
    AllocFunction{"_ZdaPvSt11align_val_tRKSt9nothrow_t", "op_delete_array_aligned_nothrow", kPtr,
                  false},
};

// The file offsets of the functions of `wanted` that `path` defines: in
// its dynamic symbol table, and with `static_symbols` in .symtab too (a
// statically linked executable has no other). Those of `wanted` it
// imports (undefined dynamic symbols) go into `referenced`.
std::map<std::string, uint64_t, std::less<>> DefinedFunctions(
    const std::string& path, const std::set<std::string_view>& wanted, bool static_symbols,
    std::set<std::string>* referenced) {
  std::map<std::string, uint64_t, std::less<>> vaddrs, offsets;
  auto elf = ElfFile::Open(path);
  if (!elf) return offsets;
  for (Elf_Scn* scn = elf_nextscn(elf->get(), nullptr); scn != nullptr;
       scn = elf_nextscn(elf->get(), scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    if (shdr.sh_type != SHT_DYNSYM && !(static_symbols && shdr.sh_type == SHT_SYMTAB)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0) continue;
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      const int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF && shdr.sh_type == SHT_DYNSYM) {
        const char* name = elf_strptr(elf->get(), shdr.sh_link, sym.st_name);
        if (name != nullptr && wanted.contains(name)) referenced->insert(name);
        continue;
      }
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || (bind != STB_GLOBAL && bind != STB_WEAK) ||
          sym.st_value == 0) {
        continue;
      }
      const char* name = elf_strptr(elf->get(), shdr.sh_link, sym.st_name);
      if (name != nullptr && wanted.contains(name)) vaddrs.try_emplace(name, sym.st_value);
    }
  }
  size_t phnum = 0;
  if (vaddrs.empty() || elf_getphdrnum(elf->get(), &phnum) != 0) return offsets;
  for (const auto& [name, vaddr] : vaddrs) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf->get(), static_cast<int>(i), &phdr) == nullptr) continue;
      if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) && vaddr >= phdr.p_vaddr &&
          vaddr < phdr.p_vaddr + phdr.p_filesz) {
        offsets.emplace(name, vaddr - phdr.p_vaddr + phdr.p_offset);
        break;
      }
    }
  }
  return offsets;
}

// The program interpreter an ELF executable names (PT_INTERP), or empty.
std::string Interpreter(const std::string& path) {
  auto elf = ElfFile::Open(path);
  if (!elf) return "";
  size_t phnum = 0;
  if (elf_getphdrnum(elf->get(), &phnum) != 0) return "";
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf->get(), static_cast<int>(i), &phdr) == nullptr ||
        phdr.p_type != PT_INTERP) {
      continue;
    }
    size_t size = 0;
    const char* image = elf_rawfile(elf->get(), &size);
    if (image == nullptr || phdr.p_offset >= size || phdr.p_filesz > size - phdr.p_offset)
      return "";
    return std::string(image + phdr.p_offset, strnlen(image + phdr.p_offset, phdr.p_filesz));
  }
  return "";
}

// What execvp would run for `command`.
Result<std::string> FindExecutable(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* env = getenv("PATH");
  std::istringstream dirs(env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
  }
  return Fail(fmt::format("--alloc: cannot find '{}' on PATH", command), ENOENT);
}

// The interpreter a "#!" script names, or empty.
std::string ScriptInterpreter(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line) || !line.starts_with("#!")) return "";
  std::istringstream words(line.substr(2));
  std::string interpreter;
  words >> interpreter;
  return interpreter;
}

// The standard output of `argv`, run without a shell; nullopt when it did
// not run or exit with status 0.
std::optional<std::string> Output(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  write_end.Reset();
  if (err != 0) return std::nullopt;
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = read(read_end.get(), buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(path, ec);
  return ec ? path : canonical.string();
}

void AddOnce(std::vector<std::string>& paths, const std::string& path) {
  const std::string canonical = Canonical(path);
  if (std::find(paths.begin(), paths.end(), canonical) == paths.end()) paths.push_back(canonical);
}

// The C++ runtimes' operator new and delete call malloc and free, whose
// probes see those calls (with operator new in their call chains).
bool IsCxxRuntime(const std::string& path) {
  const std::string name = Basename(path);
  return name.starts_with("libstdc++.so") || name.starts_with("libc++.so") ||
         name.starts_with("libc++abi.so");
}

bool IsOperatorNewOrDelete(const AllocFunction& f) { return f.symbol.starts_with("_Z"); }

// Where to put a probe without a return probe (free, operator delete,
// posix_memalign) so that the kernel need not single-step it: a
// breakpoint's instruction is either emulated (push, a relative jump or
// call) or copied out and single-stepped, which in a VM costs 20 times as
// much (free's first instruction, `test %rdi,%rdi`: 15 us a call here,
// against 0.7 us on the `push %rbp` after it). Skips, on x86_64, a leading
// endbr64 and, for a function of one pointer, the test of it for NULL and
// the jump that leaves on NULL (free(NULL) frees nothing): none of them
// writes a register the probe fetches.
uint64_t EntryOnlyProbeOffset(const std::string& path, uint64_t offset, bool skip_null_test) {
  std::ifstream file(path, std::ios::binary);
  unsigned char code[16] = {};
  if (!file.seekg(static_cast<std::streamoff>(offset)) ||
      !file.read(reinterpret_cast<char*>(code), sizeof code)) {
    return offset;
  }
  size_t at = 0;
  if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa) at = 4;
  if (skip_null_test && code[at] == 0x48 && code[at + 1] == 0x85 && code[at + 2] == 0xff) {
    if (code[at + 3] == 0x74) return offset + at + 5;                          // je rel8
    if (code[at + 3] == 0x0f && code[at + 4] == 0x84) return offset + at + 9;  // je rel32
  }
  return offset + at;
}

bool IsCLibrary(const std::string& path) {
  const std::string name = Basename(path);
  return name.starts_with("libc.so") || name.starts_with("libc-");
}

}  // namespace

Result<std::vector<FoundAllocFunction>> FindAllocFunctions(
    const std::vector<std::string>& binaries) {
  std::set<std::string_view> wanted;
  for (const AllocFunction& f : kFunctions) wanted.insert(f.symbol);
  std::vector<FoundAllocFunction> found;
  std::set<std::pair<std::string, uint64_t>> places;
  std::set<std::string_view> done;
  std::set<std::string> referenced;
  for (size_t b = 0; b < binaries.size(); ++b) {
    const auto offsets =
        DefinedFunctions(binaries[b], wanted, /*static_symbols=*/b == 0, &referenced);
    for (const AllocFunction& f : kFunctions) {
      const auto it = offsets.find(f.symbol);
      if (done.contains(f.symbol) || it == offsets.end()) continue;
      done.insert(f.symbol);
      if (IsOperatorNewOrDelete(f) && IsCxxRuntime(binaries[b])) continue;
      if (!places.emplace(binaries[b], it->second).second) continue;  // an alias
      found.push_back({&f, binaries[b], it->second});
    }
  }
  // Each probe costs about 80 ms to unregister, in the kernel, serialized
  // (the recorder leaves that to a child; a recorder started right after
  // waits for it): malloc, calloc, realloc and free are always probed (a
  // library calls them within itself: glibc's getline reallocs), the rest
  // only when some binary imports them or the executable defines them (a
  // static program, its own operator new).
  const auto imported = [&](const AllocFunction& function) {
    return std::ranges::any_of(kFunctions, [&](const AllocFunction& other) {
      return other.event == function.event && referenced.contains(std::string(other.symbol));
    });
  };
  std::erase_if(found, [&](const FoundAllocFunction& f) {
    return !f.function->core && f.path != binaries.front() && !imported(*f.function);
  });
  if (!done.contains("malloc")) {
    return Fail(fmt::format(
        "--alloc: none of the binaries the target loads defines malloc (looked in: {}); a "
        "program whose allocator has no malloc symbol (Go's runtime, a stripped static binary) "
        "cannot be profiled this way",
        binaries.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(binaries, ", "))));
  }
  return found;
}

Result<std::vector<std::string>> CommandBinaries(const std::string& command) {
  TRY_ASSIGN(std::string executable, FindExecutable(command));
  if (const std::string interpreter = ScriptInterpreter(executable); !interpreter.empty()) {
    executable = interpreter;
  }
  std::vector<std::string> binaries;
  AddOnce(binaries, executable);
  const std::string interpreter = Interpreter(executable);
  if (interpreter.empty()) return binaries;  // statically linked
  const auto listed = Output({interpreter, "--list", executable});
  if (!listed) {
    return Fail(fmt::format("--alloc: '{} --list {}' failed: cannot tell which libraries {} loads",
                            interpreter, executable, executable));
  }
  // "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)",
  // "\t/lib64/ld-linux-x86-64.so.2 (0x...)"; "linux-vdso.so.1 (...)" and
  // "libx.so => not found" name no file.
  std::istringstream lines(*listed);
  for (std::string line; std::getline(lines, line);) {
    std::string_view text = Trim(line);
    if (const size_t arrow = text.find("=> "); arrow != std::string_view::npos) {
      text = text.substr(arrow + 3);
    }
    if (!text.starts_with('/')) continue;
    const size_t paren = text.rfind(" (");
    AddOnce(binaries, std::string(paren == std::string_view::npos ? text : text.substr(0, paren)));
  }
  return binaries;
}

Result<std::vector<std::string>> ProcessBinaries(pid_t pid) {
  std::vector<std::string> binaries;
  std::error_code ec;
  const fs::path exe = fs::read_symlink(fmt::format("/proc/{}/exe", pid), ec);
  if (ec) return Fail(fmt::format("--alloc: cannot read /proc/{}/exe: {}", pid, ec.message()));
  AddOnce(binaries, exe.string());
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  std::vector<std::string> libcs;
  for (std::string line; std::getline(maps, line);) {
    // "start-end perms offset dev inode   path"
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode;
    std::getline(fields, path);
    path = std::string(Trim(path));
    if (perms.size() < 3 || perms[2] != 'x' || !path.starts_with('/') ||
        path.ends_with(" (deleted)")) {
      continue;
    }
    if (IsCLibrary(path)) {
      AddOnce(libcs, path);
    } else {
      AddOnce(binaries, path);
    }
  }
  for (const std::string& libc : libcs) AddOnce(binaries, libc);
  return binaries;
}

std::vector<UprobeDefinition> AllocProbeDefinitions(const std::vector<FoundAllocFunction>& found) {
  std::vector<UprobeDefinition> defs;
  for (const FoundAllocFunction& f : found) {
    // A return probe needs the entry, where the return address is on top
    // of the stack; a probe without one may move past what it need not see.
    const uint64_t entry =
        f.function->returns_pointer
            ? f.file_offset
            : EntryOnlyProbeOffset(f.path, f.file_offset, f.function->entry_args == kPtr);
    defs.push_back({std::string(f.function->event), false, f.path, entry,
                    std::string(f.function->entry_args)});
    if (f.function->returns_pointer) {
      defs.push_back({std::string(f.function->event) + "_return", true, f.path, f.file_offset,
                      "ptr=$retval:x64"});
    }
  }
  return defs;
}

}  // namespace sample::record
