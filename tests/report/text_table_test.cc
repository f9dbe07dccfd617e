#include "sdk/report/text_table.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/report/report.h"

namespace uncore::report {
namespace {

TEST(TextTableTest, PadsColumnsToTheirWidestCell) {
  TextTable table;
  table.AddColumn("name", Align::kLeft);
  table.AddColumn("n", Align::kRight);
  table.AddRow({"a", "1"});
  table.AddRow({"long name", "1,234"});
  EXPECT_EQ(table.Render(),
            "name           n\n"
            "a              1\n"
            "long name  1,234\n");
  EXPECT_EQ(table.Width(), 16u);
}

TEST(TextTableTest, IndentGapRuleAndMinWidth) {
  TextTable table({.indent = "  ", .gap = " ", .header_rule = true});
  table.AddColumn("a", Align::kRight, 3);
  table.AddColumn("b", Align::kLeft);
  table.AddRow({"1", "x"});
  EXPECT_EQ(table.Render(),
            "    a b\n"
            "  -----\n"
            "    1 x\n");
}

TEST(TextTableTest, TrailingBlanksAreCut) {
  TextTable table;
  table.AddColumn("a", Align::kLeft);
  table.AddColumn("b", Align::kLeft);
  table.AddRow({"x", ""});
  table.AddRow({"", ""});
  EXPECT_EQ(table.Render(), "a  b\nx\n\n");
}

TEST(TextTableTest, NoHeaderLineWhenNoColumnHasAHeader) {
  TextTable table({.indent = "  "});
  table.AddColumn("", Align::kLeft);
  table.AddColumn("", Align::kLeft);
  table.AddRow({"imc.X", "GB/s"});
  EXPECT_EQ(table.Render(), "  imc.X  GB/s\n");
}

TEST(TextTableTest, WidthsCountCodePoints) {
  TextTable table;
  table.AddColumn("x", Align::kRight);
  table.AddColumn("y", Align::kLeft);
  table.AddRow({"é→", "z"});
  table.AddRow({"abc", "z"});
  EXPECT_EQ(table.Render(),
            "  x  y\n"
            " é→  z\n"
            "abc  z\n");
}

// Wide characters (CJK, fullwidth, emoji) take two columns of a terminal,
// combining marks none: rows stay aligned (they shifted when code points
// were counted).
TEST(TextTableTest, WidthsCountTerminalColumns) {
  TextTable table;
  table.AddColumn("NAME", Align::kLeft);
  table.AddColumn("v", Align::kRight);
  table.AddRow({"ab", "1"});
  table.AddRow({"\u4e2d\u6587", "2"});        // 中文: 4 columns
  table.AddRow({"e\u0301e\u0301", "3"});      // éé, combining: 2
  table.AddRow({"\U0001F44Dx", "4"});         // 👍x: 3
  table.AddRow({"\uFF21\uFF22\uFF23", "5"});  // ＡＢＣ fullwidth: 6
  EXPECT_EQ(table.Render(),
            "NAME    v\n"
            "ab      1\n"
            "\u4e2d\u6587    2\n"
            "e\u0301e\u0301      3\n"
            "\U0001F44Dx     4\n"
            "\uFF21\uFF22\uFF23  5\n");
  EXPECT_EQ(DisplayWidth("\u4e2d\u6587"), 4u);
  EXPECT_EQ(DisplayWidth("e\u0301"), 1u);
  EXPECT_EQ(DisplayWidth("\U0001F44D"), 2u);
}

TEST(TextTableTest, CellsAreEscapedLikeTheReport) {
  TextTable table;
  table.AddColumn("a\tb", Align::kLeft);
  table.AddColumn("c", Align::kLeft);
  table.AddRow({"line\nbreak\x01\\", "\xff"});
  EXPECT_EQ(table.Render(),
            "a\\tb               c\n"
            "line\\nbreak\\x01\\\\  \\xff\n");
}

TEST(TextTableTest, EscapedCellsAreLeftAlone) {
  TextTableOptions options;
  options.cells_escaped = true;
  TextTable table(options);
  table.AddColumn("a", Align::kLeft);
  table.AddRow({"x\\\\y"});
  EXPECT_EQ(table.Render(), "a\nx\\\\y\n");
}

TEST(TextTableTest, ShortRowsArePaddedLongOnesCut) {
  TextTable table;
  table.AddColumn("a", Align::kLeft);
  table.AddColumn("b", Align::kRight);
  table.AddRow({"1"});
  table.AddRow({"2", "3", "4"});
  EXPECT_EQ(table.Render(), "a  b\n1\n2  3\n");
}

TEST(TextTableTest, FormatRowForStreamedTables) {
  TextTable table;
  table.AddColumn("#  time", Align::kRight, 8);
  table.AddColumn("count", Align::kRight, 6);
  EXPECT_EQ(table.FormatHeader(), " #  time   count");
  EXPECT_EQ(table.FormatRow({"1.5", "12"}), "     1.5      12");
  // A cell wider than its column pushes the rest right.
  EXPECT_EQ(table.FormatRow({"123456789", "1"}), "123456789       1");
  EXPECT_EQ(table.num_rows(), 0u);
}

TEST(TextTableTest, EmptyTable) {
  TextTable table;
  EXPECT_EQ(table.Render(), "");
  EXPECT_EQ(table.Width(), 0u);
}

}  // namespace
}  // namespace uncore::report
