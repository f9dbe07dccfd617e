// Columns of text for people, padded to their display widths: the renderer
// behind the report's table (FormatTable) and the `uncore` CLI's tables.
//
//   report::TextTable table({.indent = "  "});
//   table.AddColumn("EVENT", report::Align::kLeft);
//   table.AddColumn("code", report::Align::kRight);
//   table.AddRow({"CAS_COUNT.RD", "0x04"});
//   std::string text = table.Render();
//   // "  EVENT         code\n  CAS_COUNT.RD  0x04\n"
//
// Rules (the report table's, docs/report-format.md):
//   - Cells are escaped with EscapeForTable (control characters, '\' and
//     invalid UTF-8 become visible escapes, so a cell never breaks a line),
//     unless the table is built with `cells_escaped` (its cells were made
//     from escaped pieces already).
//   - A column is as wide as its widest cell or header, counted in terminal
//     columns (DisplayWidth: East Asian wide characters and emoji take 2,
//     combining marks 0), and at least `min_width`; columns are separated
//     by `gap`; trailing blanks are cut from every line.
//   - The header line is printed when some column has a header; with
//     `header_rule`, a line of '-' as wide as the table follows it.
//   - A cell wider than its column (FormatRow with fixed widths) pushes the
//     rest of its line right rather than being cut.
//
// Guarantees: pure (no I/O); never throws; rows shorter than the column
// count are padded with empty cells, longer ones are cut to it.
#ifndef UNCORE_SDK_REPORT_TEXT_TABLE_H_
#define UNCORE_SDK_REPORT_TEXT_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

namespace uncore::report {

enum class Align { kLeft, kRight };

struct TextTableOptions {
  std::string indent;      // before every line
  std::string gap = "  ";  // between columns
  bool header_rule = false;
  bool cells_escaped = false;  // cells and headers are table-safe already
};

class TextTable {
 public:
  explicit TextTable(TextTableOptions options = {});

  // Adds a column; `min_width` in display columns.
  void AddColumn(std::string header, Align align, size_t min_width = 0);
  void AddRow(std::vector<std::string> cells);

  size_t num_rows() const { return rows_.size(); }

  // The width of the table's lines, indent included.
  size_t Width() const;

  // The header (and its rule) and every row, each line ending in '\n'.
  std::string Render() const;
  void Render(std::string* out) const;

  // One line (no '\n') for the header alone, or for `cells` laid out in the
  // columns' current widths: for tables printed as their rows arrive (set
  // the widths up front with min_width).
  std::string FormatHeader() const;
  std::string FormatRow(std::vector<std::string> cells) const;

 private:
  struct Column {
    std::string header;  // escaped
    Align align = Align::kLeft;
    size_t width = 0;
  };

  std::vector<std::string> Prepare(std::vector<std::string> cells) const;
  std::string Line(const std::vector<std::string>& cells) const;
  bool HasHeader() const;

  TextTableOptions options_;
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;  // escaped
};

}  // namespace uncore::report

#endif  // UNCORE_SDK_REPORT_TEXT_TABLE_H_
