#include "record/embed/code_hits.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "libsample/model/process_table.h"
#include "libsample/perf/chain_capture.h"
#include "libsample/perf/record_walker.h"
#include "libsample/symbols/recorded_binary.h"

namespace sample::record {
namespace {

// Parents followed when resolving a forked process's addresses (a bound
// against a crafted loop of FORK records).
constexpr size_t kMaxAncestors = 64;

constexpr uint32_t kProtExec = 0x4;

bool IsUserAddress(uint64_t address) { return address != 0 && !IsKernelAddress(address); }

}  // namespace

size_t CodeHits::HitHash::operator()(const Hit& h) const {
  return std::hash<uint64_t>()((h.address * 0x9E3779B97F4A7C15ull) ^ h.pid ^
                               (uint64_t(h.kind) << 62));
}

size_t CodeHits::LeafKeyHash::operator()(const LeafKey& k) const {
  return std::hash<uint64_t>()((k.address * 0x9E3779B97F4A7C15ull) ^ k.pid ^
                               (uint64_t{k.event} << 40));
}

CodeHits::CodeHits(EventTable events, Arch arch, uint32_t host_max_stack)
    : events_(std::move(events)),
      arch_(arch),
      host_max_stack_(host_max_stack),
      event_samples_(events_.events().size(), 0) {}

void CodeHits::ResetSamples() {
  leaf_samples_.clear();
  std::fill(event_samples_.begin(), event_samples_.end(), 0);
}

void CodeHits::Observe(std::span<std::byte> records) {
  if (events_.events().empty()) return;
  const perf_event_attr& first = events_.events().front().attr;
  // The mappings and forks first: a chunk holds whole drains of every
  // ring one after the other, not in time order, so a sample can come
  // before the mapping it ran in (a library mapped on a later ring's CPU
  // and run on an earlier one's). Mappings are kept for the whole
  // recording anyway: a superset.
  ForEachRecord(records, [&](const perf_event_header& header, std::span<const std::byte> record) {
    if (header.type == PERF_RECORD_MMAP2) {
      if (auto m = ParseMmap2(record, first)) ObserveMapping(*m);
    } else if (header.type == PERF_RECORD_FORK) {
      if (auto task = ParseTask(record, first); task && task->pid != task->ppid) {
        Process& child = processes_[task->pid];
        child.parent = task->ppid;
        child.has_parent = true;
        ++child.version;
      }
    }
  });
  ForEachRecord(records, [&](const perf_event_header& header, std::span<const std::byte> record) {
    if (header.type != PERF_RECORD_SAMPLE) return;
    const auto index = events_.EventIndexFor(record);
    if (!index) return;
    const perf_event_attr& attr = events_.events()[*index].attr;
    if (auto sample = ParseSample(record, attr)) {
      // The same bytes as the parsed copy, writable.
      const auto at = static_cast<size_t>(sample->user_stack.data() - records.data());
      ObserveSample(*sample, static_cast<uint32_t>(*index), attr,
                    sample->user_stack.empty() ? std::span<std::byte>()
                                               : records.subspan(at, sample->user_stack.size()));
    }
  });
}

void CodeHits::ObserveMapping(const Mmap2Record& m) {
  // Only files have names to embed: JIT code has its perf map. The [vdso]
  // is kept as one, embedded from the recorder's own image when it is hit
  // (SubmitEmbedded; PostmortemFacts::SubmitTo).
  const bool vdso = m.filename == kVdsoPath;
  if ((m.prot & kProtExec) == 0 || m.filename.empty() || (m.filename.front() != '/' && !vdso) ||
      IsAnonymousCode(m.filename) || m.len == 0) {
    return;
  }
  const File file{std::string(m.filename), m.maj, m.min, m.ino};
  std::vector<uint32_t>& same_path = files_by_path_[file.path];
  uint32_t id = 0;
  auto known = std::find_if(same_path.begin(), same_path.end(),
                            [&](uint32_t i) { return files_[i] == file; });
  if (known != same_path.end()) {
    id = *known;
  } else {
    id = static_cast<uint32_t>(files_.size());
    files_.push_back(file);
    same_path.push_back(id);
  }
  Process& process = processes_[m.pid];
  const Mapping mapping{m.addr, m.addr + m.len, m.pgoff, id};
  for (const Mapping& seen : process.mappings) {
    if (seen.start == mapping.start && seen.end == mapping.end && seen.pgoff == mapping.pgoff &&
        seen.file == mapping.file) {
      return;
    }
  }
  process.mappings.push_back(mapping);
  ++process.version;
}

void CodeHits::Add(uint32_t pid, uint64_t address, HitKind kind) {
  if (!IsUserAddress(address)) return;
  const Hit hit{pid, kind, kind == HitKind::kLeaf ? address : address - 1};
  // A word of the copy a chain gave already (chains are seen first).
  if (kind == HitKind::kScanned && hits_.contains(Hit{pid, HitKind::kReturn, hit.address})) return;
  if (hits_.size() >= kMaxHits) {
    counts_.hits_dropped += !hits_.contains(hit);
    return;
  }
  hits_.insert(hit);
}

void CodeHits::ObserveSample(const SampleRecord& s, uint32_t event, const perf_event_attr& attr,
                             std::span<std::byte> stack) {
  ++counts_.samples;
  ++event_samples_[event];
  Process& process = processes_[s.pid];
  const std::span<const std::byte> chain = s.callchain.bytes();
  const bool ip = (attr.sample_type & PERF_SAMPLE_IP) != 0;
  if (process.chains.insert(HashWords(chain, s.ip)).second) {
    ForEachChainAddress(s.callchain, [&](uint64_t address, bool return_address) {
      Add(s.pid, address, return_address ? HitKind::kReturn : HitKind::kLeaf);
    });
    // The report's leaf when there is no chain, and the sample's own
    // place when a precise event's ip is not the chain's first address.
    if (ip) Add(s.pid, s.ip, HitKind::kLeaf);
  }
  if (s.regs_abi == PERF_SAMPLE_REGS_ABI_64) {
    if (const auto regs = UserPcAndSp(arch_, attr.sample_regs_user, s.user_regs)) {
      // The report's user leaf, with a copy or without: the kernel copies
      // none where the stack's page is not resident (a sample in a page
      // fault's handler, seen in ld.so at start-up).
      Add(s.pid, regs->pc, HitKind::kLeaf);
      if (!s.user_stack.empty()) ScanStack(process, s.pid, s, attr, *regs, stack);
    }
  }
  // Which functions have samples enough for their code to travel
  // (SubmitEmbedded): one count a sample, bounded as the hits are.
  if (ip && IsUserAddress(s.ip)) {
    const LeafKey key{s.pid, event, s.ip};
    if (leaf_samples_.size() < kMaxHits) {
      ++leaf_samples_[key];
    } else if (auto it = leaf_samples_.find(key); it != leaf_samples_.end()) {
      ++it->second;
    }
  }
}

// Whether Observe clears what `s`'s fp,leaf copy holds besides addresses.
bool CodeHits::ClearsCopy(const SampleRecord& s, const perf_event_attr& attr) const {
  return ChainCaptureFromAttr(attr).leaf &&
         !ChainAtFrameLimit(s.callchain, ChainFrameLimit(attr, host_max_stack_));
}

void CodeHits::ScanStack(Process& process, uint32_t pid, const SampleRecord& s,
                         const perf_event_attr& attr, const PcAndSp& regs,
                         std::span<std::byte> stack) {
  ++counts_.stacks_scanned;
  const auto& ranges = RangesOf(process, pid);
  // A process whose code is not known yet (its mappings in a later chunk)
  // keeps its copies as they are.
  if (ranges.empty()) return;
  const uint64_t low = ranges.front().first + 1;
  const uint64_t span = ranges.back().second - low;
  const auto in_code = [&](uint64_t word) {
    if (word - low >= span) return false;  // outside every range (one test for most words)
    // A return address follows its call inside the range, never at its
    // end: a word that points just past a mapping (ld.so keeps the
    // [vdso]'s end in its start-up frames) is none.
    auto after = std::upper_bound(ranges.begin(), ranges.end(), word - 1,
                                  [](uint64_t a, const auto& r) { return a < r.first; });
    return after != ranges.begin() && word < std::prev(after)->second;
  };
  // Clearing trusts the mappings: not while the sampled pc or a user
  // address of the chain lies in code not seen yet (its mapping drained
  // after the sample, microseconds after an mmap).
  bool clear = regs.sp % 8 == 0 && ClearsCopy(s, attr) && in_code(regs.pc + 1);
  ForEachChainAddress(s.callchain, [&](uint64_t address, bool) {
    clear = clear && (!IsUserAddress(address) || in_code(address + 1));
  });
  // Saved frame pointers (and a realigned frame's saved stack pointer)
  // point into the stack above the stack pointer: a thread's stack is a
  // few MiB.
  constexpr uint64_t kStackReach = uint64_t{64} << 20;
  for (size_t i = (8 - regs.sp % 8) % 8; i + 8 <= stack.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, stack.data() + i, 8);
    if (in_code(word)) {
      Add(pid, word, HitKind::kScanned);
      continue;
    }
    if (clear && word != 0 && word - regs.sp >= kStackReach) {
      std::memset(stack.data() + i, 0, 8);
      ++counts_.words_cleared;
    }
  }
}

const std::vector<std::pair<uint64_t, uint64_t>>& CodeHits::RangesOf(Process& process,
                                                                     uint32_t pid) {
  // It and its parents, as far as they are known: walked once for their
  // versions (every sample: no allocation), again for their mappings when
  // those changed.
  const auto for_lineage = [&](const auto& visit) {
    size_t depth = 0;
    for (const Process* p = &process; p != nullptr && depth < kMaxAncestors; ++depth) {
      visit(*p);
      auto parent = p->has_parent ? processes_.find(p->parent) : processes_.end();
      p = parent == processes_.end() || parent->first == pid ? nullptr : &parent->second;
    }
  };
  uint64_t version = 0;
  for_lineage([&](const Process& p) { version += p.version + 1; });
  if (process.ranges_version == version) return process.ranges;
  process.ranges.clear();
  for_lineage([&](const Process& p) {
    for (const Mapping& m : p.mappings) process.ranges.emplace_back(m.start, m.end);
  });
  std::sort(process.ranges.begin(), process.ranges.end());
  // Merged, so a lookup is one binary search.
  size_t out = 0;
  for (const auto& r : process.ranges) {
    if (out != 0 && r.first <= process.ranges[out - 1].second) {
      process.ranges[out - 1].second = std::max(process.ranges[out - 1].second, r.second);
    } else {
      process.ranges[out++] = r;
    }
  }
  process.ranges.resize(out);
  process.ranges_version = version;
  return process.ranges;
}

std::vector<CodeHits::Binary> CodeHits::Resolve() const {
  std::map<uint32_t, Binary> by_file;
  // Calls fn(binary's file, offset, process) for each mapping of `pid` or
  // its parents that holds `address`.
  const auto places = [&](uint32_t pid, uint64_t address, auto&& fn) {
    auto it = processes_.find(pid);
    for (size_t depth = 0; it != processes_.end() && depth < kMaxAncestors; ++depth) {
      for (const Mapping& m : it->second.mappings) {
        if (address >= m.start && address < m.end)
          fn(m.file, address - m.start + m.pgoff, it->first);
      }
      it = it->second.has_parent ? processes_.find(it->second.parent) : processes_.end();
    }
  };
  for (const Hit& hit : hits_) {
    places(hit.pid, hit.address, [&](uint32_t file, uint64_t offset, uint32_t pid) {
      Binary& binary = by_file[file];
      if (binary.path.empty()) {
        binary.path = files_[file].path;
        binary.inode = files_[file].inode;
        binary.pid = pid;
      }
      (hit.kind == HitKind::kScanned ? binary.scanned_offsets : binary.offsets).push_back(offset);
      if (hit.kind == HitKind::kLeaf) binary.leaf_offsets.push_back(offset);
    });
  }
  std::vector<std::pair<uint32_t, uint64_t>> credited;  // one count's (file, offset)s
  // (Not structured bindings: clang 14, the fuzzers' compiler, cannot
  // capture one in a lambda.)
  for (const auto& entry : leaf_samples_) {
    const auto& key = entry.first;
    const auto& samples = entry.second;
    credited.clear();
    places(key.pid, key.address, [&](uint32_t file, uint64_t offset, uint32_t) {
      // Once per place, though a parent's mapping of the same file may
      // hold it too; only binaries with hits (every counted pc is one).
      auto binary = by_file.find(file);
      if (binary == by_file.end() ||
          std::ranges::find(credited, std::pair(file, offset)) != credited.end()) {
        return;
      }
      credited.emplace_back(file, offset);
      binary->second.leaf_samples.push_back(LeafSamples{offset, key.event, samples});
    });
  }
  std::vector<Binary> out;
  for (auto& file_binary : by_file) {
    Binary& binary = file_binary.second;
    for (auto* list : {&binary.offsets, &binary.leaf_offsets, &binary.scanned_offsets}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    std::erase_if(binary.scanned_offsets, [&](uint64_t offset) {
      return std::binary_search(binary.offsets.begin(), binary.offsets.end(), offset);
    });
    // A place's samples of one event summed over the processes.
    std::vector<LeafSamples>& counts = binary.leaf_samples;
    std::sort(counts.begin(), counts.end(), [](const LeafSamples& a, const LeafSamples& b) {
      return std::tie(a.offset, a.event) < std::tie(b.offset, b.event);
    });
    size_t kept = 0;
    for (const LeafSamples& c : counts) {
      if (kept != 0 && counts[kept - 1].offset == c.offset && counts[kept - 1].event == c.event) {
        counts[kept - 1].samples += c.samples;
      } else {
        counts[kept++] = c;
      }
    }
    counts.resize(kept);
    out.push_back(std::move(binary));
  }
  return out;
}

CodeHits::Counts CodeHits::counts() const {
  Counts counts = counts_;
  counts.hits = hits_.size();
  return counts;
}

}  // namespace sample::record
