// Fuzz target: sample-report end to end on an arbitrary file: loading
// (ordered records, process table, symbolization, profile) and one of the
// views, picked by the input, in text or JSON, or one of the exports (folded,
// svg, html, pprof, speedscope, gecko). Binaries are looked for only
// under a --symfs that does not exist and debuginfod is off, so the result
// depends on the input alone. Input: u8 view selector (bits 0-2: the view;
// bits 3-4, when not 0, an export instead of text, the json bit 7 choosing
// among the second three; bit 5: rewrite every chunk's checksum first, as
// sample_file_fuzz.cc does; bit 6: source lines, and with view 0 in text,
// --annotate), then the file. The annotate view's bounds (AnnotateBounds)
// are small here, so that the code of the corpus's functions (dozens to
// hundreds of instructions) is cut, and runs over the view's rows and
// code, as megabytes of a crafted file's code would be.
#include <fcntl.h>

#include <cstdlib>

#include "libsample/memory_file.h"
#include "report/report_command.h"
#include "tests/fuzz/chunk_checksums.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(report)(std::span<const std::byte> input) {
  using namespace sample;
  using namespace sample::report;
  static MemoryFile* file = [] {
    auto created = MemoryFile::Create("fuzz-report", {});
    if (!created) std::abort();
    return new MemoryFile(std::move(*created));
  }();
  fuzz::InputTaker take(input);
  const uint8_t selector = take.Take<uint8_t>();
  std::vector<std::byte> bytes(take.rest().begin(), take.rest().end());
  if (selector & 0x20) fuzz::FixChunkChecksums(bytes);
  if (!file->Assign(bytes)) std::abort();

  ReportOptions options;
  options.input = file->path();
  options.load.jobs = 1;
  options.load.binaries.files.symfs = "/nonexistent-sample-fuzz-symfs";
  options.load.binaries.files.use_debuginfod = false;
  options.load.srclines = (selector & 0x40) != 0;
  options.format = (selector & 0x80) != 0 ? OutputFormat::kJson : OutputFormat::kText;
  if (const unsigned pick = (selector >> 3) & 3; pick != 0) {
    static constexpr OutputFormat kExports[] = {OutputFormat::kFolded,     OutputFormat::kSvg,
                                                OutputFormat::kHtml,       OutputFormat::kPprof,
                                                OutputFormat::kSpeedscope, OutputFormat::kGecko};
    options.format = kExports[pick - 1 + ((selector & 0x80) != 0 ? 3 : 0)];
    options.exports.icicle = (selector & 1) != 0;
    options.exports.weight = (selector & 2) != 0 ? ExportWeight::kPeriod : ExportWeight::kSamples;
  }
  switch (selector & 7) {
    case 0:
      // With source lines: --annotate, the code a crafted file embeds decoded.
      options.annotate.on = options.load.srclines && options.format == OutputFormat::kText;
      options.annotate.bounds = AnnotateBounds{.max_function_bytes = 4096,
                                               .whole_function = 24,
                                               .near_sampled = 3,
                                               .view_rows = 64,
                                               .view_code_bytes = 8192};
      break;
    case 1:
      options.header_only = true;
      break;
    case 2:
      options.stats = true;
      options.header = true;
      break;
    case 3:
      options.script = true;
      break;
    case 4:
      options.view.call_graph = CallGraphSpec{};
      options.view.call_graph->threshold = 0;
      break;
    case 5:
      options.view.call_graph = CallGraphSpec{CallGraphMode::kFolded, 0, CallOrder::kCaller};
      options.view.sort_keys = {SortKey::kSym, SortKey::kSrcline};
      break;
    case 6:
      options.view.children = true;
      options.view.sort_keys = {SortKey::kPid, SortKey::kTid, SortKey::kCpu, SortKey::kDso,
                                SortKey::kDsoDaddr, SortKey::kSymbolDaddr};
      options.view.show_nr_samples = true;
      options.view.show_total_period = true;
      break;
    default:
      options.view.call_graph = CallGraphSpec{CallGraphMode::kFractal, 0, CallOrder::kCallee};
      options.filters.time = *TimeSpec::Parse("10%-90%");
      break;
  }
  [[maybe_unused]] volatile size_t size = 0;
  std::vector<std::string> notes;
  if (!ChooseCommand(options, CommandContext{}, notes)) return 0;
  if (auto output = RunReport(options)) {
    size = output->text.size();
    // --script as text streams (report/script_stream.h): to /dev/null here.
    static const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (output->stream) (void)output->stream(null_fd);
  }
  return 0;
}
