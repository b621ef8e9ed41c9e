#include "formats/recording_set.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "formats/decode_budget.h"

namespace sample::format {
namespace {

bool SameEvent(const EventDesc& a, const EventDesc& b) {
  return a.name == b.name && a.attr.type == b.attr.type && a.attr.config == b.attr.config &&
         a.attr.sample_type == b.attr.sample_type && a.attr.read_format == b.attr.read_format;
}

// Every file's embedded tables of one binary (path and build), as one.
EmbeddedBinaries MergeEmbedded(const std::vector<std::unique_ptr<RecordingFile>>& files) {
  using Part = std::shared_ptr<const EmbeddedBinary>;
  std::map<std::pair<std::string, std::string>, std::vector<Part>> by_binary;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& file : files) {
    for (const auto& binary : file->embedded_binaries().all()) {
      auto key = std::make_pair(binary->path, binary->build_id);
      auto [it, inserted] = by_binary.try_emplace(key);
      if (inserted) order.push_back(key);
      it->second.push_back(binary);
    }
  }
  EmbeddedBinaries merged;
  for (const auto& key : order) {
    const std::vector<Part>& parts = by_binary[key];
    if (parts.size() == 1) {
      merged.Add(parts.front());  // shared with its file's reader, not copied
      continue;
    }
    auto binary = std::make_shared<EmbeddedBinary>(*parts.front());
    for (size_t i = 1; i < parts.size(); ++i) {
      const EmbeddedBinary& part = *parts[i];
      binary->addresses.insert(binary->addresses.end(), part.addresses.begin(),
                               part.addresses.end());
      binary->functions.insert(binary->functions.end(), part.functions.begin(),
                               part.functions.end());
      binary->cfi.insert(binary->cfi.end(), part.cfi.begin(), part.cfi.end());
      binary->code.insert(binary->code.end(), part.code.begin(), part.code.end());
      binary->code_omitted = std::max(binary->code_omitted, part.code_omitted);
    }
    binary->Normalize();
    merged.Add(std::move(binary));
  }
  return merged;
}

}  // namespace

Result<std::unique_ptr<RecordingSet>> RecordingSet::Open(const std::vector<std::string>& paths) {
  if (paths.size() < 2) return Fail("a set of recordings needs two files or more");
  std::unique_ptr<RecordingSet> set(new RecordingSet());
  // One budget for every file's embedded tables: -i F F, or a glob of
  // rotated files, must not take it once per file.
  DecodeBudget budget;
  for (const std::string& path : paths) {
    TRY_ASSIGN(auto file, OpenRecording(path, &budget));
    set->files_.push_back(std::move(file));
  }
  set->name_ = fmt::format("{} (and {} more)", paths.front(), paths.size() - 1);
  TRY(set->JoinEvents());
  set->JoinFacts();
  return set;
}

Result<void> RecordingSet::JoinEvents() {
  std::vector<EventDesc> events = files_.front()->events().events();
  for (size_t f = 1; f < files_.size(); ++f) {
    const std::vector<EventDesc>& other = files_[f]->events().events();
    bool same = other.size() == events.size();
    for (size_t i = 0; same && i < other.size(); ++i) same = SameEvent(events[i], other[i]);
    if (!same) {
      return Fail(fmt::format(
          "{}: its events are not those of {} (the same events, in the same order, are needed "
          "to report files as one; report them apart or with --diff)",
          files_[f]->path(), files_.front()->path()));
    }
    for (size_t i = 0; i < other.size(); ++i) {
      for (uint64_t id : other[i].ids) {
        if (std::find(events[i].ids.begin(), events[i].ids.end(), id) == events[i].ids.end()) {
          events[i].ids.push_back(id);
        }
      }
    }
  }
  events_ = EventTable(std::move(events));
  return {};
}

void RecordingSet::JoinFacts() {
  std::set<std::pair<std::string, std::string>> build_ids;
  std::set<std::tuple<uint64_t, uint32_t, uint32_t>> control;
  std::map<std::string, uint64_t> other;
  for (uint32_t f = 0; f < files_.size(); ++f) {
    const RecordingFile& file = *files_[f];
    for (const auto& entry : file.build_ids()) {
      if (build_ids.insert(entry).second) build_ids_.push_back(entry);
    }
    if (!file.kernel_symbols().empty()) {
      kernel_symbols_ += file.kernel_symbols();
      if (kernel_symbols_.back() != '\n') kernel_symbols_ += '\n';
    }
    if (host_kallsyms_.empty()) host_kallsyms_ = file.host_kallsyms();
    perf_maps_.insert(perf_maps_.end(), file.perf_maps().begin(), file.perf_maps().end());
    jit_dumps_.insert(jit_dumps_.end(), file.jit_dumps().begin(), file.jit_dumps().end());
    for (const ControlEntry& entry : file.control()) {
      if (control.insert({entry.time_ns, entry.action, entry.event}).second) {
        control_.push_back(entry);
      }
    }
    for (const auto& [name, count] : file.other_records()) other[name] += count;
    for (const ChunkRef& chunk : file.record_chunks()) {
      ChunkRef ref = chunk;
      ref.offset = chunks_.size();  // ours: the index, to find its file again
      chunks_.push_back(ref);
      chunk_file_.push_back(f);
      file_refs_.push_back(chunk);
    }
    finalized_ = finalized_ && file.finalized();
    file_size_ += file.file_size();
    valid_end_ += file.valid_end();
    for (const std::string& warning : file.warnings()) warnings_.push_back(warning);
    if (const auto& t = file.trailer()) {
      if (!trailer_) trailer_.emplace();
      TrailerHeader& h = trailer_->header;
      h.record_count += t->header.record_count;
      h.sample_count += t->header.sample_count;
      h.lost_samples += t->header.lost_samples;
      h.bytes_raw += t->header.bytes_raw;
      h.chunk_count += t->header.chunk_count;
      if (h.start_clock_ns == 0 ||
          (t->header.start_clock_ns != 0 && t->header.start_clock_ns < h.start_clock_ns)) {
        h.start_clock_ns = t->header.start_clock_ns;
      }
      h.end_clock_ns = std::max(h.end_clock_ns, t->header.end_clock_ns);
    }
  }
  std::sort(control_.begin(), control_.end(),
            [](const ControlEntry& a, const ControlEntry& b) { return a.time_ns < b.time_ns; });
  other_records_.assign(other.begin(), other.end());
  embedded_ = MergeEmbedded(files_);
}

std::span<const std::byte> RecordingSet::vdso_image() const {
  for (const auto& file : files_) {
    if (!file->vdso_image().empty()) return file->vdso_image();
  }
  return {};
}

Result<void> RecordingSet::ReadPayloadInto(const ChunkRef& chunk, Payload& out) const {
  if (chunk.offset >= chunks_.size()) {
    return Fail(fmt::format("{}: no chunk {} in the set", name_, chunk.offset));
  }
  const size_t index = static_cast<size_t>(chunk.offset);
  return files_[chunk_file_[index]]->ReadPayloadInto(file_refs_[index], out);
}

Result<std::unique_ptr<RecordingFile>> OpenRecordings(const std::vector<std::string>& paths) {
  if (paths.size() == 1) return OpenRecording(paths.front());
  TRY_ASSIGN(auto set, RecordingSet::Open(paths));
  return std::unique_ptr<RecordingFile>(std::move(set));
}

}  // namespace sample::format
