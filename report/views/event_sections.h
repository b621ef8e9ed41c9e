// EventSection: one event's flat profile as the report prints it, with the
// totals its percentages are taken of. An event whose group members were
// read with it (-e '{a,b}:S') gets one section that carries the members'
// counts beside its own; the members get none of their own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libsample/model/flat_profile.h"
#include "libsample/model/sample_filter.h"
#include "libsample/percent.h"
#include "report/load/recording.h"
#include "report/views/view_options.h"

namespace sample::report {

struct EventSection {
  uint32_t event = 0;
  std::vector<uint32_t> members;  // group members, in group order
  std::string title;              // "cpu-clock" or "anon group { cpu-clock, task-clock }"
  bool children = false;
  bool call_graph = false;
  bool filtered = false;  // a filter was given
  // Periods are nanoseconds of time (the off-CPU and wall pseudo-events),
  // printed as times.
  bool time_weighted = false;
  PeriodUnit unit = PeriodUnit::kCount;  // bytes: --alloc's byte pseudo-events
  // A wall-clock section is one thread's (FlatOptions::tid); else kAny.
  uint32_t tid = FlatEntry::kAny;
  FlatProfile flat;                    // entries and totals of the kept samples
  uint64_t all_samples = 0;            // of this event, before filtering
  uint64_t percent_base = 0;           // the period that is 100%
  std::vector<uint64_t> member_bases;  // the same, per member
  // Frames of the kept samples (each sampled or return address once, its
  // inlined calls not counted), and how many of them nothing named.
  uint64_t frames = 0;
  uint64_t unknown_frames = 0;
};

// Sections for the events that have samples (every event when none has),
// in the file's event order; the wall-clock pseudo-event gets one section
// per thread, each thread's time its 100%.
std::vector<EventSection> BuildEventSections(const Recording& recording, const ViewOptions& view,
                                             const SampleFilter& filter);

// The entries a printer shows: a period in the section's mode, and a share
// of at least percent_limit.
std::vector<const FlatEntry*> ShownEntries(const EventSection& section, double percent_limit);

// Nanoseconds as a time for people: "850 ns", "12.3 us", "12.3 ms", "4.56 s".
std::string FormatNs(uint64_t ns);

}  // namespace sample::report
