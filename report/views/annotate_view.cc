#include "report/views/annotate_view.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "libsample/model/profile.h"
#include "libsample/string_parts.h"
#include "libsample/symbols/function_code.h"
#include "libsample/symbols/symbol_embedding.h"
#include "report/views/annotate_rows.h"

namespace sample::report {
namespace {

struct Hits {
  uint64_t samples = 0;
  uint64_t period = 0;
  void Add(const ProfileSample& s) {
    samples += s.samples;
    period += s.period;
  }
  void Add(const Hits& other) {
    samples += other.samples;
    period += other.period;
  }
};

// The first event with samples: the one perf annotate shows first.
std::optional<uint32_t> ChooseEvent(const Profile& profile) {
  for (uint32_t e = 0; e < profile.event_count(); ++e) {
    if (profile.sample_count(e) != 0) return e;
  }
  return std::nullopt;
}

// Each function's samples by offset, hottest function first.
std::vector<IndexedFunction> CountHits(const Recording& recording, uint32_t event,
                                       const SampleFilter& filter, std::vector<IndexedDso>& dsos) {
  const Profile& profile = recording.profile;
  // Samples of one stack share their leaf: summed by stack first (a
  // sample's frames start where its interned stack does), then looked at
  // once a stack.
  // Keyed by where its frames start and how many: stacks that share a
  // start but not a length are told apart.
  std::unordered_map<uint64_t, Hits> by_stack;
  std::vector<uint64_t> stack_order;  // first-seen order, for stable output
  std::vector<const ProfileSample*> example;
  for (const ProfileSample& s : profile.samples()) {
    if (s.event != event || !filter.Keeps(profile, s)) continue;
    const uint64_t key = uint64_t{s.frames_begin} << 32 | s.frames_count;
    auto [it, added] = by_stack.try_emplace(key);
    if (added) {
      stack_order.push_back(key);
      example.push_back(&s);
    }
    it->second.Add(s);
  }
  std::vector<IndexedFunction> out;
  std::vector<std::unordered_map<uint64_t, Hits>> by_offset;
  std::unordered_map<uint32_t, size_t> index;      // by function symbol id
  std::unordered_map<uint32_t, uint32_t> dso_ids;  // profile DSO id -> into `dsos`
  for (size_t i = 0; i < stack_order.size(); ++i) {
    const ProfileSample& s = *example[i];
    const auto frames = profile.frames(s);
    const auto addresses = profile.addresses(s);
    if (frames.empty() || addresses.size() != frames.size()) continue;
    const Function& holder = profile.function(frames[HolderIndex(profile, frames, 0)]);
    if (!holder.known) continue;
    // Kernel code and a perf map's have no file offset: listed, with why
    // they are not annotated (Annotator::Annotate).
    const uint64_t offset = holder.kernel ? FrameAddress::kNoOffset : addresses[0].file_offset;
    auto [it, added] = index.try_emplace(holder.symbol, out.size());
    if (added) {
      auto [dso, new_dso] = dso_ids.try_emplace(holder.dso, static_cast<uint32_t>(dsos.size()));
      if (new_dso) {
        const std::string& path = profile.dso_name(holder.dso);
        dsos.push_back(IndexedDso{path,
                                  format::FindMetadata(recording.build_ids, path).value_or(""),
                                  recording.jit_code.contains(path)});
      }
      out.push_back(IndexedFunction{.function = holder.symbol,
                                    .name = holder.name,
                                    .short_name = holder.short_name,
                                    .signature = holder.signature,
                                    .dso = dso->second,
                                    .kernel = holder.kernel,
                                    .some_offset = offset,
                                    .by_offset = {}});
      by_offset.emplace_back();
    }
    IndexedFunction& hits = out[it->second];
    const Hits& stack = by_stack[stack_order[i]];
    hits.samples += stack.samples;
    hits.period += stack.period;
    by_offset[it->second][offset].Add(stack);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    for (const auto& [offset, hits] : by_offset[i]) {
      out[i].by_offset.push_back(OffsetHits{offset, hits.samples, hits.period});
    }
    std::ranges::sort(out[i].by_offset, {}, &OffsetHits::offset);
  }
  std::ranges::stable_sort(
      out, [](const IndexedFunction& a, const IndexedFunction& b) { return a.period > b.period; });
  return out;
}

// How many of `hits` (hottest first) hold `coverage` of their period.
size_t Covering(const std::vector<IndexedFunction>& hits, double coverage) {
  if (coverage >= 1.0) return hits.size();
  uint64_t all = 0;
  for (const IndexedFunction& h : hits) all += h.period;
  const double wanted = coverage * static_cast<double>(all);
  size_t n = 0;
  for (uint64_t held = 0; n < hits.size() && (n == 0 || static_cast<double>(held) < wanted); ++n) {
    held += hits[n].period;
  }
  return n;
}

bool Named(const IndexedFunction& function, const std::vector<std::string>& names) {
  return std::ranges::any_of(names, [&](const std::string& name) {
    // Functions of one name told apart by their entries ("spin@0x1222",
    // Profile::ChooseNames) answer to that name too.
    const bool twin = function.name.size() > name.size() + 3 && function.name.starts_with(name) &&
                      function.name.compare(name.size(), 3, "@0x") == 0;
    return name == function.name || name == function.short_name || name == function.signature ||
           twin;
  });
}

// "8 MiB", or bytes when not a whole number of MiB.
std::string Size(uint64_t bytes) {
  return bytes % (uint64_t{1} << 20) == 0 ? fmt::format("{} MiB", bytes >> 20)
                                          : fmt::format("{} bytes", bytes);
}

// The debug file whose DWARF the annotation reads: the original of an
// inflated copy (LocatedBinary::found_debug), whose owner is the one that
// counts; none when the locator refused it (a zlib bomb).
const std::string& DebugToRead(const LocatedBinary& located) {
  return located.debug.empty() || located.found_debug.empty() ? located.debug : located.found_debug;
}

class Annotator {
 public:
  Annotator(const AnnotateIndex& index, const AnnotateOptions& options, const AnnotateCode& code)
      : index_(index), options_(options), code_(code), locator_(code.binaries, code.recorded) {}

  // Whether a function's code was wanted from the recording (files_only).
  bool needs_recording() const { return needs_recording_; }

  AnnotatedFunction Annotate(const IndexedFunction& hits) {
    const IndexedDso& dso = index_.dsos[hits.dso];
    AnnotatedFunction out;
    out.function = hits.function;
    out.name = hits.name;
    out.dso = dso.path;
    out.samples = hits.samples;
    out.period = hits.period;
    if (hits.some_offset == FrameAddress::kNoOffset) {
      out.note = hits.kernel ? "kernel code is not annotated"
                             : "a perf map names this code but holds none of its bytes";
      return out;
    }
    const Source& source = SourceFor(dso);
    out.note = source.note;
    if (source.source == nullptr) return out;
    out.origin = source.source->origin();
    out.source_owners = source.owners.owners;
    out.source_readable = !out.source_owners.none();
    out.source_note = source.owners.note;
    auto code = source.source->FunctionAt(hits.some_offset);
    if (!code) {
      out.note = code.error().message;
      return out;
    }
    out.start = code->start;
    out.end = code->end;
    if (code->bytes.empty()) {
      out.note = code->missing_code;
      return out;
    }
    Decode(hits, *code, *source.source, out);
    return out;
  }

 private:
  struct Source {
    std::unique_ptr<CodeSource> source;
    std::string note;             // why there is no source
    SourceOwnersDecision owners;  // whose source files it may show
  };

  // Source files named by a recording's own bytes: none is read.
  static SourceOwnersDecision NoOwners(std::string_view why) {
    return SourceOwnersDecision{{}, fmt::format("source text not shown: {}", why)};
  }

  // The instructions of `code`, within AnnotateBounds.
  void Decode(const IndexedFunction& hits, const FunctionCode& code, CodeSource& source,
              AnnotatedFunction& out) {
    const AnnotateBounds& bounds = options_.bounds;
    if (code.bytes.size() > bounds.max_function_bytes) {
      out.note = fmt::format("{} bytes of code, over the {} annotate decodes", code.bytes.size(),
                             Size(bounds.max_function_bytes));
      return;
    }
    if (code.bytes.size() > bounds.view_code_bytes - std::min(decoded_, bounds.view_code_bytes)) {
      out.note = fmt::format("{} bytes of code, over what is left of the {} a view decodes",
                             code.bytes.size(), Size(bounds.view_code_bytes));
      return;
    }
    decoded_ += code.bytes.size();
    auto disassembler = DisassemblerFor(code.i386 ? CodeArch::kI386 : CodeArch::kX86_64);
    if (!disassembler) {
      out.note = disassembler.error().message;
      return;
    }
    const size_t whole =
        std::min(bounds.whole_function, bounds.view_rows - std::min(rows_, bounds.view_rows));
    FunctionRows rows =
        AnnotateRows(**disassembler, code, hits, source, whole, bounds.near_sampled);
    if (rows.cut) {
      out.cut = fmt::format(
          "{} instructions, over the {} shown whole{}: only those within {} of a sampled one are "
          "shown",
          rows.instructions, whole,
          whole < bounds.whole_function ? " (what is left of the rows a view shows)" : "",
          bounds.near_sampled);
    }
    rows_ += rows.rows.size();
    out.instructions = std::move(rows.rows);
    out.unplaced_samples = out.samples - rows.placed;
  }

  const Source& SourceFor(const IndexedDso& dso) {
    auto [it, added] = sources_.try_emplace(dso.path);
    Source& entry = it->second;
    if (!added) return entry;
    if (dso.jit) {
      if (code_.files_only || code_.jit_code == nullptr) {
        needs_recording_ = true;
      } else if (auto jit = code_.jit_code->find(dso.path); jit != code_.jit_code->end()) {
        entry.source = OpenJitCode(*jit->second);
      }
      entry.owners = NoOwners("the recording's jitdump names them");
      return entry;
    }
    LocatedBinary located = locator_.Locate(dso.path, dso.build_id);
    if (!located.binary.empty()) {
      auto opened = OpenBinaryCode(located.binary, DebugToRead(located), Basename(dso.path));
      if (opened) {
        entry.source = std::move(*opened);
        // Owners of the files as opened, whatever their build-id says:
        // a build-id proves nothing of who wrote them.
        entry.owners = located.is_vdso() ? NoOwners("the recording's own [vdso] image names them")
                                         : SourceOwnersOf(entry.source->NamingFiles(), geteuid());
      } else {
        entry.note = opened.error().message;
      }
    } else if (located.embedded != nullptr) {
      // With files only, a stand-in: the code is in the recording.
      if (code_.files_only) {
        needs_recording_ = true;
      } else {
        entry.source = OpenEmbeddedCode(*located.embedded);
      }
      entry.owners = NoOwners("the recording's embedded tables name them, not a binary found here");
    } else {
      entry.note = fmt::format("no code of {}: {}", dso.path, located.source);
    }
    return entry;
  }

  Result<const Disassembler*> DisassemblerFor(CodeArch arch) {
    auto& slot = disassemblers_[arch];
    if (!slot) {
      TRY_ASSIGN(auto opened, Disassembler::Open(arch, options_.syntax));
      slot = std::make_unique<Disassembler>(std::move(opened));
    }
    return slot.get();
  }

  const AnnotateIndex& index_;
  const AnnotateOptions& options_;
  const AnnotateCode& code_;
  BinaryLocator locator_;
  std::map<std::string, Source> sources_;
  std::map<CodeArch, std::unique_ptr<Disassembler>> disassemblers_;
  bool needs_recording_ = false;
  uint64_t decoded_ = 0;  // bytes of code decoded, over the view
  size_t rows_ = 0;       // rows made, over the view
};

}  // namespace

AnnotateIndex BuildAnnotateIndex(const Recording& recording, const AnnotateOptions& options,
                                 const SampleFilter& filter) {
  AnnotateIndex index;
  const Profile& profile = recording.profile;
  const auto event = options.event ? options.event : ChooseEvent(profile);
  if (!event || *event >= profile.event_count()) return index;
  index.event = profile.event_name(*event);
  index.event_samples = profile.sample_count(*event);
  index.functions = CountHits(recording, *event, filter, index.dsos);
  return index;
}

Result<AnnotateView> AnnotateFromIndex(const AnnotateIndex& index, const AnnotateOptions& options,
                                       const AnnotateCode& code) {
  AnnotateView view;
  if (index.event.empty()) return view;
  view.event = index.event;
  view.event_samples = index.event_samples;
  std::vector<const IndexedFunction*> chosen;
  for (const IndexedFunction& h : index.functions) chosen.push_back(&h);
  if (options.symbols.empty()) {
    chosen.resize(std::min(Covering(index.functions, options.coverage), options.max_functions));
    // Not the functions whose code a recording leaves out for their few
    // samples (EmbeddingLimits), so that the same ones are annotated with
    // the binaries or without them; the hottest always.
    const uint64_t enough = MinCodeSamples(view.event_samples);
    const auto few =
        std::remove_if(chosen.begin() + std::min<size_t>(chosen.size(), 1), chosen.end(),
                       [&](const IndexedFunction* h) { return h->samples < enough; });
    chosen.erase(few, chosen.end());
  } else {
    std::erase_if(chosen, [&](const IndexedFunction* h) { return !Named(*h, options.symbols); });
    if (chosen.empty()) {
      return Fail(fmt::format("--annotate: no samples of {} in {}",
                              fmt::join(options.symbols, ", "), view.event));
    }
    for (const std::string& name : options.symbols) {
      const bool found =
          std::ranges::any_of(chosen, [&](const IndexedFunction* h) { return Named(*h, {name}); });
      if (!found) {
        view.warnings.push_back(
            fmt::format("--annotate: no samples of {} in {}", name, view.event));
      }
    }
  }
  Annotator annotator(index, options, code);
  for (const IndexedFunction* h : chosen) view.functions.push_back(annotator.Annotate(*h));
  view.needs_recording = annotator.needs_recording();
  return view;
}

Result<AnnotateView> BuildAnnotateView(const Recording& recording, const AnnotateOptions& options,
                                       const SampleFilter& filter,
                                       const BinaryLocatorOptions& binaries) {
  const AnnotateCode code{binaries, RecordedCode{{}, &recording.embedded}, &recording.jit_code};
  return AnnotateFromIndex(BuildAnnotateIndex(recording, options, filter), options, code);
}

}  // namespace sample::report
