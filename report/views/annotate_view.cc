#include "report/views/annotate_view.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include <fmt/format.h>

#include "libsample/model/profile.h"
#include "libsample/string_parts.h"
#include "libsample/symbols/function_code.h"
#include "libsample/symbols/function_names.h"
#include "libsample/symbols/symbol_embedding.h"

namespace sample::report {
namespace {

// No real function is this large; a symbol without a size in a crafted
// or stripped file can seem to be (it runs to the next symbol).
constexpr size_t kMaxFunctionBytes = size_t{8} << 20;

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

// One function's samples, by the file offset (JIT: pseudo-DSO offset) of
// the sampled address.
struct FunctionHits {
  uint32_t function = 0;  // profile function id (the symbol's)
  uint64_t some_offset = 0;
  Hits total;
  std::unordered_map<uint64_t, Hits> by_offset;
};

// The first event with samples: the one perf annotate shows first.
std::optional<uint32_t> ChooseEvent(const Profile& profile) {
  for (uint32_t e = 0; e < profile.event_count(); ++e) {
    if (profile.sample_count(e) != 0) return e;
  }
  return std::nullopt;
}

std::vector<FunctionHits> CountHits(const Profile& profile, uint32_t event,
                                    const SampleFilter& filter) {
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
  std::vector<FunctionHits> out;
  std::unordered_map<uint32_t, size_t> index;  // by function symbol id
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
    if (added) out.push_back(FunctionHits{holder.symbol, offset});
    FunctionHits& hits = out[it->second];
    const Hits& stack = by_stack[stack_order[i]];
    hits.total.Add(stack);
    hits.by_offset[offset].Add(stack);
  }
  std::ranges::stable_sort(out, [](const FunctionHits& a, const FunctionHits& b) {
    return a.total.period > b.total.period;
  });
  return out;
}

// How many of `hits` (hottest first) hold `coverage` of their period.
size_t Covering(const std::vector<FunctionHits>& hits, double coverage) {
  if (coverage >= 1.0) return hits.size();
  uint64_t all = 0;
  for (const FunctionHits& h : hits) all += h.total.period;
  const double wanted = coverage * static_cast<double>(all);
  size_t n = 0;
  for (uint64_t held = 0; n < hits.size() && (n == 0 || static_cast<double>(held) < wanted); ++n) {
    held += hits[n].total.period;
  }
  return n;
}

bool Named(const Function& function, const std::vector<std::string>& names) {
  return std::ranges::any_of(names, [&](const std::string& name) {
    return name == function.name || name == function.short_name || name == function.signature;
  });
}

// Objdump's layout: the mnemonic in 6 columns, then the operands; a direct
// branch's target named; bytes nothing decodes as "(bad)" and their hex.
std::string InstructionText(const Instruction& in, std::span<const std::byte> bytes,
                            CodeSource& source) {
  if (in.bad) {
    std::string text = in.mnemonic + " ";
    for (std::byte b : bytes) text += fmt::format(" {:02x}", static_cast<unsigned>(b));
    return text;
  }
  std::string text =
      in.operands.empty() ? in.mnemonic : fmt::format("{:<6} {}", in.mnemonic, in.operands);
  if (in.target) {
    const std::string name = source.NameOf(*in.target);
    if (!name.empty()) text += fmt::format(" <{}>", name);
  }
  return text;
}

class Annotator {
 public:
  Annotator(const Recording& recording, const AnnotateOptions& options,
            BinaryLocatorOptions binaries)
      : recording_(recording), options_(options), locator_(WithEmbedded(binaries, recording)) {}

  AnnotatedFunction Annotate(const FunctionHits& hits) {
    const Profile& profile = recording_.profile;
    const Function& function = profile.function(hits.function);
    AnnotatedFunction out;
    out.function = hits.function;
    out.name = function.name;
    out.dso = profile.dso_name(function.dso);
    out.samples = hits.total.samples;
    out.period = hits.total.period;
    if (hits.some_offset == FrameAddress::kNoOffset) {
      out.note = function.kernel ? "kernel code is not annotated"
                                 : "a perf map names this code but holds none of its bytes";
      return out;
    }
    CodeSource* source = SourceFor(out.dso, out.note);
    if (source == nullptr) return out;
    out.origin = source->origin();
    auto code = source->FunctionAt(hits.some_offset);
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
    if (code->bytes.size() > kMaxFunctionBytes) {
      out.note = fmt::format("{} bytes of code, over the {} MiB annotate decodes",
                             code->bytes.size(), kMaxFunctionBytes >> 20);
      return out;
    }
    auto disassembler = DisassemblerFor(code->i386 ? CodeArch::kI386 : CodeArch::kX86_64);
    if (!disassembler) {
      out.note = disassembler.error().message;
      return out;
    }
    uint64_t placed = 0;
    for (const Instruction& in : (*disassembler)->Decode(code->bytes, code->start)) {
      AnnotatedInstruction row;
      row.address = in.address;
      const uint64_t from = in.address - code->start;
      row.bytes.assign(code->bytes.begin() + static_cast<std::ptrdiff_t>(from),
                       code->bytes.begin() + static_cast<std::ptrdiff_t>(from + in.size));
      row.text = InstructionText(in, row.bytes, *source);
      if (auto it = hits.by_offset.find(in.address + code->file_offset_delta);
          it != hits.by_offset.end()) {
        row.samples = it->second.samples;
        row.period = it->second.period;
        placed += row.samples;
      }
      const std::vector<AddressFrame> frames = source->FramesAt(in.address);
      if (!frames.empty()) {
        row.file = frames.front().file;
        row.line = frames.front().line;
      }
      for (const AddressFrame& frame : frames) {
        if (frame.inlined) row.inlined.push_back(WithoutParameters(frame.name));
      }
      out.instructions.push_back(std::move(row));
    }
    out.unplaced_samples = out.samples - placed;
    return out;
  }

 private:
  static BinaryLocatorOptions WithEmbedded(BinaryLocatorOptions options,
                                           const Recording& recording) {
    options.embedded = &recording.embedded;
    return options;
  }

  CodeSource* SourceFor(const std::string& dso, std::string& note) {
    auto [it, added] = sources_.try_emplace(dso);
    if (!added) {
      note = it->second.note;
      return it->second.source.get();
    }
    Source& entry = it->second;
    if (auto jit = recording_.jit_code.find(dso); jit != recording_.jit_code.end()) {
      entry.source = OpenJitCode(*jit->second);
      return entry.source.get();
    }
    const auto build_id = format::FindMetadata(recording_.build_ids, dso);
    LocatedBinary located = locator_.Locate(dso, build_id.value_or(""));
    if (!located.binary.empty()) {
      auto opened = OpenBinaryCode(located.binary, located.debug, Basename(dso));
      if (opened) {
        entry.source = std::move(*opened);
      } else {
        entry.note = opened.error().message;
      }
    } else if (located.embedded != nullptr) {
      entry.source = OpenEmbeddedCode(*located.embedded);
    } else {
      entry.note = fmt::format("no code of {}: {}", dso, located.source);
    }
    note = entry.note;
    return entry.source.get();
  }

  Result<const Disassembler*> DisassemblerFor(CodeArch arch) {
    auto& slot = disassemblers_[arch];
    if (!slot) {
      TRY_ASSIGN(auto opened, Disassembler::Open(arch, options_.syntax));
      slot = std::make_unique<Disassembler>(std::move(opened));
    }
    return slot.get();
  }

  struct Source {
    std::unique_ptr<CodeSource> source;
    std::string note;
  };
  const Recording& recording_;
  const AnnotateOptions& options_;
  BinaryLocator locator_;
  std::map<std::string, Source> sources_;
  std::map<CodeArch, std::unique_ptr<Disassembler>> disassemblers_;
};

}  // namespace

Result<AnnotateView> BuildAnnotateView(const Recording& recording, const AnnotateOptions& options,
                                       const SampleFilter& filter,
                                       const BinaryLocatorOptions& binaries) {
  AnnotateView view;
  const Profile& profile = recording.profile;
  const auto event = options.event ? options.event : ChooseEvent(profile);
  if (!event || *event >= profile.event_count()) return view;
  view.event = profile.event_name(*event);
  view.event_samples = profile.sample_count(*event);
  std::vector<FunctionHits> hits = CountHits(profile, *event, filter);
  if (options.symbols.empty()) {
    hits.resize(std::min(Covering(hits, options.coverage), options.max_functions));
    // Not the functions whose code a recording leaves out for their few
    // samples (EmbeddingLimits), so that the same ones are annotated with
    // the binaries or without them; the hottest always.
    const uint64_t enough = MinCodeSamples(view.event_samples);
    const auto few =
        std::remove_if(hits.begin() + std::min<size_t>(hits.size(), 1), hits.end(),
                       [&](const FunctionHits& h) { return h.total.samples < enough; });
    hits.erase(few, hits.end());
  } else {
    std::erase_if(hits, [&](const FunctionHits& h) {
      return !Named(profile.function(h.function), options.symbols);
    });
    if (hits.empty()) {
      return Fail(fmt::format("--annotate: no samples of {} in {}",
                              fmt::join(options.symbols, ", "), view.event));
    }
    for (const std::string& name : options.symbols) {
      const bool found = std::ranges::any_of(
          hits, [&](const FunctionHits& h) { return Named(profile.function(h.function), {name}); });
      if (!found) {
        view.warnings.push_back(
            fmt::format("--annotate: no samples of {} in {}", name, view.event));
      }
    }
  }
  Annotator annotator(recording, options, binaries);
  for (const FunctionHits& h : hits) view.functions.push_back(annotator.Annotate(h));
  return view;
}

}  // namespace sample::report
