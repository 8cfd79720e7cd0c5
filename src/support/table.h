// Plain-text tables for the command line: a header row, aligned columns, numbers right-aligned.
//
//   opcode       count
//   -----------  -----
//   parameter       12
//   dot              6
#ifndef ALPA_SUPPORT_TABLE_H_
#define ALPA_SUPPORT_TABLE_H_

#include <string>
#include <vector>

namespace alpa {

class Table {
 public:
  enum class Align { kLeft, kRight };

  // One entry per column; every row must have as many cells as there are columns.
  Table(std::vector<std::string> headers, std::vector<Align> alignments);

  void AddRow(std::vector<std::string> cells);
  int64_t row_count() const { return static_cast<int64_t>(rows_.size()); }

  // The table with `indent` spaces before every line, each line ending in '\n'. Columns are as
  // wide as their widest cell and separated by two spaces; trailing spaces are trimmed.
  std::string Render(int indent = 0) const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> alignments_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace alpa

#endif  // ALPA_SUPPORT_TABLE_H_
