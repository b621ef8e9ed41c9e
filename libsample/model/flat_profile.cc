#include "libsample/model/flat_profile.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "libsample/model/flat_profile_keys.h"

namespace sample {
namespace {

void AddPath(CallNode& root, uint64_t period, uint64_t samples, std::span<const uint32_t> frames,
             bool reverse) {
  root.period += period;
  root.samples += samples;
  CallNode* node = &root;
  for (size_t i = 0; i < frames.size(); ++i) {
    const uint32_t f = reverse ? frames[frames.size() - 1 - i] : frames[i];
    auto it = std::find_if(node->children.begin(), node->children.end(),
                           [f](const CallNode& c) { return c.function == f; });
    if (it == node->children.end()) {
      node->children.push_back(CallNode{f, 0, 0, {}});
      it = node->children.end() - 1;
    }
    it->period += period;
    it->samples += samples;
    node = &*it;
  }
}

void SortTree(CallNode& node, const Profile& profile) {
  std::sort(node.children.begin(), node.children.end(), [&](const CallNode& a, const CallNode& b) {
    if (a.period != b.period) return a.period > b.period;
    return profile.function(a.function).name < profile.function(b.function).name;
  });
  for (CallNode& child : node.children) SortTree(child, profile);
}

void AddCounts(std::vector<uint64_t>& sums, const std::vector<uint64_t>& counts) {
  for (size_t m = 0; m < counts.size(); ++m) sums[m] += counts[m];
}

// Samples that agree on everything the entries and trees look at (the sort
// keys' fields and the stack, which is interned), summed: a million samples
// are typically a few thousand such classes, so the per-frame work runs per
// class, not per sample.
struct SampleClass {
  const ProfileSample* first;  // a representative
  uint64_t period = 0;
  uint64_t samples = 0;
  std::vector<uint64_t> counts;  // group member counts, in group order
};

// The samples of options.event that the filter keeps, in classes; counts
// them into out.samples and out.period.
std::vector<SampleClass> ClassifySamples(const Profile& profile, const FlatOptions& options,
                                         const KeyMaker& maker, FlatProfile& out) {
  const std::vector<uint32_t>& members = profile.group_members(options.event);
  std::vector<SampleClass> classes;
  std::unordered_map<SampleClassKey, size_t, SampleClassKeyHash> index;
  for (const ProfileSample& s : profile.samples()) {
    if (s.event != options.event) continue;
    if (options.tid != FlatEntry::kAny && s.tid != options.tid) continue;
    if (options.filter != nullptr && !options.filter->Keeps(profile, s)) continue;
    out.samples += s.samples;
    out.period += s.period;
    auto [it, inserted] = index.try_emplace(maker.Class(s), classes.size());
    if (inserted) classes.push_back(SampleClass{&s, 0, 0, std::vector<uint64_t>(members.size())});
    SampleClass& c = classes[it->second];
    c.period += s.period;
    c.samples += s.samples;
    for (const MemberCount& read : profile.reads(s)) {
      auto m = std::find(members.begin(), members.end(), read.event);
      if (m != members.end()) c.counts[m - members.begin()] += read.count;
    }
  }
  return classes;
}

// The frames of a class's samples (whole chains, not cut by max_stack): an
// address expands into its inlined calls and the function holding them, and
// only the latter counts as a frame, as in the loader's statistics.
void CountFrames(const Profile& profile, const SampleClass& c, FlatProfile& out) {
  uint64_t frames = 0;
  uint64_t unknown = 0;
  for (uint32_t id : profile.frames(*c.first)) {
    const Function& function = profile.function(id);
    if (!function.inlined) ++frames;
    if (!function.known) ++unknown;
  }
  out.frames += frames * c.samples;
  out.unknown_frames += unknown * c.samples;
}

// Sums sample classes into entries (and their trees) of one FlatProfile.
class EntryBuilder {
 public:
  EntryBuilder(const Profile& profile, const FlatOptions& options, FlatProfile& out)
      : profile_(profile),
        options_(options),
        maker_(profile, options.sort_keys),
        order_(EffectiveOrder(options)),
        members_(profile.group_members(options.event).size()),
        out_(out) {
    out_.member_periods.assign(members_, 0);
  }

  const KeyMaker& maker() const { return maker_; }

  void Add(const SampleClass& c) {
    AddCounts(out_.member_periods, c.counts);
    const std::span<const uint32_t> chain = profile_.frames(*c.first);
    std::span<const uint32_t> frames = chain;
    if (options_.max_stack != 0 && frames.size() > options_.max_stack) {
      frames = frames.first(options_.max_stack);
    }
    const std::span<const uint32_t> tree_frames = TreeFrames(frames);
    const std::span<const uint32_t> holders = Holders(chain, frames.size());
    FlatEntry& self = EntryFor(maker_.Entry(*c.first, frames[0], holders[0]));
    self.self_period += c.period;
    self.self_samples += c.samples;
    AddCounts(self.member_self, c.counts);
    if (options_.call_graph && !options_.children) {
      AddPath(self.tree, c.period, c.samples, tree_frames, order_ == CallOrder::kCaller);
    }
    if (options_.children) AddChildren(c, frames, holders, tree_frames);
  }

 private:
  // For each of the first `kept` frames of `chain`, the frame of the
  // function symbol holding its address (HolderIndex), looked up in the
  // whole chain: a --max-stack cut inside an address's inlined calls does
  // not change whose row they are. One pass over the chain (HolderFrames).
  std::span<const uint32_t> Holders(std::span<const uint32_t> chain, size_t kept) {
    HolderFrames(profile_, chain, kept, holders_);
    return holders_;
  }

  // Trees are drawn per function, also when functions are split by line.
  std::span<const uint32_t> TreeFrames(std::span<const uint32_t> frames) {
    if (!profile_.has_srclines()) return frames;
    by_symbol_.clear();
    for (uint32_t f : frames) by_symbol_.push_back(profile_.function(f).symbol);
    return by_symbol_;
  }

  // Each entry counts a sample once, however often it recurs in the chain;
  // the outermost occurrence roots its caller-order path.
  void AddChildren(const SampleClass& c, std::span<const uint32_t> frames,
                   std::span<const uint32_t> holders, std::span<const uint32_t> tree_frames) {
    // Found by hash, not by a search of seen_: with --sort inline every
    // inlined call of a deep chain is an entry of its own.
    seen_.clear();
    seen_index_.clear();
    for (size_t i = 0; i < frames.size(); ++i) {
      const EntryKey key = maker_.Entry(*c.first, frames[i], holders[i]);
      auto [it, inserted] = seen_index_.try_emplace(key, seen_.size());
      if (inserted) {
        seen_.emplace_back(key, i);
      } else {
        seen_[it->second].second = i;
      }
    }
    for (const auto& [key, outermost] : seen_) {
      FlatEntry& e = EntryFor(key);
      e.children_period += c.period;
      e.children_samples += c.samples;
      AddCounts(e.member_children, c.counts);
      if (!options_.call_graph) continue;
      if (order_ == CallOrder::kCaller) {
        AddPath(e.tree, c.period, c.samples, frames.first(outermost + 1),
                true);  // entry -> callees
      } else {
        AddPath(e.tree, c.period, c.samples, tree_frames.subspan(outermost),
                false);  // entry -> callers
      }
    }
  }

  FlatEntry& EntryFor(const EntryKey& key) {
    auto [it, inserted] = index_.emplace(key, out_.entries.size());
    if (inserted) {
      FlatEntry e;
      e.comm = key.comm;
      e.pid = key.pid;
      e.tid = key.tid;
      e.cpu = key.cpu;
      e.dso = key.dso;
      e.function = key.function;
      e.srcline = key.srcline;
      e.data_dso = key.data_dso;
      e.data = key.data;
      e.tree.function = FlatEntry::kAny;
      e.member_self.assign(members_, 0);
      e.member_children.assign(members_, 0);
      out_.entries.push_back(std::move(e));
    }
    return out_.entries[it->second];
  }

  const Profile& profile_;
  const FlatOptions& options_;
  const KeyMaker maker_;
  const CallOrder order_;
  const size_t members_;
  FlatProfile& out_;
  std::unordered_map<EntryKey, size_t, EntryKeyHash> index_;
  std::vector<std::pair<EntryKey, size_t>> seen_;                  // key -> outermost frame index
  std::unordered_map<EntryKey, size_t, EntryKeyHash> seen_index_;  // key -> index in seen_
  std::vector<uint32_t> by_symbol_;
  std::vector<uint32_t> holders_;
};

// Largest first by the period the view shows; ties broken by self period,
// then by name, source line and the other keys, for stable output.
void SortEntries(std::vector<FlatEntry>& entries, const Profile& profile, bool children) {
  auto name_of = [&](const FlatEntry& e) -> std::string_view {
    return e.function == FlatEntry::kAny ? std::string_view() : profile.function(e.function).name;
  };
  std::sort(entries.begin(), entries.end(), [&](const FlatEntry& a, const FlatEntry& b) {
    const uint64_t pa = children ? a.children_period : a.self_period;
    const uint64_t pb = children ? b.children_period : b.self_period;
    if (pa != pb) return pa > pb;
    if (a.self_period != b.self_period) return a.self_period > b.self_period;
    if (name_of(a) != name_of(b)) return name_of(a) < name_of(b);
    if (a.srcline != b.srcline && a.srcline != FlatEntry::kAny && b.srcline != FlatEntry::kAny) {
      return profile.srcline(a.srcline) < profile.srcline(b.srcline);
    }
    if (a.data != b.data && a.data != FlatEntry::kAny && b.data != FlatEntry::kAny) {
      const uint64_t address_a = profile.data_location(a.data).address;
      const uint64_t address_b = profile.data_location(b.data).address;
      if (address_a != address_b) return address_a < address_b;
    }
    return std::tie(a.comm, a.pid, a.tid, a.cpu, a.dso, a.data_dso, a.data) <
           std::tie(b.comm, b.pid, b.tid, b.cpu, b.dso, b.data_dso, b.data);
  });
}

}  // namespace

FlatProfile BuildFlatProfile(const Profile& profile, const FlatOptions& options) {
  FlatProfile out;
  EntryBuilder builder(profile, options, out);
  for (const SampleClass& c : ClassifySamples(profile, options, builder.maker(), out)) {
    builder.Add(c);
    CountFrames(profile, c, out);
  }
  SortEntries(out.entries, profile, options.children);
  if (options.call_graph) {
    for (FlatEntry& e : out.entries) SortTree(e.tree, profile);
  }
  return out;
}

}  // namespace sample
