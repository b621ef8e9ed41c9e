#include "record/embed/code_hits.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/unit/synthetic_records.h"

namespace sample::record {
namespace {

using testing::Append;
using testing::Bytes;

constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
constexpr uint64_t kUser = static_cast<uint64_t>(PERF_CONTEXT_USER);
constexpr uint64_t kKernel = static_cast<uint64_t>(PERF_CONTEXT_KERNEL);
constexpr uint32_t kExec = 0x5;  // PROT_READ | PROT_EXEC

EventTable TableOf(const perf_event_attr& attr) {
  EventDesc event;
  event.attr = attr;
  return EventTable({event});
}

Bytes Mapping(const perf_event_attr& attr, uint32_t pid, const std::string& path, uint64_t start,
              uint64_t len, uint64_t pgoff, uint64_t ino = 7, uint32_t prot = kExec) {
  auto fields = testing::MakeMmap2Fields(path, pid, pid, start, len, pgoff);
  fields.ino = ino;
  fields.prot = prot;
  return testing::MakeMmap2(attr, fields, {pid, pid});
}

Bytes Sample(const perf_event_attr& attr, uint32_t pid, uint64_t ip, std::vector<uint64_t> chain) {
  testing::SampleFields fields;
  fields.pid = fields.tid = pid;
  fields.ip = ip;
  fields.period = 1;
  fields.callchain = std::move(chain);
  return testing::MakeSample(attr, fields);
}

const CodeHits::Binary* Find(const std::vector<CodeHits::Binary>& binaries,
                             const std::string& path) {
  for (const auto& b : binaries) {
    if (b.path == path) return &b;
  }
  return nullptr;
}

TEST(CodeHitsTest, ChainsGiveLeavesAsTheyAreAndCallersAtTheCall) {
  const perf_event_attr attr = testing::MakeAttr(kSampleType, true);
  CodeHits hits(TableOf(attr), Arch::kX86_64);
  Bytes records;
  Append(records, Mapping(attr, 10, "/bin/a", 0x401000, 0x2000, 0x1000, 7));
  Append(records, Mapping(attr, 10, "/lib/b.so", 0x7f0000, 0x1000, 0, 8));
  Append(records, Sample(attr, 10, 0x401100, {kUser, 0x401100, 0x7f0200, 0x401300}));
  // In the kernel: its frames are not ours; the user part starts exact.
  Append(records, Sample(attr, 10, 0xffffffff81000000ull,
                         {kKernel, 0xffffffff81000000ull, kUser, 0x401500, 0x401600}));
  hits.Observe(records);
  const auto binaries = hits.Resolve();
  ASSERT_EQ(binaries.size(), 2u);
  const auto* a = Find(binaries, "/bin/a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->offsets, (std::vector<uint64_t>{0x1100, 0x12ff, 0x1500, 0x15ff}));
  EXPECT_EQ(a->leaf_offsets, (std::vector<uint64_t>{0x1100, 0x1500}));
  // The kernel sample's user pc is where it entered the kernel: no sample
  // of its function.
  EXPECT_EQ(a->leaf_samples, (std::vector<LeafSamples>{{0x1100, 0, 1}}));
  EXPECT_EQ(a->pid, 10u);
  EXPECT_EQ(a->inode, 7u);
  const auto* b = Find(binaries, "/lib/b.so");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->offsets, (std::vector<uint64_t>{0x1ff}));
  EXPECT_TRUE(b->leaf_offsets.empty());
}

TEST(CodeHitsTest, ForkedChildrenUseTheirParentsMappingsAndLoneIpsAreLeaves) {
  const perf_event_attr attr =
      testing::MakeAttr(kSampleType & ~uint64_t{PERF_SAMPLE_CALLCHAIN}, true);
  CodeHits hits(TableOf(attr), Arch::kX86_64);
  Bytes records;
  Append(records, Mapping(attr, 10, "/bin/a", 0x401000, 0x1000, 0));
  Append(records, testing::MakeFork(attr, 11, 10, 11, 10, 5, {11, 11}));
  Append(records, Sample(attr, 11, 0x401234, {}));
  Append(records, Sample(attr, 11, 0x401234, {}));  // the same again: one hit
  hits.Observe(records);
  const auto binaries = hits.Resolve();
  ASSERT_EQ(binaries.size(), 1u);
  EXPECT_EQ(binaries[0].offsets, (std::vector<uint64_t>{0x234}));
  EXPECT_EQ(binaries[0].leaf_offsets, (std::vector<uint64_t>{0x234}));
  EXPECT_EQ(binaries[0].leaf_samples, (std::vector<LeafSamples>{{0x234, 0, 2}}));
  EXPECT_EQ(hits.counts().samples, 2u);
  EXPECT_EQ(hits.counts().hits, 1u);
}

// What decides whose code is embedded (EmbeddingLimits::min_event_samples):
// each sample once, a repeated chain as much as a new one, summed over the
// processes that hit the same place of a file, and once only where a child
// and its parent both hold the mapping; per event, and per file
// (ResetSamples).
TEST(CodeHitsTest, LeafSamplesAreCountedPerPlaceInTheFile) {
  const perf_event_attr attr = testing::MakeAttr(kSampleType, true);
  CodeHits hits(TableOf(attr), Arch::kX86_64);
  Bytes records;
  Append(records, Mapping(attr, 10, "/bin/a", 0x401000, 0x1000, 0, 7));
  Append(records, Mapping(attr, 20, "/bin/a", 0x501000, 0x1000, 0, 7));
  Append(records, testing::MakeFork(attr, 21, 20, 21, 20, 5, {21, 21}));
  Append(records, Mapping(attr, 21, "/bin/a", 0x501000, 0x1000, 0, 7));
  for (int i = 0; i < 3; ++i)
    Append(records, Sample(attr, 10, 0x401100, {kUser, 0x401100, 0x401300}));
  Append(records, Sample(attr, 20, 0x501100, {kUser, 0x501100, 0x501300}));
  Append(records, Sample(attr, 21, 0x501100, {kUser, 0x501100, 0x501300}));
  Append(records, Sample(attr, 21, 0x501200, {kUser, 0x501200, 0x501300}));
  hits.Observe(records);
  const auto binaries = hits.Resolve();
  ASSERT_EQ(binaries.size(), 1u);
  EXPECT_EQ(binaries[0].leaf_offsets, (std::vector<uint64_t>{0x100, 0x200}));
  EXPECT_EQ(binaries[0].leaf_samples, (std::vector<LeafSamples>{{0x100, 0, 5}, {0x200, 0, 1}}));
  EXPECT_EQ(hits.event_samples(), (std::vector<uint64_t>{6}));
  hits.ResetSamples();
  EXPECT_EQ(hits.event_samples(), (std::vector<uint64_t>{0}));
  Bytes more;
  Append(more, Sample(attr, 10, 0x401100, {kUser, 0x401100, 0x401300}));
  hits.Observe(more);
  const auto after = hits.Resolve();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].leaf_offsets, (std::vector<uint64_t>{0x100, 0x200}));  // addresses stay
  EXPECT_EQ(after[0].leaf_samples, (std::vector<LeafSamples>{{0x100, 0, 1}}));
}

// Each event's samples apart; a precise event's ip, which need not be its
// chain's first address, is a leaf of its own.
TEST(CodeHitsTest, SamplesAreCountedByEventAtTheirIp) {
  const perf_event_attr attr = testing::MakeAttr(kSampleType | PERF_SAMPLE_IDENTIFIER, true);
  perf_event_attr second = attr;
  second.config = 1;
  const EventTable table({EventDesc{attr, "a", {1}}, EventDesc{second, "b", {2}}});
  CodeHits hits(table, Arch::kX86_64);
  Bytes records;
  Append(records, Mapping(attr, 10, "/bin/a", 0x401000, 0x1000, 0, 7));
  testing::SampleFields fields;
  fields.pid = fields.tid = 10;
  fields.period = 1;
  fields.id = 2;
  fields.ip = 0x401104;  // the chain says 0x401100
  fields.callchain = {kUser, 0x401100, 0x401300};
  Append(records, testing::MakeSample(second, fields));
  fields.id = 1;
  fields.ip = 0x401100;
  Append(records, testing::MakeSample(attr, fields));
  hits.Observe(records);
  const auto binaries = hits.Resolve();
  ASSERT_EQ(binaries.size(), 1u);
  EXPECT_EQ(binaries[0].leaf_offsets, (std::vector<uint64_t>{0x100, 0x104}));
  EXPECT_EQ(binaries[0].leaf_samples, (std::vector<LeafSamples>{{0x100, 0, 1}, {0x104, 1, 1}}));
  EXPECT_EQ(hits.event_samples(), (std::vector<uint64_t>{1, 1}));
}

TEST(CodeHitsTest, OnlyExecutableFileMappingsAndTheFileThatWasMapped) {
  const perf_event_attr attr = testing::MakeAttr(kSampleType, true);
  CodeHits hits(TableOf(attr), Arch::kX86_64);
  Bytes records;
  Append(records, Mapping(attr, 10, "/data", 0x500000, 0x1000, 0, 3, /*prot=*/1));
  Append(records, Mapping(attr, 10, "//anon", 0x600000, 0x1000, 0));
  Append(records, Mapping(attr, 10, "/bin/a", 0x401000, 0x1000, 0, 7));
  // Another process maps another file at the same path (another build).
  Append(records, Mapping(attr, 20, "/bin/a", 0x401000, 0x1000, 0, 9));
  Append(records, Sample(attr, 10, 0, {kUser, 0x500010, 0x600010, 0x401010}));
  Append(records, Sample(attr, 20, 0, {kUser, 0x401020}));
  hits.Observe(records);
  const auto binaries = hits.Resolve();
  ASSERT_EQ(binaries.size(), 2u);
  for (const auto& b : binaries) {
    EXPECT_EQ(b.path, "/bin/a");
    EXPECT_EQ(b.offsets, (std::vector<uint64_t>{b.inode == 7 ? 0xfu : 0x20u}));
  }
}

// --call-graph dwarf's samples: sp and ip, 64-byte copies, no user chain.
perf_event_attr DwarfAttr() {
  perf_event_attr attr =
      testing::MakeAttr(kSampleType | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, true);
  attr.sample_regs_user = (uint64_t{1} << 7) | (uint64_t{1} << 8);  // sp, ip
  attr.sample_stack_user = 64;
  attr.exclude_callchain_user = 1;
  return attr;
}

TEST(CodeHitsTest, StackCopiesAreScannedForReturnAddressesIntoCode) {
  const perf_event_attr attr = DwarfAttr();
  CodeHits hits(TableOf(attr), Arch::kX86_64);
  Bytes records;
  Append(records, Mapping(attr, 10, "/bin/a", 0x401000, 0x1000, 0));
  Append(records, Mapping(attr, 10, "/lib/b.so", 0x7f0000, 0x1000, 0x2000, 8));
  const std::vector<uint64_t> words = {0x401234, 0xdeadbeef, 7,        0x7f0010,
                                       0x401000, 0x7f1001,   0x7f1000, 0x401101};
  Bytes stack(words.size() * 8);
  std::memcpy(stack.data(), words.data(), stack.size());
  testing::SampleFields fields;
  fields.pid = fields.tid = 10;
  fields.ip = 0x401100;
  fields.period = 1;
  fields.callchain = {};  // --call-graph dwarf: no user chain
  fields.extra = testing::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {0x7ffd0000, 0x401100});
  const Bytes stack_block = testing::StackUserBlock(stack, 64);
  fields.extra.insert(fields.extra.end(), stack_block.begin(), stack_block.end());
  Append(records, testing::MakeSample(attr, fields));
  hits.Observe(records);
  const auto binaries = hits.Resolve();
  const auto* a = Find(binaries, "/bin/a");
  ASSERT_NE(a, nullptr);
  // The pc as it is; 0x401234 at the call, a word of the copy only;
  // 0x401000 - 1 is before the mapping; 0x401101 - 1 is the pc's place,
  // a leaf already.
  EXPECT_EQ(a->offsets, (std::vector<uint64_t>{0x100}));
  EXPECT_EQ(a->scanned_offsets, (std::vector<uint64_t>{0x233}));
  EXPECT_EQ(a->leaf_offsets, (std::vector<uint64_t>{0x100}));
  const auto* b = Find(binaries, "/lib/b.so");
  ASSERT_NE(b, nullptr);
  // 0x7f1001 - 1 is the mapping's end: outside; 0x7f1000, just past the
  // mapping, is a pointer to its end, no return address.
  EXPECT_TRUE(b->offsets.empty());
  EXPECT_EQ(b->scanned_offsets, (std::vector<uint64_t>{0x200f}));
  EXPECT_EQ(hits.counts().stacks_scanned, 1u);
}

// A sample in the kernel whose user stack the kernel could not copy (its
// page not resident, in a page fault's handler): the user registers' pc
// is still the report's user leaf.
TEST(CodeHitsTest, TheUserPcCountsWithoutACopy) {
  const perf_event_attr attr = DwarfAttr();
  CodeHits hits(TableOf(attr), Arch::kX86_64);
  Bytes records;
  Append(records, Mapping(attr, 10, "/lib/ld.so", 0x7f0000, 0x1000, 0x1000));
  testing::SampleFields fields;
  fields.pid = fields.tid = 10;
  fields.ip = 0xffffffff81001234;  // the fault's handler
  fields.period = 1;
  fields.callchain = {kKernel, 0xffffffff81001234};
  fields.extra = testing::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {0x7ffd0000, 0x7f0ec1});
  const Bytes stack_block = testing::StackUserBlock({}, 64);  // nothing copied
  fields.extra.insert(fields.extra.end(), stack_block.begin(), stack_block.end());
  Append(records, testing::MakeSample(attr, fields));
  hits.Observe(records);
  const auto binaries = hits.Resolve();
  const auto* ld = Find(binaries, "/lib/ld.so");
  ASSERT_NE(ld, nullptr);
  EXPECT_EQ(ld->offsets, (std::vector<uint64_t>{0x1ec1}));
  EXPECT_EQ(ld->leaf_offsets, (std::vector<uint64_t>{0x1ec1}));
  EXPECT_EQ(hits.counts().stacks_scanned, 0u);
}

// fp,leaf (-g): a copy's words that point neither into code nor into the
// stack above the stack pointer become 0, and nothing else changes; a
// chain the kernel cut at its limit, and dwarf copies, keep theirs.
TEST(CodeHitsTest, LeafCopiesKeepOnlyAddressesOfCodeAndStack) {
  perf_event_attr attr =
      testing::MakeAttr(kSampleType | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, true);
  attr.sample_regs_user = (uint64_t{1} << 6) | (uint64_t{1} << 7) | (uint64_t{1} << 8);
  attr.sample_stack_user = 64;
  constexpr uint64_t kSp = 0x7ffd0000;
  const std::vector<uint64_t> words = {0x55550000a0,  // a heap pointer
                                       kSp + 0x40,    // a saved frame pointer
                                       0x401234,      // a return address
                                       1234,          // a count
                                       kSp - 8,       // below the stack pointer
                                       0x7f1000,      // just past b.so
                                       0,
                                       0x7f0010};  // the chain's first caller
  const auto record = [&](const perf_event_attr& a, std::vector<uint64_t> chain) {
    Bytes stack(words.size() * 8);
    std::memcpy(stack.data(), words.data(), stack.size());
    testing::SampleFields fields;
    fields.pid = fields.tid = 10;
    fields.ip = 0x401100;
    fields.period = 1;
    fields.callchain = std::move(chain);
    fields.extra = testing::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {kSp + 0x40, kSp, 0x401100});
    const Bytes block = testing::StackUserBlock(stack, 64);
    fields.extra.insert(fields.extra.end(), block.begin(), block.end());
    return testing::MakeSample(a, fields);
  };
  // The copy's words, as the records hold them after Observe. The sample
  // may come before the mappings in the chunk (rings are drained one after
  // the other): they are known all the same.
  const auto observed = [&](const perf_event_attr& a, std::vector<uint64_t> chain,
                            uint32_t max_stack, bool sample_first = false, bool map_b = true) {
    Bytes records;
    const Bytes sample = record(a, std::move(chain));
    if (sample_first) Append(records, sample);
    Append(records, Mapping(a, 10, "/bin/a", 0x401000, 0x1000, 0));
    if (map_b) Append(records, Mapping(a, 10, "/lib/b.so", 0x7f0000, 0x1000, 0x2000, 8));
    if (!sample_first) Append(records, sample);
    const Bytes before = records;
    CodeHits hits(TableOf(a), Arch::kX86_64, max_stack);
    hits.Observe(records);
    EXPECT_EQ(records.size(), before.size());
    const size_t sample_at = sample_first ? 0 : records.size() - sample.size();
    const auto parsed = ParseSample(std::span(records).subspan(sample_at, sample.size()), a);
    std::vector<uint64_t> out(words.size());
    std::memcpy(out.data(), parsed->user_stack.data(), out.size() * 8);
    // Nothing but the copy changed.
    const size_t copy_at = static_cast<size_t>(parsed->user_stack.data() - records.data());
    for (size_t i = 0; i < records.size(); ++i) {
      if (i < copy_at || i >= copy_at + words.size() * 8) EXPECT_EQ(records[i], before[i]) << i;
    }
    return std::tuple(out, hits.counts().words_cleared, hits.counts().hits);
  };
  const std::vector<uint64_t> chain = {kUser, 0x401100, 0x7f0010};
  const auto [cleared, count, distinct] = observed(attr, chain, 127);
  EXPECT_EQ(cleared, (std::vector<uint64_t>{0, kSp + 0x40, 0x401234, 0, 0, 0, 0, 0x7f0010}));
  EXPECT_EQ(count, 4u);
  // The pc, the chain's caller (also a word of the copy: one hit) and the
  // copy's return address.
  EXPECT_EQ(distinct, 3u);
  EXPECT_EQ(std::get<0>(observed(attr, chain, 127, /*sample_first=*/true)), cleared);
  // A chain into code whose mapping is not known yet (drained later):
  // nothing is cleared.
  EXPECT_EQ(std::get<0>(observed(attr, chain, 127, false, /*map_b=*/false)), words);
  // At the kernel's limit (2 frames here) the report unwinds the whole copy.
  EXPECT_EQ(std::get<0>(observed(attr, chain, 2)), words);
  perf_event_attr limited = attr;
  limited.sample_max_stack = 2;
  EXPECT_EQ(std::get<0>(observed(limited, chain, 127)), words);
  perf_event_attr dwarf = attr;
  dwarf.exclude_callchain_user = 1;
  EXPECT_EQ(std::get<0>(observed(dwarf, {}, 127)), words);
}

// The [vdso] counts as a binary of its own (its image is stored only when
// it is hit; nothing opens it as a file).
TEST(CodeHitsTest, TheVdsoIsABinaryOfItsOwn) {
  const perf_event_attr attr = testing::MakeAttr(kSampleType, true);
  CodeHits hits(TableOf(attr), Arch::kX86_64);
  Bytes records;
  Append(records, Mapping(attr, 10, "/bin/a", 0x401000, 0x1000, 0));
  Append(records, Mapping(attr, 10, "[vdso]", 0x7ff000, 0x2000, 0, 0));
  Append(records, Sample(attr, 10, 0, {kUser, 0x401010}));
  hits.Observe(records);
  EXPECT_EQ(Find(hits.Resolve(), "[vdso]"), nullptr);
  Append(records, Sample(attr, 10, 0, {kUser, 0x7ff100, 0x401020}));
  CodeHits again(TableOf(attr), Arch::kX86_64);
  again.Observe(records);
  const auto binaries = again.Resolve();
  const auto* vdso = Find(binaries, "[vdso]");
  ASSERT_NE(vdso, nullptr);
  EXPECT_EQ(vdso->leaf_offsets, (std::vector<uint64_t>{0x100}));
}

}  // namespace
}  // namespace sample::record
