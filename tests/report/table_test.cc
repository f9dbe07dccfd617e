// Tests of the table report (FormatTable), compared with the golden files
// tests/report/golden/table*.txt.
#include <algorithm>
#include <cstdint>
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

// One region with one event on one socket, every call measured, and the
// measurement costing `overhead_ns`.
Results OneRegion(uint64_t calls, uint64_t wall_ns, uint64_t overhead_ns,
                  uint64_t sampled_calls) {
  Results results;
  results.run.backend = "direct";
  results.run.sockets = {0};
  results.events = {{"imc/cas_count.rd", "imc/CAS_COUNT.RD", "ctl=0x00400304",
                     "", 1.0, false}};
  RegionResult region = Region("solve", "solve", 0, calls, wall_ns,
                               wall_ns / calls, wall_ns / calls);
  region.overhead_ns = overhead_ns;
  region.sampled_calls = sampled_calls;
  EventCounts counts;
  counts.total = 123'456;
  counts.per_socket.push_back(123'456);
  // One element each, copied (GCC 14's -Warray-bounds misreads an
  // initializer-list assignment of this struct here).
  region.inclusive.assign(1, counts);
  region.exclusive.assign(1, counts);
  results.regions.push_back(region);
  return results;
}

// The same results in the vertical layout (an event spec too wide for the
// horizontal one).
Results Vertical(Results results) {
  results.events[0].canonical = std::string(kMaxTableWidth, 'x');
  return results;
}

constexpr std::string_view kEstimatedNote =
    "~ estimated: scaled up from a partial count, multiplexed by the kernel "
    "or sampled (UNCORE_SAMPLE: only some calls measured)\n";
constexpr std::string_view kOverheadNote =
    "!P% before a wall time: the counter reads took P% of this region's "
    "time (more than 1%): read-latency dominated;\n  its rates use the "
    "counters' own window (counted_ns) and stay exact, its counts include "
    "the reads' own traffic;\n  measure a coarser region or sample it with "
    "UNCORE_SAMPLE=N\n";

TEST(TableTest, MatchesGolden) {
  ExpectMatchesGolden(FormatTable(MakeResults(false)), "table.txt");
}

TEST(TableTest, SimulatedMatchesGolden) {
  ExpectMatchesGolden(FormatTable(MakeResults(true)), "table_simulated.txt");
}

TEST(TableTest, CostlyMatchesGolden) {
  // Without the energy event, so that the marks still fit the horizontal
  // layout.
  Results results = MakeCostlyResults();
  results.events.erase(results.events.begin() + 1);
  for (RegionResult& region : results.regions) {
    region.inclusive.erase(region.inclusive.begin() + 1);
    region.exclusive.erase(region.exclusive.begin() + 1);
  }
  const std::string table = FormatTable(results);
  ExpectMatchesGolden(table, "table_cost.txt");
  EXPECT_THAT(table, HasSubstr("per socket:"));  // horizontal
  for (const std::string& line : Lines(table)) {
    EXPECT_LE(DisplayWidth(line), static_cast<size_t>(kMaxTableWidth)) << line;
  }
  EXPECT_THAT(table, ::testing::ContainsRegex(
                         "\n    assemble +100 \\(10 sampled\\) +600 ms +"
                         "~18,000,000 +~1,000,000 "));
  EXPECT_THAT(table, HasSubstr(" !24% 1.23 us "));  // the weird region
  EXPECT_THAT(table, HasSubstr(" !5.1% 999 ns "));  // late: 5.005%
  EXPECT_THAT(table, ::testing::ContainsRegex(
                         "\nio +2 +!5\\.0% 45\\.6 us "));  // io: 5% > 1%
  EXPECT_THAT(table, HasSubstr(kOverheadNote));
  EXPECT_THAT(table, HasSubstr(kEstimatedNote));
  // The weird region was still open when the session stopped.
  EXPECT_THAT(table, HasSubstr(" (1 open) "));
  EXPECT_THAT(table, HasSubstr("(N open): calls still open when the session "
                               "stopped (an interrupted run), counted up to "
                               "then"));
}

TEST(TableTest, NoOpenNoteWithoutOpenCalls) {
  const std::string table = FormatTable(MakeResults(false));
  EXPECT_THAT(table, Not(::testing::ContainsRegex(" \\([0-9,]+ open\\)")));
  EXPECT_THAT(table, Not(HasSubstr("(N open)")));
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

// Issue 36: a 300-character region name (or a Kokkos kernel's demangled
// name) made the table 300 columns wide.  The table cuts a long name in
// the middle with an ellipsis, keeping its start and end; JSON and CSV
// keep it whole.
TEST(TableTest, LongNamesAreCutKeepingTheirEnds) {
  Results results = MakeResults(false);
  const std::string long_name =
      "begin_" + std::string(288, 'x') + "_end_1";  // 300 characters
  const std::string kokkos =
      "Kokkos::parallel_for<Kokkos::RangePolicy<Kokkos::OpenMP, "
      "Kokkos::IndexType<long>>, ExampleFunctor<Kokkos::View<double**, "
      "Kokkos::LayoutRight, Kokkos::HostSpace>, Kokkos::View<double const*, "
      "Kokkos::HostSpace, Kokkos::MemoryTraits<1u>>>>(std::string const&, "
      "... const&)::kernel_tail";
  results.regions[0].name = long_name;
  results.regions[0].path = long_name;
  results.regions[4].name = kokkos;  // io, a root
  results.regions[4].path = kokkos;
  const std::string table = FormatTable(results);
  EXPECT_THAT(table, Not(HasSubstr(long_name)));
  EXPECT_THAT(table, Not(HasSubstr(kokkos)));
  EXPECT_THAT(table, HasSubstr("begin_xxx"));
  EXPECT_THAT(table, HasSubstr("xxx_end_1"));
  EXPECT_THAT(table, HasSubstr("Kokkos::parallel_for<"));
  EXPECT_THAT(table, HasSubstr("::kernel_tail"));
  EXPECT_THAT(table, HasSubstr("\xE2\x80\xA6"));  // the ellipsis
  EXPECT_THAT(table, HasSubstr("names longer than"));
  // The main grid stays a grid, no line of it (or of the per-socket one)
  // wider than the table may be.
  EXPECT_THAT(table, HasSubstr("per socket:"));
  for (const std::string& line : Lines(table)) {
    if (line.find("begin_") == std::string::npos &&
        line.find("Kokkos") == std::string::npos) {
      continue;
    }
    EXPECT_LE(DisplayWidth(line), static_cast<size_t>(kMaxTableWidth)) << line;
  }
  // The other reports keep the names whole.
  EXPECT_THAT(FormatCsv(results), HasSubstr(long_name));
  EXPECT_THAT(FormatJson(results), HasSubstr(long_name));
  // A name that fits is never cut, and no note is added.
  EXPECT_THAT(FormatTable(MakeResults(false)), Not(HasSubstr("names longer")));
}

TEST(TableTest, ShowsUnitsEstimatesMetricsAndHidesMetricOnlyEvents) {
  const std::string table = FormatTable(MakeResults(false));
  EXPECT_THAT(table, HasSubstr("imc/CAS_COUNT.RD"));
  EXPECT_THAT(table, HasSubstr("cbo/LLC_VICTIMS.M_STATE"));
  EXPECT_THAT(table, Not(HasSubstr("imc/CAS_COUNT.WR")));  // from_metric
  EXPECT_THAT(table, HasSubstr("1 event needed only by metrics not shown"));
  EXPECT_THAT(table, HasSubstr("2.39 Joules"));   // (20165 + 19000) * 2^-14
  EXPECT_THAT(table, HasSubstr("~1,550,000"));    // solve, estimated
  EXPECT_THAT(table, HasSubstr(kEstimatedNote));  // names both causes
  EXPECT_THAT(table, Not(HasSubstr("sampled)")));
  EXPECT_THAT(table, Not(HasSubstr("!")));
  EXPECT_THAT(table, HasSubstr("1.33 Gbytes/s"));
  EXPECT_THAT(table, HasSubstr("n/a"));
  EXPECT_THAT(table, HasSubstr("1,152,921,504,606,846,977"));  // exact
  EXPECT_THAT(table, HasSubstr("errors (1):\n  - region \"io\" closed"));
  EXPECT_THAT(table, HasSubstr("warnings (1):\n  - multiplexing"));
}

TEST(TableTest, OverheadFlaggedAboveOnePercentOnly) {
  // 10,000 ns of 1 ms is exactly 1%: no flag, no note.
  for (const Results& results : {OneRegion(10, 1'000'000, 10'000, 10),
                                 Vertical(OneRegion(10, 1'000'000, 10'000, 10)),
                                 OneRegion(10, 1'000'000, 0, 10)}) {
    const std::string table = FormatTable(results);
    EXPECT_THAT(table, Not(HasSubstr("!"))) << table;
    EXPECT_THAT(table, Not(HasSubstr("reads took"))) << table;
  }
  // One nanosecond more is flagged, the percentage rounded up.
  const std::string table = FormatTable(OneRegion(10, 1'000'000, 10'001, 10));
  EXPECT_THAT(table, ::testing::ContainsRegex(
                         "\nsolve +10 +!1\\.1% 1\\.00 ms +123,456\n"));
  EXPECT_THAT(table, HasSubstr(kOverheadNote));
  for (const std::string& line : Lines(table)) {
    EXPECT_LE(DisplayWidth(line), static_cast<size_t>(kMaxTableWidth)) << line;
  }
  const std::string vertical =
      FormatTable(Vertical(OneRegion(10, 1'000'000, 10'001, 10)));
  EXPECT_THAT(vertical, HasSubstr("solve  calls 10, wall !1.1% 1.00 ms (min "
                                  "100 us, max 100 us)\n"));
  EXPECT_THAT(vertical, HasSubstr(kOverheadNote));
  // A measurement costing more than the region itself.
  EXPECT_THAT(FormatTable(OneRegion(2, 1'000, 3'100, 2)),
              HasSubstr(" !310% 1.00 us "));
}

TEST(TableTest, SampledRegionShowsSampledCallsAndEstimates) {
  // counts.estimated is left false: sampling alone makes the counts '~'.
  const std::string table = FormatTable(OneRegion(1'000, 1'000'000, 0, 100));
  EXPECT_THAT(table,
              ::testing::ContainsRegex(
                  "\nsolve +1,000 \\(100 sampled\\) +1\\.00 ms +~123,456\n"));
  EXPECT_THAT(table, HasSubstr(kEstimatedNote));
  EXPECT_THAT(table, Not(HasSubstr("!")));
  const std::string vertical =
      FormatTable(Vertical(OneRegion(1'000, 1'000'000, 0, 100)));
  EXPECT_THAT(vertical,
              HasSubstr("solve  calls 1,000 (100 sampled), wall 1.00 ms"));
  EXPECT_THAT(vertical, HasSubstr("~123,456"));
  EXPECT_THAT(vertical, HasSubstr("~ estimated"));
  // Sampled and costly at once.
  EXPECT_THAT(FormatTable(OneRegion(1'000, 1'000'000, 60'000, 100)),
              ::testing::ContainsRegex(
                  "1,000 \\(100 sampled\\) +!6\\.0% 1\\.00 ms +~123,456"));
}

TEST(TableTest, CommonCaseHasNoCostNoise) {
  // Every call measured (sampled_calls == calls, or 0: not recorded), a
  // cheap measurement, no multiplexing: the table says nothing about them.
  for (const uint64_t sampled : {uint64_t{1'000}, uint64_t{0}}) {
    for (const Results& results :
         {OneRegion(1'000, 1'000'000, 10, sampled),
          Vertical(OneRegion(1'000, 1'000'000, 10, sampled))}) {
      const std::string table = FormatTable(results);
      EXPECT_THAT(table, Not(HasSubstr("sampled"))) << table;
      EXPECT_THAT(table, Not(HasSubstr("~"))) << table;
      EXPECT_THAT(table, Not(HasSubstr("!"))) << table;
      EXPECT_THAT(table, Not(HasSubstr("UNCORE_SAMPLE"))) << table;
    }
  }
  const std::string table = FormatTable(OneRegion(1'000, 1'000'000, 10, 0));
  EXPECT_THAT(table,
              ::testing::ContainsRegex("\nsolve +1,000 +1\\.00 ms +123,456\n"));
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

// The MPI merged report (Results::mpi): the same grids and cell formats,
// the merged report's rows.
TEST(TableTest, MergedMatchesGolden) {
  ExpectMatchesGolden(FormatTable(MakeMergedResults(true)), "mpi_table.txt");
}

TEST(TableTest, MergedShowsNodesRanksAndSpreads) {
  const std::string table = FormatTable(MakeMergedResults(false));
  EXPECT_TRUE(table.starts_with(
      "uncore MPI report: 3 ranks on 2 nodes, platform ivytown, backend "
      "direct, CPU GenuineIntel family 6 model 0x3e\n"
      "node 0 (node17): ranks 0,1; socket 0 led by rank 0 (read by 2)\n"
      "node 1 (node18): ranks 2; socket 1 led by rank 2 (read by 1)\n"));
  EXPECT_THAT(table, HasSubstr("rank wall"));
  EXPECT_THAT(table, HasSubstr("from rank"));
  EXPECT_THAT(table, HasSubstr("union"));
  EXPECT_THAT(table, HasSubstr("rank mean"));
  EXPECT_THAT(table, HasSubstr("1.50 Gbytes/s"));  // the ranks' mean
  EXPECT_THAT(table, Not(HasSubstr("SIMULATED")));
  EXPECT_THAT(table, HasSubstr("errors (1):\n  - region \"io\""));
  // "io" fell back to a rank's view on a node: its wall is marked.
  const std::vector<std::string> lines = Lines(table);
  const auto io = std::find_if(
      lines.begin(), lines.end(),
      [](const std::string& line) { return line.starts_with("io "); });
  ASSERT_NE(io, lines.end()) << table;
  EXPECT_THAT(*io, HasSubstr(" ~45.6 us")) << table;
  Results empty;
  empty.mpi.emplace();
  EXPECT_EQ(FormatTable(empty).find("node 0"), std::string::npos);
}

}  // namespace
}  // namespace uncore::report
