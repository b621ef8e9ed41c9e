#include "libsample/model/profile.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "libsample/comma_list.h"
#include "libsample/model/sample_filter.h"

namespace sample {
namespace {

using Key = std::array<uint32_t, 7>;  // comm, pid, tid, cpu, dso, function (symbol), srcline

struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (uint32_t v : k) h = (h ^ v) * 0x100000001B3ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

class KeyMaker {
 public:
  KeyMaker(const Profile& profile, const std::vector<SortKey>& keys) : profile_(profile) {
    for (SortKey k : keys) use_[static_cast<size_t>(k)] = true;
  }
  Key Make(const ProfileSample& s, uint32_t function) const {
    constexpr uint32_t any = FlatEntry::kAny;
    return {Use(SortKey::kComm) ? s.comm : any,
            Use(SortKey::kPid) ? s.pid : any,
            Use(SortKey::kTid) ? s.tid : any,
            Use(SortKey::kCpu) ? s.cpu : any,
            Use(SortKey::kDso) ? profile_.function(function).dso : any,
            Use(SortKey::kSym) ? profile_.function(function).symbol : any,
            Use(SortKey::kSrcline) ? profile_.function(function).srcline : any};
  }

 private:
  bool Use(SortKey k) const { return use_[static_cast<size_t>(k)]; }
  const Profile& profile_;
  std::array<bool, 7> use_{};
};

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

}  // namespace

uint32_t Profile::InternComm(std::string_view comm) {
  auto it = comm_ids_.find(std::string(comm));
  if (it != comm_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(comms_.size());
  comms_.emplace_back(comm);
  comm_ids_.emplace(std::string(comm), id);
  return id;
}

std::string FunctionLabel(const Function& function) {
  return function.inlined ? function.name + " (inlined)" : function.name;
}

uint32_t Profile::InternFunction(uint32_t dso, std::string_view name, bool kernel, bool known,
                                 bool inlined, std::string_view srcline) {
  std::string key = fmt::format("{}{}", dso, inlined ? 'i' : 'f');
  key.push_back('\0');
  key.append(name);
  if (!srcline.empty()) {
    key.push_back('\0');
    key.append(srcline);
  }
  auto it = function_ids_.find(key);
  if (it != function_ids_.end()) return it->second;
  uint32_t line = 0;
  uint32_t symbol = static_cast<uint32_t>(functions_.size());
  if (!srcline.empty()) {
    auto [at, inserted] =
        srcline_ids_.try_emplace(std::string(srcline), static_cast<uint32_t>(srclines_.size()));
    if (inserted) srclines_.emplace_back(srcline);
    line = at->second;
    // All lines of one function share the id of its line-less entry.
    symbol = InternFunction(dso, name, kernel, known, inlined, {});
  }
  const uint32_t id = static_cast<uint32_t>(functions_.size());
  functions_.push_back(Function{dso, std::string(name), kernel, known, inlined, line,
                                srcline.empty() ? id : symbol});
  function_ids_.emplace(std::move(key), id);
  return id;
}

Profile::StackRef Profile::InternStack(std::span<const uint32_t> frames,
                                       std::span<const FrameAddress> addresses) {
  scratch_.clear();
  for (size_t i = 0; i < frames.size(); ++i) {
    const FrameAddress address = i < addresses.size() ? addresses[i] : FrameAddress{};
    const std::array<uint64_t, 3> key{frames[i], address.ip, address.symbol_offset};
    auto it = slot_ids_.try_emplace(key, static_cast<uint32_t>(slot_ids_.size())).first;
    scratch_.push_back(it->second);
  }
  const SequenceInterner::Ref stack = stacks_.Intern(scratch_);
  if (stack.begin == stack_functions_.size()) {
    // A new stack: its functions and addresses go beside its slot ids.
    for (size_t i = 0; i < frames.size(); ++i) {
      stack_functions_.push_back(frames[i]);
      stack_addresses_.push_back(i < addresses.size() ? addresses[i] : FrameAddress{});
    }
  }
  return StackRef{stack.begin, stack.count};
}

void Profile::Account(const ProfileSample& sample) {
  if (accounted_ == 0 || sample.time < first_time_) first_time_ = sample.time;
  if (accounted_ == 0 || sample.time > last_time_) last_time_ = sample.time;
  ++accounted_;
  if (sample.event >= totals_.size()) totals_.resize(sample.event + 1);
  totals_[sample.event].period += sample.period;
  ++totals_[sample.event].samples;
}

void Profile::AddSample(ProfileSample sample, std::span<const uint32_t> frames,
                        std::span<const FrameAddress> addresses,
                        std::span<const MemberCount> reads) {
  const StackRef stack = InternStack(frames, addresses);
  sample.frames_begin = stack.begin;
  sample.frames_count = stack.count;
  sample.reads_begin = static_cast<uint32_t>(reads_.size());
  sample.reads_count = static_cast<uint32_t>(reads.size());
  reads_.insert(reads_.end(), reads.begin(), reads.end());
  Account(sample);
  samples_.push_back(sample);
}

void Profile::AddSamples(std::vector<ProfileSample> samples, std::vector<MemberCount> reads) {
  const uint32_t reads_base = static_cast<uint32_t>(reads_.size());
  reads_.insert(reads_.end(), reads.begin(), reads.end());
  for (ProfileSample& sample : samples) {
    sample.reads_begin += reads_base;
    Account(sample);
  }
  if (samples_.empty()) {
    samples_ = std::move(samples);
  } else {
    samples_.insert(samples_.end(), samples.begin(), samples.end());
  }
}

void Profile::set_event_names(std::vector<std::string> names) {
  event_names_ = std::move(names);
  if (totals_.size() < event_names_.size()) totals_.resize(event_names_.size());
}

void Profile::set_group_members(uint32_t leader, std::vector<uint32_t> members) {
  if (leader >= group_members_.size()) group_members_.resize(leader + 1);
  group_members_[leader] = std::move(members);
}

const std::vector<uint32_t>& Profile::group_members(uint32_t leader) const {
  static const std::vector<uint32_t> kNone;
  return leader < group_members_.size() ? group_members_[leader] : kNone;
}

Result<std::vector<SortKey>> ParseSortKeys(std::string_view text) {
  std::vector<SortKey> keys;
  for (const std::string_view name : SplitCommaList(text)) {
    if (name == "comm") {
      keys.push_back(SortKey::kComm);
    } else if (name == "pid") {
      keys.push_back(SortKey::kPid);
    } else if (name == "tid") {
      keys.push_back(SortKey::kTid);
    } else if (name == "dso") {
      keys.push_back(SortKey::kDso);
    } else if (name == "sym") {
      keys.push_back(SortKey::kSym);
    } else if (name == "cpu") {
      keys.push_back(SortKey::kCpu);
    } else if (name == "srcline") {
      keys.push_back(SortKey::kSrcline);
    } else {
      return Fail(fmt::format(
          "unknown sort key '{}' (valid: comm, pid, tid, dso, sym, cpu, srcline)", name));
    }
  }
  return keys;
}

FlatProfile BuildFlatProfile(const Profile& profile, const FlatOptions& options) {
  KeyMaker maker(profile, options.sort_keys);
  std::unordered_map<Key, size_t, KeyHash> index;
  FlatProfile out;
  std::vector<FlatEntry>& entries = out.entries;
  const std::vector<uint32_t>& members = profile.group_members(options.event);
  out.member_periods.assign(members.size(), 0);
  const CallOrder order = EffectiveOrder(options);
  auto entry_for = [&](const Key& key) -> FlatEntry& {
    auto [it, inserted] = index.emplace(key, entries.size());
    if (inserted) {
      FlatEntry e;
      e.comm = key[0];
      e.pid = key[1];
      e.tid = key[2];
      e.cpu = key[3];
      e.dso = key[4];
      e.function = key[5];
      e.srcline = key[6];
      e.tree.function = FlatEntry::kAny;
      e.member_self.assign(members.size(), 0);
      e.member_children.assign(members.size(), 0);
      entries.push_back(std::move(e));
    }
    return entries[it->second];
  };

  // Samples that agree on everything the entries and trees look at (the
  // sort keys' fields and the stack, which is interned) are summed first:
  // a million samples are typically a few thousand such classes, so the
  // per-frame work below runs per class, not per sample.
  struct SampleClass {
    const ProfileSample* first;  // a representative
    uint64_t period = 0;
    uint64_t samples = 0;
    std::vector<uint64_t> counts;  // member counts
  };
  std::vector<SampleClass> classes;
  std::unordered_map<Key, size_t, KeyHash> class_index;
  for (const ProfileSample& s : profile.samples()) {
    if (s.event != options.event) continue;
    if (options.filter != nullptr && !options.filter->Keeps(profile, s)) continue;
    ++out.samples;
    out.period += s.period;
    // The stack (frames_begin, frames_count) stands in for dso and symbol.
    Key key = maker.Make(s, 0);
    key[4] = s.frames_begin;
    key[5] = s.frames_count;
    key[6] = FlatEntry::kAny;
    auto [it, inserted] = class_index.try_emplace(key, classes.size());
    if (inserted) classes.push_back(SampleClass{&s, 0, 0, std::vector<uint64_t>(members.size())});
    SampleClass& c = classes[it->second];
    c.period += s.period;
    ++c.samples;
    for (const MemberCount& read : profile.reads(s)) {
      auto m = std::find(members.begin(), members.end(), read.event);
      if (m != members.end()) c.counts[m - members.begin()] += read.count;
    }
  }

  std::vector<std::pair<Key, size_t>> seen;  // key -> outermost frame index, per class
  std::vector<uint32_t> by_symbol;
  for (const SampleClass& c : classes) {
    const ProfileSample& s = *c.first;
    const std::vector<uint64_t>& counts = c.counts;
    for (size_t m = 0; m < counts.size(); ++m) out.member_periods[m] += counts[m];
    auto frames = profile.frames(s);
    if (options.max_stack != 0 && frames.size() > options.max_stack) {
      frames = frames.first(options.max_stack);
    }
    // Trees are drawn per function, also when functions are split by line.
    if (profile.has_srclines()) {
      by_symbol.clear();
      for (uint32_t f : frames) by_symbol.push_back(profile.function(f).symbol);
    }
    const std::span<const uint32_t> tree_frames =
        profile.has_srclines() ? std::span<const uint32_t>(by_symbol) : frames;
    FlatEntry& self = entry_for(maker.Make(s, frames[0]));
    self.self_period += c.period;
    self.self_samples += c.samples;
    for (size_t m = 0; m < counts.size(); ++m) self.member_self[m] += counts[m];
    if (options.call_graph && !options.children) {
      AddPath(self.tree, c.period, c.samples, tree_frames, order == CallOrder::kCaller);
    }
    if (!options.children) continue;
    // Each entry counts a sample once, however often it recurs in the chain;
    // the outermost occurrence roots its caller-order path.
    seen.clear();
    for (size_t i = 0; i < frames.size(); ++i) {
      const Key key = maker.Make(s, frames[i]);
      auto it = std::find_if(seen.begin(), seen.end(), [&](auto& p) { return p.first == key; });
      if (it == seen.end()) {
        seen.emplace_back(key, i);
      } else {
        it->second = i;
      }
    }
    for (const auto& [key, outermost] : seen) {
      FlatEntry& e = entry_for(key);
      e.children_period += c.period;
      e.children_samples += c.samples;
      for (size_t m = 0; m < counts.size(); ++m) e.member_children[m] += counts[m];
      if (!options.call_graph) continue;
      if (order == CallOrder::kCaller) {
        AddPath(e.tree, c.period, c.samples, frames.first(outermost + 1),
                true);  // entry -> callees
      } else {
        AddPath(e.tree, c.period, c.samples, tree_frames.subspan(outermost),
                false);  // entry -> callers
      }
    }
  }

  auto name_of = [&](const FlatEntry& e) -> std::string_view {
    return e.function == FlatEntry::kAny ? std::string_view() : profile.function(e.function).name;
  };
  std::sort(entries.begin(), entries.end(), [&](const FlatEntry& a, const FlatEntry& b) {
    const uint64_t pa = options.children ? a.children_period : a.self_period;
    const uint64_t pb = options.children ? b.children_period : b.self_period;
    if (pa != pb) return pa > pb;
    if (a.self_period != b.self_period) return a.self_period > b.self_period;
    if (name_of(a) != name_of(b)) return name_of(a) < name_of(b);
    if (a.srcline != b.srcline && a.srcline != FlatEntry::kAny && b.srcline != FlatEntry::kAny) {
      return profile.srcline(a.srcline) < profile.srcline(b.srcline);
    }
    return std::tie(a.comm, a.pid, a.tid, a.cpu, a.dso) <
           std::tie(b.comm, b.pid, b.tid, b.cpu, b.dso);
  });
  if (options.call_graph) {
    for (FlatEntry& e : entries) SortTree(e.tree, profile);
  }
  return out;
}

}  // namespace sample
