#include "sdk/report/text_table.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sdk/report/report.h"

namespace uncore::report {

TextTable::TextTable(TextTableOptions options) : options_(std::move(options)) {}

void TextTable::AddColumn(std::string header, Align align, size_t min_width) {
  if (!options_.cells_escaped) header = EscapeForTable(header);
  const size_t width = std::max(min_width, DisplayWidth(header));
  columns_.push_back({std::move(header), align, width});
}

std::vector<std::string> TextTable::Prepare(
    std::vector<std::string> cells) const {
  cells.resize(columns_.size());
  if (!options_.cells_escaped) {
    for (std::string& cell : cells) cell = EscapeForTable(cell);
  }
  return cells;
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells = Prepare(std::move(cells));
  for (size_t c = 0; c < cells.size(); ++c) {
    columns_[c].width = std::max(columns_[c].width, DisplayWidth(cells[c]));
  }
  rows_.push_back(std::move(cells));
}

size_t TextTable::Width() const {
  size_t width = columns_.empty() ? 0 : options_.indent.size();
  for (size_t c = 0; c < columns_.size(); ++c) {
    width += columns_[c].width + (c > 0 ? options_.gap.size() : 0);
  }
  return width;
}

bool TextTable::HasHeader() const {
  return std::any_of(columns_.begin(), columns_.end(),
                     [](const Column& c) { return !c.header.empty(); });
}

std::string TextTable::Line(const std::vector<std::string>& cells) const {
  std::string line = options_.indent;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (c > 0) line += options_.gap;
    const size_t width = DisplayWidth(cells[c]);
    const std::string pad(
        columns_[c].width > width ? columns_[c].width - width : 0, ' ');
    if (columns_[c].align == Align::kLeft) {
      line += cells[c];
      line += pad;
    } else {
      line += pad;
      line += cells[c];
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

std::string TextTable::FormatHeader() const {
  std::vector<std::string> headers;
  headers.reserve(columns_.size());
  for (const Column& column : columns_) headers.push_back(column.header);
  return Line(headers);
}

std::string TextTable::FormatRow(std::vector<std::string> cells) const {
  return Line(Prepare(std::move(cells)));
}

void TextTable::Render(std::string* out) const {
  if (columns_.empty()) return;
  if (HasHeader()) {
    *out += FormatHeader() + "\n";
    if (options_.header_rule) {
      *out += options_.indent +
              std::string(Width() - options_.indent.size(), '-') + "\n";
    }
  }
  for (const std::vector<std::string>& row : rows_) *out += Line(row) + "\n";
}

std::string TextTable::Render() const {
  std::string out;
  Render(&out);
  return out;
}

}  // namespace uncore::report
