#include "report/load/profile_building.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "libsample/symbols/address_frames.h"

namespace sample::report {
namespace {

// A frame's functions (inlined calls first) and their addresses.
void AppendFrame(const SeenFrame& frame, const LocationFunctions& symbols,
                 std::vector<uint32_t>& frames, std::vector<FrameAddress>& addresses) {
  const uint32_t begin = symbols.begin[frame.location];
  for (uint32_t i = begin; i < begin + symbols.count[frame.location]; ++i) {
    frames.push_back(symbols.functions[i]);
    FrameAddress address{frame.ip, symbols.offsets[i], symbols.file_offsets[frame.location]};
    // The function was found at ip - 1 for a return address; the offsets
    // kept are the ip's own, as perf script prints them.
    if (frame.return_address) {
      if (address.symbol_offset != FrameAddress::kNoOffset) ++address.symbol_offset;
      if (address.file_offset != FrameAddress::kNoOffset) ++address.file_offset;
    }
    addresses.push_back(address);
  }
}

// The stored trace formats, parsed, by event index; warnings for those
// that name no event or do not parse.
void DescribeTracepoints(const format::RecordingFile& reader, Recording& out) {
  if (reader.trace_formats().empty()) return;
  out.tracepoints.resize(out.events.size());
  for (const format::TraceFormatEntry& entry : reader.trace_formats()) {
    if (entry.event_index >= out.tracepoints.size()) {
      out.warnings.push_back(fmt::format("{}: a trace format names event {}, of {}", reader.path(),
                                         entry.event_index, out.tracepoints.size()));
      continue;
    }
    TracepointDesc& desc = out.tracepoints[entry.event_index];
    desc.filter = entry.filter;
    if (entry.format.empty()) continue;  // tracefs did not give it at record time
    auto parsed = ParseTraceFormat(entry.format);
    if (!parsed) {
      out.warnings.push_back(fmt::format("{}: the trace format of '{}' is unusable: {}",
                                         reader.path(), out.events[entry.event_index].name,
                                         parsed.error().message));
      continue;
    }
    desc.format = std::move(*parsed);
  }
}

std::string CutInlineWarning() {
  return fmt::format(
      "some addresses are named by more than {} frames of inlined calls (a damaged or crafted "
      "file?): each keeps its {} innermost calls and the function holding them (--stats counts "
      "them)",
      kMaxInlineDepth, kMaxInlineDepth - 1);
}

}  // namespace

std::vector<uint64_t> LocationUses(const std::vector<ProfileSample>& samples,
                                   const UnresolvedStacks& stacks) {
  // Samples per distinct stack, then frames per stack.
  std::unordered_map<uint32_t, std::pair<uint32_t, uint64_t>> stack_samples;  // begin -> (count, n)
  for (const ProfileSample& s : samples) {
    auto& [count, n] = stack_samples[s.frames_begin];
    count = s.frames_count;
    n += s.samples;
  }
  std::vector<uint64_t> uses(stacks.locations().size(), 0);
  for (const auto& [begin, stack] : stack_samples) {
    for (uint32_t id : stacks.Frames({begin, stack.first})) {
      uses[stacks.frame(id).location] += stack.second;
    }
  }
  return uses;
}

LocationFunctions InternLocationFunctions(SymbolizeResult result,
                                          const std::vector<Location>& locations,
                                          const std::vector<std::string>& dso_paths,
                                          const std::vector<uint64_t>& uses, bool inline_frames,
                                          Recording& out) {
  LocationFunctions functions;
  functions.begin = std::move(result.frames_begin);
  functions.count = std::move(result.frames_count);
  functions.functions.reserve(result.frames.size());
  functions.offsets.reserve(result.frames.size());
  functions.file_offsets.reserve(locations.size());
  for (size_t i = 0; i < locations.size(); ++i) {
    const Location& loc = locations[i];
    const bool kernel = loc.dso == ProcessTable::kKernelDso;
    const bool in_file =
        !kernel && loc.dso != ProcessTable::kUnknownDso && !IsPerfMapPath(dso_paths[loc.dso]);
    functions.file_offsets.push_back(in_file ? loc.offset : FrameAddress::kNoOffset);
    const uint32_t begin = functions.begin[i];
    const uint32_t end = begin + functions.count[i];
    functions.begin[i] = static_cast<uint32_t>(functions.functions.size());
    // A chain deeper than kMaxInlineDepth keeps its innermost calls and
    // the function holding them (CutInlineChain's cut), whatever source
    // named it; the cut is counted and said once.
    const uint32_t cut_from = begin + static_cast<uint32_t>(kMaxInlineDepth) - 1;
    if (end - begin > kMaxInlineDepth) {
      if (out.stats.cut_inline_chains++ == 0) out.warnings.push_back(CutInlineWarning());
    }
    for (uint32_t f = begin; f < end; ++f) {
      if (f >= cut_from && f + 1 < end) continue;
      const ResolvedFrame& frame = result.frames[f];
      if (!frame.known) out.stats.unknown_frames += uses[i];
      // --no-inline: the function holding the address alone, at the
      // address's own (innermost) source line, as perf's --no-inline.
      if (!inline_frames && frame.inlined && f + 1 < end) continue;
      const std::string& srcline = inline_frames ? frame.srcline : result.frames[begin].srcline;
      // Where the function starts: the location less its offset in it.
      const uint64_t entry = frame.symbol_offset != UINT64_MAX && frame.symbol_offset <= loc.offset
                                 ? loc.offset - frame.symbol_offset
                                 : Function::kNoEntry;
      functions.functions.push_back(out.profile.InternFunction(loc.dso, frame.name, kernel,
                                                               frame.known, frame.inlined, srcline,
                                                               frame.signature, entry));
      functions.offsets.push_back(frame.symbol_offset);
    }
    functions.count[i] = static_cast<uint32_t>(functions.functions.size()) - functions.begin[i];
  }
  return functions;
}

void AppendLocationFunctions(const LocationFunctions& more, LocationFunctions& into) {
  const auto base = static_cast<uint32_t>(into.functions.size());
  for (const uint32_t begin : more.begin) into.begin.push_back(base + begin);
  into.count.insert(into.count.end(), more.count.begin(), more.count.end());
  into.functions.insert(into.functions.end(), more.functions.begin(), more.functions.end());
  into.offsets.insert(into.offsets.end(), more.offsets.begin(), more.offsets.end());
  into.file_offsets.insert(into.file_offsets.end(), more.file_offsets.begin(),
                           more.file_offsets.end());
}

void BuildProfile(const LocationFunctions& symbols, const UnresolvedStacks& stacks,
                  std::vector<ProfileSample> samples, std::vector<MemberCount> reads,
                  const GroupReadDeltas& group_reads, Recording& out) {
  std::vector<uint32_t> frames;
  std::vector<FrameAddress> addresses;
  std::unordered_map<uint32_t, Profile::StackRef> stack_of;  // by frame stack begin
  // Each event's periods sum to at most 2^64 - 1: every sum taken later (an
  // entry's, a section's, a diff's) is of a subset and cannot wrap into a
  // share of 472690664751%.
  std::vector<uint64_t> period_sums;
  for (ProfileSample& s : samples) {
    if (s.event >= period_sums.size()) period_sums.resize(s.event + 1, 0);
    uint64_t& sum = period_sums[s.event];
    if (s.period > UINT64_MAX - sum) {
      s.period = UINT64_MAX - sum;
      ++out.stats.saturated_periods;
    }
    sum += s.period;
    auto [it, inserted] = stack_of.try_emplace(s.frames_begin);
    if (inserted) {
      frames.clear();
      addresses.clear();
      for (uint32_t id : stacks.Frames({s.frames_begin, s.frames_count})) {
        AppendFrame(stacks.frame(id), symbols, frames, addresses);
      }
      it->second = out.profile.InternStack(frames, addresses);
    }
    s.frames_begin = it->second.begin;
    s.frames_count = it->second.count;
  }
  out.profile.AddSamples(std::move(samples), std::move(reads));
  for (uint32_t leader = 0; leader < group_reads.leaders(); ++leader) {
    const std::vector<uint32_t> members = group_reads.MembersOf(leader);
    if (!members.empty()) out.profile.set_group_members(leader, members);
  }
}

void DescribeRecording(const format::RecordingFile& reader, const ProcessTable& processes,
                       const ToggleWindows& toggles, bool apply_toggles, Recording& out) {
  out.profile.set_dso_names(processes.dso_paths());
  std::vector<std::string> event_names;
  const EventTable& events = reader.events();
  for (const EventDesc& e : events.events()) event_names.push_back(e.name);
  if (out.alloc_event) {
    for (const char* name : {"alloc-bytes", "alloc-calls", "leak-bytes", "peak-bytes"}) {
      event_names.push_back(name);
    }
  }
  if (out.off_cpu_event) {
    event_names.push_back("off-cpu");
    event_names.push_back("off-cpu-preempted");
  }
  if (out.wall_event) event_names.push_back("wall");
  out.profile.set_event_names(std::move(event_names));
  out.metadata = reader.metadata();
  out.build_ids = reader.build_ids();
  out.events = events.events();
  out.callchains = std::ranges::any_of(out.events, [](const EventDesc& e) {
    return (e.attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) != 0;
  });
  out.data_addresses = std::ranges::any_of(
      out.events, [](const EventDesc& e) { return (e.attr.sample_type & PERF_SAMPLE_ADDR) != 0; });
  out.trailer = reader.trailer();
  out.counts = reader.counts();
  out.toggles = toggles.relations();
  out.toggle_stats = toggles.stats();
  out.toggles_applied = apply_toggles && toggles.active();
  out.control = reader.control();
  DescribeTracepoints(reader, out);
  out.format_name = reader.format_name();
  out.stats.other_records = reader.other_records();
  out.finalized = reader.finalized();
  out.file_size = reader.file_size();
  out.valid_end = reader.valid_end();
}

void WarnOfDamage(const std::string& path, Recording& out) {
  const LoadStats& s = out.stats;
  if (s.malformed_records != 0 || s.unknown_event_records != 0) {
    out.warnings.push_back(fmt::format(
        "{}: {} malformed record(s) and {} of unknown events were skipped (--stats counts them)",
        path, s.malformed_records, s.unknown_event_records));
  }
  if (s.samples == 0 && s.malformed_samples != 0) {
    out.warnings.push_back(
        fmt::format("{}: no sample could be read: every one of the {} sample records was malformed",
                    path, s.malformed_samples));
  }
  if (s.saturated_periods != 0) {
    out.warnings.push_back(fmt::format(
        "{}: the periods of {} sample(s) would have summed past 2^64 and were cut to fit: the "
        "event counts and shares are not exact",
        path, s.saturated_periods));
  }
}

}  // namespace sample::report
