#include "report/load/group_reads.h"

#include <algorithm>

namespace sample::report {

uint64_t GroupReadDeltas::Add(const SampleRecord& sample, uint32_t leader,
                              std::vector<MemberCount>& out) {
  uint64_t unknown = 0;
  for (size_t i = 0; i < sample.read.size(); ++i) {
    const auto member = events_.EventIndexForId(sample.read.id(i));
    if (!member) {
      ++unknown;
      continue;
    }
    if (*member == leader) continue;
    uint64_t& last = last_[sample.read.id(i)];
    const uint64_t value = sample.read.value(i);
    // Counters only grow; a smaller value means a new fd reused the id.
    const uint64_t delta = value >= last ? value - last : value;
    last = value;
    out.push_back(MemberCount{static_cast<uint32_t>(*member), delta});
    if (leader >= members_.size()) members_.resize(leader + 1);
    auto& members = members_[leader];
    if (std::find(members.begin(), members.end(), *member) == members.end()) {
      members.push_back(static_cast<uint32_t>(*member));
    }
  }
  return unknown;
}

std::vector<uint32_t> GroupReadDeltas::MembersOf(uint32_t leader) const {
  if (leader >= members_.size()) return {};
  std::vector<uint32_t> members = members_[leader];
  std::sort(members.begin(), members.end());
  return members;
}

}  // namespace sample::report
