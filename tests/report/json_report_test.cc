// Tests of the JSON report (FormatJson), read back by nlohmann-json
// (json_oracle.h) and compared with tests/report/golden/report.json.
//
// The reader decodes escapes, so the bytes chosen for invalid UTF-8 in names
// (\u00ff, see sdk/common/json.h) are also checked in the text itself.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/report/report.h"
#include "tests/report/json_oracle.h"
#include "tests/report/report_test_util.h"

namespace uncore::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(JsonReportTest, MatchesGolden) {
  ExpectMatchesGolden(FormatJson(MakeResults(true)), "report.json");
}

TEST(JsonReportTest, ParsesBackWithEveryField) {
  const Results results = MakeResults(true);
  const Json root = MustParseJson(FormatJson(results));
  ASSERT_TRUE(root.is_object());
  EXPECT_THAT(
      JsonKeys(root),
      ElementsAre("schema_version", "backend", "platform", "simulated", "host",
                  "cpu", "last_check", "sockets", "start_unix_ns",
                  "duration_ns", "frozen_ns", "reads_per_snapshot",
                  "regions_open_ns", "exclusive_overcount_ns", "errors",
                  "warnings", "events", "metrics", "regions"));
  EXPECT_EQ(JsonString(root.at("platform")), "ivytown");
  EXPECT_EQ(JsonUint(root.at("reads_per_snapshot")), 6u);
  EXPECT_EQ(JsonUint(root.at("schema_version")),
            static_cast<uint64_t>(Results::kSchemaVersion));
  EXPECT_EQ(JsonString(root.at("backend")), "sim");
  EXPECT_TRUE(JsonBool(root.at("simulated")));
  EXPECT_EQ(JsonString(root.at("host")), "node17");
  EXPECT_EQ(JsonString(root.at("cpu")), "GenuineIntel family 6 model 0x3e");
  ASSERT_EQ(JsonSize(root.at("sockets")), 2u);
  EXPECT_EQ(JsonUint(root.at("sockets").at(1)), 1u);
  EXPECT_EQ(JsonUint(root.at("start_unix_ns")), 1'700'000'000'000'000'000u);
  EXPECT_EQ(JsonUint(root.at("duration_ns")), 2'500'000'000u);
  EXPECT_EQ(JsonUint(root.at("frozen_ns")), 12'345u);
  ASSERT_EQ(JsonSize(root.at("errors")), 1u);
  EXPECT_EQ(JsonString(root.at("errors").at(0)), results.run.errors[0]);
  EXPECT_EQ(JsonString(root.at("warnings").at(0)), results.run.warnings[0]);

  const Json& events = root.at("events");
  ASSERT_EQ(JsonSize(events), 4u);
  EXPECT_EQ(JsonString(events.at(1).at("spec")), "power/energy-pkg");
  EXPECT_EQ(JsonString(events.at(1).at("canonical")), "power/energy-pkg");
  EXPECT_EQ(JsonString(events.at(1).at("encoding")), "config=0x2");
  EXPECT_EQ(JsonString(events.at(1).at("unit")), "Joules");
  EXPECT_EQ(JsonNumber(events.at(1).at("scale")), 6.103515625e-05);
  EXPECT_FALSE(JsonBool(events.at(1).at("from_metric")));
  EXPECT_TRUE(JsonBool(events.at(3).at("from_metric")));
  EXPECT_EQ(JsonString(events.at(0).at("spec")), "imc/cas_count.rd");

  const Json& metrics = root.at("metrics");
  ASSERT_EQ(JsonSize(metrics), 2u);
  EXPECT_EQ(JsonString(metrics.at(0).at("name")), "MEM_BW_READS");
  EXPECT_EQ(JsonString(metrics.at(0).at("expression")),
            "{imc/CAS_COUNT.RD} * 64 / ELAPSED_SECONDS");
  EXPECT_EQ(JsonString(metrics.at(0).at("unit")), "bytes/s");

  const Json& regions = root.at("regions");
  ASSERT_EQ(JsonSize(regions), results.regions.size());
  const Json& solve = regions.at(1);
  EXPECT_THAT(
      JsonKeys(solve),
      ElementsAre("name", "path", "depth", "calls", "threads", "wall_ns",
                  "counted_ns", "overlap_ns", "thread_ns", "min_ns", "max_ns",
                  "overhead_ns", "read_latency_dominated", "sampled_calls",
                  "open_calls", "events", "metrics"));
  EXPECT_EQ(JsonString(solve.at("name")), "solve");
  EXPECT_EQ(JsonString(solve.at("path")), "main/solve");
  EXPECT_EQ(JsonUint(solve.at("depth")), 1u);
  EXPECT_EQ(JsonUint(solve.at("calls")), 10u);
  EXPECT_EQ(JsonUint(solve.at("wall_ns")), 1'800'000'000u);
  EXPECT_EQ(JsonUint(solve.at("min_ns")), 150'000'000u);
  EXPECT_EQ(JsonUint(solve.at("max_ns")), 210'000'000u);
  EXPECT_EQ(JsonUint(solve.at("overhead_ns")), 15'500u);
  EXPECT_EQ(JsonUint(solve.at("sampled_calls")), 10u);
  EXPECT_THAT(JsonKeys(solve.at("events")),
              ElementsAre("imc/CAS_COUNT.RD", "power/energy-pkg",
                          "cbo/LLC_VICTIMS.M_STATE", "imc/CAS_COUNT.WR"));
  const Json& victims = solve.at("events").at("cbo/LLC_VICTIMS.M_STATE");
  EXPECT_THAT(
      JsonKeys(victims),
      ElementsAre("total", "per_socket", "per_instance", "exclusive_total",
                  "exclusive_per_socket", "estimated"));
  EXPECT_EQ(JsonUint(victims.at("total")), 1'550'000u);
  EXPECT_EQ(JsonUint(victims.at("per_socket").at(0)), 900'000u);
  EXPECT_EQ(JsonUint(victims.at("per_socket").at(1)), 650'000u);
  ASSERT_EQ(JsonSize(victims.at("per_instance")), 3u);
  EXPECT_EQ(JsonUint(victims.at("per_instance").at(1).at("socket")), 0u);
  EXPECT_EQ(JsonString(victims.at("per_instance").at(1).at("instance")),
            "box1");
  EXPECT_EQ(JsonUint(victims.at("per_instance").at(1).at("value")), 225'000u);
  EXPECT_EQ(JsonUint(victims.at("per_instance").at(2).at("socket")), 1u);
  EXPECT_EQ(JsonUint(victims.at("exclusive_total")), 550'000u);
  EXPECT_EQ(JsonUint(victims.at("exclusive_per_socket").at(1)), 250'000u);
  EXPECT_TRUE(JsonBool(victims.at("estimated")));
  EXPECT_FALSE(
      JsonBool(solve.at("events").at("imc/CAS_COUNT.RD").at("estimated")));
  EXPECT_EQ(JsonNumber(solve.at("metrics").at("MEM_BW_READS")), 960'000'000);
  EXPECT_TRUE(solve.at("metrics").at("PCT_WRITES").is_null());
  EXPECT_EQ(JsonNumber(regions.at(0).at("metrics").at("MEM_BW_READS")),
            1'333'333'333.3);

  // Counts beyond 2^53 stay exact (nlohmann reads them as uint64_t).
  EXPECT_EQ(
      JsonUint(regions.at(5).at("events").at("imc/CAS_COUNT.RD").at("total")),
      kHugeCount);
}

TEST(JsonReportTest, CostAndSamplingOfEveryRegion) {
  Results results = MakeCostlyResults();
  results.regions[4].overhead_ns = kHugeCount;  // exact beyond 2^53
  results.regions[5].sampled_calls = 0;         // not recorded: written as is
  const Json regions = MustParseJson(FormatJson(results)).at("regions");
  ASSERT_EQ(JsonSize(regions), results.regions.size());
  for (size_t i = 0; i < results.regions.size(); ++i) {
    const RegionResult& region = results.regions[i];
    const Json& json = regions.at(i);
    EXPECT_EQ(JsonUint(json.at("overhead_ns")), region.overhead_ns) << i;
    EXPECT_EQ(JsonUint(json.at("sampled_calls")), region.sampled_calls) << i;
    EXPECT_EQ(JsonUint(json.at("open_calls")), region.open_calls) << i;
    // Always present, right after the wall times (none of the other keys
    // moved).
    const std::vector<std::string> keys = JsonKeys(json);
    ASSERT_EQ(keys.size(), 17u);
    EXPECT_EQ(keys[10], "max_ns");
    EXPECT_EQ(keys[11], "overhead_ns");
    EXPECT_EQ(keys[12], "read_latency_dominated");
    EXPECT_EQ(keys[13], "sampled_calls");
    EXPECT_EQ(keys[14], "open_calls");
    EXPECT_EQ(JsonBool(json.at("read_latency_dominated")),
              OverheadFlagged(region))
        << i;
  }
  EXPECT_EQ(JsonUint(regions.at(4).at("overhead_ns")), kHugeCount);
  EXPECT_EQ(JsonUint(regions.at(5).at("sampled_calls")), 0u);

  // main/solve/assemble measured 10 of its 100 calls: every count is an
  // estimate, whatever its own flag says; the others keep their flags.
  const Json& assemble = regions.at(2);
  EXPECT_EQ(JsonString(assemble.at("path")), "main/solve/assemble");
  EXPECT_EQ(JsonUint(assemble.at("calls")), 100u);
  EXPECT_EQ(JsonUint(assemble.at("sampled_calls")), 10u);
  ASSERT_FALSE(results.regions[2].inclusive[0].estimated);
  for (const auto& item : assemble.at("events").items()) {
    EXPECT_TRUE(JsonBool(item.value().at("estimated"))) << item.key();
  }
  const Json& solve_events = regions.at(1).at("events");
  EXPECT_FALSE(JsonBool(solve_events.at("imc/CAS_COUNT.RD").at("estimated")));
  EXPECT_TRUE(
      JsonBool(solve_events.at("cbo/LLC_VICTIMS.M_STATE").at("estimated")));
}

TEST(JsonReportTest, WeirdNamesRoundTrip) {
  const std::string json = FormatJson(MakeResults(false));
  const Json root = MustParseJson(json);
  const Json& weird = root.at("regions").at(3);
  EXPECT_EQ(JsonString(weird.at("name")), kWeirdNameFromJson);
  EXPECT_EQ(JsonString(weird.at("path")), "main/" + kWeirdNameFromJson);
  EXPECT_EQ(JsonUint(weird.at("depth")), 1u);
  // Byte level: the reader gives U+00FF for both "\u00ff" and a raw U+00FF;
  // the invalid bytes 0xFF 0xFE must be the escapes (sdk/common/json.h).
  EXPECT_THAT(json, HasSubstr(R"("name": "a \"quoted\", comma\nnewline )"
                              R"(\u00ff\u00fe",)"));
  EXPECT_THAT(json, HasSubstr(R"("path": "main/a \"quoted\", comma\nnewline )"
                              R"(\u00ff\u00fe",)"));
}

TEST(JsonReportTest, DuplicateKeysAreMadeUnique) {
  Results results = MakeResults(false);
  results.events[2].canonical = "imc/CAS_COUNT.RD";
  results.events[3].canonical = "imc/CAS_COUNT.RD#2";
  results.metrics[1].name = "MEM_BW_READS";
  // MustParseJson fails on duplicate keys (json_oracle.h).
  const Json root = MustParseJson(FormatJson(results));
  EXPECT_THAT(JsonKeys(root.at("regions").at(0).at("events")),
              ElementsAre("imc/CAS_COUNT.RD", "power/energy-pkg",
                          "imc/CAS_COUNT.RD#3", "imc/CAS_COUNT.RD#2"));
  EXPECT_THAT(JsonKeys(root.at("regions").at(0).at("metrics")),
              ElementsAre("MEM_BW_READS", "MEM_BW_READS#2"));
}

TEST(JsonReportTest, EmptyAndInconsistentResultsStayValid) {
  const Json empty = MustParseJson(FormatJson(Results{}));
  EXPECT_EQ(JsonSize(empty.at("regions")), 0u);
  EXPECT_FALSE(JsonBool(empty.at("simulated")));
  Results results = MakeResults(false);
  results.regions[0].inclusive.resize(1);
  results.regions[0].exclusive.clear();
  results.regions[0].metrics.clear();
  results.regions[1].metrics[0].value = std::numeric_limits<double>::infinity();
  const Json root = MustParseJson(FormatJson(results));
  const Json& main = root.at("regions").at(0);
  EXPECT_THAT(JsonKeys(main.at("events")), ElementsAre("imc/CAS_COUNT.RD"));
  EXPECT_TRUE(
      main.at("events").at("imc/CAS_COUNT.RD").at("exclusive_total").is_null());
  EXPECT_TRUE(main.at("metrics").at("MEM_BW_READS").is_null());
  // The infinite value: null (the reader rejects "Infinity" and the like).
  EXPECT_TRUE(
      root.at("regions").at(1).at("metrics").at("MEM_BW_READS").is_null());
}

TEST(JsonReportTest, PythonAcceptsIt) {
  if (std::system("python3 -c pass >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 is not available";
  }
  const std::string path = TempPath("python.json");
  ASSERT_TRUE(WriteReport(MakeResults(true), path).ok());
  const std::string command = fmt::format(
      "python3 -c 'import json, sys\n"
      "def bad(c): sys.exit(\"non-standard constant \" + c)\n"
      "with open(sys.argv[1], encoding=\"utf-8\", errors=\"strict\") as f:\n"
      "  d = json.load(f, parse_constant=bad)\n"
      "assert d[\"regions\"][3][\"name\"] == \"a \\\"quoted\\\", "
      "comma\\nnewline \\u00ff\\u00fe\", d[\"regions\"][3][\"name\"]\n' {}",
      path);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::remove(path.c_str());
}

// The MPI merged report (Results::mpi): the same writer, the merged schema
// (docs/mpi.md, schema 4), its keys in the documented order.
TEST(JsonReportTest, MergedMatchesGolden) {
  ExpectMatchesGolden(FormatJson(MakeMergedResults(true)), "mpi_report.json");
}

TEST(JsonReportTest, MergedHasTheMergedSchema) {
  const Results results = MakeMergedResults(true);
  const Json root = MustParseJson(FormatJson(results));
  EXPECT_THAT(JsonKeys(root),
              ElementsAre("schema_version", "kind", "ranks", "nodes", "backend",
                          "platform", "simulated", "cpu", "start_unix_ns",
                          "duration_ns", "errors", "warnings", "events",
                          "metrics", "node_list", "regions"));
  EXPECT_EQ(JsonUint(root.at("schema_version")),
            static_cast<uint64_t>(MpiResults::kSchemaVersion));
  EXPECT_EQ(JsonString(root.at("kind")), "mpi");
  EXPECT_EQ(JsonUint(root.at("ranks")), 3u);
  EXPECT_EQ(JsonUint(root.at("nodes")), 2u);
  EXPECT_EQ(JsonString(root.at("warnings").at(0)), results.run.warnings[0]);
  ASSERT_EQ(JsonSize(root.at("events")), 4u);  // as a session's
  EXPECT_EQ(JsonNumber(root.at("events").at(1).at("scale")), 6.103515625e-05);
  const Json& node = root.at("node_list").at(1);
  EXPECT_THAT(JsonKeys(node), ElementsAre("host", "ranks", "sockets"));
  EXPECT_EQ(JsonString(node.at("host")), "node18");
  EXPECT_THAT(JsonKeys(node.at("sockets").at(0)),
              ElementsAre("socket", "leader", "ranks"));
  EXPECT_EQ(JsonUint(node.at("sockets").at(0).at("leader")), 2u);

  const Json& regions = root.at("regions");
  ASSERT_EQ(JsonSize(regions), results.regions.size());
  const Json& region = regions.at(0);
  EXPECT_THAT(
      JsonKeys(region),
      ElementsAre("name", "path", "depth", "calls", "ranks", "wall_ns",
                  "wall_node_union", "per_node_wall_ns", "rank_mean_wall_ns",
                  "rank_wall_min_ns", "rank_wall_max_ns", "call_min_ns",
                  "call_max_ns", "overhead_ns", "sampled_calls", "events",
                  "metrics", "per_rank"));
  const RegionResult& first = results.regions[0];
  EXPECT_EQ(JsonUint(region.at("wall_ns")), first.wall_ns);
  EXPECT_EQ(JsonUint(region.at("call_min_ns")), first.min_ns);
  EXPECT_EQ(JsonUint(region.at("per_node_wall_ns").at(1)), first.wall_ns / 2);
  const Json& event = region.at("events").at("imc/CAS_COUNT.RD");
  EXPECT_THAT(JsonKeys(event),
              ElementsAre("total", "per_node", "estimated", "per_socket"));
  EXPECT_EQ(JsonUint(event.at("total")), first.inclusive[0].total);
  const Json& socket = event.at("per_socket").at(1);
  EXPECT_THAT(JsonKeys(socket),
              ElementsAre("node", "host", "socket", "value", "node_union",
                          "union_wall_ns", "from_rank", "ranks", "min", "max",
                          "estimated"));
  EXPECT_EQ(JsonString(socket.at("host")), "node18");
  EXPECT_EQ(JsonUint(socket.at("value")), first.inclusive[0].per_socket[1]);
  // A metric: the merged value beside the ranks' own; none of either: null.
  const Json& metric = region.at("metrics").at("MEM_BW_READS");
  EXPECT_THAT(JsonKeys(metric), ElementsAre("value", "rank_mean", "rank_min",
                                            "rank_max", "ranks"));
  EXPECT_EQ(JsonNumber(metric.at("rank_mean")), 1.5e9);
  EXPECT_EQ(JsonUint(metric.at("ranks")), 3u);
  // main/solve: its PCT_WRITES has no value and no rank had one.
  EXPECT_TRUE(regions.at(1).at("metrics").at("PCT_WRITES").is_null());
  EXPECT_THAT(JsonKeys(region.at("per_rank").at(0)),
              ElementsAre("rank", "calls", "wall_ns", "totals"));
}

// A metric with a merged value and no rank's: the spread is null.
TEST(JsonReportTest, MergedMetricWithoutRanksHasNullSpread) {
  Results results = MakeMergedResults(false);
  results.regions[0].metrics[1] = {0.5, true};
  const Json root = MustParseJson(FormatJson(results));
  const Json& metric = root.at("regions").at(0).at("metrics").at("PCT_WRITES");
  EXPECT_EQ(JsonNumber(metric.at("value")), 0.5);
  EXPECT_TRUE(metric.at("rank_mean").is_null());
  EXPECT_TRUE(metric.at("rank_max").is_null());
  EXPECT_EQ(JsonUint(metric.at("ranks")), 0u);
}

// Merged facts that do not match the Results (fewer regions, a node out
// of range) still give valid JSON.
TEST(JsonReportTest, MergedWithInconsistentVectorsIsValid) {
  Results results = MakeMergedResults(false);
  results.mpi->regions.resize(1);
  results.mpi->regions[0].events.resize(1);
  results.mpi->regions[0].events[0].per_socket[0].node = 7;
  results.mpi->regions[0].metrics.clear();
  const Json root = MustParseJson(FormatJson(results));
  EXPECT_EQ(JsonSize(root.at("regions")), results.regions.size());
  EXPECT_EQ(JsonString(root.at("regions")
                           .at(0)
                           .at("events")
                           .at("imc/CAS_COUNT.RD")
                           .at("per_socket")
                           .at(0)
                           .at("host")),
            "");
  Results empty;
  empty.mpi.emplace();
  EXPECT_EQ(JsonSize(MustParseJson(FormatJson(empty)).at("regions")), 0u);
}

}  // namespace
}  // namespace uncore::report
