#include "record/record_summary.h"

#include "libsample/symbols/symbol_embedding.h"
#include "record/facts/postmortem_facts.h"

#include <cstdio>

#include <fmt/format.h>

#include "record/events/event_opener.h"
#include "record/recorder.h"

namespace sample::record {

void PrintSummary(const RecordSummary& summary, const std::vector<CpuCounters>& counters,
                  const std::vector<int>& cpus, const RecordOptions& options) {
  const double ratio =
      summary.bytes_written ? double(summary.raw_bytes) / double(summary.bytes_written) : 0;
  fmt::print(stderr,
             "[ sample-record: {} samples, {} lost, {:.2f} s, {} written ({:.1f}x compressed), "
             "{} ]\n",
             summary.samples, summary.lost_samples, summary.seconds,
             HumanBytes(summary.bytes_written), ratio,
             summary.written_to.empty() ? options.output : summary.written_to);
  if (summary.lost_samples == 0) return;
  std::string per_cpu;
  uint64_t throttles = 0;
  for (size_t i = 0; i < counters.size(); ++i) {
    const uint64_t lost = counters[i].lost_samples + counters[i].dropped_samples;
    if (lost != 0) {
      per_cpu += fmt::format("{}cpu{}: {}", per_cpu.empty() ? "" : ", ", cpus[i], lost);
    }
    throttles += counters[i].throttles;
  }
  // A stack copy is most of a dwarf sample: 8 KiB of the default 8.4.
  const uint32_t stack = options.chain_capture.stack_size;
  const std::string smaller_stack =
      stack >= 1024 ? fmt::format(", or copy less user stack (--call-graph {},{})",
                                  ChainCaptureName(options.chain_capture), stack / 2)
                    : "";
  const uint64_t frequency = options.frequency != 0 ? options.frequency : kDefaultFrequency;
  fmt::print(stderr,
             "sample-record: WARNING: {} samples lost ({}). Use a larger buffer (-m {}) or a "
             "lower frequency (-F {}){}.\n",
             summary.lost_samples, per_cpu, summary.mmap_pages * 4,
             options.period == 0 ? frequency / 2 : 1000, smaller_stack);
  if (throttles != 0) {
    fmt::print(stderr,
               "sample-record: the kernel throttled sampling {} times "
               "(kernel.perf_event_max_sample_rate / perf_cpu_time_max_percent).\n",
               throttles);
  }
}

void PrintClosingNotes(const ClosingNotes& notes) {
  if (!notes.kernel.empty()) fmt::print(stderr, "sample-record: note: {}\n", notes.kernel);
  if (!notes.vdso.empty()) fmt::print(stderr, "sample-record: note: {}\n", notes.vdso);
  const EmbedSummary& embedded = notes.embedded;
  if (!embedded.done) return;
  fmt::print(stderr, "sample-record: {}\n", DescribeEmbedded(embedded));
  // A few of what was left out, and how many more.
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < embedded.notes.size() && i < kShown; ++i) {
    fmt::print(stderr, "sample-record: note: not embedded: {}\n", embedded.notes[i]);
  }
  if (embedded.notes.size() > kShown) {
    fmt::print(stderr, "sample-record: note: {} more not embedded\n",
               embedded.notes.size() - kShown);
  }
  if (embedded.code_omitted != 0) {
    const EmbeddingLimits limits;
    fmt::print(stderr,
               "sample-record: note: the machine code of {} functions with samples was not "
               "stored (over {} KiB each, or past {} MiB in all)\n",
               embedded.code_omitted, limits.max_function_code >> 10, limits.code_budget >> 20);
  }
}

}  // namespace sample::record
