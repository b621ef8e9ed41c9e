// CommIds: the profile's comm id of each sample's thread, the loader's
// sample stage asks for one a sample. Kept by (pid, tid) until some
// thread's name may have changed (ProcessTable::comms_version), with the
// last thread's at hand: samples come in runs of one thread.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "libsample/model/process_table.h"
#include "libsample/model/profile.h"

namespace sample::report {

class CommIds {
 public:
  // The id of `pid`/`tid`'s name in `profile` (interned on first use).
  uint32_t Of(uint32_t pid, uint32_t tid, ProcessTable& processes, Profile& profile);

 private:
  std::unordered_map<uint64_t, uint32_t> ids_;  // by pid << 32 | tid
  uint64_t version_ = 0;  // the comms_version the ids are of
  uint64_t last_key_ = 0;
  uint32_t last_id_ = 0;
  bool last_known_ = false;
};

}  // namespace sample::report
