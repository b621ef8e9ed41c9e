#include "libsample/model/sample_filter.h"

#include <algorithm>

namespace sample {
namespace {

template <typename T, typename V>
bool InList(const std::vector<T>& list, const V& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

bool DsoMatches(const std::vector<std::string>& dsos, const std::string& path) {
  if (dsos.empty()) return true;
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string::npos
                                    ? std::string_view(path)
                                    : std::string_view(path).substr(slash + 1);
  return std::any_of(dsos.begin(), dsos.end(),
                     [&](const std::string& d) { return d == path || d == base; });
}

}  // namespace

SampleFilter::SampleFilter(const SampleFilterSpec& spec, const Profile& profile)
    : options_(spec.lists) {
  if (spec.time) {
    options_.times = spec.time->Windows(profile.first_time(), profile.last_time());
    options_.time_given = true;
  }
}

bool SampleFilter::Keeps(const Profile& profile, const ProfileSample& s) const {
  if (!InList(options_.pids, s.pid) || !InList(options_.tids, s.tid) ||
      !InList(options_.cpus, static_cast<int>(s.cpu))) {
    return false;
  }
  if (options_.time_given &&
      std::none_of(options_.times.begin(), options_.times.end(),
                   [&](const TimeRange& w) { return s.time >= w.start && s.time < w.end; })) {
    return false;
  }
  if (!InList(options_.comms, profile.comm(s.comm))) return false;
  if (options_.dsos.empty() && options_.symbols.empty()) return true;
  const auto frames = profile.frames(s);
  if (frames.empty()) return false;
  const Function& leaf = profile.function(frames[0]);
  if (!DsoMatches(options_.dsos, profile.dso_name(leaf.dso))) return false;
  if (options_.symbols.empty()) return true;
  // The sampled address's functions: its inlined calls, then the function
  // holding them (the row's, as perf's --symbols matches it). A C++
  // function matches by its name as printed, without its parameter list or
  // with it, whichever the view shows; functions of one name told apart by
  // their entries ("spin@0x1222") by that name too.
  for (uint32_t id : frames) {
    const Function& f = profile.function(id);
    if (InList(options_.symbols, f.name)) return true;
    if (f.name != f.base_name && f.signature.empty() && InList(options_.symbols, f.base_name)) {
      return true;
    }
    if (!f.signature.empty() && (InList(options_.symbols, f.signature) ||
                                 InList(options_.symbols, f.short_name))) {
      return true;
    }
    if (!f.inlined) break;
  }
  return false;
}

bool SampleFilter::empty() const {
  return options_.comms.empty() && options_.pids.empty() && options_.tids.empty() &&
         options_.cpus.empty() && options_.dsos.empty() && options_.symbols.empty() &&
         !options_.time_given;
}

}  // namespace sample
