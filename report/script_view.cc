#include "report/script_view.h"

#include <algorithm>

namespace sample::report {

std::vector<ScriptFrame> ScriptView::Frames(const ProfileSample& sample) const {
  const auto functions = profile->frames(sample);
  const auto addresses = profile->addresses(sample);
  size_t count = functions.size();
  if (max_stack != 0) count = std::min(count, max_stack);
  std::vector<ScriptFrame> frames;
  frames.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    ScriptFrame f;
    f.ip = addresses[i].ip;
    f.function = &profile->function(functions[i]);
    f.symbol_offset = f.function->known ? addresses[i].symbol_offset : FrameAddress::kNoOffset;
    f.dso = &profile->dso_name(f.function->dso);
    frames.push_back(f);
  }
  return frames;
}

ScriptView BuildScriptView(const Recording& recording, const SampleFilter& filter,
                           size_t max_stack) {
  ScriptView view;
  view.profile = &recording.profile;
  view.max_stack = max_stack;
  view.callchains = recording.callchains;
  for (const ProfileSample& s : recording.profile.samples()) {
    if (filter.Keeps(recording.profile, s)) view.samples.push_back(&s);
  }
  // Samples were added in time order; keep equal times as recorded.
  std::stable_sort(
      view.samples.begin(), view.samples.end(),
      [](const ProfileSample* a, const ProfileSample* b) { return a->time < b->time; });
  return view;
}

}  // namespace sample::report
