#include "record/counting/toggled_counters.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "libsample/perf/record_walker.h"
#include "record/counting/counters.h"

namespace sample::record {
namespace {

constexpr uint64_t kWindowReadFormat = PERF_FORMAT_TOTAL_TIME_ENABLED |
                                       PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_GROUP |
                                       PERF_FORMAT_ID;
// A hit is about 100 bytes with a small group: 64 KiB hold ~600 between
// two drains (every 100 ms), a function called 6,000 times a second.
constexpr size_t kRingPages = 16;

}  // namespace

bool CountedInWindows(const EventSpec& spec) { return spec.toggled || !spec.toggles.empty(); }

Result<ToggledCounters> ToggledCounters::Open(const std::vector<EventSpec>& specs,
                                              const RecordTarget& target) {
  ToggledCounters t;
  t.specs_ = specs;
  t.per_cpu_ = target.kind == TargetKind::kCpus;
  t.on_exec_ = target.kind == TargetKind::kCommand;
  t.inherit_wanted_ = target.inherit && !t.per_cpu_;
  TRY(t.CheckScopes());
  t.PlanGroups();
  const std::vector<int> keys =
      t.per_cpu_ ? target.cpus : std::vector<int>(target.threads.begin(), target.threads.end());
  t.threads_ = t.per_cpu_ ? 0 : keys.size();
  for (int key : keys) {
    for (size_t g = 0; g < t.groups_.size(); ++g) TRY(t.OpenSite(g, key));
  }
  return t;
}

Result<void> ToggledCounters::CheckScopes() const {
  for (const EventSpec& spec : specs_) {
    if (spec.toggles.empty()) continue;
    if (per_cpu_ && spec.toggle_scope == ToggleScope::kThread) {
      return Fail(fmt::format(
          "'{}': counting inside per-thread windows needs per-thread counters: count a command, "
          "-p or -t, or give the trigger toggle=cpu with -a/-C",
          spec.name));
    }
    if (!per_cpu_ && spec.toggle_scope == ToggleScope::kCpu) {
      return Fail(fmt::format("'{}': toggle=cpu counts per CPU: use it with -a or -C", spec.name));
    }
  }
  return {};
}

void ToggledCounters::PlanGroups() {
  const std::vector<EventSpec>& specs = specs_;
  // The groups, then one instance of each trigger per group it switches.
  std::vector<size_t> group_of(specs.size(), SIZE_MAX);  // leader spec -> group
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].toggled || !specs[i].IsLeaderOrAlone()) continue;
    Group g;
    g.counters.push_back(i);
    for (size_t m = i + 1; m < specs.size() && specs[i].group_index >= 0 &&
                           specs[m].group_index == specs[i].group_index;
         ++m) {
      g.counters.push_back(m);
    }
    group_of[i] = groups_.size();
    groups_.push_back(std::move(g));
  }
  std::vector<ToggleRelation> relations;
  const auto instance_events = [&] {
    size_t n = 0;
    for (const EventSpec& spec : specs) {
      std::vector<size_t> seen;
      for (const ToggleAction& a : spec.toggles) {
        if (std::find(seen.begin(), seen.end(), a.target) == seen.end()) seen.push_back(a.target);
      }
      n += seen.size();
    }
    return n;
  }();
  for (size_t s = 0; s < specs.size(); ++s) {
    for (const ToggleAction& a : specs[s].toggles) {
      const size_t g = group_of[a.target];
      if (g == SIZE_MAX) continue;
      size_t instance = SIZE_MAX;
      for (size_t k = 0; k < instances_.size(); ++k) {
        if (instances_[k] == std::make_pair(g, s)) instance = k;
      }
      if (instance == SIZE_MAX) {
        instance = instances_.size();
        instances_.emplace_back(g, s);
        groups_[g].triggers.push_back(s);
      }
      relations.push_back({static_cast<uint32_t>(instance),
                           static_cast<uint32_t>(instance_events + g), a.on, per_cpu_,
                           specs[a.target].starts_on});
    }
  }
  windows_ = ToggleWindows(std::move(relations), instance_events + groups_.size());
  sums_.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    sums_[g].values.assign(groups_[g].counters.size(), 0);
  }
}

Result<void> ToggledCounters::OpenSite(size_t g, int key) {
  const pid_t pid = per_cpu_ ? -1 : key;
  const int cpu = per_cpu_ ? key : -1;
  Site site;
  site.group = g;
  site.key = static_cast<uint32_t>(key);
  int leader_fd = -1;
  for (size_t c : groups_[g].counters) {
    const EventSpec& spec = specs_[c];
    // A counter as --stat opens one, but read with the group's ids, and
    // the group's first opened is its leader here.
    perf_event_attr attr = CountingAttr(spec, on_exec_, spec.attr.inherit);
    attr.read_format = kWindowReadFormat;
    attr.disabled = leader_fd < 0;
    attr.enable_on_exec = leader_fd < 0 && on_exec_;
    if (const char* string = spec.config1_string()) {
      attr.config1 = reinterpret_cast<uint64_t>(string);
    }
    auto event = PerfEvent::Open(attr, pid, cpu, leader_fd, 0);
    if (!event) {
      return Fail(fmt::format("event '{}': {}", spec.name, event.error().message),
                  event.error().sys_errno);
    }
    if (leader_fd < 0) leader_fd = event->fd();
    counter_of_id_[event->id()] = c;
    site.events.push_back(std::move(*event));
  }
  for (size_t k = 0; k < instances_.size(); ++k) {
    if (instances_[k].first != g) continue;
    TRY_ASSIGN(auto trigger, OpenTrigger(k, pid, cpu, leader_fd));
    site.events.push_back(std::move(trigger));
  }
  PerfEvent& owner = site.events[groups_[g].counters.size()];
  TRY(owner.Map(kRingPages));
  for (size_t e = groups_[g].counters.size() + 1; e < site.events.size(); ++e) {
    TRY(site.events[e].RedirectOutputTo(owner));
  }
  sites_.push_back(std::move(site));
  return {};
}

Result<PerfEvent> ToggledCounters::OpenTrigger(size_t instance, pid_t pid, int cpu, int leader_fd) {
  const EventSpec& spec = specs_[instances_[instance].second];
  perf_event_attr attr = spec.attr;
  attr.size = sizeof(attr);
  attr.freq = 0;
  attr.sample_period = spec.period_given ? spec.attr.sample_period : 1;
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_READ;
  attr.read_format = kWindowReadFormat;
  attr.sample_id_all = 1;
  attr.disabled = 0;  // follows its leader
  if (const char* string = spec.config1_string()) {
    attr.config1 = reinterpret_cast<uint64_t>(string);
  }
  auto event = PerfEvent::Open(attr, pid, cpu, leader_fd, 0);
  if (!event) {
    return Fail(fmt::format("trigger '{}': {}", spec.name, event.error().message),
                event.error().sys_errno);
  }
  attr.config1 = spec.config1_string() == nullptr ? attr.config1 : 0;  // no stale pointer
  if (trigger_attrs_.size() <= instance) trigger_attrs_.resize(instance + 1);
  trigger_attrs_[instance] = attr;
  instance_of_id_[event->id()] = instance;
  return std::move(*event);
}

Result<void> ToggledCounters::Enable() {
  if (on_exec_) return {};
  for (Site& site : sites_) TRY(site.events.front().Enable());
  return {};
}

void ToggledCounters::Disable() {
  for (Site& site : sites_) (void)site.events.front().Disable();
}

void ToggledCounters::Drain() {
  std::vector<std::byte> bytes;
  for (Site& site : sites_) {
    bytes.clear();
    site.events[groups_[site.group].counters.size()].ring().Drain(bytes);
    Process(bytes);
  }
}

std::vector<uint64_t> ToggledCounters::CounterValues(const Group& group,
                                                     const ReadValues& read) const {
  std::vector<uint64_t> values(group.counters.size(), 0);
  for (size_t i = 0; i < read.size(); ++i) {
    const auto found = counter_of_id_.find(read.id(i));
    if (found == counter_of_id_.end()) continue;
    const auto at = std::find(group.counters.begin(), group.counters.end(), found->second);
    if (at != group.counters.end())
      values[static_cast<size_t>(at - group.counters.begin())] = read.value(i);
  }
  return values;
}

void ToggledCounters::CloseWindow(size_t group, uint32_t key, const std::vector<uint64_t>& values,
                                  uint64_t enabled, uint64_t running) {
  const auto it = open_.find({group, key});
  // A window open from the start (start=on) began at zero.
  const Snapshot start = it != open_.end() ? it->second : Snapshot{};
  if (it != open_.end()) open_.erase(it);
  Sums& sums = sums_[group];
  for (size_t i = 0; i < values.size(); ++i) {
    const uint64_t before = i < start.values.size() ? start.values[i] : 0;
    if (values[i] >= before) sums.values[i] += values[i] - before;
  }
  if (enabled >= start.enabled) sums.enabled += enabled - start.enabled;
  if (running >= start.running) sums.running += running - start.running;
}

void ToggledCounters::Process(std::span<const std::byte> records) {
  const size_t instance_events = instances_.size();
  ForEachRecord(records, [&](const perf_event_header& header, std::span<const std::byte> record) {
    if (header.type == PERF_RECORD_LOST && !trigger_attrs_.empty()) {
      if (const auto lost = ParseLost(record, trigger_attrs_.front())) lost_ += lost->lost;
      return;
    }
    if (header.type != PERF_RECORD_SAMPLE || record.size() < sizeof(header) + 8) return;
    uint64_t id = 0;  // PERF_SAMPLE_IDENTIFIER: the first word
    std::memcpy(&id, record.data() + sizeof(header), sizeof(id));
    const auto found = instance_of_id_.find(id);
    if (found == instance_of_id_.end()) return;
    const size_t instance = found->second;
    const auto sample = ParseSample(record, trigger_attrs_[instance]);
    if (!sample) return;
    const Group& group = groups_[instances_[instance].first];
    const uint32_t key = per_cpu_ ? sample->cpu : sample->tid;
    windows_.Trigger(
        static_cast<uint32_t>(instance), sample->tid, sample->cpu,
        [&](uint32_t target, ToggleChange change) {
          const size_t g = target - instance_events;
          std::vector<uint64_t> values = CounterValues(group, sample->read);
          if (change == ToggleChange::kOpened) {
            open_[{g, key}] = {std::move(values), sample->time_enabled, sample->time_running};
          } else {
            CloseWindow(g, key, values, sample->time_enabled, sample->time_running);
          }
        });
  });
}

Result<void> ToggledCounters::Fill(std::vector<CountedEvent>* counts) {
  Drain();
  const size_t instance_events = instances_.size();
  std::vector<bool> first_instance(instances_.size(), false);
  for (size_t k = 0; k < instances_.size(); ++k) {
    bool earlier = false;
    for (size_t j = 0; j < k; ++j)
      earlier = earlier || instances_[j].second == instances_[k].second;
    first_instance[k] = !earlier;
  }
  // The totals so far: each trigger's hits, and the end of windows still open.
  std::vector<Sums> saved = sums_;
  const auto saved_open = open_;
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (CountedInWindows(specs_[i])) (*counts)[i] = CountedEvent{specs_[i].name};
  }
  for (Site& site : sites_) {
    TRY_ASSIGN(auto read, ReadCounter(site.events.front().fd(), kWindowReadFormat));
    const Group& group = groups_[site.group];
    std::vector<uint64_t> values(group.counters.size(), 0);
    for (const auto& [value, id] : read.values) {
      if (const auto c = counter_of_id_.find(id); c != counter_of_id_.end()) {
        const auto at = std::find(group.counters.begin(), group.counters.end(), c->second);
        if (at != group.counters.end())
          values[static_cast<size_t>(at - group.counters.begin())] = value;
      } else if (const auto k = instance_of_id_.find(id);
                 k != instance_of_id_.end() && first_instance[k->second]) {
        CountedEvent& trigger = (*counts)[instances_[k->second].second];
        trigger.count += value;
        trigger.enabled += read.enabled;
        trigger.running += read.running;
      }
    }
    if (windows_.Depth(static_cast<uint32_t>(instance_events + site.group), site.key) > 0) {
      CloseWindow(site.group, site.key, values, read.enabled, read.running);
    }
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].counters.size(); ++i) {
      CountedEvent& c = (*counts)[groups_[g].counters[i]];
      c.count = sums_[g].values[i];
      c.enabled = sums_[g].enabled;
      c.running = sums_[g].running;
    }
  }
  // Intervals (-I) read again later: windows still open stay open.
  sums_ = std::move(saved);
  open_ = saved_open;
  return {};
}

std::vector<std::string> ToggledCounters::Notes() const {
  std::vector<std::string> notes;
  uint64_t windows = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    windows += windows_.stats()[instances_.size() + g].windows;
  }
  notes.push_back(
      fmt::format("counted inside {} on..off windows{}", windows, per_cpu_ ? " (per CPU)" : ""));
  if (lost_ != 0) {
    notes.push_back(fmt::format(
        "{} trigger hits were lost (the ring buffer was full): the windows around them are "
        "missing or merged",
        lost_));
  }
  if (inherit_wanted_) {
    notes.push_back(fmt::format(
        "windows are counted in the {} thread{} present at the start: the kernel gives no ring "
        "buffer to inherited per-thread counters, so threads created later are not followed",
        threads_, threads_ == 1 ? "" : "s"));
  }
  return notes;
}

}  // namespace sample::record
