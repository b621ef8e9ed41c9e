#include "report/text/text_table.h"

#include <algorithm>

#include "report/text/display_text.h"

namespace sample::report {

TextTable::TextTable(std::vector<TextColumn> columns) : columns_(std::move(columns)) {
  for (const TextColumn& c : columns_) {
    size_t width = std::max(DisplayWidth(c.title), c.min_width);
    for (const std::string& cell : c.cells) width = std::max(width, DisplayWidth(cell));
    widths_.push_back(width);
  }
}

template <typename CellOf>
std::string TextTable::Line(char lead, CellOf cell_of) const {
  std::string line(1, lead);
  for (size_t i = 0; i < columns_.size(); ++i) {
    const std::string& cell = cell_of(i);
    const size_t width = DisplayWidth(cell);
    const std::string pad(widths_[i] - std::min(widths_[i], width), ' ');
    line += i == 0 ? " " : "  ";
    if (columns_[i].right_aligned) {
      line += pad + cell;
    } else {
      line += cell;
      if (i + 1 != columns_.size()) line += pad;
    }
  }
  return line + "\n";
}

std::string TextTable::Heading() const {
  std::vector<std::string> rules;
  for (size_t width : widths_) rules.emplace_back(width, '.');
  return Line('#', [&](size_t i) -> const std::string& { return columns_[i].title; }) +
         Line('#', [&](size_t i) -> const std::string& { return rules[i]; }) + "#\n";
}

std::string TextTable::Row(size_t r) const {
  return Line(' ', [&](size_t i) -> const std::string& { return columns_[i].cells[r]; });
}

}  // namespace sample::report
