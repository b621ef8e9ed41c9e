#include "report/export/pprof_export.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "libsample/model/process_table.h"
#include "report/export/gzip.h"
#include "report/export/proto/profile.pb.h"
#include "report/views/header_view.h"

namespace sample::report {
namespace {

// The unit of an event's period: the software clocks count nanoseconds,
// as the off-CPU and wall pseudo-events do; --alloc's count bytes.
std::string_view PeriodUnitName(const Recording& recording, uint32_t event) {
  switch (EventPeriodUnit(recording, event)) {
    case PeriodUnit::kNanoseconds:
      return "nanoseconds";
    case PeriodUnit::kBytes:
      return "bytes";
    case PeriodUnit::kCount:
      break;
  }
  if (event < recording.events.size()) {
    const perf_event_attr& attr = recording.events[event].attr;
    if (attr.type == PERF_TYPE_SOFTWARE &&
        (attr.config == PERF_COUNT_SW_CPU_CLOCK || attr.config == PERF_COUNT_SW_TASK_CLOCK)) {
      return "nanoseconds";
    }
  }
  return "count";
}

// The names of a section's two sample types: its samples and its period.
// --alloc's are those of Go's heap profiles (alloc_objects and
// alloc_space; inuse_* for what was never freed), which pprof's users
// know; peak_* by analogy.
std::pair<std::string, std::string> SampleTypeNames(const Recording& recording,
                                                    const ExportSection& section, bool several) {
  if (recording.alloc_event && section.event != *recording.alloc_event + 1 &&
      section.event >= *recording.alloc_event && section.event <= *recording.alloc_event + 3) {
    const uint32_t k = section.event - *recording.alloc_event;
    const char* kind = k == 0 ? "alloc" : k == 2 ? "inuse" : "peak";
    return {fmt::format("{}_objects", kind), fmt::format("{}_space", kind)};
  }
  return {several ? section.name + "-samples" : "samples", section.name};
}

// The events between two samples: the fixed period, or with -F the mean
// period of the kept samples.
int64_t Period(const Recording& recording, const ExportSection& section) {
  if (section.event < recording.events.size() && !recording.events[section.event].attr.freq) {
    return static_cast<int64_t>(recording.events[section.event].attr.sample_period);
  }
  return section.sample_count == 0 ? 0
                                   : static_cast<int64_t>(section.period / section.sample_count);
}

// "file.c:12" -> ("file.c", 12); ("", 0) for perf's "??:0".
std::pair<std::string_view, int64_t> SplitSrcline(std::string_view srcline) {
  const size_t colon = srcline.rfind(':');
  if (colon == std::string_view::npos) return {"", 0};
  std::string_view file = srcline.substr(0, colon);
  int64_t line = 0;
  std::from_chars(srcline.data() + colon + 1, srcline.data() + srcline.size(), line);
  return {file == "??" ? std::string_view() : file, line};
}

// A file that is not a shared library ("libc.so.6") nor a pseudo-file
// ("[vdso]").
bool LooksLikeProgram(std::string_view path) {
  if (path.empty() || path.front() == '[') return false;
  const size_t so = path.rfind(".so");
  return so == std::string_view::npos ||
         (so + 3 < path.size() && path[so + 3] != '.' && path[so + 3] != '_');
}

struct ArrayHash {
  template <size_t N>
  size_t operator()(const std::array<uint64_t, N>& key) const {
    uint64_t h = 0;
    for (uint64_t x : key) h = (h ^ x) * 0x9E3779B97F4A7C15ull + (h >> 29);
    return static_cast<size_t>(h);
  }
  size_t operator()(const std::vector<uint64_t>& key) const {
    uint64_t h = key.size();
    for (uint64_t x : key) h = (h ^ x) * 0x9E3779B97F4A7C15ull + (h >> 29);
    return static_cast<size_t>(h);
  }
};

// Builds the message; ids are handed out in the order things are met, so
// equal recordings give equal files.
class PprofBuilder {
 public:
  explicit PprofBuilder(const ExportInput& input) : input_(input), profile_(input.profile()) {
    Str("");  // string 0 is always ""
  }
  pprof::Profile Build();

 private:
  // A mapping as the frames show it: a DSO at one load bias (ip minus file
  // offset), spanning the addresses seen.
  struct MappingSpan {
    uint32_t dso = 0;
    bool in_file = false;  // the frames had file offsets
    uint64_t bias = 0;
    uint64_t low = UINT64_MAX, high = 0;
    bool inline_frames = false;
  };

  int64_t Str(std::string_view s);
  void AddSampleTypes();
  void AddSamples();
  // -d's labels: data_object (the mapping's path), data_symbol (the
  // variable's name, when one holds the address).
  void AddDataLabels(pprof::Sample& sample, const DataLocation& data);
  void AddHeader();
  void AddMappings();
  // The location ids of a sample's frames (cut to --max-stack), leaf first.
  const std::vector<uint64_t>& Locations(const ProfileSample& sample);
  uint64_t LocationId(std::span<const uint32_t> functions, const FrameAddress& address);
  uint64_t MappingId(uint32_t dso, const FrameAddress& address, bool inlined);
  uint64_t FunctionId(uint32_t function);

  const ExportInput& input_;
  const Profile& profile_;
  pprof::Profile out_;
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<std::array<uint64_t, 7>, int, ArrayHash> samples_;  // -> index in out_
  std::unordered_map<std::array<uint64_t, 2>, std::vector<uint64_t>, ArrayHash> stacks_;
  // (ip, file offset, functions) -> id. Hashed: a tree of vectors was half
  // of an export's own time (each comparison a walk into another vector).
  std::unordered_map<std::vector<uint64_t>, uint64_t, ArrayHash> locations_;
  std::vector<uint64_t> location_key_;  // LocationId's key, built in place
  std::unordered_map<std::array<uint64_t, 2>, size_t, ArrayHash> mapping_index_;  // (dso, bias)
  std::vector<MappingSpan> mappings_;
  std::unordered_map<uint32_t, uint64_t> functions_;  // Function::symbol -> id
};

int64_t PprofBuilder::Str(std::string_view s) {
  auto [it, inserted] = strings_.try_emplace(std::string(s), out_.string_table_size());
  if (inserted) out_.add_string_table(std::string(s));
  return it->second;
}

pprof::Profile PprofBuilder::Build() {
  AddSampleTypes();
  AddSamples();
  AddMappings();
  AddHeader();
  return std::move(out_);
}

void PprofBuilder::AddSampleTypes() {
  const bool several = input_.sections.size() > 1;
  for (const ExportSection& section : input_.sections) {
    const auto [samples, period_name] = SampleTypeNames(*input_.recording, section, several);
    pprof::ValueType* count = out_.add_sample_type();
    count->set_type(Str(samples));
    count->set_unit(Str("count"));
    pprof::ValueType* period = out_.add_sample_type();
    period->set_type(Str(period_name));
    period->set_unit(Str(PeriodUnitName(*input_.recording, section.event)));
  }
}

void PprofBuilder::AddSamples() {
  const int width = static_cast<int>(2 * input_.sections.size());
  const int64_t comm_key = Str("comm"), pid_key = Str("pid"), tid_key = Str("tid");
  for (size_t k = 0; k < input_.sections.size(); ++k) {
    for (uint32_t index : input_.sections[k].samples) {
      const ProfileSample& s = input_.sample(index);
      // -d's data address: by the mapping and the variable holding it (one
      // pprof sample per address would be one per page fault).
      const DataLocation& data = profile_.data_location(s.data);
      const std::array<uint64_t, 7> key{
          s.frames_begin, input_.Frames(s).size(),          s.comm,     s.pid,
          s.tid,          s.data != 0 ? data.dso + 1u : 0u, data.symbol};
      auto [it, inserted] = samples_.try_emplace(key, out_.sample_size());
      if (inserted) {
        pprof::Sample* sample = out_.add_sample();
        for (uint64_t id : Locations(s)) sample->add_location_id(id);
        sample->mutable_value()->Resize(width, 0);
        pprof::Label* comm = sample->add_label();
        comm->set_key(comm_key);
        comm->set_str(Str(profile_.comm(s.comm)));
        pprof::Label* pid = sample->add_label();
        pid->set_key(pid_key);
        pid->set_num(s.pid);
        pprof::Label* tid = sample->add_label();
        tid->set_key(tid_key);
        tid->set_num(s.tid);
        if (s.data != 0) AddDataLabels(*sample, data);
      }
      auto* values = out_.mutable_sample(it->second)->mutable_value();
      values->Set(2 * k, values->Get(2 * k) + s.samples);
      values->Set(2 * k + 1, values->Get(2 * k + 1) + static_cast<int64_t>(s.period));
    }
  }
}

void PprofBuilder::AddDataLabels(pprof::Sample& sample, const DataLocation& data) {
  pprof::Label* object = sample.add_label();
  object->set_key(Str("data_object"));
  object->set_str(Str(profile_.dso_name(data.dso)));
  if (data.symbol == 0) return;
  pprof::Label* symbol = sample.add_label();
  symbol->set_key(Str("data_symbol"));
  symbol->set_str(Str(profile_.data_symbol(data.symbol)));
}

const std::vector<uint64_t>& PprofBuilder::Locations(const ProfileSample& sample) {
  const std::span<const uint32_t> frames = input_.Frames(sample);
  const std::span<const FrameAddress> addresses = input_.Addresses(sample);
  auto [it, inserted] = stacks_.try_emplace({sample.frames_begin, frames.size()});
  if (!inserted) return it->second;
  for (size_t i = 0; i < frames.size();) {
    // The inlined calls at an address come first, then the function they
    // are in, all with the same address: one location.
    size_t end = i + 1;
    while (end < frames.size() && profile_.function(frames[end - 1]).inlined &&
           addresses[end].ip == addresses[i].ip) {
      ++end;
    }
    it->second.push_back(LocationId(frames.subspan(i, end - i), addresses[i]));
    i = end;
  }
  return it->second;
}

uint64_t PprofBuilder::LocationId(std::span<const uint32_t> functions,
                                  const FrameAddress& address) {
  location_key_.assign({address.ip, address.file_offset});
  location_key_.insert(location_key_.end(), functions.begin(), functions.end());
  if (auto found = locations_.find(location_key_); found != locations_.end()) return found->second;
  const auto it = locations_.emplace(location_key_, out_.location_size() + 1).first;
  pprof::Location* location = out_.add_location();
  location->set_id(it->second);
  location->set_address(address.ip);
  location->set_mapping_id(
      MappingId(profile_.function(functions.back()).dso, address, functions.size() > 1));
  for (uint32_t function : functions) {
    pprof::Line* line = location->add_line();
    line->set_function_id(FunctionId(function));
    line->set_line(SplitSrcline(profile_.srcline(profile_.function(function).srcline)).second);
  }
  return it->second;
}

uint64_t PprofBuilder::MappingId(uint32_t dso, const FrameAddress& address, bool inlined) {
  if (dso == ProcessTable::kUnknownDso) return 0;  // no mapping was found
  const bool in_file = address.file_offset != FrameAddress::kNoOffset;
  const uint64_t bias = in_file ? address.ip - address.file_offset : 0;
  auto [it, inserted] =
      mapping_index_.try_emplace({dso, in_file ? bias : FrameAddress::kNoOffset}, mappings_.size());
  if (inserted) mappings_.push_back(MappingSpan{.dso = dso, .in_file = in_file, .bias = bias});
  MappingSpan& span = mappings_[it->second];
  span.low = std::min(span.low, address.ip);
  span.high = std::max(span.high, address.ip);
  span.inline_frames |= inlined;
  return it->second + 1;
}

uint64_t PprofBuilder::FunctionId(uint32_t id) {
  const Function& function = profile_.function(id);
  auto [it, inserted] = functions_.try_emplace(function.symbol, out_.function_size() + 1);
  if (!inserted) return it->second;
  pprof::Function* out = out_.add_function();
  out->set_id(it->second);
  // Names are the report's (demangled); the mangled ones are not kept. A
  // C++ function's system name is its full signature.
  out->set_name(Str(function.name));
  out->set_system_name(function.signature.empty() ? out->name() : Str(function.signature));
  const std::string_view file = SplitSrcline(profile_.srcline(function.srcline)).first;
  if (!file.empty()) out->set_filename(Str(file));
  return it->second;
}

void PprofBuilder::AddMappings() {
  // pprof names the profile after its first mapping ("File: ..."): the
  // first program met goes first, the others keep their order.
  std::vector<uint64_t> order(mappings_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto program = std::find_if(order.begin(), order.end(), [&](uint64_t i) {
    return mappings_[i].in_file && LooksLikeProgram(profile_.dso_name(mappings_[i].dso));
  });
  if (program != order.end()) std::rotate(order.begin(), program, program + 1);
  std::vector<uint64_t> id_of(order.size());
  for (size_t i = 0; i < order.size(); ++i) id_of[order[i]] = i + 1;
  for (pprof::Location& location : *out_.mutable_location()) {
    if (location.mapping_id() != 0) location.set_mapping_id(id_of[location.mapping_id() - 1]);
  }
  const Recording& recording = *input_.recording;
  for (size_t i = 0; i < order.size(); ++i) {
    const MappingSpan& span = mappings_[order[i]];
    const std::string& path = profile_.dso_name(span.dso);
    pprof::Mapping* mapping = out_.add_mapping();
    mapping->set_id(i + 1);
    mapping->set_memory_start(span.low);
    mapping->set_memory_limit(span.high + 1);
    // pprof finds an address's file offset as address - start + offset.
    mapping->set_file_offset(span.in_file ? span.low - span.bias : 0);
    mapping->set_filename(Str(path));
    if (auto build_id = format::FindMetadata(recording.build_ids, path)) {
      mapping->set_build_id(Str(*build_id));
    }
    mapping->set_has_functions(true);
    mapping->set_has_filenames(profile_.has_srclines());
    mapping->set_has_line_numbers(profile_.has_srclines());
    mapping->set_has_inline_frames(span.inline_frames);
  }
}

void PprofBuilder::AddHeader() {
  const Recording& recording = *input_.recording;
  const HeaderView header = BuildHeaderView(recording);
  if (header.start_realtime_ns)
    out_.set_time_nanos(static_cast<int64_t>(*header.start_realtime_ns));
  out_.set_duration_nanos(std::llround(header.duration_s * 1e9));
  const ExportSection& first = input_.sections.front();
  const std::string first_name = SampleTypeNames(recording, first, false).second;
  out_.mutable_period_type()->set_type(Str(first_name));
  out_.mutable_period_type()->set_unit(Str(PeriodUnitName(recording, first.event)));
  out_.set_period(Period(recording, first));
  out_.set_default_sample_type(Str(first_name));
  // What a continuous-profiling backend (Pyroscope, Parca) labels an
  // uploaded profile with, beside time_nanos and duration_nanos: the host
  // and the command, as "key=value" comments (the first comment stays the
  // command line, as before).
  if (!input_.command_line.empty()) out_.add_comment(Str(input_.command_line));
  if (auto host = format::FindMetadata(recording.metadata, "hostname")) {
    out_.add_comment(Str("hostname=" + *host));
  }
  if (!input_.command_line.empty()) out_.add_comment(Str("command=" + input_.command_line));
  if (header.start_realtime_ns) {
    const uint64_t start = *header.start_realtime_ns;
    const uint64_t end = start + static_cast<uint64_t>(std::llround(header.duration_s * 1e9));
    out_.add_comment(Str(fmt::format("time_range={}..{}", start, end)));
  }
}

}  // namespace

Result<std::string> PprofExporter::Export(const ExportInput& input) {
  const pprof::Profile profile = PprofBuilder(input).Build();
  std::string bytes;
  if (!profile.SerializeToString(&bytes)) return Fail("pprof: the profile could not be encoded");
  return GzipCompress(bytes);
}

}  // namespace sample::report
