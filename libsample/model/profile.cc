#include "libsample/model/profile.h"

#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "libsample/model/process_table.h"

namespace sample {

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

size_t HolderIndex(const Profile& profile, std::span<const uint32_t> frames, size_t i) {
  while (i + 1 < frames.size() && profile.function(frames[i]).inlined) ++i;
  return i;
}

void HolderFrames(const Profile& profile, std::span<const uint32_t> frames, size_t kept,
                  std::vector<uint32_t>& out) {
  out.clear();
  kept = std::min(kept, frames.size());
  for (size_t i = 0; i < kept;) {
    // The run of frames i..holder shares its holder, the run's last frame.
    const size_t holder = HolderIndex(profile, frames, i);
    for (; i <= holder && i < kept; ++i) out.push_back(frames[holder]);
  }
}

uint32_t Profile::InternFunction(uint32_t dso, std::string_view name, bool kernel, bool known,
                                 bool inlined, std::string_view srcline, std::string_view signature,
                                 uint64_t entry) {
  if (signature == name) signature = {};
  if (inlined || !known) entry = Function::kNoEntry;
  std::string key = entry == Function::kNoEntry ? fmt::format("{}{}", dso, inlined ? 'i' : 'f')
                                                : fmt::format("{}@{:x}", dso, entry);
  key.push_back('\0');
  key.append(signature.empty() ? name : signature);
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
    symbol = InternFunction(dso, name, kernel, known, inlined, {}, signature, entry);
  }
  const uint32_t id = static_cast<uint32_t>(functions_.size());
  functions_.push_back(Function{dso, std::string(name), kernel, known, inlined, line,
                                srcline.empty() ? id : symbol, std::string(signature),
                                signature.empty() ? std::string() : std::string(name), entry,
                                std::string(name)});
  function_ids_.emplace(std::move(key), id);
  return id;
}

void Profile::ChooseNames(bool full_signatures) {
  // By DSO and short name: the first function's identity (its signature, or
  // its name when it has none), and whether another one differed.
  struct Seen {
    std::string_view identity;
    bool shared = false;
  };
  std::unordered_map<std::string, Seen> seen;
  auto key_of = [](const Function& f) {
    std::string key = std::to_string(f.dso);
    key.push_back('\0');
    key.append(f.signature.empty() ? f.base_name : f.short_name);
    return key;
  };
  for (const Function& f : functions_) {
    const std::string_view identity = f.signature.empty() ? f.base_name : f.signature;
    auto [it, inserted] = seen.try_emplace(key_of(f), Seen{identity});
    if (!inserted && it->second.identity != identity) it->second.shared = true;
  }
  for (Function& f : functions_) {
    f.name = f.signature.empty()                            ? f.base_name
             : full_signatures || seen.at(key_of(f)).shared ? f.signature
                                                            : f.short_name;
  }
  // Functions of one DSO and one printed name that start at different
  // places (two static `spin`s, a generic's instances) are rows of their
  // own, as perf's; each is marked with its entry so the rows say so.
  std::unordered_map<std::string, uint64_t> first_entry;  // by DSO and name
  std::unordered_set<std::string> twins;
  auto name_key = [](const Function& f) {
    std::string key = std::to_string(f.dso);
    key.push_back('\0');
    key.append(f.name);
    return key;
  };
  for (const Function& f : functions_) {
    if (f.entry == Function::kNoEntry) continue;
    std::string key = name_key(f);
    auto [it, inserted] = first_entry.try_emplace(key, f.entry);
    if (!inserted && it->second != f.entry) twins.insert(std::move(key));
  }
  if (twins.empty()) return;
  for (Function& f : functions_) {
    if (f.entry != Function::kNoEntry && twins.contains(name_key(f))) {
      f.name = fmt::format("{}@{:#x}", f.name, f.entry);
    }
  }
}

Profile::StackRef Profile::InternStack(std::span<const uint32_t> frames,
                                       std::span<const FrameAddress> addresses) {
  scratch_.clear();
  for (size_t i = 0; i < frames.size(); ++i) {
    const FrameAddress address = i < addresses.size() ? addresses[i] : FrameAddress{};
    const std::array<uint64_t, 4> key{frames[i], address.ip, address.symbol_offset,
                                      address.file_offset};
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
  totals_[sample.event].samples += sample.samples;
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

void Profile::ClearSamples() {
  samples_.clear();
  reads_.clear();
  raw_refs_.clear();
  raw_bytes_.clear();
  totals_.clear();
  accounted_ = 0;
  first_time_ = 0;
  last_time_ = 0;
}

void Profile::AddRaw(size_t sample_index, std::span<const std::byte> raw) {
  raw_refs_.push_back({sample_index, raw_bytes_.size(), raw.size()});
  raw_bytes_.insert(raw_bytes_.end(), raw.begin(), raw.end());
}

std::span<const std::byte> Profile::raw(const ProfileSample& s) const {
  // std::less: a total order even for a sample that is not one of ours.
  const std::less<const ProfileSample*> before;
  if (raw_refs_.empty() || before(&s, samples_.data()) ||
      !before(&s, samples_.data() + samples_.size())) {
    return {};
  }
  const size_t index = static_cast<size_t>(&s - samples_.data());
  const auto it = std::lower_bound(raw_refs_.begin(), raw_refs_.end(), index,
                                   [](const RawRef& r, size_t i) { return r.sample < i; });
  if (it == raw_refs_.end() || it->sample != index) return {};
  return std::span<const std::byte>(raw_bytes_).subspan(it->begin, it->size);
}

std::string DataSymbolLabel(const Profile& profile, uint32_t data) {
  const DataLocation& location = profile.data_location(data);
  const char* level = location.dso == ProcessTable::kKernelDso ? "[k] " : "[.] ";
  if (location.symbol == 0) return fmt::format("{}{:#018x}", level, location.address);
  if (location.function) return level + profile.data_symbol(location.symbol);
  return fmt::format("{}{}+{:#x}", level, profile.data_symbol(location.symbol),
                     location.symbol_offset);
}

void Profile::set_data_locations(std::vector<DataLocation> locations,
                                 std::vector<std::string> symbols) {
  if (locations.empty()) locations.emplace_back();
  if (symbols.empty()) symbols.emplace_back();
  data_locations_ = std::move(locations);
  data_symbols_ = std::move(symbols);
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

}  // namespace sample
