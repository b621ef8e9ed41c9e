#include "libsample/events/event_toggles.h"

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace sample {
namespace {

// The event an on=/off= term names: the display name exactly, else the
// one event whose name is NAME followed by modifiers or terms ("cycles"
// for "cycles:u").
Result<size_t> FindToggled(const std::vector<EventSpec>& specs, size_t trigger,
                           std::string_view name, bool on) {
  const std::string_view term = on ? "on" : "off";
  std::vector<size_t> loose;
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string& candidate = specs[i].name;
    if (candidate == name) return i;
    if (candidate.starts_with(name) && candidate.size() > name.size() &&
        (candidate[name.size()] == ':' || candidate[name.size()] == '/')) {
      loose.push_back(i);
    }
  }
  if (loose.size() == 1) return loose.front();
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i != trigger) names.push_back("'" + specs[i].name + "'");
  }
  if (loose.size() > 1) {
    return Fail(fmt::format("'{}': {}={} names several events; use one's full name or give it "
                            "a name= term",
                            specs[trigger].name, term, name));
  }
  return Fail(fmt::format("'{}': {}={} names no event of this -e list{}", specs[trigger].name,
                          term, name,
                          names.empty() ? "" : fmt::format(" (events: {})", fmt::join(names, ", "))));
}

}  // namespace

// Resolves the on=/off= terms to the events they name and checks that the
// toggles make sense together.
Result<void> ResolveToggles(std::vector<EventSpec>* list) {
  std::vector<EventSpec>& specs = *list;
  for (size_t t = 0; t < specs.size(); ++t) {
    for (const auto& [on, name] : specs[t].toggle_names) {
      TRY_ASSIGN(auto target, FindToggled(specs, t, name, on));
      if (target == t) {
        return Fail(fmt::format("'{}': an event cannot switch itself {}", specs[t].name,
                                on ? "on" : "off"));
      }
      if (specs[target].group_index >= 0 && !specs[target].group_leader) {
        return Fail(fmt::format("'{}': '{}' is a member of a group, which follows its leader: "
                                "switch the leader",
                                specs[t].name, specs[target].name));
      }
      specs[t].toggles.push_back({target, on});
    }
  }
  for (size_t t = 0; t < specs.size(); ++t) {
    EventSpec& trigger = specs[t];
    if (trigger.toggles.empty()) {
      if (trigger.toggle_scope_given) {
        return Fail(fmt::format("'{}': toggle= goes with on= or off=", trigger.name));
      }
      continue;
    }
    if (trigger.group_index >= 0) {
      return Fail(fmt::format("'{}': a trigger (on=/off=) cannot be in a group", trigger.name));
    }
    // A trigger switches at each of its samples: a probe or tracepoint
    // must sample every hit (not one in N, nor at -F), and a counter must
    // say how often it fires.
    if (trigger.every_hit) {
      if (trigger.period_given || trigger.freq_given) {
        return Fail(fmt::format("'{}': a trigger fires at every hit; it takes no period or freq",
                                trigger.name));
      }
      trigger.attr.freq = 0;
      trigger.attr.sample_period = 1;
      trigger.period_given = true;
    } else if (!trigger.period_given) {
      return Fail(fmt::format("'{}': a trigger (on=/off=) fires at each sample: give it a "
                              "period=N term, or use a tracepoint or probe",
                              trigger.name));
    }
    for (const ToggleAction& action : trigger.toggles) {
      EventSpec& target = specs[action.target];
      if (!target.toggles.empty()) {
        return Fail(fmt::format("'{}': '{}' is itself a trigger; toggles do not chain",
                                trigger.name, target.name));
      }
      // The leader and its members.
      for (size_t i = action.target; i < specs.size(); ++i) {
        if (i != action.target &&
            (specs[i].group_index != target.group_index || target.group_index < 0)) {
          break;
        }
        specs[i].toggled = true;
      }
    }
  }
  // One scope per toggled event, and a way to switch it on.
  for (size_t i = 0; i < specs.size(); ++i) {
    EventSpec& target = specs[i];
    if (target.start_given && !target.toggled) {
      return Fail(fmt::format("'{}': start= applies to an event some trigger switches (on=/off=)",
                              target.name));
    }
    if (!target.toggled || (target.group_index >= 0 && !target.group_leader)) continue;
    bool has_on = false;
    std::optional<ToggleScope> scope;
    for (const EventSpec& trigger : specs) {
      for (const ToggleAction& action : trigger.toggles) {
        if (action.target != i) continue;
        has_on = has_on || action.on;
        if (scope && *scope != trigger.toggle_scope) {
          return Fail(fmt::format("the triggers of '{}' mix toggle=thread and toggle=cpu: pick one",
                                  target.name));
        }
        scope = trigger.toggle_scope;
      }
    }
    if (!has_on && !target.starts_on) {
      return Fail(fmt::format("'{}' is switched off but never on: add a trigger with on={} or "
                              "start=on to it",
                              target.name, target.name));
    }
    for (size_t m = i + 1; m < specs.size() && target.group_index >= 0 &&
                           specs[m].group_index == target.group_index;
         ++m) {
      specs[m].starts_on = target.starts_on;
    }
  }
  return {};
}

}  // namespace sample
