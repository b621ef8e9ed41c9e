// What the -e parser tests share (event_spec_test.cc, event_names_test.cc,
// event_probe_test.cc): fake sysfs and tracefs trees in a temporary
// directory, a fixture that parses against them, and the attr fields a plain
// event must leave alone.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/events/event_spec.h"

namespace sample::testing {

// A fake sysfs and tracefs in a temporary directory, removed at the end:
//   fakepmu (type 42): formats event, umask, edge, ldlat (config1), split
//     (config2, two ranges), future (config3: unusable); events cycles,
//     cache-misses, needs-umask (umask=?)
//   other (type 50): event only-here
//   uprobe (type 7): format retprobe = config:0
//   tracefs: sched:sched_switch (316), sched:sched_wakeup (317),
//     syscalls:sys_enter_openat (600)
class FakeTrees {
 public:
  FakeTrees() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "event_spec_test.XXXXXX").string();
    root_ = mkdtemp(pattern.data());
    const std::filesystem::path pmu = "sys/bus/event_source/devices/fakepmu";
    Write(pmu / "type", "42\n");
    Write(pmu / "format/event", "config:0-7\n");
    Write(pmu / "format/umask", "config:8-15\n");
    Write(pmu / "format/edge", "config:18\n");
    Write(pmu / "format/ldlat", "config1:0-15\n");
    Write(pmu / "format/split", "config2:0-3,32-35\n");
    Write(pmu / "format/future", "config3:0-7\n");
    Write(pmu / "events/cycles", "event=0x3c\n");
    Write(pmu / "events/cache-misses", "event=0x2e,umask=0x41\n");
    Write(pmu / "events/cache-misses.scale", "1\n");
    Write(pmu / "events/needs-umask", "event=0x10,umask=?\n");
    Write("sys/bus/event_source/devices/other/type", "50\n");
    Write("sys/bus/event_source/devices/other/events/only-here", "config=0x77\n");
    Write("sys/bus/event_source/devices/uprobe/type", "7\n");
    Write("sys/bus/event_source/devices/uprobe/format/retprobe", "config:0\n");
    Write("tracing/events/sched/sched_switch/id", "316\n");
    Write("tracing/events/sched/sched_wakeup/id", "317\n");
    Write("tracing/events/syscalls/sys_enter_openat/id", "600\n");
    options_.sysfs_root = (root_ / "sys").string();
    options_.tracefs_root = (root_ / "tracing").string();
  }
  ~FakeTrees() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  void Write(const std::filesystem::path& relative, std::string_view text) const {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  const std::filesystem::path& root() const { return root_; }
  const EventParseOptions& options() const { return options_; }

 private:
  std::filesystem::path root_;
  EventParseOptions options_;
};

// Parses against FakeTrees; tests may change options_ first.
class EventParseTest : public ::testing::Test {
 protected:
  // Parses a list that must succeed.
  std::vector<EventSpec> ParseAll(std::string_view text) {
    auto specs = ParseEventList(text, options_);
    EXPECT_TRUE(specs) << text << ": " << specs.error().message;
    return specs ? *specs : std::vector<EventSpec>();
  }
  // Parses one event that must succeed.
  EventSpec Parse(std::string_view text) {
    std::vector<EventSpec> specs = ParseAll(text);
    EXPECT_EQ(specs.size(), 1u) << text;
    return specs.empty() ? EventSpec() : specs[0];
  }
  // Parses a list that must fail; returns the message.
  std::string Error(std::string_view text) {
    auto specs = ParseEventList(text, options_);
    EXPECT_FALSE(specs) << text << " parsed";
    return specs ? std::string() : specs.error().message;
  }

  FakeTrees trees_;
  EventParseOptions options_ = trees_.options();
};

// The fields the parser must leave alone when no modifier or term asks.
inline void ExpectPlain(const EventSpec& spec) {
  EXPECT_EQ(spec.attr.exclude_user, 0u) << spec.name;
  EXPECT_EQ(spec.attr.exclude_kernel, 0u) << spec.name;
  EXPECT_EQ(spec.attr.exclude_hv, 0u) << spec.name;
  EXPECT_EQ(spec.attr.precise_ip, 0u) << spec.name;
  EXPECT_EQ(spec.attr.sample_period, 0u) << spec.name;
  EXPECT_EQ(spec.attr.freq, 0u) << spec.name;
  EXPECT_EQ(spec.attr.size, 0u) << spec.name;
  EXPECT_EQ(spec.attr.sample_type, 0u) << spec.name;
  EXPECT_FALSE(spec.period_given);
  EXPECT_FALSE(spec.freq_given);
  EXPECT_FALSE(spec.chain_capture);
  EXPECT_EQ(spec.group_index, -1);
  EXPECT_FALSE(spec.group_leader);
  EXPECT_FALSE(spec.sample_read);
  EXPECT_TRUE(spec.uprobe_path.empty());
}

}  // namespace sample::testing
