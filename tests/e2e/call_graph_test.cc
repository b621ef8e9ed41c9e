// End to end: what --call-graph dwarf and fp,leaf put in a recording, read
// straight from the file: the registers, the copied user stack (which must
// start at the sample's stack pointer: the word there is the leaf's return
// address) and which call chain the kernel adds. The unwinding itself is the
// reporter's and is tested there.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "formats/sample_file_reader.h"
#include "libsample/perf/chain_capture.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"
#include "libsample/perf/user_regs.h"
#include "libsample/symbols/elf_symbols.h"
#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kUnwindNofp = WORKLOAD_UNWIND_NOFP_PATH;
const std::string kUnwindFp = WORKLOAD_UNWIND_FP_PATH;
const std::string kLeaf = WORKLOAD_LEAF_PATH;
const std::string kHits = WORKLOAD_HITS_PATH;

// A sample of the recording, copied out of its payload.
struct Sample {
  uint32_t pid = 0, tid = 0;
  bool user_mode = false;
  uint64_t ip = 0;
  uint64_t regs_abi = 0;
  std::vector<uint64_t> regs;
  std::vector<std::byte> stack;
  std::vector<uint64_t> callchain;

  uint64_t StackWord(size_t offset) const {
    uint64_t word = 0;
    if (offset + sizeof(word) <= stack.size()) std::memcpy(&word, stack.data() + offset, 8);
    return word;
  }
};

// An executable mapping of a file, from MMAP2.
struct Mapping {
  std::string path;
  uint64_t start = 0, end = 0, pgoff = 0;
};

struct Recording {
  perf_event_attr attr{};
  std::vector<Sample> samples;
  std::vector<Mapping> mappings;
};

Recording Read(const std::string& path) {
  Recording out;
  auto reader = format::SampleFileReader::Open(path);
  EXPECT_TRUE(reader) << reader.error().message;
  if (!reader) return out;
  EXPECT_EQ(reader->events().events().size(), 1u);
  out.attr = reader->events().events().at(0).attr;
  for (const auto& chunk : reader->record_chunks()) {
    auto payload = reader->ReadPayload(chunk);
    EXPECT_TRUE(payload);
    if (!payload) continue;
    ForEachRecord(payload->bytes(), [&](const perf_event_header& h, auto record) {
      if (h.type == PERF_RECORD_MMAP2) {
        auto m = ParseMmap2(record, out.attr);
        if (m && (m->prot & PROT_EXEC)) {
          out.mappings.push_back({std::string(m->filename), m->addr, m->addr + m->len, m->pgoff});
        }
        return;
      }
      if (h.type != PERF_RECORD_SAMPLE) return;
      auto s = ParseSample(record, out.attr);
      EXPECT_TRUE(s);
      if (!s) return;
      Sample sample;
      sample.pid = s->pid;
      sample.tid = s->tid;
      sample.user_mode = (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
      sample.ip = s->ip;
      sample.regs_abi = s->regs_abi;
      for (size_t i = 0; i < s->user_regs.size(); ++i) sample.regs.push_back(s->user_regs[i]);
      sample.stack.assign(s->user_stack.begin(), s->user_stack.end());
      for (size_t i = 0; i < s->callchain.size(); ++i) sample.callchain.push_back(s->callchain[i]);
      out.samples.push_back(std::move(sample));
    });
  }
  return out;
}

// Names addresses in one binary through its mappings in the recording.
class Symbolizer {
 public:
  Symbolizer(const std::string& binary, const Recording& recording) {
    auto symbols = ElfSymbols::Load(binary);
    EXPECT_TRUE(symbols) << symbols.error().message;
    if (symbols) symbols_.emplace(std::move(*symbols));
    for (const Mapping& m : recording.mappings) {
      if (m.path == binary) mappings_.push_back(m);
    }
    EXPECT_FALSE(mappings_.empty()) << "no executable mapping of " << binary;
  }

  // The function containing `address`, or "" when outside the binary.
  std::string Name(uint64_t address) const {
    if (!symbols_) return "";
    for (const Mapping& m : mappings_) {
      if (address < m.start || address >= m.end) continue;
      auto vaddr = symbols_->FileOffsetToVaddr(address - m.start + m.pgoff);
      const ElfSymbol* symbol = vaddr ? symbols_->Find(*vaddr) : nullptr;
      return symbol != nullptr ? symbol->name() : "";
    }
    return "";
  }

 private:
  std::optional<ElfSymbols> symbols_;
  std::vector<Mapping> mappings_;
};

bool IsKernelAddress(uint64_t address) { return address >= 0xffff800000000000ull; }

size_t RegisterCount(uint64_t mask) { return static_cast<size_t>(__builtin_popcountll(mask)); }

class CallGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (HostArch() != Arch::kX86_64) {
      GTEST_SKIP() << "the workloads' frames and register counts are checked for x86_64 only";
    }
  }

  Recording RecordWith(const std::vector<std::string>& options,
                       const std::vector<std::string>& command) {
    std::vector<std::string> argv = {kRecord, "-e", "cpu-clock", "-F", "1000", "-o", data_};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    const RunResult rec = RunTool(argv, dir_);
    EXPECT_EQ(rec.exit_code, 0) << rec.err;
    return Read(data_);
  }

  ScratchDir dir_;
  const std::string data_ = dir_ / "cg.data";
};

TEST_F(CallGraphTest, DwarfSamplesCarryRegistersAndStackAndOnlyKernelChains) {
  const Recording r = RecordWith({"--call-graph", "dwarf"}, {kUnwindNofp, "chain"});
  EXPECT_EQ(r.attr.sample_stack_user, 8192u);
  EXPECT_EQ(r.attr.sample_regs_user, UnwindRegsMask(Arch::kX86_64));
  EXPECT_EQ(r.attr.exclude_callchain_user, 1u);
  ASSERT_GT(r.samples.size(), 100u);

  const Symbolizer symbols(kUnwindNofp, r);
  size_t hot = 0, returns_to_level_three = 0;
  for (const Sample& s : r.samples) {
    ASSERT_EQ(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
    ASSERT_EQ(s.regs.size(), 17u);
    ASSERT_FALSE(s.stack.empty());
    ASSERT_LE(s.stack.size(), 8192u);
    // User frames are left to the reporter: no PERF_CONTEXT_USER part, and
    // nothing but kernel addresses after the markers.
    for (uint64_t entry : s.callchain) {
      ASSERT_NE(entry, static_cast<uint64_t>(PERF_CONTEXT_USER));
      ASSERT_TRUE(entry >= PERF_CONTEXT_MAX || IsKernelAddress(entry)) << std::hex << entry;
    }
    if (!s.user_mode) {
      // The kernel's own frames (checked in KernelSamplesCarryKernelChains:
      // this workload enters the kernel too rarely to count on it).
      EXPECT_FALSE(s.callchain.empty());
      continue;
    }
    EXPECT_TRUE(s.callchain.empty());
    // The copy starts at the stack pointer; hot_leaf pushes nothing, so the
    // word there is its return address, in level_three.
    if (symbols.Name(s.ip) != "hot_leaf") continue;
    ++hot;
    returns_to_level_three += symbols.Name(s.StackWord(0)) == "level_three";
  }
  EXPECT_GT(hot, r.samples.size() * 8 / 10);
  EXPECT_GT(returns_to_level_three, hot * 95 / 100) << hot;

  const RunResult header = RunTool({kReport, "-i", data_, "--header-only"}, dir_);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  // (Sampling events also read their time enabled and running, for the
  // final counts every recording stores.)
  EXPECT_NE(
      header.out.find("CALLCHAIN|REGS_USER|STACK_USER, read_format = "
                      "TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING, call-graph = dwarf (8192 bytes "
                      "of user stack), sample_regs_user = 0xff01ff, exclude_callchain_user = 1"),
      std::string::npos)
      << header.out;
}

// In DWARF mode the kernel still walks its own frames: a workload that lives
// in write(2), sampled in kernel mode only, has a kernel chain on every
// sample. (The chain test's workload reads the clock through the vDSO and
// may take no kernel sample at all on a loaded machine.)
TEST_F(CallGraphTest, KernelSamplesCarryKernelChains) {
  if (const std::string why = KernelSamplesUnavailable(); !why.empty()) GTEST_SKIP() << why;
  std::vector<std::string> argv = {kRecord, "-e",           "cpu-clock:k", "-F", "1000", "-o",
                                   data_,   "--call-graph", "dwarf",       "--", kHits,  "300000"};
  const RunResult rec = RunTool(argv, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const Recording r = Read(data_);
  ASSERT_GT(r.samples.size(), 10u);
  for (const Sample& s : r.samples) {
    ASSERT_FALSE(s.user_mode);
    ASSERT_FALSE(s.callchain.empty());
    EXPECT_EQ(s.callchain.front(), static_cast<uint64_t>(PERF_CONTEXT_KERNEL));
    for (size_t i = 1; i < s.callchain.size(); ++i) {
      ASSERT_TRUE(s.callchain[i] >= PERF_CONTEXT_MAX || IsKernelAddress(s.callchain[i]))
          << std::hex << s.callchain[i];
    }
  }
}

// 64 frames of over 256 bytes: the stack above the leaf is deeper than the
// default copy, so every copy taken in the leaf is full.
TEST_F(CallGraphTest, DeepStacksFillTheCopy) {
  const Recording r = RecordWith({"--call-graph", "dwarf"}, {kUnwindNofp, "deep", "64"});
  EXPECT_EQ(r.attr.sample_stack_user, 8192u);
  const Symbolizer symbols(kUnwindNofp, r);
  size_t leaf = 0, full = 0;
  for (const Sample& s : r.samples) {
    ASSERT_LE(s.stack.size(), 8192u);
    if (!s.user_mode || symbols.Name(s.ip) != "deep_leaf") continue;
    ++leaf;
    full += s.stack.size() == 8192u;
  }
  EXPECT_GT(leaf, 100u);
  EXPECT_EQ(full, leaf);
}

TEST_F(CallGraphTest, EachThreadGetsItsOwnStack) {
  const Recording r = RecordWith({"--call-graph", "dwarf,2048"}, {kUnwindNofp, "threads", "0.2"});
  const Symbolizer symbols(kUnwindNofp, r);
  std::map<std::string, std::set<uint32_t>> tids_by_leaf;
  for (const Sample& s : r.samples) {
    ASSERT_LE(s.stack.size(), 2048u);
    if (!s.user_mode) continue;
    ASSERT_EQ(s.regs.size(), 17u);
    const std::string name = symbols.Name(s.ip);
    if (name == "a_leaf" || name == "b_leaf") {
      tids_by_leaf[name].insert(s.tid);
      // Each leaf returns into its own thread's work function.
      EXPECT_EQ(symbols.Name(s.StackWord(0)), name == "a_leaf" ? "thread_a_work" : "thread_b_work");
    }
  }
  ASSERT_EQ(tids_by_leaf["a_leaf"].size(), 1u);
  ASSERT_EQ(tids_by_leaf["b_leaf"].size(), 1u);
  EXPECT_NE(*tids_by_leaf["a_leaf"].begin(), *tids_by_leaf["b_leaf"].begin());
}

TEST_F(CallGraphTest, PerEventTermsSetTheModeAndSize) {
  const std::string data = dir_ / "term.data";
  const RunResult rec = RunTool({kRecord, "-e", "cpu-clock/call-graph=dwarf,stack-size=1001/", "-F",
                                 "1000", "-o", data, "--", kUnwindNofp, "chain", "0.1"},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const Recording r = Read(data);
  EXPECT_EQ(r.attr.sample_stack_user, 1008u);  // rounded up to a multiple of 8
  EXPECT_EQ(r.attr.exclude_callchain_user, 1u);
  ASSERT_FALSE(r.samples.empty());
  for (const Sample& s : r.samples) {
    ASSERT_EQ(s.regs.size(), 17u);
    ASSERT_LE(s.stack.size(), 1008u);
  }
}

// leaf_fn sets up no frame, so the frame-pointer chain of a sample in it
// skips parent_fn; fp,leaf keeps that chain and adds what recovers
// parent_fn: the stack pointer, and the word it points at.
TEST_F(CallGraphTest, LeafModeRecordsTheLeafsReturnAddress) {
  const Recording r = RecordWith({"--call-graph", "fp,leaf"}, {kLeaf});
  EXPECT_EQ(r.attr.sample_stack_user, kDefaultLeafStackSize);
  EXPECT_EQ(r.attr.exclude_callchain_user, 0u);
  const Symbolizer symbols(kLeaf, r);
  size_t in_leaf = 0, skips_parent = 0, returns_to_parent = 0;
  for (const Sample& s : r.samples) {
    ASSERT_EQ(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
    ASSERT_EQ(s.regs.size(), RegisterCount(LeafRegsMask(Arch::kX86_64)));
    ASSERT_LE(s.stack.size(), kDefaultLeafStackSize);
    if (!s.user_mode || symbols.Name(s.ip) != "leaf_fn") continue;
    ++in_leaf;
    // [PERF_CONTEXT_USER, ip, caller's return address, ...]
    ASSERT_GE(s.callchain.size(), 3u);
    ASSERT_EQ(s.callchain[0], static_cast<uint64_t>(PERF_CONTEXT_USER));
    skips_parent += symbols.Name(s.callchain[2]) == "main";
    returns_to_parent += symbols.Name(s.StackWord(0)) == "parent_fn";
  }
  EXPECT_GT(in_leaf, r.samples.size() * 8 / 10);
  EXPECT_GT(skips_parent, in_leaf * 95 / 100) << "the workload no longer shows the problem";
  EXPECT_GT(returns_to_parent, in_leaf * 95 / 100);
}

TEST_F(CallGraphTest, DashGAndCallGraphNo) {
  // -g is fp,leaf: the kernel's chain, the leaf registers and a small copy.
  Recording r = RecordWith({"-g"}, {kUnwindNofp, "chain", "0.05"});
  EXPECT_NE(r.attr.sample_type & PERF_SAMPLE_CALLCHAIN, 0u);
  EXPECT_NE(r.attr.sample_type & PERF_SAMPLE_STACK_USER, 0u);
  EXPECT_EQ(r.attr.sample_stack_user, kDefaultLeafStackSize);
  EXPECT_EQ(r.attr.sample_regs_user, LeafRegsMask(Arch::kX86_64));
  EXPECT_EQ(r.attr.exclude_callchain_user, 0u);
  // --call-graph fp is perf's -g exactly: the kernel's chain alone.
  r = RecordWith({"--call-graph", "fp"}, {kUnwindNofp, "chain", "0.05"});
  EXPECT_NE(r.attr.sample_type & PERF_SAMPLE_CALLCHAIN, 0u);
  EXPECT_EQ(r.attr.sample_type & (PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER), 0u);
  r = RecordWith({"-g", "--call-graph=no"}, {kUnwindNofp, "chain", "0.05"});
  EXPECT_EQ(r.attr.sample_type & PERF_SAMPLE_CALLCHAIN, 0u);
}

TEST_F(CallGraphTest, BadModesAreRefusedBeforeRunning) {
  struct Case {
    std::string mode, message;
  };
  for (const Case& c : std::vector<Case>{
           {"dwarf,0", "--call-graph 'dwarf,0': stack size 0: must be at least 1 byte"},
           {"dwarf,70000", "--call-graph 'dwarf,70000': stack size 70000: at most 65528 bytes"},
           {"frame", "--call-graph 'frame': expected fp, fp,leaf[,SIZE], dwarf[,SIZE] or no"}}) {
    const RunResult rec = RunTool(
        {kRecord, "--call-graph", c.mode, "-o", dir_ / "bad.data", "--", kUnwindNofp, "chain"},
        dir_);
    EXPECT_EQ(rec.exit_code, 2) << c.mode;
    EXPECT_NE(rec.err.find(c.message), std::string::npos) << rec.err;
  }
  const RunResult term = RunTool({kRecord, "-e", "cpu-clock/stack-size=512/", "-o",
                                  dir_ / "bad.data", "--", kUnwindNofp, "chain"},
                                 dir_);
  EXPECT_EQ(term.exit_code, 1);
  EXPECT_NE(term.err.find("stack-size=512 needs a call graph that copies the stack"),
            std::string::npos)
      << term.err;
}

// The share of --format folded's weight whose stack passes through main.
double ShareThroughMain(const std::string& folded) {
  double through = 0, total = 0;
  for (const std::string& line : Lines(folded)) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const double weight = std::stod(line.substr(space + 1));
    total += weight;
    if (line.find(";main;") != std::string::npos) through += weight;
  }
  return total == 0 ? 0 : through / total;
}

constexpr const char* kMaxStackPath = "/proc/sys/kernel/perf_event_max_stack";

int ReadMaxStack() {
  int value = 0;
  std::ifstream(kMaxStackPath) >> value;
  return value;
}

// Writes `value` to the sysctl; the errno of the failure, or 0. The write
// is checked itself (an ofstream reports it only at a flush nobody looks at).
int WriteMaxStack(int value) {
  const int fd = open(kMaxStackPath, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const std::string text = std::to_string(value) + "\n";
  const ssize_t n = write(fd, text.data(), text.size());
  const int error = n == static_cast<ssize_t>(text.size()) ? 0 : (n < 0 ? errno : EIO);
  close(fd);
  return error;
}

// Why this test cannot change kernel.perf_event_max_stack here, or "" when
// it can: a probe that writes the sysctl's own value back. The kernel
// refuses every write with EBUSY while any event on the machine records
// call chains (another profiler, or perf, running beside the tests).
std::string MaxStackUnchangeable() {
  if (geteuid() != 0) return "raising kernel.perf_event_max_stack needs root";
  const int old = ReadMaxStack();
  if (old <= 0) return "kernel.perf_event_max_stack cannot be read here";
  const int error = WriteMaxStack(old);
  if (error == EBUSY) {
    return "kernel.perf_event_max_stack cannot change now: another program on this machine is "
           "recording call chains (the kernel answers EBUSY until it stops)";
  }
  if (error != 0) {
    return "kernel.perf_event_max_stack cannot be written here: " + std::string(strerror(error));
  }
  return "";
}

// kernel.perf_event_max_stack set for a test and set back after it.
class MaxStackSysctl {
 public:
  explicit MaxStackSysctl(int value) : old_(ReadMaxStack()) {
    error_ = old_ > 0 ? WriteMaxStack(value) : EINVAL;
  }
  ~MaxStackSysctl() {
    if (old_ > 0) WriteMaxStack(old_);
  }
  // 0, or the errno of the write (EBUSY when a profiler started recording
  // call chains between the probe and the write).
  int error() const { return error_; }

 private:
  int old_ = 0;
  int error_ = 0;
};

// A 200-deep recursion: the kernel cuts frame-pointer chains at 127 frames,
// so no sample reaches main and the report says how many were cut; with
// --max-stack 512 (the sysctl raised, as root) every one does. Above the
// sysctl, --max-stack is refused with the sysctl's name.
TEST_F(CallGraphTest, MaxStackKeepsDeepChainsAndCutOnesAreCounted) {
  const std::string cut = dir_ / "cut.data";
  RunResult rec = RunTool({kRecord, "-e", "cpu-clock", "-g", "-F", "1000", "-o", cut, "--",
                           kUnwindFp, "deep", "200", "0.5"},
                          dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  RunResult folded = RunTool({kReport, "-i", cut, "--format", "folded"}, dir_);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_LT(ShareThroughMain(folded.out), 0.01) << folded.out.substr(0, 2000);
  const RunResult stats = RunTool({kReport, "-i", cut, "--stats"}, dir_);
  EXPECT_NE(stats.out.find("chains cut at 127 frames:"), std::string::npos) << stats.out;
  // The views that show callers say so (a flat view's self shares are
  // whole: it reads no chain).
  const RunResult children = RunTool({kReport, "-i", cut}, dir_);
  EXPECT_NE(children.out.find("call chains cut at 127 frames"), std::string::npos) << children.out;

  const int limit = ReadMaxStack();
  rec = RunTool({kRecord, "-g", "--max-stack", std::to_string(limit + 1), "-o", dir_ / "no.data",
                 "--", kUnwindFp, "deep", "200", "0.1"},
                dir_);
  EXPECT_EQ(rec.exit_code, 1);
  EXPECT_NE(rec.err.find("kernel.perf_event_max_stack = " + std::to_string(limit)),
            std::string::npos)
      << rec.err;

  if (const std::string why = MaxStackUnchangeable(); !why.empty()) GTEST_SKIP() << why;
  const MaxStackSysctl raised(512);
  if (raised.error() == EBUSY) GTEST_SKIP() << "a profiler started recording call chains";
  ASSERT_EQ(raised.error(), 0) << "writing 512 to " << kMaxStackPath << ": "
                               << strerror(raised.error());
  const std::string deep = dir_ / "deep.data";
  rec = RunTool({kRecord, "-e", "cpu-clock", "-g", "--max-stack", "512", "-F", "1000", "-o", deep,
                 "--", kUnwindFp, "deep", "200", "0.5"},
                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  folded = RunTool({kReport, "-i", deep, "--format", "folded"}, dir_);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_GE(ShareThroughMain(folded.out), 0.99);
  // A walk through a stale frame pointer can run to the limit by chance
  // (a CI run saw 1 of 501 samples with 511 unknown frames): at most 1%.
  const RunResult whole = RunTool({kReport, "-i", deep, "--stats"}, dir_);
  std::smatch cut_chains;
  if (std::regex_search(whole.out, cut_chains,
                        std::regex(R"(chains cut at \d+ frames:\s+(\d+))"))) {
    EXPECT_LE(std::stoull(cut_chains[1]), 5u) << whole.out;
  }
}

// Polls the sysctl for up to five seconds until it reads `value`.
bool MaxStackBecomes(int value) {
  for (int i = 0; i < 100; ++i) {
    if (ReadMaxStack() == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// --raise-max-stack raises the sysctl for the recording, which then reaches
// main, and sets it back when the recorder ends: normally, and when the
// recorder and its command are killed with SIGKILL (the guardian process
// does it then).
TEST_F(CallGraphTest, RaiseMaxStackIsSetBackEvenAfterSIGKILL) {
  if (const std::string why = MaxStackUnchangeable(); !why.empty()) GTEST_SKIP() << why;
  const int old = ReadMaxStack();
  ASSERT_LT(old, 512) << "the test needs the sysctl below 512";
  const MaxStackSysctl guard(old);  // set back whatever happens below
  if (guard.error() == EBUSY) GTEST_SKIP() << "a profiler started recording call chains";
  ASSERT_EQ(guard.error(), 0) << "writing " << old << " to " << kMaxStackPath << ": "
                              << strerror(guard.error());

  const std::string deep = dir_ / "raised.data";
  RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "-g", "--max-stack", "512", "--raise-max-stack", "-F",
               "1000", "-o", deep, "--", kUnwindFp, "deep", "200", "0.5"},
              dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_NE(rec.err.find("raised from " + std::to_string(old) + " to 512"), std::string::npos)
      << rec.err;
  EXPECT_EQ(ReadMaxStack(), old);
  const RunResult folded = RunTool({kReport, "-i", deep, "--format", "folded"}, dir_);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_GE(ShareThroughMain(folded.out), 0.99);

  const pid_t recorder =
      Start({kRecord, "-e", "cpu-clock", "-g", "--max-stack", "512", "--raise-max-stack", "-o",
             dir_ / "killed.data", "--", kUnwindFp, "deep", "200", "5"},
            dir_, "killed");
  EXPECT_TRUE(MaxStackBecomes(512)) << "the recorder did not raise the sysctl";
  kill(-recorder, SIGKILL);  // the recorder and the command, its process group
  rec = Wait(recorder, dir_, "killed");
  EXPECT_EQ(rec.exit_code, 128 + SIGKILL) << rec.err;
  EXPECT_TRUE(MaxStackBecomes(old)) << "still " << ReadMaxStack() << " after the recorder died";
}

// Without raising the sysctl: a 150-deep recursion (each frame holds 256
// bytes, so ~43 KB of stack) is cut by the kernel at 127 frames, and with
// fp,leaf and a copy that covers the stack the reporter walks the copy past
// the cut and reaches main; with dwarf the copy is the user chain anyway.
TEST_F(CallGraphTest, CutChainsAreCompletedFromTheStackCopy) {
  const int limit = ReadMaxStack();
  if (limit <= 0 || limit >= 150) {
    GTEST_SKIP() << "kernel.perf_event_max_stack is " << limit << ": nothing is cut at depth 150";
  }
  for (const std::string mode : {"fp,leaf,60000", "dwarf,60000"}) {
    const std::string data = dir_ / "deep.data";
    const RunResult rec = RunTool({kRecord, "-e", "cpu-clock", "-F", "500", "--call-graph", mode,
                                   "-m", "256", "-o", data, "--", kUnwindFp, "deep", "150", "0.6"},
                                  dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    const RunResult folded = RunTool({kReport, "-i", data, "--format", "folded"}, dir_);
    ASSERT_EQ(folded.exit_code, 0) << folded.err;
    EXPECT_GE(ShareThroughMain(folded.out), 0.95) << mode << "\n" << folded.out.substr(0, 2000);
    const RunResult stats = RunTool({kReport, "-i", data, "--stats"}, dir_);
    if (mode.starts_with("fp")) {
      EXPECT_NE(stats.out.find("completed from the stack copy)"), std::string::npos) << stats.out;
    } else {
      EXPECT_EQ(stats.out.find("chains cut"), std::string::npos) << stats.out;
    }
  }
}

// A 32-bit process (split built with -m32) on the 64-bit kernel: its
// symbols come from its ELF32 file, the kernel's frame-pointer chains reach
// main, and --call-graph dwarf unwinds it as i386 (its registers arrive by
// x86_64 perf numbers, its CFI uses i386 DWARF numbers, its words are 4
// bytes).
#ifdef WORKLOAD_SPLIT32_PATH
// Why this kernel cannot run the 32-bit workload (it was built without
// IA32 emulation, or booted with ia32_emulation=0: execve says ENOEXEC), or
// "" when it can (or the probe failed otherwise: then the test runs).
std::string ThirtyTwoBitUnavailable() {
  char* argv[] = {const_cast<char*>(WORKLOAD_SPLIT32_PATH), const_cast<char*>("0"), nullptr};
  pid_t pid = 0;
  const int error = posix_spawn(&pid, argv[0], nullptr, nullptr, argv, environ);
  if (error == ENOEXEC) {
    return "this kernel does not run 32-bit programs (execve: ENOEXEC; IA32 emulation off)";
  }
  if (error == 0) waitpid(pid, nullptr, 0);
  return "";
}
#endif

TEST_F(CallGraphTest, ThirtyTwoBitProcessRecordsAndUnwinds) {
#ifndef WORKLOAD_SPLIT32_PATH
  GTEST_SKIP() << "the compiler cannot link -m32 programs (apt-get install gcc-multilib)";
#else
  if (const std::string why = ThirtyTwoBitUnavailable(); !why.empty()) GTEST_SKIP() << why;
  for (const std::string mode : {"fp", "dwarf"}) {
    const std::string data = dir_ / ("split32-" + mode + ".data");
    const RunResult rec = RunTool({kRecord, "-e", "cpu-clock", "-F", "999", "--call-graph", mode,
                                   "-o", data, "--", WORKLOAD_SPLIT32_PATH, "0.6"},
                                  dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    const RunResult flat = RunTool({kReport, "-i", data, "--no-children", "--sort", "sym"}, dir_);
    ASSERT_EQ(flat.exit_code, 0) << flat.err;
    const auto sixty = OverheadOf(flat.out, "compute_sixty");
    const auto thirty = OverheadOf(flat.out, "compute_thirty");
    ASSERT_TRUE(sixty && thirty) << mode << "\n" << flat.out;
    EXPECT_NEAR(*sixty, 60.0, 8.0) << flat.out;
    EXPECT_NEAR(*thirty, 30.0, 8.0) << flat.out;
    const RunResult folded = RunTool({kReport, "-i", data, "--format", "folded"}, dir_);
    ASSERT_EQ(folded.exit_code, 0) << folded.err;
    EXPECT_GE(ShareThroughMain(folded.out), 0.95) << mode << "\n" << folded.out;
    EXPECT_NE(folded.out.find(";main;run_round;compute_sixty "), std::string::npos) << folded.out;
    if (mode == "dwarf") {
      const RunResult stats = RunTool({kReport, "-i", data, "--stats"}, dir_);
      EXPECT_EQ(stats.out.find("no user registers"), std::string::npos) << stats.out;
      EXPECT_NE(stats.out.find("ended: complete:"), std::string::npos) << stats.out;
    }
  }
#endif
}

}  // namespace
}  // namespace sample::e2e
