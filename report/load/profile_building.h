// The loader's last stage: once every record is applied and every distinct
// location symbolized, the samples (whose frames still point into
// UnresolvedStacks) become the Profile's interned function stacks, and the
// Recording is filled with what the file says beside its records (events,
// metadata, build-ids, counts, toggles, sampling switches, trace formats)
// and with the warnings a damaged file deserves. Functions over the
// loader's state; they own nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/recording_file.h"
#include "libsample/model/process_table.h"
#include "libsample/model/profile.h"
#include "libsample/model/toggle_windows.h"
#include "report/load/group_reads.h"
#include "report/load/recording.h"
#include "report/load/symbolization.h"
#include "report/load/unresolved_stacks.h"

namespace sample::report {

// Function ids (innermost first: inlined calls, then the function) and
// symbol offsets of every location, by location id.
struct LocationFunctions {
  std::vector<uint32_t> begin, count, functions;
  std::vector<uint64_t> offsets;  // parallel to functions
  // By location id: its file offset, for locations in mapped files (whose
  // offset is one); FrameAddress::kNoOffset for the kernel, JIT code and
  // unknown addresses (whose offset is the address).
  std::vector<uint64_t> file_offsets;
};

// By location id: how many samples have it in their stack (once per frame
// that holds it), so unknown frames are counted per sample as perf does,
// without walking every sample's frames.
std::vector<uint64_t> LocationUses(const std::vector<ProfileSample>& samples,
                                   const UnresolvedStacks& stacks);

// Interns the symbolized frames of every location as Profile functions of
// out.profile, counting out.stats.unknown_frames by `uses`. `dso_paths` by
// DSO id, as given to SymbolizeLocations. Without `inline_frames`
// (--no-inline) a location keeps only the function holding it. A chain
// deeper than kMaxInlineDepth is cut (counted in
// out.stats.cut_inline_chains, and a warning the first time).
LocationFunctions InternLocationFunctions(SymbolizeResult result,
                                          const std::vector<Location>& locations,
                                          const std::vector<std::string>& dso_paths,
                                          const std::vector<uint64_t>& uses, bool inline_frames,
                                          Recording& out);

// Appends `more` (the functions of the locations after those `into` holds,
// from InternLocationFunctions over just them) to `into`.
void AppendLocationFunctions(const LocationFunctions& more, LocationFunctions& into);

// Each distinct stack of frames becomes a Profile stack once; the samples
// are rewritten in place (each event's periods capped to sum below 2^64,
// counted in out.stats.saturated_periods) and moved into out.profile with
// their group reads and the groups' members.
void BuildProfile(const LocationFunctions& symbols, const UnresolvedStacks& stacks,
                  std::vector<ProfileSample> samples, std::vector<MemberCount> reads,
                  const GroupReadDeltas& group_reads, Recording& out);

// What the file says beside its records: DSO and event names (with the
// pseudo-events'), metadata, build-ids, events, counts, toggles, switches,
// trace formats, and the file's state.
void DescribeRecording(const format::RecordingFile& reader, const ProcessTable& processes,
                       const ToggleWindows& toggles, bool apply_toggles, Recording& out);

// What --stats counts, said once in every view: a report built from a
// damaged file must not look like a complete one.
void WarnOfDamage(const std::string& path, Recording& out);

}  // namespace sample::report
