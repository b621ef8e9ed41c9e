// LiveLoader over a MemoryRecording whose chunks change between calls, as
// sample-top's refreshes change them: each Next() gives the new samples
// only, resolved with the mappings and named with the symbol sources kept
// from the calls before (the same function keeps its id); lost samples add
// up. SymbolCache keeps a DSO's source open between calls.
#include "report/load/recording_loader.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/memory_recording.h"
#include "libsample/model/process_table.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/kallsyms.h"
#include "report/load/symbol_cache.h"
#include "tests/unit/synthetic_records.h"

namespace sample::report {
namespace {

namespace st = sample::testing;

// With call chains (-g); a sample without one (nr 0) is its ip alone.
constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                 PERF_SAMPLE_CALLCHAIN;
constexpr uint32_t kPid = 42;
constexpr uint64_t kBase = 0x555555554000;
constexpr uint64_t kPage = 0x1000;
// A PIE with .symtab whose functions keep their own symbols (noinline).
const char* const kProg = FIXTURE_PROG_PATH;
constexpr char kKallsyms[] =
    "ffffffff81000000 T _stext\n"
    "ffffffff81001000 T do_syscall_64\n"
    "ffffffff81002000 T schedule\n"
    "ffffffff81003000 T _etext\n";
constexpr uint64_t kSyscallIp = 0xffffffff81001010;

// fixture_prog's executable segment as a process would map it: where the
// mapping starts, and the file offset of each function's first byte.
struct ProgImage {
  uint64_t start = 0, len = 0, pgoff = 0;
  std::map<std::string, uint64_t> file_offsets;  // by demangled symbol name

  static std::optional<ProgImage> Load() {
    auto elf = ElfSymbols::Load(kProg);
    if (!elf) return std::nullopt;
    ProgImage image;
    for (const ElfSymbols::LoadSegment& seg : elf->segments()) {
      if (!seg.executable) continue;
      const uint64_t vaddr = seg.vaddr & ~(kPage - 1);
      image.start = kBase + vaddr;
      image.pgoff = seg.offset & ~(kPage - 1);
      image.len = (seg.vaddr + seg.memsz - vaddr + kPage - 1) & ~(kPage - 1);
      break;
    }
    for (const ElfSymbol& symbol : elf->symbols()) {
      if (auto offset = elf->VaddrToFileOffset(symbol.start)) {
        image.file_offsets[symbol.name()] = *offset;
      }
    }
    return image;
  }
  // The address of `function` (its demangled symbol) in the process.
  uint64_t Ip(const std::string& function) const {
    EXPECT_TRUE(file_offsets.contains(function)) << function;
    return start + file_offsets.at(function) - pgoff;
  }
};

// Leaf name -> summed period, and the leaf's function id by name.
struct Leaves {
  std::map<std::string, uint64_t> periods;
  std::map<std::string, uint32_t> ids;
};

Leaves LeavesOf(const Recording& r) {
  Leaves leaves;
  for (const ProfileSample& s : r.profile.samples()) {
    const uint32_t id = r.profile.frames(s).front();
    const std::string& name = r.profile.function(id).name;
    leaves.periods[name] += s.period;
    leaves.ids[name] = id;
  }
  return leaves;
}

EventDesc Event() {
  EventDesc event;
  event.attr = st::MakeAttr(kSampleType, true);
  event.name = "cpu-clock";
  event.ids = {7};
  return event;
}

LoadOptions Options() {
  LoadOptions options;
  options.binaries.files.use_debuginfod = false;
  return options;
}

class LiveLoaderTest : public ::testing::Test {
 protected:
  LiveLoaderTest()
      : attr_(st::MakeAttr(kSampleType, true)),
        source_("live", {Event()}, {}, kKallsyms),
        loader_(source_, Options()) {}

  void SetUp() override {
    auto image = ProgImage::Load();
    ASSERT_TRUE(image) << kProg;
    ASSERT_NE(image->len, 0u);
    image_ = *image;
  }

  st::SampleIdFields Id(uint64_t time, uint32_t cpu = 0) {
    return st::SampleIdFields{kPid, kPid, time, 7, 0, cpu};
  }
  void Add(const st::Bytes& record) {
    st::Append(records_, record);
    ++count_;
  }
  // The process starts: its command, then fixture_prog's code mapped.
  void Start(uint64_t time) {
    Add(st::MakeComm(attr_, kPid, kPid, "prog", true, Id(time)));
    st::Mmap2Fields m =
        st::MakeMmap2Fields(kProg, kPid, kPid, image_.start, image_.len, image_.pgoff);
    m.prot = 5;  // PROT_READ | PROT_EXEC
    Add(st::MakeMmap2(attr_, m, Id(time + 1)));
  }
  void Sample(uint64_t ip, uint64_t time, uint64_t period, uint32_t cpu = 0,
              std::vector<uint64_t> callchain = {}) {
    st::SampleFields f;
    f.misc = ip == kSyscallIp ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
    f.id = 7;
    f.ip = ip;
    f.pid = f.tid = kPid;
    f.time = time;
    f.cpu = cpu;
    f.period = period;
    f.callchain = std::move(callchain);
    Add(st::MakeSample(attr_, f));
  }
  // The records added since the last call are what the source now holds;
  // the loader's Recording of them.
  const Recording& Next() {
    std::vector<format::RecordsChunk> chunks;
    if (!records_.empty()) {
      format::RecordsChunk chunk;
      chunk.records = std::move(records_);
      chunk.record_count = count_;
      chunk.time_min = time_min_;
      chunk.time_max = time_min_ + 999;
      chunks.push_back(std::move(chunk));
    }
    records_.clear();
    count_ = 0;
    time_min_ += 1000;
    source_.SetChunks(std::move(chunks));
    return loader_.Next();
  }

  perf_event_attr attr_;
  format::MemoryRecording source_;
  LiveLoader loader_;
  ProgImage image_;
  st::Bytes records_;
  uint64_t count_ = 0;
  uint64_t time_min_ = 1000;  // interval n holds times [1000 n, 1000 n + 999]
};

TEST_F(LiveLoaderTest, EachIntervalHoldsItsOwnSamplesNamedWithEarlierMappings) {
  Start(1000);
  Sample(image_.Ip("main"), 1010, 1000);
  Sample(image_.Ip("main"), 1020, 1000);
  Sample(image_.Ip("ns::Foo::bar(int)"), 1030, 500);
  Sample(kSyscallIp, 1040, 300);
  const Recording& first = Next();
  EXPECT_EQ(first.profile.samples().size(), 4u);
  EXPECT_EQ(first.profile.total_period(0), 2800u);
  const Leaves one = LeavesOf(first);
  EXPECT_EQ(one.periods, (std::map<std::string, uint64_t>{
                             {"main", 2000}, {"ns::Foo::bar", 500}, {"do_syscall_64", 300}}));
  EXPECT_EQ(first.profile.dso_name(first.profile.function(one.ids.at("main")).dso), kProg);
  EXPECT_EQ(first.profile.comm(first.profile.samples()[0].comm), "prog");

  // Samples only: the mapping is the first interval's. static_helper is
  // named here for the first time.
  Sample(image_.Ip("ns::Foo::bar(int)"), 2010, 100);
  Sample(image_.Ip("static_helper(int)"), 2020, 40);
  Sample(image_.Ip("main"), 2030, 700);
  Sample(image_.Ip("ns::Foo::bar(int)"), 2040, 100, 1);
  const Recording& second = Next();
  ASSERT_EQ(second.profile.samples().size(), 4u);
  EXPECT_EQ(second.profile.total_period(0), 940u);
  EXPECT_EQ(second.profile.sample_count(0), 4u);
  const Leaves two = LeavesOf(second);
  EXPECT_EQ(two.periods, (std::map<std::string, uint64_t>{
                             {"main", 700}, {"ns::Foo::bar", 200}, {"static_helper", 40}}));
  EXPECT_EQ(two.ids.at("main"), one.ids.at("main"));
  EXPECT_EQ(two.ids.at("ns::Foo::bar"), one.ids.at("ns::Foo::bar"));
  EXPECT_NE(two.ids.at("static_helper"), two.ids.at("main"));
  for (const ProfileSample& s : second.profile.samples()) {
    EXPECT_EQ(second.profile.comm(s.comm), "prog");
    EXPECT_GE(s.time, 2000u);
  }
  EXPECT_EQ(second.stats.unknown_frames, 0u);
  EXPECT_EQ(second.stats.missing_binaries, 0u);
}

TEST_F(LiveLoaderTest, AnEmptyIntervalGivesAnEmptyProfile) {
  Start(1000);
  Sample(image_.Ip("main"), 1010, 1000);
  ASSERT_EQ(Next().profile.samples().size(), 1u);
  const Recording& empty = Next();
  EXPECT_TRUE(empty.profile.samples().empty());
  EXPECT_EQ(empty.profile.total_period(0), 0u);
  EXPECT_EQ(empty.profile.sample_count(0), 0u);
  // And the next one goes on from where the first left.
  Sample(image_.Ip("main"), 3010, 250);
  const Recording& third = Next();
  EXPECT_EQ(LeavesOf(third).periods, (std::map<std::string, uint64_t>{{"main", 250}}));
}

TEST_F(LiveLoaderTest, LostSamplesAddUpAcrossIntervals) {
  Start(1000);
  Add(st::MakeLost(attr_, 7, 5, Id(1005, 1)));
  Sample(image_.Ip("main"), 1010, 1000);
  EXPECT_EQ(Next().stats.lost_samples, 5u);
  Add(st::MakeLost(attr_, 7, 3, Id(2005, 1)));
  Add(st::MakeLostSamples(attr_, 2, Id(2006, 0)));
  Sample(image_.Ip("main"), 2010, 1000);
  const Recording& second = Next();
  EXPECT_EQ(second.stats.lost_samples, 10u);
  EXPECT_EQ(second.stats.per_cpu.at(1).lost_samples, 8u);
  EXPECT_EQ(second.stats.per_cpu.at(0).lost_samples, 2u);
  EXPECT_EQ(second.profile.samples().size(), 1u);
  // Nothing new: nothing more lost.
  EXPECT_EQ(Next().stats.lost_samples, 10u);
}

// Each sample's frames' names, leaf first.
std::vector<std::vector<std::string>> StacksOf(const Recording& r) {
  std::vector<std::vector<std::string>> stacks;
  for (const ProfileSample& s : r.profile.samples()) {
    stacks.emplace_back();
    for (uint32_t id : r.profile.frames(s)) stacks.back().push_back(r.profile.function(id).name);
  }
  return stacks;
}

// A stack of the second interval holds a location named in the first
// (main, the caller) and one named now (static_helper): both named right,
// main with the same function id in both.
TEST_F(LiveLoaderTest, NewLocationsJoinStacksOfKnownOnes) {
  const uint64_t user = PERF_CONTEXT_USER;
  const uint64_t from_main = image_.Ip("main") + 1;  // a return address in main
  const uint64_t bar = image_.Ip("ns::Foo::bar(int)");
  const uint64_t helper = image_.Ip("static_helper(int)");
  using Stacks = std::vector<std::vector<std::string>>;
  Start(1000);
  Sample(bar, 1010, 100, 0, {user, bar, from_main});
  Sample(bar, 1020, 100, 0, {user, bar, from_main});
  const Recording& first = Next();
  EXPECT_EQ(StacksOf(first), (Stacks{{"ns::Foo::bar", "main"}, {"ns::Foo::bar", "main"}}));
  ASSERT_EQ(first.profile.samples().size(), 2u);
  const uint32_t main_id = first.profile.frames(first.profile.samples()[0]).back();

  Sample(helper, 2010, 100, 0, {user, helper, from_main});
  Sample(bar, 2020, 100, 0, {user, bar, from_main});
  Sample(kSyscallIp, 2030, 100, 0, {PERF_CONTEXT_KERNEL, kSyscallIp, user, helper, from_main});
  const Recording& second = Next();
  EXPECT_EQ(StacksOf(second), (Stacks{{"static_helper", "main"},
                                      {"ns::Foo::bar", "main"},
                                      {"do_syscall_64", "static_helper", "main"}}));
  for (const ProfileSample& s : second.profile.samples()) {
    EXPECT_EQ(second.profile.frames(s).back(), main_id);
  }
  EXPECT_EQ(second.stats.unknown_frames, 0u);
}

// The names of `result`'s frames of location `i`.
std::vector<std::string> NamesOf(const SymbolizeResult& result, size_t i) {
  std::vector<std::string> names;
  for (uint32_t k = 0; k < result.frames_count[i]; ++k) {
    names.push_back(result.frames[result.frames_begin[i] + k].name);
  }
  return names;
}

TEST(SymbolCacheTest, ADsoIsOpenedOnceAndNamesTheSameEveryTime) {
  const auto image = ProgImage::Load();
  ASSERT_TRUE(image);
  SymbolizeOptions options;
  options.binaries.files.use_debuginfod = false;
  SymbolCache cache(options, {}, kKallsyms);
  EXPECT_EQ(cache.open_sources(), 0u);
  // DSO ids as the ProcessTable gives them: the two pseudo DSOs first.
  const std::vector<std::string> dso_paths = {"[unknown]", "[kernel.kallsyms]", kProg};
  const std::vector<Location> locations = {{2, image->file_offsets.at("main")},
                                           {2, image->file_offsets.at("ns::Foo::bar(int)")},
                                           {ProcessTable::kKernelDso, kSyscallIp}};
  const SymbolizeResult first = cache.Symbolize(locations, dso_paths);
  EXPECT_EQ(cache.open_sources(), 1u);
  ASSERT_EQ(first.frames_begin.size(), 3u);
  EXPECT_EQ(NamesOf(first, 0), std::vector<std::string>{"main"});
  EXPECT_EQ(NamesOf(first, 1), std::vector<std::string>{"ns::Foo::bar"});
  EXPECT_EQ(NamesOf(first, 2), std::vector<std::string>{"do_syscall_64"});
  EXPECT_TRUE(format::FindMetadata(first.symbol_sources, kProg));
  EXPECT_EQ(first.missing_binaries, 0u);

  // Again, in another order and with one more offset: the same source.
  const std::vector<Location> again = {
      {2, image->file_offsets.at("static_helper(int)")}, locations[1], locations[0]};
  const SymbolizeResult second = cache.Symbolize(again, dso_paths);
  EXPECT_EQ(cache.open_sources(), 1u);
  ASSERT_EQ(second.frames_begin.size(), 3u);
  EXPECT_EQ(NamesOf(second, 0), std::vector<std::string>{"static_helper"});
  EXPECT_EQ(NamesOf(second, 1), NamesOf(first, 1));
  EXPECT_EQ(NamesOf(second, 2), NamesOf(first, 0));
  // Only what this call first opened is listed.
  EXPECT_TRUE(second.symbol_sources.empty());
}

TEST(SymbolCacheTest, AFeedNamesEachCallsNewKernelAddresses) {
  SymbolizeOptions options;
  options.binaries.files.use_debuginfod = false;
  // What a KallsymsFeed gives: the symbols covering each address, each
  // with its successor, selected from the whole table for this call only.
  const std::vector<KernelSymbol> table = ParseKallsyms(kKallsyms);
  std::vector<std::vector<uint64_t>> asked;
  SymbolCache cache(options, {}, /*kernel_symbols=*/"",
                    [&](const std::vector<uint64_t>& addresses) {
                      asked.push_back(addresses);
                      return SelectCoveringSymbols(table, addresses);
                    });
  const std::vector<std::string> dso_paths = {"[unknown]", "[kernel.kallsyms]"};
  const SymbolizeResult first =
      cache.Symbolize({{ProcessTable::kKernelDso, kSyscallIp}}, dso_paths);
  EXPECT_EQ(NamesOf(first, 0), std::vector<std::string>{"do_syscall_64"});
  ASSERT_EQ(first.symbol_sources.size(), 1u);
  EXPECT_NE(first.symbol_sources[0].second.find("as it comes"), std::string::npos);
  // The next call's addresses: a symbol of the first call's selection
  // (schedule, do_syscall_64's successor) and one below it.
  const SymbolizeResult second = cache.Symbolize({{ProcessTable::kKernelDso, 0xffffffff81002040},
                                                  {ProcessTable::kKernelDso, 0xffffffff81000008}},
                                                 dso_paths);
  EXPECT_EQ(NamesOf(second, 0), std::vector<std::string>{"schedule"});
  EXPECT_EQ(NamesOf(second, 1), std::vector<std::string>{"_stext"});
  EXPECT_TRUE(second.symbol_sources.empty());
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0], std::vector<uint64_t>{kSyscallIp});
  EXPECT_EQ(asked[1], (std::vector<uint64_t>{0xffffffff81002040, 0xffffffff81000008}));
}

TEST(SymbolCacheTest, AFeedWithNothingSaysSo) {
  SymbolizeOptions options;
  options.binaries.files.use_debuginfod = false;
  SymbolCache cache(options, {}, kKallsyms,
                    [](const std::vector<uint64_t>&) { return std::vector<KernelSymbol>{}; });
  const SymbolizeResult result =
      cache.Symbolize({{ProcessTable::kKernelDso, kSyscallIp}}, {"[unknown]", "[kernel.kallsyms]"});
  // The feed, not the text, names the kernel when there is one.
  EXPECT_EQ(NamesOf(result, 0)[0].substr(0, 9), "[unknown]");
  ASSERT_EQ(result.symbol_sources.size(), 1u);
  EXPECT_NE(result.symbol_sources[0].second.find("none covered"), std::string::npos);
}

}  // namespace
}  // namespace sample::report
