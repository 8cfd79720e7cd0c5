#include "support/table.h"

#include <algorithm>

#include "support/status.h"

namespace alpa {

Table::Table(std::vector<std::string> headers, std::vector<Align> alignments)
    : headers_(std::move(headers)), alignments_(std::move(alignments)) {
  ALPA_CHECK(headers_.size() == alignments_.size());
}

void Table::AddRow(std::vector<std::string> cells) {
  ALPA_CHECK(cells.size() == headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render(int indent) const {
  std::vector<size_t> widths(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) {
    widths[c] = headers_[c].size();
    for (const auto& row : rows_) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  auto append_line = [&](const std::vector<std::string>& cells) {
    std::string line(static_cast<size_t>(indent), ' ');
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line += "  ";
      const std::string padding(widths[c] - cells[c].size(), ' ');
      line += alignments_[c] == Align::kRight ? padding + cells[c] : cells[c] + padding;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line;
    out += '\n';
  };
  append_line(headers_);
  std::vector<std::string> rules;
  for (size_t width : widths) rules.emplace_back(width, '-');
  append_line(rules);
  for (const auto& row : rows_) append_line(row);
  return out;
}

}  // namespace alpa
