// Text of --header / --header-only and --stats (declared in text_printer.h).
#include <fmt/format.h>

#include "report/header_view.h"
#include "report/text_printer.h"

namespace sample::report {
namespace {

void Line(std::string& out, std::string_view key, std::string_view value) {
  out += fmt::format("# {:<14} : {}\n", key, value);
}

std::string EventLine(const EventInfo& e) {
  std::string line =
      fmt::format("name = {}, type = {} ({}), config = {:#x}, {} = {}", e.name, e.type, e.type_name,
                  e.config, e.freq ? "sample_freq" : "sample_period", e.period_or_freq);
  line += fmt::format(", sample_type = {}", e.sample_type_names);
  if (e.read_format != 0) line += fmt::format(", read_format = {}", e.read_format_names);
  if (e.chain_capture.mode != sample::ChainCapture::kNone) {
    line += fmt::format(", call-graph = {}", DescribeChainCapture(e.chain_capture));
  }
  if (e.sample_regs_user != 0)
    line += fmt::format(", sample_regs_user = {:#x}", e.sample_regs_user);
  if (e.exclude_callchain_user) line += ", exclude_callchain_user = 1";
  if (e.exclude_user) line += ", exclude_user = 1";
  if (e.exclude_kernel) line += ", exclude_kernel = 1";
  if (e.inherit) line += ", inherit = 1";
  for (const AttrField& f : e.attr_fields) {
    line += f.hex ? fmt::format(", {} = {:#x}", f.name, f.value)
                  : fmt::format(", {} = {}", f.name, f.value);
    if (!f.meaning.empty()) line += fmt::format(" ({})", f.meaning);
  }
  line += fmt::format(", ids = {}", e.ids);
  if (!e.group_members.empty()) {
    line += ", group members = {";
    for (size_t i = 0; i < e.group_members.size(); ++i) {
      line += (i == 0 ? " " : ", ") + e.group_members[i];
    }
    line += " }";
  }
  line += fmt::format(", samples = {}", e.samples);
  return line;
}

std::string FileState(const HeaderView& h) {
  if (h.finalized) return fmt::format("finalized, {} bytes", h.file_size);
  return fmt::format("not finalized (recorder did not close it); recovered {} of {} bytes",
                     h.valid_end, h.file_size);
}

}  // namespace

std::string FormatHeaderText(const HeaderView& h) {
  std::string out = "# ========\n";
  if (!h.start_time.empty()) Line(out, "captured on", h.start_time);
  Line(out, "hostname", h.hostname);
  Line(out, "os release", h.os_release);
  Line(out, "os version", h.os_version);
  Line(out, "arch", h.arch);
  Line(out, "nrcpus online", h.cpus_online);
  Line(out, "cmdline", h.cmdline);
  Line(out, "recorder", h.recorder_version);
  Line(out, "duration", fmt::format("{:.3f} s", h.duration_s));
  for (const EventInfo& e : h.events) Line(out, "event", EventLine(e));
  Line(out, "samples", fmt::format("{}", h.samples));
  Line(out, "lost samples", fmt::format("{}", h.lost_samples));
  for (const auto& [cpu, counts] : h.per_cpu) {
    Line(out, fmt::format("cpu {}", cpu),
         fmt::format("{} samples, {} lost", counts.samples, counts.lost_samples));
  }
  for (const auto& [path, id] : h.build_ids) Line(out, "build-id", fmt::format("{} {}", id, path));
  Line(out, "file", FileState(h));
  out += "# ========\n#\n";
  return out;
}

std::string FormatStatsText(const HeaderView& h, const LoadStats& stats) {
  std::string out = "Aggregated stats:\n";
  out += fmt::format("{:>20} events: {:>10}\n", "TOTAL", stats.records);
  for (uint32_t type = 0; type < stats.records_by_type.size(); ++type) {
    const uint64_t n = stats.records_by_type[type];
    if (n == 0) continue;
    out += fmt::format("{:>20} events: {:>10}  ({:4.1f}%)\n", RecordTypeName(type), n,
                       100.0 * static_cast<double>(n) / static_cast<double>(stats.records));
  }
  out += "\nPer CPU:\n";
  for (const auto& [cpu, counts] : stats.per_cpu) {
    out += fmt::format("{:>20}: {:>10} samples, {} lost in {} LOST records\n",
                       fmt::format("cpu {}", cpu), counts.samples, counts.lost_samples,
                       counts.lost_records);
  }
  out += "\nProblems:\n";
  auto row = [&](std::string_view what, uint64_t n, std::string_view note = "") {
    out += fmt::format("{:>20}: {:>10}{}\n", what, n, note);
  };
  row("lost samples", stats.lost_samples);
  row("malformed records", stats.malformed_records);
  row("bad chunks skipped", stats.bad_chunks);
  row("unknown event ids", stats.unknown_event_records);
  row("unknown group reads", stats.unknown_group_reads);
  row("unknown frames", stats.unknown_frames, fmt::format(" of {} frames", stats.frames));
  row("missing binaries", stats.missing_binaries);
  row("mismatched binaries", stats.mismatched_binaries);
  const UnwindStats& unwind = stats.unwind;
  if (unwind.dwarf_samples != 0) {
    out += "\nDWARF unwinding:\n";
    row("samples unwound", unwind.dwarf_samples,
        fmt::format(", {} user frames", unwind.dwarf_frames));
    for (size_t i = 0; i < unwind.stops.size(); ++i) {
      if (unwind.stops[i] == 0) continue;
      row(fmt::format("ended: {}", UnwindStopName(static_cast<UnwindStop>(i))), unwind.stops[i]);
    }
    if (unwind.missing_binaries != 0) row("binaries not found", unwind.missing_binaries);
    if (unwind.unopened_modules != 0) row("binaries not opened", unwind.unopened_modules);
    row("walks, cached rules", unwind.cached_walks);
    row("walks, libdw", unwind.libdw_walks);
  }
  if (unwind.leaf_samples != 0) {
    out += "\nLeaf check (fp,leaf):\n";
    row("samples checked", unwind.leaf_samples);
    row("callers inserted", unwind.leaf_callers_inserted);
  }
  if (!stats.symbol_sources.empty()) {
    out += "\nSymbols from:\n";
    for (const auto& [path, source] : stats.symbol_sources) {
      out += fmt::format("  {}: {}\n", path, source);
    }
  }
  out += fmt::format("\nFile: {}\n", FileState(h));
  return out;
}

}  // namespace sample::report
