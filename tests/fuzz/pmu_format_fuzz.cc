// Fuzz target: the PMU format and term parsers (sysfs format/ files and
// events/ term lists, and the numbers in both). Beyond not crashing: a
// parsed format prints as text that parses to the same bits, and Apply
// writes only inside the format's mask. Input: u64 value, then the text.
#include <linux/perf_event.h>

#include <cstdlib>
#include <string_view>

#include "libsample/events/pmu_format.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(pmu_format)(std::span<const std::byte> input) {
  using namespace sample;
  fuzz::InputTaker take(input);
  const uint64_t value = take.Take<uint64_t>();
  const std::string_view text(reinterpret_cast<const char*>(take.rest().data()),
                              take.rest().size());

  (void)ParseTermNumber(text);
  if (auto terms = ParsePmuTerms(text)) {
    for (const PmuTerm& term : *terms) {
      if (term.key.empty()) std::abort();  // documented as an error
    }
  }
  auto format = PmuFormat::Parse("term", text);
  if (!format) return 0;
  auto again = PmuFormat::Parse("term", format->ToString());
  if (!again || again->field() != format->field() || again->mask() != format->mask()) {
    std::abort();
  }
  perf_event_attr attr{};
  if (format->Apply(value, &attr)) {
    uint64_t written = attr.config;
    if (format->field() == PmuFormat::Field::kConfig1) written = attr.config1;
    if (format->field() == PmuFormat::Field::kConfig2) written = attr.config2;
    if ((written & ~format->mask()) != 0) std::abort();
  }
  return 0;
}
