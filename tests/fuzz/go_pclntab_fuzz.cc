// Fuzz target: a Go binary's function table (.gopclntab), which a report
// reads from any binary it is given, with the module data and the funcdata
// its inline trees are read from. Checks, beyond not crashing, what
// go_pclntab.h promises: functions sorted, each a non-empty range that
// overlaps no other, FunctionAt finding each at its start and end - 1, a
// line's file and a frame's name inside the table, and the frames at a pc
// ending with its function. Input: u64 .text address, u64 the table's
// address, u32 n and the table's n bytes, u32 m and m bytes of a data
// section for the module data, then the funcdata (go:func.* on).
#include <cstdlib>
#include <span>

#include "libsample/symbols/go_pclntab.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

bool Inside(const sample::GoPclntab& table, std::string_view text) {
  const char* bytes = table.bytes().data();
  return text.data() >= bytes && text.data() + text.size() <= bytes + table.bytes().size();
}

}  // namespace

SAMPLE_FUZZ_TARGET(go_pclntab)(std::span<const std::byte> input) {
  using namespace sample;
  fuzz::InputTaker take(input);
  const auto text_start = take.Take<uint64_t>();
  const auto table_address = take.Take<uint64_t>();
  const std::span<const std::byte> section = take.TakeBytes(take.Take<uint32_t>());
  const std::span<const std::byte> data = take.TakeBytes(take.Take<uint32_t>());
  auto table = GoPclntab::Parse(section, text_start);
  if (!table) return 0;
  if (table->FindGoFunc(data, table_address)) table->AttachFuncData(take.rest());
  const auto& functions = table->functions();
  for (size_t i = 0; i < functions.size(); ++i) {
    const GoPclntab::Function& f = functions[i];
    if (f.start >= f.end || f.name.empty()) std::abort();
    if (i > 0 && functions[i - 1].end > f.start) std::abort();
    if (table->FunctionAt(f.start) != &f || table->FunctionAt(f.end - 1) != &f) std::abort();
    if (i >= 64) continue;
    const GoPclntab::FunctionTables tables = table->TablesOf(f);
    for (uint64_t pc : {f.start, f.start + (f.end - f.start) / 2, f.end - 1}) {
      if (const auto line = table->LineAt(f, pc); line && !Inside(*table, line->file)) {
        std::abort();
      }
      const auto frames = table->FramesAt(tables, pc);
      if (frames.empty() || frames.back().function != f.name) std::abort();
      for (const GoPclntab::Frame& frame : frames) {
        if (!Inside(*table, frame.function)) std::abort();
        if (frame.line && !Inside(*table, frame.line->file)) std::abort();
      }
    }
  }
  return 0;
}
