#include "report/load/comm_ids.h"

namespace sample::report {

uint32_t CommIds::Of(uint32_t pid, uint32_t tid, ProcessTable& processes, Profile& profile) {
  const uint64_t key = uint64_t{pid} << 32 | tid;
  if (processes.comms_version() != version_) {
    ids_.clear();
    version_ = processes.comms_version();
    last_known_ = false;
  }
  if (last_known_ && key == last_key_) return last_id_;
  auto [it, added] = ids_.try_emplace(key);
  if (added) it->second = profile.InternComm(processes.CommOf(pid, tid));
  last_key_ = key;
  last_id_ = it->second;
  last_known_ = true;
  return it->second;
}

}  // namespace sample::report
