// Profile: symbolized samples, interned.
//
// A Profile holds every sample as a small header referring to its stack of
// function ids (leaf first), with each frame's address beside it; each
// distinct stack is stored once (stacks repeat: a million samples have a few
// thousand);
// functions, command names and DSO names are interned once. Samples of an
// event group's leader also carry the counts its members added since the
// previous sample (PERF_SAMPLE_READ). The aggregations the views print are
// built from it in flat_profile.h; printing lives in the report's printers.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libsample/model/sequence_interner.h"

namespace sample {

struct Function {
  uint32_t dso = 0;
  std::string name;  // as every view prints it: see `signature`
  bool kernel = false;
  bool known = true;     // false: "[unknown]" placeholder named by address
  bool inlined = false;  // an inlined call, shown as a frame of its own
  // Source line id (Profile::srcline); 0 when unknown or not loaded. With
  // source lines loaded a function is interned per line, and `symbol` is
  // the id shared by all lines of the same function (its own id otherwise).
  uint32_t srcline = 0;
  uint32_t symbol = 0;
  // A C++ function's full signature ("twice(int)", "A::f() const") and its
  // name without the parameter list ("twice", as perf prints it); both empty
  // for a name without one (C, Rust, Go, the kernel, JIT code). `name` is
  // the short one unless Profile::ChooseNames picked the signature.
  std::string signature;
  std::string short_name;
  // Where the function starts in its DSO (its file offset; the address for
  // the kernel and JIT code), which tells apart functions of one name (two
  // static `init`s, a Rust generic's instances, a JVM's adapters), as
  // perf's rows do; kNoEntry when unknown (and for inlined calls, which
  // are one function by name). `base_name` is the name before
  // Profile::ChooseNames marks such twins with their entries.
  static constexpr uint64_t kNoEntry = UINT64_MAX;
  uint64_t entry = kNoEntry;
  std::string base_name;
};

// The name as printed: "name", or "name (inlined)" for an inlined call.
std::string FunctionLabel(const Function& function);

// The index, among a stack's `frames` (function ids, leaf first), of the
// function symbol holding the address of frames[i]: an address's inlined
// calls come first, then the function they were inlined into, which is the
// row perf shows for them. A stack cut inside an address's inlined calls
// leaves them its last frame.
class Profile;
size_t HolderIndex(const Profile& profile, std::span<const uint32_t> frames, size_t i);
// frames[HolderIndex(profile, frames, i)] for each i below `kept`, into
// `out`, in one pass over the chain: HolderIndex per frame walks each
// inlined run again for every frame of it, quadratic in a run's length (a
// crafted recording's 100,000 inlined calls at one address took minutes).
void HolderFrames(const Profile& profile, std::span<const uint32_t> frames, size_t kept,
                  std::vector<uint32_t>& out);

// A sample, or several that differ only in time: a loader asked to merge
// (report/load: LoadOptions::merge_samples, for views that read no sample's
// time or order) keeps one entry per distinct everything-else, with
// `samples` counting them, `period` their sum and `time` the first's.
// Every view counts `samples`, never entries.
struct ProfileSample {
  uint32_t event = 0;  // index into the recording's events
  uint32_t comm = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint32_t data = 0;  // where its data address was: Profile::data_location; 0: none
  uint64_t time = 0;  // perf clock, ns
  uint64_t period = 0;
  uint32_t frames_begin = 0;
  uint32_t frames_count = 0;
  uint32_t reads_begin = 0;  // group member counts, see Profile::reads()
  uint32_t reads_count = 0;
  uint32_t samples = 1;  // the samples this entry stands for
};

// Where a frame was: the address as the kernel reported it (a return
// address for callers), its offset into the function, when known, and
// the ip's offset in the file mapped there (binaries and the [vdso]; not
// the kernel, JIT code or unmapped addresses). ip - file_offset is the
// mapping's load bias, from which exports that name mappings (pprof)
// rebuild them; the loader knows it per distinct location already.
struct FrameAddress {
  static constexpr uint64_t kNoOffset = UINT64_MAX;
  uint64_t ip = 0;
  uint64_t symbol_offset = kNoOffset;
  uint64_t file_offset = kNoOffset;
};

// Where a sample's data address was (-d recordings): the mapping holding
// it, named by its DSO (Profile::dso_name; ProcessTable::kUnknownDso when
// no mapping did), and the variable, when a symbol of the mapped file
// holds it. Interned per distinct address and DSO, as perf's symbol_daddr
// rows are one per address.
struct DataLocation {
  uint64_t address = 0;
  uint32_t dso = 0;
  uint32_t symbol = 0;  // Profile::data_symbol id; 0: no symbol holds it
  uint64_t symbol_offset = 0;
  bool function = false;  // the symbol is a function's (perf prints no offset)
};

// What one member of the leader's event group counted between the leader's
// previous sample (on the same fd) and this one.
struct MemberCount {
  uint32_t event = 0;
  uint64_t count = 0;
};

class Profile {
 public:
  uint32_t InternComm(std::string_view comm);
  // `signature`, when given, is the full name `name` was shortened from:
  // functions are told apart by it (overloads have one short name).
  // `entry` (Function::entry) tells apart functions of one name.
  uint32_t InternFunction(uint32_t dso, std::string_view name, bool kernel, bool known,
                          bool inlined = false, std::string_view srcline = {},
                          std::string_view signature = {}, uint64_t entry = Function::kNoEntry);
  // Once every function is interned: the functions of one DSO that share a
  // short name but have different signatures (overloads: "twice(int)" and
  // "twice(double)", or a C function and a C++ one) are named by their
  // signatures, so that every view shows rows that tell them apart; with
  // `full_signatures` (--full-signature) every function that has one is.
  void ChooseNames(bool full_signatures);
  // `frames` are function ids, leaf first; at least one. `addresses`, when
  // given, runs parallel to `frames`.
  void AddSample(ProfileSample sample, std::span<const uint32_t> frames,
                 std::span<const FrameAddress> addresses = {},
                 std::span<const MemberCount> reads = {});

  // A sample's PERF_SAMPLE_RAW payload (a tracepoint's record), for the
  // sample at `sample_index` of samples() once added. Indexes must grow
  // from call to call. Kept apart from ProfileSample: most recordings have
  // none, and samples stay small.
  void AddRaw(size_t sample_index, std::span<const std::byte> raw);
  // Empty for samples without a payload.
  std::span<const std::byte> raw(const ProfileSample& s) const;

  void set_dso_names(std::vector<std::string> names) { dso_names_ = std::move(names); }
  // The data locations samples' `data` fields index, and the names of the
  // symbols they refer to; each list's entry 0 stands for none.
  void set_data_locations(std::vector<DataLocation> locations, std::vector<std::string> symbols);
  bool has_data_locations() const { return data_locations_.size() > 1; }
  // Location 0 (none) for an id past the table (a live view's samples).
  const DataLocation& data_location(uint32_t id) const {
    return data_locations_[id < data_locations_.size() ? id : 0];
  }
  const std::string& data_symbol(uint32_t id) const { return data_symbols_[id]; }
  void set_event_names(std::vector<std::string> names);
  // The events whose counts ride on `leader`'s samples, in group order.
  void set_group_members(uint32_t leader, std::vector<uint32_t> members);

  // Bulk loading without a copy per sample: intern each distinct stack once
  // with InternStack, set the samples' frames_begin/frames_count to the
  // returned refs and reads_begin/reads_count to ranges of `reads`, then
  // hand both over with AddSamples.
  struct StackRef {
    uint32_t begin = 0;
    uint32_t count = 0;
  };
  StackRef InternStack(std::span<const uint32_t> frames, std::span<const FrameAddress> addresses);
  void AddSamples(std::vector<ProfileSample> samples, std::vector<MemberCount> reads);
  // Drops the samples (their group reads, raw payloads, totals and time
  // range) and keeps what they were interned into: functions, stacks,
  // commands. A live view (sample-top) refills it every interval.
  void ClearSamples();
  const std::vector<ProfileSample>& samples() const { return samples_; }
  std::span<const uint32_t> frames(const ProfileSample& s) const {
    return std::span<const uint32_t>(stack_functions_).subspan(s.frames_begin, s.frames_count);
  }
  // Parallel to frames(s); zero addresses when the sample was added without.
  std::span<const FrameAddress> addresses(const ProfileSample& s) const {
    return std::span<const FrameAddress>(stack_addresses_).subspan(s.frames_begin, s.frames_count);
  }
  std::span<const MemberCount> reads(const ProfileSample& s) const {
    return std::span<const MemberCount>(reads_).subspan(s.reads_begin, s.reads_count);
  }
  const std::vector<uint32_t>& group_members(uint32_t leader) const;
  // Time of the earliest and latest sample (0 without samples).
  uint64_t first_time() const { return first_time_; }
  // Merged samples keep their first time: the loader that merged them says
  // the latest it saw.
  void ExtendTimeRange(uint64_t last) { last_time_ = std::max(last_time_, last); }
  uint64_t last_time() const { return last_time_; }
  const Function& function(uint32_t id) const { return functions_[id]; }
  // "file.c:12"; "??:0" for id 0 (unknown), as perf prints it.
  const std::string& srcline(uint32_t id) const { return srclines_[id]; }
  bool has_srclines() const { return srclines_.size() > 1; }
  const std::string& comm(uint32_t id) const { return comms_[id]; }
  const std::string& dso_name(uint32_t id) const { return dso_names_[id]; }
  size_t dso_count() const { return dso_names_.size(); }
  size_t event_count() const { return event_names_.size(); }
  const std::string& event_name(uint32_t event) const { return event_names_[event]; }
  // Sums over the samples of one event (periods of different events are
  // in different units and never added together).
  uint64_t total_period(uint32_t event) const {
    return event < totals_.size() ? totals_[event].period : 0;
  }
  uint64_t sample_count(uint32_t event) const {
    return event < totals_.size() ? totals_[event].samples : 0;
  }

 private:
  std::vector<ProfileSample> samples_;
  // Distinct frames (function id, ip, symbol and file offset) and distinct stacks of them;
  // stack_functions_ and stack_addresses_ run parallel to stacks_'s pool, so
  // a sample's frames_begin/frames_count index all three.
  struct SlotKeyHash {
    size_t operator()(const std::array<uint64_t, 4>& k) const {
      return static_cast<size_t>((k[0] * 0x9E3779B97F4A7C15ull) ^ (k[1] * 0xC2B2AE3D27D4EB4Full) ^
                                 k[2] ^ (k[3] << 1));
    }
  };
  std::unordered_map<std::array<uint64_t, 4>, uint32_t, SlotKeyHash> slot_ids_;
  // Totals and time range for one added sample.
  void Account(const ProfileSample& sample);
  uint64_t accounted_ = 0;

  std::vector<uint32_t> scratch_;
  SequenceInterner stacks_;
  std::vector<uint32_t> stack_functions_;
  std::vector<FrameAddress> stack_addresses_;
  std::vector<MemberCount> reads_;
  struct RawRef {
    size_t sample = 0;
    size_t begin = 0;
    size_t size = 0;
  };
  std::vector<RawRef> raw_refs_;  // by sample index, ascending
  std::vector<std::byte> raw_bytes_;
  std::vector<std::vector<uint32_t>> group_members_;  // by leader event
  uint64_t first_time_ = 0;
  uint64_t last_time_ = 0;
  std::vector<Function> functions_;
  std::vector<std::string> srclines_ = {"??:0"};
  std::unordered_map<std::string, uint32_t> srcline_ids_;
  std::unordered_map<std::string, uint32_t> function_ids_;  // key: dso + '\0' + name
  std::vector<std::string> comms_;
  std::unordered_map<std::string, uint32_t> comm_ids_;
  std::vector<std::string> dso_names_;
  std::vector<DataLocation> data_locations_ = {DataLocation{}};
  std::vector<std::string> data_symbols_ = {""};
  struct Totals {
    uint64_t period = 0;
    uint64_t samples = 0;
  };
  std::vector<std::string> event_names_;
  std::vector<Totals> totals_;
};

// A data location as perf's symbol_daddr column prints it: "[.] var+0x10"
// when a symbol holds it, else "[.] 0x00007f..." ("[k]" for the kernel's:
// its DSO is ProcessTable::kKernelDso).
std::string DataSymbolLabel(const Profile& profile, uint32_t data);

}  // namespace sample
