// Tests for the -e events that name a place: hardware breakpoints (mem:)
// and uprobes, parsed against the fake trees of
// tests/unit/event_spec_fixture.h. Uprobe offsets are checked against the
// fixture program read with <elf.h> (tests/fixtures/raw_elf.h), not through
// the code under test. The live tests at the end ask the running kernel to
// accept what the parser built: a uprobe and the sched_switch tracepoint.
#include "libsample/events/event_spec.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/symbols/elf_symbols.h"
#include "tests/fixtures/raw_elf.h"
#include "tests/unit/event_spec_fixture.h"

namespace sample {
namespace {

namespace fs = std::filesystem;
using testing::ExpectPlain;
using ::testing::HasSubstr;

const char* const kProg = FIXTURE_PROG_PATH;

class EventProbeTest : public testing::EventParseTest {};

TEST_F(EventProbeTest, Breakpoints) {
  const EventSpec rw = Parse("mem:0x1000");
  EXPECT_EQ(rw.name, "mem:0x1000");
  EXPECT_EQ(rw.attr.type, PERF_TYPE_BREAKPOINT);
  EXPECT_EQ(rw.attr.config, 0u);
  EXPECT_EQ(rw.attr.bp_addr, 0x1000u);
  EXPECT_EQ(rw.attr.bp_len, 4u);
  EXPECT_EQ(rw.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_RW));
  ExpectPlain(rw);

  const EventSpec w = Parse("mem:0x1000/8:w");
  EXPECT_EQ(w.attr.bp_addr, 0x1000u);
  EXPECT_EQ(w.attr.bp_len, 8u);
  EXPECT_EQ(w.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_W));

  const EventSpec x = Parse("mem:4198400:x");
  EXPECT_EQ(x.attr.bp_addr, 4198400u);
  EXPECT_EQ(x.attr.bp_len, sizeof(long));
  EXPECT_EQ(x.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_X));

  const EventSpec r = Parse("mem:0x10/2:r:u");
  EXPECT_EQ(r.attr.bp_len, 2u);
  EXPECT_EQ(r.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_R));
  EXPECT_EQ(r.attr.exclude_kernel, 1u);
  const EventSpec rw_k = Parse("mem:0x10:k");
  EXPECT_EQ(rw_k.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_RW));
  EXPECT_EQ(rw_k.attr.exclude_user, 1u);

  const std::vector<EventSpec> list = ParseAll("mem:0x10:w,cycles");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].attr.type, PERF_TYPE_HARDWARE);

  EXPECT_THAT(Error("mem:zz"), HasSubstr("bad breakpoint address 'zz' in 'mem:zz'"));
  EXPECT_THAT(Error("mem:"), HasSubstr("bad breakpoint address ''"));
  EXPECT_THAT(Error("mem:0x10/3"), HasSubstr("must be 1, 2, 4 or 8"));
  EXPECT_THAT(Error("mem:0x10:rx"), HasSubstr("x cannot be combined"));
  EXPECT_THAT(Error("mem:0x10:rr"), HasSubstr("given twice"));
  EXPECT_THAT(Error("mem:0x10:q"), HasSubstr("bad modifier 'q'"));
}

// st_value of the function `name` in the .symtab of an ELF64 file, read with
// <elf.h> structs.
std::optional<uint64_t> RawFunctionAddress(const std::string& path, std::string_view name) {
  const std::vector<char> bytes = fixtures::ReadWholeFile(path);
  Elf64_Ehdr ehdr;
  if (!fixtures::ReadAt(bytes, 0, &ehdr)) return std::nullopt;
  for (size_t i = 0; i < ehdr.e_shnum; ++i) {
    Elf64_Shdr symtab;
    Elf64_Shdr strtab;
    if (!fixtures::ReadAt(bytes, ehdr.e_shoff + i * ehdr.e_shentsize, &symtab) ||
        symtab.sh_type != SHT_SYMTAB ||
        !fixtures::ReadAt(bytes, ehdr.e_shoff + symtab.sh_link * ehdr.e_shentsize, &strtab)) {
      continue;
    }
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= symtab.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      if (!fixtures::ReadAt(bytes, symtab.sh_offset + at, &sym)) break;
      const uint64_t name_at = strtab.sh_offset + sym.st_name;
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || name_at >= bytes.size()) continue;
      if (std::string_view(bytes.data() + name_at,
                           strnlen(bytes.data() + name_at, bytes.size() - name_at)) == name) {
        return sym.st_value;
      }
    }
  }
  return std::nullopt;
}

// The file offset of `vaddr`, from the PT_LOAD program headers.
std::optional<uint64_t> RawFileOffset(const std::string& path, uint64_t vaddr) {
  for (const fixtures::RawLoad& load : fixtures::ReadRawElf(path).loads) {
    if (vaddr >= load.vaddr && vaddr - load.vaddr < load.filesz) {
      return load.offset + (vaddr - load.vaddr);
    }
  }
  return std::nullopt;
}

// The file offset a uprobe on function `mangled` of the fixture must use.
uint64_t ExpectedProbeOffset(std::string_view mangled) {
  const std::optional<uint64_t> vaddr = RawFunctionAddress(kProg, mangled);
  EXPECT_TRUE(vaddr) << mangled;
  const std::optional<uint64_t> offset = RawFileOffset(kProg, vaddr.value_or(0));
  EXPECT_TRUE(offset) << mangled;
  return offset.value_or(0);
}

TEST(ElfSymbolsVaddrToFileOffsetTest, InvertsFileOffsetToVaddr) {
  auto elf = ElfSymbols::Load(kProg);
  ASSERT_TRUE(elf) << elf.error().message;
  const fixtures::RawElf raw = fixtures::ReadRawElf(kProg);
  bool saw_shifted = false;
  for (const fixtures::RawLoad& load : raw.loads) {
    if (load.filesz == 0) continue;
    saw_shifted |= load.vaddr != load.offset;
    EXPECT_EQ(elf->VaddrToFileOffset(load.vaddr), load.offset);
    EXPECT_EQ(elf->VaddrToFileOffset(load.vaddr + load.filesz - 1), load.offset + load.filesz - 1);
    EXPECT_EQ(elf->FileOffsetToVaddr(*elf->VaddrToFileOffset(load.vaddr + 1)), load.vaddr + 1);
  }
  // Without a shifted segment the test could not tell vaddr from offset.
  EXPECT_TRUE(saw_shifted);
  EXPECT_EQ(elf->VaddrToFileOffset(~uint64_t{0}), std::nullopt);
  // Memory past a segment's file contents (.bss) has no file offset.
  for (const fixtures::RawLoad& load : raw.loads) {
    if (load.memsz > load.filesz && !RawFileOffset(kProg, load.vaddr + load.filesz)) {
      EXPECT_EQ(elf->VaddrToFileOffset(load.vaddr + load.filesz), std::nullopt);
    }
  }
}

class EventProbeUprobeTest : public testing::EventParseTest {
 protected:
  std::string prog_ = kProg;
  std::string canonical_ = fs::canonical(kProg).string();
};

TEST_F(EventProbeUprobeTest, ProbeOnMain) {
  const uint64_t main_offset = ExpectedProbeOffset("main");
  const EventSpec spec = Parse("uprobe:" + prog_ + ":main");
  EXPECT_EQ(spec.name, "uprobe:" + prog_ + ":main");
  EXPECT_EQ(spec.attr.type, 7u);
  EXPECT_EQ(spec.attr.config, 0u);
  EXPECT_EQ(spec.attr.config1, 0u);  // the recorder points it at uprobe_path
  EXPECT_EQ(spec.attr.config2, main_offset);
  EXPECT_EQ(spec.uprobe_path, canonical_);
  EXPECT_EQ(spec.attr.exclude_kernel, 0u);
  EXPECT_EQ(spec.group_index, -1);

  const EventSpec ret = Parse("uretprobe:" + prog_ + ":main+4");
  EXPECT_EQ(ret.attr.type, 7u);
  EXPECT_EQ(ret.attr.config, 1u);  // format/retprobe is config:0
  EXPECT_EQ(ret.attr.config2, main_offset + 4);

  const std::optional<uint64_t> main_vaddr = RawFunctionAddress(kProg, "main");
  ASSERT_TRUE(main_vaddr);
  EXPECT_EQ(Parse(fmt::format("uprobe:{}:{:#x}", prog_, *main_vaddr)).attr.config2, main_offset);

  const EventSpec user = Parse("uprobe:" + prog_ + ":main+0x2:u");
  EXPECT_EQ(user.attr.config2, main_offset + 2);
  EXPECT_EQ(user.attr.exclude_kernel, 1u);
  EXPECT_EQ(user.attr.exclude_user, 0u);
}

TEST_F(EventProbeUprobeTest, CxxNamesAndLists) {
  // Demangled, with or without the parameter list.
  const uint64_t bar = ExpectedProbeOffset("_ZN2ns3Foo3barEi");
  EXPECT_EQ(Parse("uprobe:" + prog_ + ":ns::Foo::bar").attr.config2, bar);
  EXPECT_EQ(Parse("uprobe:" + prog_ + ":ns::Foo::bar(int)").attr.config2, bar);

  const std::vector<EventSpec> list =
      ParseAll("cycles,{uprobe:" + prog_ + ":main,uretprobe:" + prog_ + ":main}:S");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[1].group_index, 0);
  EXPECT_TRUE(list[1].group_leader);
  EXPECT_TRUE(list[1].sample_read);
  EXPECT_EQ(list[2].attr.config, 1u);
  EXPECT_EQ(list[2].uprobe_path, canonical_);
}

// Toggle terms (on=, off=, toggle=, start=) after a probe's symbol, with
// the commas and slashes of a path around them.
TEST_F(EventProbeUprobeTest, ToggleTerms) {
  const uint64_t main_offset = ExpectedProbeOffset("main");
  const std::vector<EventSpec> list = ParseAll(
      "cpu-clock,uprobe:" + prog_ + ":main/on=cpu-clock/,uretprobe:" + prog_ +
      ":main/off=cpu-clock,toggle=thread/u,page-faults");
  ASSERT_EQ(list.size(), 4u);
  EXPECT_TRUE(list[0].toggled);
  EXPECT_FALSE(list[0].starts_on);
  EXPECT_TRUE(list[0].toggles.empty());
  EXPECT_EQ(list[1].attr.config2, main_offset);
  ASSERT_EQ(list[1].toggles.size(), 1u);
  EXPECT_EQ(list[1].toggles[0].target, 0u);
  EXPECT_TRUE(list[1].toggles[0].on);
  EXPECT_EQ(list[1].attr.sample_period, 1u);  // every hit switches
  EXPECT_EQ(list[2].attr.config, 1u);
  ASSERT_EQ(list[2].toggles.size(), 1u);
  EXPECT_FALSE(list[2].toggles[0].on);
  EXPECT_EQ(list[2].toggle_scope, ToggleScope::kThread);
  EXPECT_EQ(list[2].attr.exclude_kernel, 1u);  // the modifier after the terms
  EXPECT_FALSE(list[3].toggled);

  // A group's leader stands for the group; start=on; toggle=cpu; a name
  // without its modifiers.
  const std::vector<EventSpec> group = ParseAll("{cpu-clock:u/start=on/,page-faults},uprobe:" +
                                                prog_ + ":main/off=cpu-clock,toggle=cpu/");
  ASSERT_EQ(group.size(), 3u);
  EXPECT_TRUE(group[0].toggled);
  EXPECT_TRUE(group[1].toggled);
  EXPECT_TRUE(group[0].starts_on);
  EXPECT_TRUE(group[1].starts_on);
  EXPECT_EQ(group[2].toggle_scope, ToggleScope::kCpu);

  const std::string probe = "uprobe:" + prog_ + ":main";
  EXPECT_THAT(Error("cpu-clock," + probe + "/on=cycles/"),
              HasSubstr("on=cycles names no event of this -e list (events: 'cpu-clock')"));
  EXPECT_THAT(Error("cpu-clock," + probe + "/on=cpu-clock"), HasSubstr("no closing '/'"));
  EXPECT_THAT(Error("cpu-clock," + probe + "/off=cpu-clock/"),
              HasSubstr("switched off but never on"));
  EXPECT_THAT(Error("cpu-clock/start=on/"), HasSubstr("start= applies to an event some trigger"));
  EXPECT_THAT(Error("cpu-clock," + probe + "/on=cpu-clock,toggle=both/"),
              HasSubstr("toggle=both: expected thread"));
  EXPECT_THAT(Error("cpu-clock," + probe + "/on=cpu-clock,period=2/"),
              HasSubstr("takes no period"));
  EXPECT_THAT(Error("cpu-clock,page-faults/on=cpu-clock/"), HasSubstr("give it a period=N"));
  EXPECT_THAT(Error("{cpu-clock,page-faults}," + probe + "/on=page-faults/"),
              HasSubstr("member of a group"));
  EXPECT_THAT(Error("cpu-clock,page-faults/period=1,on=cpu-clock/," + probe + "/on=page-faults/"),
              HasSubstr("itself a trigger; toggles do not chain"));
  EXPECT_THAT(Error("cpu-clock/name=a/,cpu-clock/name=b/," + probe + "/on=cpu-clock/"),
              HasSubstr("names no event"));
  EXPECT_THAT(Error("cpu-clock," + probe + "/on=cpu-clock/,uretprobe:" + prog_ +
                    ":main/on=cpu-clock,toggle=cpu/"),
              HasSubstr("mix toggle=thread and toggle=cpu"));
}

TEST_F(EventProbeUprobeTest, Errors) {
  EXPECT_THAT(Error("uprobe:/nonexistent/prog:main"), HasSubstr("cannot find /nonexistent/prog"));
  const std::string typo = Error("uprobe:" + prog_ + ":mian");
  EXPECT_THAT(typo, HasSubstr("no function 'mian' in " + canonical_));
  EXPECT_THAT(typo, HasSubstr("did you mean: main"));
  EXPECT_THAT(Error("uprobe:" + prog_), HasSubstr("expected uprobe:PATH:SYMBOL[+OFFSET]"));
  EXPECT_THAT(Error("uprobe:" + prog_ + ":"), HasSubstr("no symbol"));
  EXPECT_THAT(Error("uprobe:" + prog_ + ":main+0x100000"), HasSubstr("past the end of main"));

  options_.sysfs_root = (trees_.root() / "empty-sys").string();
  const std::string no_pmu = Error("uprobe:" + prog_ + ":main");
  EXPECT_THAT(no_pmu, HasSubstr("no PMU 'uprobe'"));
  EXPECT_THAT(no_pmu, HasSubstr("4.17"));

  trees_.Write("old-sys/bus/event_source/devices/uprobe/type", "7\n");
  options_.sysfs_root = (trees_.root() / "old-sys").string();
  EXPECT_EQ(Parse("uprobe:" + prog_ + ":main").attr.type, 7u);
  EXPECT_THAT(Error("uretprobe:" + prog_ + ":main"), HasSubstr("no format/retprobe"));
}

int PerfEventOpen(perf_event_attr* attr, pid_t pid, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

// Runs the fixture under a counting event opened from `spec` (enabled at
// exec) and returns the count, or nullopt with `skip` set when the kernel
// refuses for lack of privilege.
std::optional<uint64_t> CountInFixture(const EventSpec& spec, std::string* skip) {
  perf_event_attr attr = spec.attr;
  attr.size = sizeof(attr);
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  if (!spec.uprobe_path.empty())
    attr.config1 = reinterpret_cast<uint64_t>(spec.uprobe_path.c_str());
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t child = fork();
  if (child == 0) {
    char c;
    if (read(go[0], &c, 1) == 1) {
      char quiet[] = "FIXTURE_QUIET=1";
      char* env[] = {quiet, nullptr};
      execle(kProg, kProg, static_cast<char*>(nullptr), env);
    }
    _exit(127);
  }
  close(go[0]);
  const int fd = PerfEventOpen(&attr, child, -1);
  const int open_errno = errno;
  if (fd >= 0) {
    EXPECT_EQ(write(go[1], "x", 1), 1);
  }
  close(go[1]);
  int status = 0;
  waitpid(child, &status, 0);
  if (fd < 0) {
    if (open_errno == EACCES || open_errno == EPERM) {
      *skip = fmt::format("perf_event_open refused: {}", std::strerror(open_errno));
    } else {
      ADD_FAILURE() << "perf_event_open: " << std::strerror(open_errno);
    }
    return std::nullopt;
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 127) << status;
  uint64_t count = 0;
  EXPECT_EQ(read(fd, &count, sizeof(count)), static_cast<ssize_t>(sizeof(count)));
  close(fd);
  return count;
}

TEST(EventSpecLiveTest, KernelAcceptsUprobeAndItFiresOnce) {
  if (!fs::exists("/sys/bus/event_source/devices/uprobe/type")) {
    GTEST_SKIP() << "no uprobe PMU here (/sys/bus/event_source/devices/uprobe)";
  }
  for (const char* kind : {"uprobe", "uretprobe"}) {
    auto specs = ParseEventList(fmt::format("{}:{}:main", kind, kProg), EventParseOptions{});
    ASSERT_TRUE(specs) << specs.error().message;
    ASSERT_EQ(specs->size(), 1u);
    std::string skip;
    const std::optional<uint64_t> count = CountInFixture(specs->front(), &skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    // main runs once: a wrong offset would count 0 (or fail to open).
    EXPECT_EQ(count, 1u) << kind;
  }
}

TEST(EventSpecLiveTest, SchedSwitchTracepoint) {
  auto specs = ParseEventList("sched:sched_switch", EventParseOptions{});
  if (!specs && specs.error().message.find("mount") != std::string::npos) {
    GTEST_SKIP() << "tracefs unavailable: " << specs.error().message;
  }
  ASSERT_TRUE(specs) << specs.error().message;
  const EventSpec& spec = specs->front();
  EXPECT_EQ(spec.attr.type, PERF_TYPE_TRACEPOINT);
  // The id as tracefs publishes it, wherever it is mounted now.
  std::optional<uint64_t> id;
  std::ifstream mounts("/proc/mounts");
  std::string device, mount_point, type, rest;
  std::vector<std::string> roots;
  while (mounts >> device >> mount_point >> type && std::getline(mounts, rest)) {
    if (type == "tracefs") roots.push_back(mount_point);
  }
  roots.push_back("/sys/kernel/tracing");
  roots.push_back("/sys/kernel/debug/tracing");
  for (const std::string& root : roots) {
    std::ifstream in(root + "/events/sched/sched_switch/id");
    uint64_t value = 0;
    if (in >> value) {
      id = value;
      break;
    }
  }
  ASSERT_TRUE(id);
  EXPECT_EQ(spec.attr.config, *id);

  perf_event_attr attr = spec.attr;
  attr.size = sizeof(attr);
  const int fd = PerfEventOpen(&attr, 0, -1);
  if (fd < 0 && (errno == EACCES || errno == EPERM)) {
    GTEST_SKIP() << "perf_event_open refused the tracepoint: " << std::strerror(errno);
  }
  ASSERT_GE(fd, 0) << std::strerror(errno);
  for (int i = 0; i < 3; ++i) usleep(1000);  // each sleep switches out
  uint64_t count = 0;
  EXPECT_EQ(read(fd, &count, sizeof(count)), static_cast<ssize_t>(sizeof(count)));
  close(fd);
  EXPECT_GE(count, 3u);
}

}  // namespace
}  // namespace sample
