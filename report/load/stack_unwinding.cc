#include "report/load/stack_unwinding.h"

#include <algorithm>
#include <cmath>

#include "libsample/parallel_for.h"
#include "libsample/symbols/elf_file.h"

namespace sample::report {
namespace {

// Below this many queued samples, starting threads costs more than it saves.
constexpr size_t kMinParallelItems = 64;

// Where the user part of a kernel call chain starts: the index after its
// PERF_CONTEXT_USER marker, or the chain's size if it has none.
size_t UserPartStart(const U64List& chain) {
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i] == static_cast<uint64_t>(PERF_CONTEXT_USER)) return i + 1;
  }
  return chain.size();
}

}  // namespace

StackMode StackModeOf(const perf_event_attr& attr) {
  constexpr uint64_t kUserState = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  if ((attr.sample_type & kUserState) != kUserState || attr.sample_stack_user == 0) {
    return StackMode::kKernelChain;
  }
  // A user chain from the kernel next to the stack copy: only the leaf is
  // to be checked. Without one, the copy is the user chain.
  if ((attr.sample_type & PERF_SAMPLE_CALLCHAIN) && !attr.exclude_callchain_user) {
    return StackMode::kLeafFix;
  }
  return StackMode::kDwarf;
}

namespace {

// The bound, in multiples of `step`, that `fraction` of the counts of
// `histogram` stay within; 0 when it is empty.
uint64_t ReachWithin(std::span<const uint64_t> histogram, size_t step, double fraction) {
  uint64_t total = 0;
  for (uint64_t n : histogram) total += n;
  if (total == 0) return 0;
  const auto wanted = static_cast<uint64_t>(std::ceil(fraction * static_cast<double>(total)));
  uint64_t seen = 0;
  for (size_t i = 0; i < histogram.size(); ++i) {
    seen += histogram[i];
    if (seen >= wanted) return (i + 1) * step;
  }
  return histogram.size() * step;
}

// Counts `reach` bytes in a histogram of `step`-byte buckets.
template <size_t N>
void CountReach(uint64_t reach, size_t step, std::array<uint64_t, N>& histogram) {
  const size_t bucket = reach == 0 ? 0 : static_cast<size_t>((reach - 1) / step);
  ++histogram[std::min(bucket, N - 1)];
}

}  // namespace

uint64_t StackReachWithin(const UnwindStats& stats, double fraction) {
  return ReachWithin(stats.stack_reach, kStackReachStep, fraction);
}

uint64_t LeafReachWithin(const UnwindStats& stats, double fraction) {
  return ReachWithin(stats.leaf_reach, kLeafReachStep, fraction);
}

std::optional<uint32_t> SmallerStackCopy(const UnwindStats& stats) {
  uint64_t walks = 0;
  for (uint64_t n : stats.stack_reach) walks += n;
  const uint64_t within = StackReachWithin(stats, 0.99);
  if (walks < 1000 || within == 0 || within * 4 > stats.stack_copy_size) return std::nullopt;
  // The reach is of complete walks only: walks the copy cut short needed
  // more stack, so a smaller copy is advised only when they are rare.
  const uint64_t cut_short = stats.stops[static_cast<size_t>(UnwindStop::kStackTooSmall)];
  if (cut_short * 100 > walks + cut_short) return std::nullopt;
  const uint64_t suggested = (within + within / 4 + 511) / 512 * 512;
  return static_cast<uint32_t>(suggested);
}

StackUnwinding::StackUnwinding(const StackUnwindingOptions& options, const ProcessTable& processes,
                               const format::Metadata& build_ids)
    : options_(options),
      processes_(processes),
      build_ids_(build_ids),
      locator_(options.binaries, options.recorded, LocatorUse{.debuginfod = false}) {
  unwinders_.resize(std::max(1u, options_.jobs));
}

StackUnwinding::~StackUnwinding() = default;

StackUnwinding::ResolvedBinary& StackUnwinding::Resolve(uint32_t dso) {
  auto [it, inserted] = binaries_.try_emplace(dso);
  if (!inserted) return it->second;
  const std::string& path = processes_.DsoPath(dso);
  const auto recorded = format::FindMetadata(build_ids_, path);
  const LocatedBinary located = locator_.Locate(path, recorded.value_or(""));
  it->second.binary = located.binary;
  it->second.debug = located.debug;
  it->second.embedded = located.embedded;
  // Only what is said of a binary read all the same (--force) is for the
  // user here; of one left out, the symbolizer speaks if its frames go
  // unnamed. The report prints the symbolizer's same words once.
  if (!located.binary.empty()) {
    warnings_.insert(warnings_.end(), located.warnings.begin(), located.warnings.end());
  } else if (located.embedded != nullptr) {
    ++stats_.embedded_binaries;
  } else if (path.starts_with('/')) {
    ++stats_.missing_binaries;
  }
  return it->second;
}

std::optional<uint64_t> StackUnwinding::BiasOf(const Mapping& mapping, ResolvedBinary& files) {
  if (files.embedded != nullptr) return files.embedded->LoadBias(mapping.start, mapping.pgoff);
  if (!files.layout_read) {
    files.layout_read = true;
    if (auto layout = ReadElfLoadLayout(files.binary)) files.layout = std::move(*layout);
  }
  return files.layout ? files.layout->BiasOf(mapping.start, mapping.pgoff) : std::nullopt;
}

std::shared_ptr<const UnwindSpace> StackUnwinding::SpaceOf(uint32_t pid) {
  auto& space = spaces_[pid];
  const uint64_t version = processes_.MappingsVersion(pid);
  if (space && space->version == version) return space;
  auto fresh = std::make_shared<UnwindSpace>();
  fresh->version = version;
  if (const auto* maps = processes_.MappingsOf(pid)) {
    for (const auto& [start, mapping] : *maps) {
      ResolvedBinary& files = Resolve(mapping.dso);
      if (files.binary.empty() && files.embedded == nullptr) continue;
      const std::optional<uint64_t> bias = BiasOf(mapping, files);
      if (!bias) continue;
      // A file mapped in several executable pieces is one module to libdw.
      UnwindModule* last = fresh->modules.empty() ? nullptr : &fresh->modules.back();
      if (last != nullptr && last->binary == files.binary && last->embedded == files.embedded &&
          last->bias == *bias) {
        last->end = std::max(last->end, mapping.end);
        continue;
      }
      fresh->modules.push_back(UnwindModule{.start = mapping.start,
                                            .end = mapping.end,
                                            .bias = *bias,
                                            .binary = files.binary,
                                            .debug = files.debug,
                                            .embedded = files.embedded});
    }
  }
  space = std::move(fresh);
  return space;
}

bool StackUnwinding::FramedAt(uint32_t pid, uint64_t pc) const {
  const auto it = framed_.find(pid);
  return it != framed_.end() && it->second.version == processes_.MappingsVersion(pid) &&
         it->second.pcs.contains(pc);
}

bool StackUnwinding::Queue(size_t index, const SampleRecord& sample, const perf_event_attr& attr,
                           bool cut) {
  const StackMode mode = StackModeOf(attr);
  if (mode == StackMode::kKernelChain || sample.regs_abi == PERF_SAMPLE_REGS_ABI_NONE) {
    return false;
  }
  // fp,leaf at a pc whose function is known to have set up its frame: the
  // check's answer is known (nothing skipped, joined), so it is not queued.
  constexpr uint64_t kPerfX86Bp = 6;
  if (mode == StackMode::kLeafFix && !cut && options_.arch == Arch::kX86_64 &&
      sample.regs_abi == PERF_SAMPLE_REGS_ABI_64 && (attr.sample_regs_user >> kPerfX86Bp & 1)) {
    const auto regs = UserPcAndSp(options_.arch, attr.sample_regs_user, sample.user_regs);
    const size_t user_start = UserPartStart(sample.callchain);
    if (regs && user_start < sample.callchain.size() && sample.callchain[user_start] == regs->pc &&
        FramedAt(sample.pid, regs->pc)) {
      ++stats_.leaf_samples;
      ++stats_.leaf_steps_joined;
      stats_.leaf_copy_size = std::max(stats_.leaf_copy_size, attr.sample_stack_user);
      return false;
    }
  }
  Item item;
  item.index = index;
  item.mode = mode;
  item.pid = sample.pid;
  item.tid = sample.tid;
  item.ip = sample.ip;
  item.stack = sample.user_stack;
  item.callchain = sample.callchain;
  item.cut = cut;
  if (mode == StackMode::kDwarf) {
    ++stats_.dwarf_samples;
    stats_.stack_copy_size = std::max(stats_.stack_copy_size, attr.sample_stack_user);
  } else {
    ++stats_.leaf_samples;
    stats_.leaf_copy_size = std::max(stats_.leaf_copy_size, attr.sample_stack_user);
  }
  // A 32-bit process (PERF_SAMPLE_REGS_ABI_32) on an x86_64 kernel is
  // unwound as i386: libdw takes the backend from its modules' ELF headers.
  Arch arch = options_.arch;
  if (sample.regs_abi == PERF_SAMPLE_REGS_ABI_32) {
    arch = arch == Arch::kX86_64 ? Arch::kI386 : Arch::kUnknown;
  }
  auto regs = ToDwarfRegisters(arch, attr.sample_regs_user, sample.user_regs);
  if (regs) {
    item.regs = *regs;
    item.space = SpaceOf(sample.pid);
  }
  queued_pids_.insert(sample.pid);
  queue_.push_back(std::move(item));
  return true;
}

void StackUnwinding::Work(DwarfUnwinder& unwinder, Item& item) const {
  item.chain.clear();
  const size_t user_start = UserPartStart(item.callchain);
  UnwindRequest request;
  request.pid = item.pid;
  request.tid = item.tid;
  request.space = item.space.get();
  request.regs = item.regs;
  request.stack = item.stack;
  if (item.mode == StackMode::kDwarf) {
    // Kernel frames as the kernel gave them, then the unwound user frames.
    const size_t kernel_end = user_start == item.callchain.size() ? user_start : user_start - 1;
    for (size_t i = 0; i < kernel_end; ++i) item.chain.push_back(item.callchain[i]);
    item.chain.push_back(static_cast<uint64_t>(PERF_CONTEXT_USER));
    const size_t first_user = item.chain.size();
    item.stop = request.space ? unwinder.Unwind(request, &item.chain) : UnwindStop::kNoRegisters;
    item.stack_reach = request.space ? unwinder.last_stack_reach() : 0;
    item.user_frames = item.chain.size() - first_user;
    if (item.user_frames == 0) item.chain.pop_back();
    if (item.chain.empty()) item.chain.push_back(item.ip);
    return;
  }
  // fp,leaf: u0 is the sampled user pc, u1 what the frame-pointer chain
  // names as its caller. The frames CFI steps through from u0 before the
  // chain goes on are those it skipped: put them back after u0.
  for (size_t i = 0; i < item.callchain.size(); ++i) item.chain.push_back(item.callchain[i]);
  if (request.space == nullptr || user_start >= item.callchain.size() ||
      request.regs.pc != item.callchain[user_start]) {
    return;
  }
  const uint64_t chained_caller =
      user_start + 1 < item.callchain.size() ? item.callchain[user_start + 1] : 0;
  const FramelessCallers skipped =
      unwinder.SkippedCallers(request, chained_caller, kMaxSkippedFrames);
  item.chain.insert(item.chain.begin() + static_cast<std::ptrdiff_t>(user_start + 1),
                    skipped.callers.begin(), skipped.callers.end());
  item.skipped_frames = skipped.callers.size();
  item.joined = skipped.joined;
  item.stack_too_small = skipped.stack_too_small;
  item.framed_at_pc = skipped.framed_at_pc;
  item.stack_reach = skipped.callers_reach;
  if (item.cut) CompleteCutChain(unwinder, request, user_start, item);
}

void StackUnwinding::CompleteCutChain(DwarfUnwinder& unwinder, const UnwindRequest& request,
                                      size_t user_start, Item& item) const {
  // The copy's walk must repeat every user frame the kernel gave (the leaf
  // fix's included) before its further frames are believed.
  std::vector<uint64_t> walked;
  unwinder.Unwind(request, &walked);
  const std::span<const uint64_t> user(item.chain.data() + user_start,
                                       item.chain.size() - user_start);
  if (walked.size() <= user.size() || !std::equal(user.begin(), user.end(), walked.begin())) {
    return;
  }
  item.chain.insert(item.chain.end(), walked.begin() + static_cast<std::ptrdiff_t>(user.size()),
                    walked.end());
  item.completed = true;
}

void StackUnwinding::Flush(const std::function<void(size_t, std::span<const uint64_t>)>& done) {
  if (queue_.empty()) return;
  const size_t threads = queue_.size() < kMinParallelItems ? 1 : unwinders_.size();
  ParallelFor(queue_.size(), threads,
              [&](size_t worker, size_t i) { Work(unwinders_[worker], queue_[i]); });
  for (Item& item : queue_) {
    if (item.mode == StackMode::kDwarf) {
      ++stats_.stops[static_cast<size_t>(item.stop)];
      stats_.dwarf_frames += item.user_frames;
      if (item.stop == UnwindStop::kComplete) {
        CountReach(item.stack_reach, kStackReachStep, stats_.stack_reach);
      }
    } else {
      stats_.leaf_callers_inserted += item.skipped_frames != 0;
      stats_.leaf_frames_inserted += item.skipped_frames;
      stats_.leaf_steps_joined += item.joined;
      stats_.leaf_stack_too_small += item.stack_too_small;
      // What a copy must hold: the reads that found the frames put back.
      if (item.skipped_frames != 0) {
        CountReach(item.stack_reach, kLeafReachStep, stats_.leaf_reach);
      }
      stats_.cut_chains_completed += item.completed;
      if (item.framed_at_pc) {
        FramedPcs& framed = framed_[item.pid];
        if (framed.version != item.space->version) {
          framed.version = item.space->version;
          framed.pcs.clear();
        }
        framed.pcs.insert(item.regs.pc);
      }
    }
    done(item.index, item.chain);
  }
  queue_.clear();
  queued_pids_.clear();
  stats_.cached_walks = stats_.libdw_walks = stats_.unopened_modules = 0;
  stats_.embedded_cut_walks = 0;
  for (const DwarfUnwinder& unwinder : unwinders_) {
    stats_.cached_walks += unwinder.counts().cached_walks;
    stats_.libdw_walks += unwinder.counts().libdw_walks;
    stats_.unopened_modules += unwinder.counts().unopened_modules;
    stats_.embedded_cut_walks += unwinder.counts().embedded_cut_walks;
  }
}

}  // namespace sample::report
