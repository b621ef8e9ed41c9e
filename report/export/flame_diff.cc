#include "report/export/flame_diff.h"

#include <algorithm>
#include <cmath>

namespace sample::report {
namespace {

const ExportSection* SectionNamed(const ExportInput& input, const std::string& name) {
  for (const ExportSection& s : input.sections) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

StackTree BaselineTree(const ExportInput& before, const std::string& event, bool by_comm) {
  const ExportSection* section = SectionNamed(before, event);
  return section == nullptr ? StackTree(by_comm) : BuildStackTree(before, *section, by_comm);
}

}  // namespace

FlameDiff::FlameDiff(const ExportInput& before, const ExportInput& after, size_t after_section,
                     bool by_comm)
    : before_(BaselineTree(before, after.sections[after_section].name, by_comm)),
      after_(BuildStackTree(after, after.sections[after_section], by_comm)),
      diff_(before_, before.profile(), after_, after.profile()),
      by_period_(after.options.weight == ExportWeight::kPeriod) {
  for (uint32_t id = 1; id < after_.nodes().size(); ++id) {
    max_abs_delta_ = std::max(max_abs_delta_, std::fabs(Delta(id)));
  }
}

}  // namespace sample::report
