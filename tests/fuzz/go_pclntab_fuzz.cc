// Fuzz target: a Go binary's function table (.gopclntab), which a report
// reads from any binary it is given. Checks, beyond not crashing, what
// go_pclntab.h promises: functions sorted, each a non-empty range that
// overlaps no other, FunctionAt finding each at its start and end - 1,
// and a line's file a name inside the table. Input: u64 .text address,
// then the section's bytes.
#include <cstdlib>
#include <span>

#include "libsample/symbols/go_pclntab.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(go_pclntab)(std::span<const std::byte> input) {
  using namespace sample;
  fuzz::InputTaker take(input);
  const auto text_start = take.Take<uint64_t>();
  auto table = GoPclntab::Parse(take.rest(), text_start);
  if (!table) return 0;
  const auto& functions = table->functions();
  for (size_t i = 0; i < functions.size(); ++i) {
    const GoPclntab::Function& f = functions[i];
    if (f.start >= f.end || f.name.empty()) std::abort();
    if (i > 0 && functions[i - 1].end > f.start) std::abort();
    if (table->FunctionAt(f.start) != &f || table->FunctionAt(f.end - 1) != &f) std::abort();
    if (i < 64) {
      for (uint64_t pc : {f.start, f.start + (f.end - f.start) / 2, f.end - 1}) {
        const auto line = table->LineAt(f, pc);
        if (!line) continue;
        const char* bytes = table->bytes().data();
        if (line->file.data() < bytes ||
            line->file.data() + line->file.size() > bytes + table->bytes().size()) {
          std::abort();
        }
      }
    }
  }
  return 0;
}
