// Tests of the table report (FormatTable), compared with the golden files
// tests/report/golden/table*.txt.
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/report/report.h"
#include "tests/report/report_test_util.h"

namespace uncore::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(TableTest, MatchesGolden) {
  ExpectMatchesGolden(FormatTable(MakeResults(false)), "table.txt");
}

TEST(TableTest, SimulatedMatchesGolden) {
  ExpectMatchesGolden(FormatTable(MakeResults(true)), "table_simulated.txt");
}

TEST(TableTest, SimulatedBannerIffSimulated) {
  const std::string banner =
      "SIMULATED — every count below is made up by the simulator, not "
      "measured";
  EXPECT_THAT(FormatTable(MakeResults(true)), HasSubstr(banner));
  EXPECT_THAT(FormatTable(MakeResults(false)), Not(HasSubstr("SIMULATED")));
  Results vertical = MakeResults(true);
  vertical.events[0].canonical = std::string(200, 'x');
  EXPECT_THAT(FormatTable(vertical), HasSubstr(banner));
}

TEST(TableTest, NamesNeverBreakLines) {
  const Results results = MakeResults(false);
  const std::string table = FormatTable(results);
  EXPECT_TRUE(IsValidUtf8(table));
  EXPECT_THAT(table, HasSubstr(kWeirdNameInTable));
  EXPECT_THAT(table, Not(HasSubstr("comma\nnewline")));
  const std::vector<std::string> lines = Lines(table);
  // The weird region's row (main table) starts with its indented name.
  int rows = 0;
  for (const std::string& line : lines) {
    if (line.starts_with("  " + kWeirdNameInTable + "  ")) ++rows;
  }
  EXPECT_EQ(rows, 2);  // the main table and the per-socket table
}

TEST(TableTest, ShowsUnitsEstimatesMetricsAndHidesMetricOnlyEvents) {
  const std::string table = FormatTable(MakeResults(false));
  EXPECT_THAT(table, HasSubstr("imc/CAS_COUNT.RD"));
  EXPECT_THAT(table, HasSubstr("cbo/LLC_VICTIMS.M_STATE"));
  EXPECT_THAT(table, Not(HasSubstr("imc/CAS_COUNT.WR")));  // from_metric
  EXPECT_THAT(table, HasSubstr("1 event needed only by metrics not shown"));
  EXPECT_THAT(table, HasSubstr("2.39 Joules"));  // (20165 + 19000) * 2^-14
  EXPECT_THAT(table, HasSubstr("~1,550,000"));   // solve, estimated
  EXPECT_THAT(table, HasSubstr("~ estimated"));
  EXPECT_THAT(table, HasSubstr("1.33 Gbytes/s"));
  EXPECT_THAT(table, HasSubstr("n/a"));
  EXPECT_THAT(table, HasSubstr("1,152,921,504,606,846,977"));  // exact
  EXPECT_THAT(table, HasSubstr("errors (1):\n  - region \"io\" closed"));
  EXPECT_THAT(table, HasSubstr("warnings (1):\n  - multiplexing"));
}

TEST(TableTest, RegionsInTreeOrder) {
  const std::vector<std::string> lines = Lines(FormatTable(MakeResults(false)));
  std::vector<std::string> names;
  for (const std::string& line : lines) {
    for (std::string_view name :
         {"main ", "  solve ", "    assemble ", "  late ", "io "}) {
      if (line.starts_with(name)) names.emplace_back(name);
    }
    if (line.starts_with("per socket")) break;
  }
  // "late" was entered after "io" but belongs under "main".
  EXPECT_THAT(names, ::testing::ElementsAre("main ", "  solve ",
                                            "    assemble ", "  late ", "io "));
}

TEST(TableTest, OrphanRegionShowsItsPath) {
  Results results = MakeResults(false);
  results.regions.erase(results.regions.begin() + 1);  // drop main/solve
  const std::string table = FormatTable(results);
  EXPECT_THAT(table, HasSubstr("\n    main/solve/assemble "));
}

TEST(TableTest, TooWideSwitchesToVerticalLayout) {
  Results results = MakeResults(false);
  results.events[2].canonical =
      "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f,filter_tid=0x3f,"
      "filter_nid=0x1,filter_opc=0x182";
  const std::string table = FormatTable(results);
  ExpectMatchesGolden(table, "table_vertical.txt");
  EXPECT_THAT(table, HasSubstr("calls 100, wall 600 ms (min 5.00 ms, max "
                               "7.50 ms)"));
  EXPECT_THAT(table, HasSubstr("(socket 0: 15,000,000; socket 1: 12,000,000)"));
  for (const std::string& line : Lines(FormatTable(MakeResults(false)))) {
    EXPECT_LE(DisplayWidth(line), static_cast<size_t>(kMaxTableWidth)) << line;
  }
}

TEST(TableTest, SingleSocketHasNoBreakdown) {
  Results results = MakeResults(false);
  results.run.sockets = {0};
  for (RegionResult& region : results.regions) {
    for (EventCounts& counts : region.inclusive) {
      counts.per_socket.resize(1);
    }
  }
  EXPECT_THAT(FormatTable(results), Not(HasSubstr("per socket")));
  EXPECT_THAT(FormatTable(MakeResults(false)), HasSubstr("per socket"));
}

TEST(TableTest, EmptyAndInconsistentResults) {
  Results empty;
  const std::string table = FormatTable(empty);
  EXPECT_THAT(table, HasSubstr("(no regions were recorded)"));
  EXPECT_THAT(table, HasSubstr("backend ?"));
  Results short_vectors = MakeResults(false);
  short_vectors.regions[0].inclusive.clear();
  short_vectors.regions[0].metrics.clear();
  const std::vector<std::string> lines = Lines(FormatTable(short_vectors));
  bool found = false;
  for (const std::string& line : lines) {
    if (line.starts_with("main ")) {
      found = true;
      EXPECT_THAT(line,
                  ::testing::MatchesRegex(".* 2.40 s +- +- +- +n/a +n/a"));
      break;
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace uncore::report
