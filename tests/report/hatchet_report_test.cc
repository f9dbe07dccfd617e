// Tests of the Hatchet literal tree (FormatHatchet), read back by
// nlohmann-json (json_oracle.h): the tree follows the region paths, every
// node carries the same metrics, inclusive ones with " (inc)", and the
// cases Hatchet's reader cannot take (no regions, reserved or repeated
// names, deep nesting) come out loadable.  report_hatchet_shape_test checks
// the same rules from Python (report_views_test.py).
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/report/report.h"
#include "tests/report/json_oracle.h"
#include "tests/report/report_test_util.h"

namespace uncore::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Json& Metrics(const Json& node) { return node.at("metrics"); }
std::string Name(const Json& node) {
  return JsonString(node.at("frame").at("name"));
}

TEST(HatchetReportTest, TreeFollowsThePaths) {
  const Results results = MakeResults(false);
  const Json forest = MustParseJson(FormatHatchet(results));
  ASSERT_TRUE(forest.is_array());
  ASSERT_EQ(JsonSize(forest), 2u);  // main and io
  const Json& main = forest.at(0);
  EXPECT_THAT(JsonKeys(main), ElementsAre("frame", "metrics", "children"));
  EXPECT_THAT(JsonKeys(main.at("frame")), ElementsAre("name", "type"));
  EXPECT_EQ(Name(main), "main");
  EXPECT_EQ(JsonString(main.at("frame").at("type")), "region");
  EXPECT_EQ(Name(forest.at(1)), "io");
  EXPECT_EQ(JsonSize(forest.at(1).at("children")), 0u);
  const Json& children = main.at("children");
  ASSERT_EQ(JsonSize(children), 3u);  // solve, the weird one, late
  EXPECT_EQ(Name(children.at(0)), "solve");
  EXPECT_EQ(Name(children.at(1)), kWeirdNameFromJson);
  EXPECT_EQ(Name(children.at(2)), "late");
  ASSERT_EQ(JsonSize(children.at(0).at("children")), 1u);
  EXPECT_EQ(Name(children.at(0).at("children").at(0)), "assemble");
}

TEST(HatchetReportTest, MetricsInclusiveAndExclusive) {
  const Results results = MakeResults(false);
  const Json forest = MustParseJson(FormatHatchet(results));
  const Json& main = forest.at(0);
  EXPECT_THAT(
      JsonKeys(Metrics(main)),
      ElementsAre("time (inc)", "time", "calls", "threads",
                  "imc/CAS_COUNT.RD (inc)", "imc/CAS_COUNT.RD",
                  "power/energy-pkg (inc)", "power/energy-pkg",
                  "cbo/LLC_VICTIMS.M_STATE (inc)", "cbo/LLC_VICTIMS.M_STATE",
                  "imc/CAS_COUNT.WR (inc)", "imc/CAS_COUNT.WR",
                  "MEM_BW_READS (inc)", "PCT_WRITES (inc)"));
  const Json& m = Metrics(main);
  EXPECT_DOUBLE_EQ(JsonNumber(m.at("time (inc)")), 2.4);
  // One thread: its own time is its wall time less its children's.
  EXPECT_DOUBLE_EQ(JsonNumber(m.at("time")),
                   (2'400'000'000.0 - 1'800'000'000 - 1'234 - 999) / 1e9);
  EXPECT_EQ(JsonUint(m.at("calls")), 1u);
  EXPECT_EQ(JsonUint(m.at("threads")), 1u);
  EXPECT_EQ(JsonUint(m.at("imc/CAS_COUNT.RD (inc)")), 50'000'000u);
  EXPECT_EQ(JsonUint(m.at("imc/CAS_COUNT.RD")), 15'000'000u);
  // Scaled to the unit (Joules).
  EXPECT_DOUBLE_EQ(JsonNumber(m.at("power/energy-pkg (inc)")),
                   39'165 * 6.103515625e-05);
  EXPECT_DOUBLE_EQ(JsonNumber(m.at("MEM_BW_READS (inc)")), 1'333'333'333.3);
  // Exact beyond 2^53.
  const Json& late = main.at("children").at(2);
  EXPECT_EQ(JsonUint(Metrics(late).at("imc/CAS_COUNT.RD (inc)")), kHugeCount);
  // An invalid metric is null, its key still there.
  EXPECT_TRUE(Metrics(late).at("MEM_BW_READS (inc)").is_null());
  // Every node has the same keys (Hatchet takes the columns from a root).
  const std::vector<std::string> keys = JsonKeys(m);
  std::vector<const Json*> stack = {&forest.at(0), &forest.at(1)};
  int nodes = 0;
  while (!stack.empty()) {
    const Json* node = stack.back();
    stack.pop_back();
    ++nodes;
    EXPECT_EQ(JsonKeys(Metrics(*node)), keys) << Name(*node);
    for (const Json& child : node->at("children")) stack.push_back(&child);
  }
  EXPECT_EQ(nodes, 6);
}

TEST(HatchetReportTest, OwnTimeUnknownForTeams) {
  Results results = MakeResults(false);
  results.regions[1].threads = 4;  // main/solve
  const Json forest = MustParseJson(FormatHatchet(results));
  const Json& solve = forest.at(0).at("children").at(0);
  EXPECT_TRUE(Metrics(solve).at("time").is_null());
  EXPECT_DOUBLE_EQ(JsonNumber(Metrics(solve).at("time (inc)")), 1.8);
  // Children longer than the parent (inconsistent): unknown too.
  results = MakeResults(false);
  results.regions[2].wall_ns = 5'000'000'000;
  const Json again = MustParseJson(FormatHatchet(results));
  EXPECT_TRUE(Metrics(again.at(0).at("children").at(0)).at("time").is_null());
}

TEST(HatchetReportTest, NoRegionsIsOneLoadableRoot) {
  Results results = MakeResults(false);
  results.regions.clear();
  const Json forest = MustParseJson(FormatHatchet(results));
  ASSERT_EQ(JsonSize(forest), 1u);
  EXPECT_EQ(Name(forest.at(0)), "(no regions)");
  EXPECT_EQ(JsonUint(Metrics(forest.at(0)).at("calls")), 0u);
  EXPECT_EQ(JsonNumber(Metrics(forest.at(0)).at("time (inc)")), 0.0);
  EXPECT_TRUE(Metrics(forest.at(0)).at("imc/CAS_COUNT.RD (inc)").is_null());
  EXPECT_EQ(JsonSize(forest.at(0).at("children")), 0u);
  EXPECT_EQ(JsonSize(MustParseJson(FormatHatchet(Results{}))), 1u);
}

TEST(HatchetReportTest, OrphansAreRootsNamedByPath) {
  Results results = MakeResults(false);
  results.regions.erase(results.regions.begin() + 1);  // main/solve
  const Json forest = MustParseJson(FormatHatchet(results));
  ASSERT_EQ(JsonSize(forest), 3u);
  EXPECT_EQ(Name(forest.at(0)), "main");
  EXPECT_EQ(Name(forest.at(1)), "main/solve/assemble");
  EXPECT_EQ(Name(forest.at(2)), "io");
}

TEST(HatchetReportTest, NamesAreMadeUniqueAndKeptFromReservedColumns) {
  Results results = MakeResults(false);
  results.events[2].canonical = "imc/CAS_COUNT.RD";  // a second spelling
  results.events[3].canonical = "name";              // Hatchet's own column
  results.metrics[1].name = "MEM_BW_READS";
  const std::string text = FormatHatchet(results);
  const Json forest = MustParseJson(text);  // duplicate keys are rejected
  EXPECT_THAT(JsonKeys(Metrics(forest.at(0))),
              ElementsAre("time (inc)", "time", "calls", "threads",
                          "imc/CAS_COUNT.RD (inc)", "imc/CAS_COUNT.RD",
                          "power/energy-pkg (inc)", "power/energy-pkg",
                          "imc/CAS_COUNT.RD#2 (inc)", "imc/CAS_COUNT.RD#2",
                          "name#2 (inc)", "name#2", "MEM_BW_READS (inc)",
                          "MEM_BW_READS#2 (inc)"));
}

TEST(HatchetReportTest, WeirdNamesAreValidJson) {
  const std::string text = FormatHatchet(MakeResults(false));
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_THAT(text,
              HasSubstr(R"("a \"quoted\", comma\nnewline \u00ff\u00fe")"));
}

TEST(HatchetReportTest, DeepNestingKeepsEveryLevel) {
  Results results;
  std::string path;
  constexpr int kDepth = 1'000;
  for (int d = 0; d < kDepth; ++d) {
    RegionResult region;
    region.name = "r";
    path += d == 0 ? "r" : "/r";
    region.path = path;
    region.depth = d;
    region.calls = 1;
    region.threads = 1;
    results.regions.push_back(std::move(region));
  }
  const std::string text = FormatHatchet(results);
  // Every node opens "children": [ once; the deepest one's stays empty.
  size_t opened = 0;
  for (size_t at = text.find("\"children\": ["); at != std::string::npos;
       at = text.find("\"children\": [", at + 1)) {
    ++opened;
  }
  EXPECT_EQ(opened, static_cast<size_t>(kDepth));
  EXPECT_THAT(text, HasSubstr("\"children\": []"));
}

}  // namespace
}  // namespace uncore::report
