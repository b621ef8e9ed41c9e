#include "report/load/unresolved_stacks.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace sample::report {
namespace {}  // namespace

size_t UnresolvedStacks::LocationHash::operator()(const Location& l) const {
  return std::hash<uint64_t>()(l.offset * 0x9E3779B97F4A7C15ull ^ l.dso);
}

size_t UnresolvedStacks::SeenFrameHash::operator()(const SeenFrame& f) const {
  return std::hash<uint64_t>()((f.ip * 0x9E3779B97F4A7C15ull) ^ f.location ^
                               (uint64_t(f.return_address) << 63));
}

uint32_t UnresolvedStacks::LocationId(ProcessTable& processes, uint32_t pid, uint64_t ip,
                                      bool return_address) {
  // A return address points after the call; the call itself is at ip - 1,
  // which matters when the call was a function's last instruction.
  const uint64_t address = return_address && ip != 0 ? ip - 1 : ip;
  Location location{ProcessTable::kUnknownDso, address};
  const Mapping* m = IsKernelAddress(address) ? nullptr : processes.FindMapping(pid, address);
  const Mapping* jit = nullptr;
  if (!IsKernelAddress(address) && (m == nullptr || IsAnonymousCode(processes.DsoPath(m->dso)))) {
    // JIT code a jitdump named, live at this moment: it names what it
    // covers, before the process's perf map.
    jit = processes.FindJitCode(pid, address);
  }
  if (IsKernelAddress(address)) {
    location.dso = ProcessTable::kKernelDso;
  } else if (jit != nullptr) {
    location.dso = jit->dso;
    location.offset = address - jit->start + jit->pgoff;
  } else if (m != nullptr) {
    if (IsAnonymousCode(processes.DsoPath(m->dso))) {
      // JIT code: named by the process's /tmp/perf-PID.map, by address.
      location.dso = processes.InternDso(PerfMapPath(pid));
    } else {
      location.dso = m->dso;
      location.offset = address - m->start + m->pgoff;
    }
  }
  if (location.dso == ProcessTable::kUnknownDso) {
    if (return_address) return kNoFrame;
    if (collapse_unknown_) location.offset = 0;
  }
  auto [it, inserted] = location_ids_.emplace(location, static_cast<uint32_t>(locations_.size()));
  if (inserted) locations_.push_back(location);
  return it->second;
}

uint32_t UnresolvedStacks::FrameId(ProcessTable& processes, uint32_t pid, uint64_t ip,
                                   bool return_address) {
  const uint32_t location = LocationId(processes, pid, ip, return_address);
  if (location == kNoFrame) return kNoFrame;
  SeenFrame frame{location, return_address, ip};
  if (collapse_unknown_ && locations_[frame.location].dso == ProcessTable::kUnknownDso) {
    frame.return_address = false;
    frame.ip = 0;
  }
  auto [it, inserted] = frame_ids_.emplace(frame, static_cast<uint32_t>(frames_.size()));
  if (inserted) frames_.push_back(frame);
  return it->second;
}

UnresolvedStacks::StackRef UnresolvedStacks::StackOf(ProcessTable& processes, uint32_t pid,
                                                     uint64_t ip, const U64List& callchain) {
  const std::span<const std::byte> chain =
      callchain.empty() ? std::as_bytes(std::span(&ip, 1)) : callchain.bytes();
  if (last_cache_ == nullptr || pid != last_pid_ ||
      processes.last_mappings_version() != last_cache_check_) {
    ProcessCache& cache = caches_[pid];
    const uint64_t version = processes.MappingsVersion(pid);
    if (cache.mappings_version != version) {
      // The same ips may resolve elsewhere now (an mmap, an exec).
      cache.chains.clear();
      cache.mappings_version = version;
    }
    last_pid_ = pid;
    last_cache_ = &cache;
    last_cache_check_ = processes.last_mappings_version();
  }
  ProcessCache& cache = *last_cache_;
  last_ended_ = false;
  CachedLeaf* leaf = nullptr;
  if (callchain.empty()) {
    if (leaves_.empty()) leaves_.resize(kLeafSlots);
    // 4096 slots: the top 12 bits of the mixed pid and ip.
    leaf = &leaves_[((ip ^ uint64_t{pid} << 40) * 0x9E3779B97F4A7C15ull) >> 52];
    if (leaf->valid && leaf->ip == ip && leaf->pid == pid &&
        leaf->mappings_version == cache.mappings_version) {
      return leaf->stack;
    }
  }
  const uint64_t hash = HashWords(chain);  // after the lone-ip table: a hit needs none
  auto cached = cache.chains.find(hash);
  // memcmp: std::ranges::equal compares std::byte ranges a byte at a time
  // (a tenth of a flat report's time on 1M -g samples).
  if (cached != cache.chains.end() && cached->second.chain.size() == chain.size() &&
      std::memcmp(cached->second.chain.data(), chain.data(), chain.size()) == 0) {
    last_ended_ = cached->second.ended;
    if (leaf != nullptr)
      *leaf = CachedLeaf{ip, cache.mappings_version, pid, true, cached->second.stack};
    return cached->second.stack;
  }
  scratch_.clear();
  ForEachChainAddress(callchain, [&](uint64_t address, bool return_address) {
    if (last_ended_) return;
    const uint32_t frame = FrameId(processes, pid, address, return_address);
    if (frame == kNoFrame) {
      last_ended_ = true;
      return;
    }
    scratch_.push_back(frame);
  });
  // A chain of context markers alone names no address: its stack is the
  // ip's, which the chain's bytes do not hold, so it is not cached by them.
  const bool ip_for_chain = scratch_.empty() && !callchain.empty();
  if (scratch_.empty()) scratch_.push_back(FrameId(processes, pid, ip, false));
  const StackRef stack = stacks_.Intern(scratch_);
  if (leaf != nullptr) *leaf = CachedLeaf{ip, cache.mappings_version, pid, true, stack};
  // A colliding entry stays; this chain is not cached.
  if (cached == cache.chains.end() && !ip_for_chain) {
    cache.chains.emplace(
        hash, CachedChain{std::vector<std::byte>(chain.begin(), chain.end()), stack, last_ended_});
  }
  return stack;
}

void UnresolvedStacks::ClearChainCaches() {
  caches_ = {};
  leaves_ = {};
  last_cache_ = nullptr;
}

void UnresolvedStacks::ReleaseIndexes() {
  location_ids_ = {};
  frame_ids_ = {};
  caches_ = {};
  leaves_ = {};
  last_cache_ = nullptr;
  scratch_ = {};
}

}  // namespace sample::report
