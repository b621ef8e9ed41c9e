// ScriptView: the samples --script prints, one entry per sample in time
// order (as perf script), each with its frames leaf first. Built from the
// Profile with the report's filters and --max-stack; refers into the
// Recording, which must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libsample/model/profile.h"
#include "libsample/model/sample_filter.h"
#include "report/recording_loader.h"

namespace sample::report {

struct ScriptFrame {
  uint64_t ip = 0;
  const Function* function = nullptr;
  uint64_t symbol_offset = FrameAddress::kNoOffset;
  const std::string* dso = nullptr;  // the DSO's path, "[kernel.kallsyms]", ...
};

struct ScriptView {
  const Profile* profile = nullptr;
  std::vector<const ProfileSample*> samples;
  size_t max_stack = 0;     // 0: every frame
  bool callchains = false;  // the recording has call chains: one frame a line

  std::vector<ScriptFrame> Frames(const ProfileSample& sample) const;
};

ScriptView BuildScriptView(const Recording& recording, const SampleFilter& filter,
                           size_t max_stack);

}  // namespace sample::report
