// A table of text columns laid out as perf lays out its reports: each
// column as wide as its title, its widest cell or its minimum; numbers
// right-aligned, names left-aligned; the first column after the lead
// character and a space, the others two spaces apart, and no trailing
// spaces after a last left-aligned column. Widths count characters, not
// bytes (a UTF-8 sequence is one column), so a name like "café" lines up.
// Cells are shown as they are: escape names from a file first (OneLine).
#pragma once

#include <string>
#include <vector>

namespace sample::report {

struct TextColumn {
  std::string title;
  bool right_aligned = true;
  size_t min_width = 0;  // perf keeps percentage columns 7 or 8 wide
  std::vector<std::string> cells;
};

// Owns the columns; computes the widths once.
class TextTable {
 public:
  explicit TextTable(std::vector<TextColumn> columns);

  // The titles, a rule of dots under each, and an empty '#' line.
  std::string Heading() const;

  // The row of the r-th cell of every column.
  std::string Row(size_t r) const;

 private:
  template <typename CellOf>
  std::string Line(char lead, CellOf cell_of) const;

  std::vector<TextColumn> columns_;
  std::vector<size_t> widths_;
};

}  // namespace sample::report
