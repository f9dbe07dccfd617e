// The merged MPI report (integrations/mpi/merge.h) from made-up ranks: the
// rule that counts each socket of each node once, the sums and means, the
// encoding carried by MPI (sdk/common/wire.h), and the formats the report
// layer writes of it (MergedResults).
#include "integrations/mpi/merge.h"

#include <cstdint>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "uncore/region.h"
#include "uncore/report_file.h"
#include "uncore/results.h"

namespace uncore::mpi {
namespace {

// The merged report as the SDK's report layer writes it (Results::mpi).
std::string Json(const MergedReport& m) {
  return FormatReportText(MergedResults(m), "merged.json");
}
std::string Csv(const MergedReport& m) {
  return FormatReportText(MergedResults(m), "merged.csv");
}
std::string Table(const MergedReport& m) {
  return FormatReportText(MergedResults(m), "-");
}

RegionResult Region(const std::string& path, uint64_t calls, uint64_t wall,
                    std::vector<uint64_t> per_socket) {
  RegionResult r;
  r.name = path;
  r.path = path;
  r.calls = calls;
  r.wall_ns = wall;
  r.min_ns = wall / calls;
  r.max_ns = wall / calls + 5;
  r.overhead_ns = calls * 3;
  r.sampled_calls = calls;
  EventCounts c;
  for (uint64_t v : per_socket) c.total += v;
  c.per_socket = std::move(per_socket);
  r.inclusive.push_back(c);
  r.metrics.push_back({static_cast<double>(c.total), true});
  return r;
}

RankRecord Rank(int rank, int node, std::vector<int> leads,
                std::vector<int> sockets) {
  RankRecord r;
  r.rank = rank;
  r.node = node;
  r.host = node == 0 ? "a" : "b";
  r.leads = std::move(leads);
  r.measured = true;
  r.results.run.backend = "sim";
  r.results.run.simulated = true;
  r.results.run.sockets = std::move(sockets);
  r.results.run.duration_ns = 1000 + rank;
  EventInfo e;
  e.spec = e.canonical = "ubox/UCLK";
  r.results.events.push_back(e);
  r.results.metrics.push_back({"M", "x", "u", false});
  return r;
}

// Node 0 (ranks 0, 1): rank 0 leads sockets 0 and 1, rank 1 reads both.
// Node 2 (ranks 2, 3): rank 2 leads socket 0, rank 3 socket 1.
std::vector<RankRecord> Job() {
  std::vector<RankRecord> ranks = {Rank(0, 0, {0, 1}, {0, 1}),
                                   Rank(1, 0, {}, {0, 1}), Rank(2, 2, {0}, {0}),
                                   Rank(3, 2, {1}, {1})};
  ranks[0].results.regions.push_back(Region("solve", 1, 100, {100, 200}));
  ranks[1].results.regions.push_back(Region("solve", 2, 120, {110, 190}));
  ranks[1].results.regions.push_back(Region("io", 1, 50, {7, 8}));
  ranks[2].results.regions.push_back(Region("solve", 3, 140, {300}));
  ranks[3].results.regions.push_back(Region("solve", 4, 160, {400}));
  ranks[3].results.run.warnings.push_back("w");
  ranks[2].results.run.warnings.push_back("w");
  ranks[1].results.run.errors.push_back("oops");
  return ranks;
}

TEST(MergeTest, EachSocketOfEachNodeCountsOnce) {
  const MergedReport m = Merge(Job());
  EXPECT_EQ(m.ranks, 4);
  ASSERT_EQ(m.nodes.size(), 2u);
  EXPECT_THAT(m.nodes[0].ranks, ::testing::ElementsAre(0, 1));
  ASSERT_EQ(m.nodes[1].sockets.size(), 2u);
  EXPECT_EQ(m.nodes[1].sockets[1].leader, 3);
  EXPECT_THAT(m.nodes[0].sockets[0].ranks, ::testing::ElementsAre(0, 1));
  EXPECT_THAT(m.warnings, ::testing::ElementsAre("w"));
  EXPECT_THAT(m.errors, ::testing::ElementsAre("rank 1: oops"));
  EXPECT_EQ(m.duration_ns, 1003u);
  ASSERT_EQ(m.regions.size(), 2u);
  const MergedRegion& solve = m.regions[0];
  EXPECT_EQ(solve.path, "solve");
  EXPECT_EQ(solve.ranks, 4);
  EXPECT_EQ(solve.calls, 10u);
  // No node shares (no node sharing): each node's time is its longest
  // rank's (node 0: rank 1's 120; node 2: rank 3's 160), the region's the
  // longest node's, and not a node union.
  EXPECT_EQ(solve.wall_ns, 160u);
  EXPECT_THAT(solve.per_node_wall_ns, ::testing::ElementsAre(120, 160));
  EXPECT_FALSE(solve.wall_node_union);
  EXPECT_EQ(solve.rank_mean_wall_ns, (100u + 120 + 140 + 160) / 4);
  EXPECT_EQ(solve.rank_wall_min_ns, 100u);
  EXPECT_EQ(solve.rank_wall_max_ns, 160u);
  EXPECT_EQ(solve.sampled_calls, 10u);
  EXPECT_EQ(solve.overhead_ns, 30u);
  EXPECT_EQ(solve.call_max_ns, 100u + 5);  // rank 0: one call of 100
  // The leaders' views: 100 + 200 on node 0, 300 + 400 on node 2.
  const MergedEvent& e = solve.events[0];
  EXPECT_EQ(e.total, 1000u);
  EXPECT_THAT(e.per_node, ::testing::ElementsAre(300, 700));
  ASSERT_EQ(e.per_socket.size(), 4u);
  EXPECT_EQ(e.per_socket[0].from_rank, 0);
  EXPECT_EQ(e.per_socket[0].ranks, 2);
  EXPECT_EQ(e.per_socket[0].min, 100u);
  EXPECT_EQ(e.per_socket[0].max, 110u);
  EXPECT_EQ(e.per_socket[1].min, 190u);
  EXPECT_EQ(e.per_socket[1].max, 200u);
  EXPECT_EQ(e.per_socket[3].from_rank, 3);
  EXPECT_EQ(solve.metrics[0].ranks, 4);
  EXPECT_DOUBLE_EQ(solve.metrics[0].rank_max, 400);  // rank 3: its own view
  EXPECT_DOUBLE_EQ(solve.metrics[0].rank_mean, (300 + 300 + 300 + 400) / 4.0);
  EXPECT_FALSE(solve.metrics[0].valid);  // no evaluator
  // Only rank 1 entered io: its view stands for node 0's sockets.
  const MergedRegion& io = m.regions[1];
  EXPECT_EQ(io.ranks, 1);
  EXPECT_EQ(io.wall_ns, 50u);
  EXPECT_THAT(io.per_node_wall_ns, ::testing::ElementsAre(50, 0));
  EXPECT_EQ(io.events[0].total, 15u);
  EXPECT_EQ(io.events[0].per_socket[0].from_rank, 1);
}

TEST(MergeTest, RanksThatDidNotMeasureAreListed) {
  std::vector<RankRecord> ranks = Job();
  ranks[3].measured = false;
  ranks[3].error = "could not start";
  const MergedReport m = Merge(ranks);
  EXPECT_THAT(m.errors, ::testing::Contains("rank 3: could not start"));
  // Its calls and wall time still count; its counts do not.
  EXPECT_EQ(m.regions[0].calls, 10u);
  EXPECT_EQ(m.regions[0].events[0].total, 600u);
}

// Found by tests/fuzz/mpi_rank_fuzzer.cc: a decoded record whose region
// carries fewer counts than the record lists events was read past the end
// of its counts (heap-buffer-overflow in Merge).  The missing counts are
// now missing from the merge, nothing more.
TEST(MergeTest, ARegionWithTooFewCountsIsReadNoFurther) {
  std::vector<RankRecord> ranks = Job();
  for (RankRecord& r : ranks) {
    EventInfo e;
    e.spec = e.canonical = "imc/CAS_COUNT.RD";
    r.results.events.push_back(e);
    for (RegionResult& region : r.results.regions) {
      region.inclusive.push_back(region.inclusive[0]);
    }
  }
  ranks[2].results.regions[0].inclusive.pop_back();  // one count, two events
  absl::StatusOr<RankRecord> decoded = DecodeRank(EncodeRank(ranks[2]));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ranks[2] = *decoded;
  const MergedReport m = Merge(ranks);
  ASSERT_EQ(m.regions[0].events.size(), 2u);
  EXPECT_EQ(m.regions[0].events[0].total, 1000u);
  EXPECT_EQ(m.regions[0].events[1].total, 700u);  // without rank 2's 300
  EXPECT_FALSE(Table(m).empty());
}

TEST(MergeTest, RecordsRoundTripAndRefuseTruncation) {
  RankRecord r = Job()[1];
  r.pid = 42;
  r.reads = {0};
  r.sample_every = 3;
  const std::string bytes = EncodeRank(r);
  absl::StatusOr<RankRecord> back = DecodeRank(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->pid, 42);
  EXPECT_EQ(back->sample_every, 3);
  EXPECT_EQ(back->results.regions[0].overhead_ns, 6u);
  EXPECT_EQ(back->results.regions[0].sampled_calls, 2u);
  EXPECT_EQ(back->reads, r.reads);
  ASSERT_EQ(back->results.regions.size(), 2u);
  EXPECT_EQ(back->results.regions[1].inclusive[0].per_socket,
            r.results.regions[1].inclusive[0].per_socket);
  EXPECT_EQ(back->results.run.errors, r.results.run.errors);
  for (size_t n = 0; n < bytes.size(); n += 7) {
    EXPECT_FALSE(DecodeRank(bytes.substr(0, n)).ok()) << n;
  }
}

// Found by tests/fuzz/mpi_rank_fuzzer.cc: a record with a region of depth
// -1 made the merged table indent by 2^64 - 2 spaces (std::length_error,
// terminate), and a depth of 2^30 would have asked for 2 GB.  A depth no
// region can have is refused when the record is decoded.
TEST(MergeTest, RecordsWithADepthNoRegionCanHaveAreRefused) {
  RankRecord r = Job()[0];
  for (int depth : {-1, kMaxRegionDepth + 1, 1 << 30}) {
    r.results.regions[0].depth = depth;
    absl::StatusOr<RankRecord> back = DecodeRank(EncodeRank(r));
    ASSERT_FALSE(back.ok()) << depth;
    EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
  }
  r.results.regions[0].depth = kMaxRegionDepth;
  EXPECT_TRUE(DecodeRank(EncodeRank(r)).ok());
}

TEST(MergeTest, JsonCsvAndTable) {
  std::vector<RankRecord> ranks = Job();
  ranks[0].results.regions[0].name = "so\"lve,\n";
  ranks[0].results.regions[0].path = "so\"lve,\n";
  // The metric of the merged counts over the merged time.
  const MergedReport m =
      Merge(ranks, [](const std::vector<uint64_t>& totals, uint64_t wall_ns) {
        return std::vector<MetricValue>{
            {static_cast<double>(totals.at(0)) / static_cast<double>(wall_ns),
             true}};
      });
  const nlohmann::json j = nlohmann::json::parse(Json(m));
  EXPECT_EQ(j["schema_version"], 4);
  EXPECT_EQ(j["ranks"], 4);
  EXPECT_EQ(j["nodes"], 2);
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(j["regions"][0]["path"], "so\"lve,\n");
  EXPECT_EQ(j["regions"][1]["calls"], 9);
  EXPECT_EQ(j["regions"][1]["events"]["ubox/UCLK"]["total"], 1000);
  EXPECT_EQ(j["regions"][1]["events"]["ubox/UCLK"]["per_socket"].size(), 4u);
  EXPECT_EQ(j["regions"][1]["per_rank"].size(), 3u);
  EXPECT_EQ(j["node_list"][1]["sockets"][0]["leader"], 2);
  EXPECT_EQ(j["regions"][0]["metrics"]["M"]["ranks"], 1);
  // solve: ranks 1 (node a), 2 and 3 (node b): the longest of each node.
  const nlohmann::json& solve = j["regions"][1];
  EXPECT_EQ(solve["wall_ns"], 160);
  EXPECT_EQ(solve["wall_node_union"], false);
  EXPECT_EQ(solve["per_node_wall_ns"], nlohmann::json({120, 160}));
  EXPECT_EQ(solve["rank_mean_wall_ns"], (120 + 140 + 160) / 3);
  EXPECT_EQ(solve["rank_wall_min_ns"], 120);
  EXPECT_EQ(solve["rank_wall_max_ns"], 160);
  EXPECT_FALSE(solve.contains("wall_min_ns"));
  EXPECT_DOUBLE_EQ(solve["metrics"]["M"]["value"].get<double>(), 1000 / 160.0);
  EXPECT_DOUBLE_EQ(solve["metrics"]["M"]["rank_mean"].get<double>(),
                   (300 + 300 + 400) / 3.0);

  // The session's tidy CSV: a socket row per socket of each node (node a's
  // 0 and 1, then node b's), the total, the merged metric.
  const std::string csv = Csv(m);
  EXPECT_TRUE(csv.starts_with("region,path,parent,depth,calls,threads,"));
  EXPECT_THAT(csv,
              ::testing::HasSubstr(
                  "\"so\"\"lve,\n\",\"so\"\"lve,\n\",,0,1,0,100,0,0,0,100,"
                  "105,3,1,1,0,event,ubox/UCLK,inclusive,socket,1,,200,,200,1,0"
                  "\r\n"));
  EXPECT_THAT(csv,
              ::testing::HasSubstr(
                  "solve,solve,,0,9,0,160,0,0,0,40,65,27,1,9,0,event,ubox/UCLK,"
                  "inclusive,total,,,1000,,1000,1,0\r\n"));
  EXPECT_THAT(csv,
              ::testing::HasSubstr(
                  ",event,ubox/UCLK,inclusive,socket,0,,300,,300,1,0\r\n"));
  EXPECT_THAT(csv,
              ::testing::HasSubstr(",metric,M,inclusive,total,,,6.25,u,,,0"));
  EXPECT_EQ(csv, FormatReportText(MergedResults(m), "x.csv"));
  const Results results = MergedResults(m);
  EXPECT_EQ(results.run.host, "a, b");
  EXPECT_THAT(results.run.sockets, ::testing::ElementsAre(0, 1, 0, 1));
  ASSERT_EQ(results.regions.size(), 3u);
  EXPECT_THAT(results.regions[1].inclusive[0].per_socket,
              ::testing::ElementsAre(110, 190, 300, 400));
  EXPECT_EQ(results.regions[1].inclusive[0].total, 1000u);
  EXPECT_TRUE(results.regions[1].exclusive.empty());
  EXPECT_EQ(results.regions[1].calls, 9u);
  EXPECT_EQ(results.regions[1].wall_ns, 160u);  // the longest node's

  const std::string table = Table(m);
  EXPECT_THAT(table, ::testing::HasSubstr("4 ranks on 2 nodes"));
  EXPECT_THAT(table, ::testing::HasSubstr("SIMULATED"));
  EXPECT_THAT(table, ::testing::HasSubstr("errors (1):\n  - rank 1: oops\n"));
  EXPECT_EQ(FormatReportText(MergedResults(m), "x.JSON"), Json(m));
  EXPECT_EQ(FormatReportText(MergedResults(m), "x.csv"), csv);
  EXPECT_THAT(FormatReportText(MergedResults(m), "x.html"),
              ::testing::HasSubstr("data-region=\"solve\""));
  const nlohmann::json tree = nlohmann::json::parse(
      FormatReportText(MergedResults(m), "x.Hatchet.json"));
  ASSERT_TRUE(tree.is_array());
  EXPECT_EQ(tree[1]["frame"]["name"], "solve");
  EXPECT_EQ(tree[1]["metrics"]["ubox/UCLK (inc)"], 1000);
  EXPECT_EQ(FormatReportText(MergedResults(m), "-"), table);
}

// UTF-8 names keep their bytes in every format; a byte that is not UTF-8
// is written as \u00XX in JSON (the SDK's rule, sdk/common/json.h).
TEST(MergeTest, Utf8NamesKeepTheirBytes) {
  const std::string name = "caf\xc3\xa9 \xe2\x98\x95";  // "café ☕"
  std::vector<RankRecord> ranks = Job();
  ranks[0].results.regions[0].name = name;
  ranks[0].results.regions[0].path = name;
  ranks[0].results.events[0].unit = "\xff\x01";
  const MergedReport m = Merge(ranks);
  const std::string json = Json(m);
  EXPECT_THAT(json, ::testing::HasSubstr("\"path\": \"" + name + "\""));
  EXPECT_THAT(json, ::testing::Not(::testing::HasSubstr("\\u00c3")));
  EXPECT_THAT(json, ::testing::HasSubstr("\"unit\": \"\\u00ff\\u0001\""));
  const nlohmann::json j = nlohmann::json::parse(json);
  EXPECT_EQ(j["regions"][0]["path"], name);
  EXPECT_THAT(Csv(m), ::testing::HasSubstr(name + "," + name));
  EXPECT_THAT(Table(m), ::testing::HasSubstr(name));
}

// Node 0 (ranks 0 and 1) reads socket 0, led by `leader`; both entered
// region "r" and saw 700 and 800 there.  Their node shares sum to 1000
// (modulo 2^64: rank 0, the opener, subtracted more than it added), their
// wall shares to 300; rank 0 opened two node intervals and closed one,
// rank 1 closed the other.
std::vector<RankRecord> NodeUnionJob(int leader) {
  std::vector<RankRecord> ranks = {
      Rank(0, 0, leader == 0 ? std::vector<int>{0} : std::vector<int>{}, {0}),
      Rank(1, 0, leader == 1 ? std::vector<int>{0} : std::vector<int>{}, {0})};
  ranks[0].results.regions.push_back(Region("r", 2, 100, {700}));
  ranks[1].results.regions.push_back(Region("r", 1, 200, {800}));
  const uint64_t shares[2] = {uint64_t{0} - 500, 1500};
  const uint64_t opens[2] = {2, 0};
  const uint64_t walls[2] = {uint64_t{0} - 100, 400};
  for (int i = 0; i < 2; ++i) {
    RegionResult::NodeShare& share = ranks[i].results.regions[0].node_share;
    share.valid = true;
    EventCounts c;
    c.per_socket = {shares[i]};
    c.total = shares[i];
    share.counts.push_back(c);
    share.opens = {opens[i]};
    share.closes = {1};
    share.wall_ns = {walls[i]};
  }
  return ranks;
}

bool WarnsAboutNodeUnions(const MergedReport& m) {
  for (const std::string& w : m.warnings) {
    if (w.find("node") != std::string::npos &&
        w.find("rank's view") != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST(MergeNodeUnionTest, TheRanksSharesSumToTheUnion) {
  const MergedReport m = Merge(NodeUnionJob(/*leader=*/0));
  EXPECT_THAT(m.warnings, ::testing::IsEmpty());
  EXPECT_THAT(m.errors, ::testing::IsEmpty());
  ASSERT_EQ(m.regions.size(), 1u);
  const MergedRegion& r = m.regions[0];
  EXPECT_EQ(r.ranks, 2);
  ASSERT_EQ(r.events.size(), 1u);
  const MergedEvent& e = r.events[0];
  EXPECT_EQ(e.total, 1000u);
  EXPECT_THAT(e.per_node, ::testing::ElementsAre(1000));
  ASSERT_EQ(e.per_socket.size(), 1u);
  const SocketCount& s = e.per_socket[0];
  EXPECT_EQ(s.node, 0);
  EXPECT_EQ(s.socket, 0);
  EXPECT_TRUE(s.node_union);
  EXPECT_EQ(s.from_rank, -1);
  EXPECT_EQ(s.value, 1000u);
  EXPECT_EQ(s.wall_ns, 300u);  // (0 - 100) + 400, modulo 2^64
  // The region's time is the node union's, as in one process; each rank's
  // own time (100, 200) stays beside it.
  EXPECT_EQ(r.wall_ns, 300u);
  EXPECT_THAT(r.per_node_wall_ns, ::testing::ElementsAre(300));
  EXPECT_TRUE(r.wall_node_union);
  EXPECT_EQ(r.rank_mean_wall_ns, 150u);
  // The ranks' own views, beside it.
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.min, 700u);
  EXPECT_EQ(s.max, 800u);
  ASSERT_EQ(r.per_rank.size(), 2u);
  EXPECT_THAT(r.per_rank[0].totals, ::testing::ElementsAre(700));
  EXPECT_THAT(r.per_rank[1].totals, ::testing::ElementsAre(800));
  // The formats say so.
  const nlohmann::json j = nlohmann::json::parse(Json(m));
  const nlohmann::json& socket = j["regions"][0]["events"]["ubox/UCLK"];
  EXPECT_EQ(socket["total"], 1000);
  EXPECT_EQ(socket["per_socket"][0]["node_union"], true);
  EXPECT_EQ(socket["per_socket"][0]["union_wall_ns"], 300);
  EXPECT_EQ(socket["per_socket"][0]["from_rank"], -1);
  EXPECT_THAT(Table(m), ::testing::HasSubstr("union"));
  EXPECT_THAT(MergedResults(m).regions[0].inclusive[0].per_socket,
              ::testing::ElementsAre(1000));
}

// Two nodes, each with its node union: node 0's 300 ns (1000 counts),
// node 2's 500 ns (3000).  The region's time is the longer node's union
// (the nodes ran it side by side; their clocks differ), each node's is
// kept, and the merged metric is of the merged counts over that time, not
// the mean of the ranks' own metrics.
TEST(MergeNodeUnionTest, TheRegionsTimeIsTheLongestNodeUnion) {
  std::vector<RankRecord> ranks = NodeUnionJob(/*leader=*/0);
  for (RankRecord r : NodeUnionJob(/*leader=*/0)) {
    r.rank += 2;
    r.node = 2;
    r.host = "b";
    if (!r.leads.empty()) r.leads = {0};
    RegionResult::NodeShare& share = r.results.regions[0].node_share;
    share.counts[0].per_socket[0] *= 3;
    share.wall_ns[0] = r.rank == 2 ? uint64_t{0} - 100 : 600;
    ranks.push_back(r);
  }
  const MergedReport m =
      Merge(ranks, [](const std::vector<uint64_t>& totals, uint64_t wall_ns) {
        return std::vector<MetricValue>{{static_cast<double>(totals.at(0)) *
                                             1e9 / static_cast<double>(wall_ns),
                                         true}};
      });
  EXPECT_THAT(m.warnings, ::testing::IsEmpty());
  ASSERT_EQ(m.regions.size(), 1u);
  const MergedRegion& r = m.regions[0];
  EXPECT_EQ(r.events[0].total, 4000u);
  EXPECT_THAT(r.events[0].per_node, ::testing::ElementsAre(1000, 3000));
  EXPECT_THAT(r.per_node_wall_ns, ::testing::ElementsAre(300, 500));
  EXPECT_EQ(r.wall_ns, 500u);
  EXPECT_TRUE(r.wall_node_union);
  EXPECT_EQ(r.rank_mean_wall_ns, 150u);
  ASSERT_EQ(r.metrics.size(), 1u);
  EXPECT_TRUE(r.metrics[0].valid);
  EXPECT_DOUBLE_EQ(r.metrics[0].value, 4000 * 1e9 / 500);
  EXPECT_DOUBLE_EQ(r.metrics[0].rank_mean, 750);  // the ranks' 700, 800
  const nlohmann::json j = nlohmann::json::parse(Json(m));
  EXPECT_EQ(j["regions"][0]["wall_ns"], 500);
  EXPECT_EQ(j["regions"][0]["wall_node_union"], true);
  EXPECT_DOUBLE_EQ(j["regions"][0]["metrics"]["M"]["value"].get<double>(), 8e9);
  EXPECT_EQ(MergedResults(m).regions[0].wall_ns, 500u);
  EXPECT_DOUBLE_EQ(MergedResults(m).regions[0].metrics[0].value, 8e9);
  const std::string table = Table(m);
  EXPECT_THAT(table, ::testing::HasSubstr("rank mean"));
  EXPECT_THAT(table, ::testing::HasSubstr("8.00 Gu"));  // 8e9, unit "u"
}

TEST(MergeNodeUnionTest, IntervalsOpenedButNotClosedFallBackToTheLeader) {
  for (const int leader : {0, 1}) {
    std::vector<RankRecord> ranks = NodeUnionJob(leader);
    ranks[1].results.regions[0].node_share.closes = {0};  // 2 opens, 1 close
    const MergedReport m = Merge(ranks);
    ASSERT_EQ(m.regions.size(), 1u);
    const MergedEvent& e = m.regions[0].events[0];
    ASSERT_EQ(e.per_socket.size(), 1u);
    const SocketCount& s = e.per_socket[0];
    EXPECT_FALSE(s.node_union) << leader;
    EXPECT_EQ(s.from_rank, leader);
    EXPECT_EQ(s.value, leader == 0 ? 700u : 800u);
    EXPECT_EQ(s.wall_ns, 0u);
    EXPECT_EQ(e.total, s.value);
    EXPECT_EQ(s.min, 700u);
    EXPECT_EQ(s.max, 800u);
    ASSERT_EQ(m.warnings.size(), 1u) << leader;
    EXPECT_THAT(m.warnings[0], ::testing::HasSubstr("region r "));
    EXPECT_THAT(m.warnings[0], ::testing::HasSubstr("node 0 socket 0"));
    EXPECT_THAT(m.warnings[0],
                ::testing::HasSubstr("opened 2 node intervals and closed 1"));
  }
}

TEST(MergeNodeUnionTest, ARankWhoseNodeStepFailedFallsBackWithAWarning) {
  for (const int failed : {0, 1}) {
    std::vector<RankRecord> ranks = NodeUnionJob(/*leader=*/0);
    ranks[failed].results.regions[0].node_share.valid = false;
    const MergedReport m = Merge(ranks);
    const SocketCount& s = m.regions[0].events[0].per_socket[0];
    EXPECT_FALSE(s.node_union) << failed;
    EXPECT_EQ(s.from_rank, 0);
    EXPECT_EQ(s.value, 700u);
    EXPECT_EQ(m.regions[0].events[0].total, 700u);
    ASSERT_EQ(m.warnings.size(), 1u) << failed;
    EXPECT_THAT(m.warnings[0], ::testing::HasSubstr("region r "));
    EXPECT_THAT(m.warnings[0],
                ::testing::HasSubstr("rank " + std::to_string(failed) +
                                     " has no node share"));
  }
}

TEST(MergeNodeUnionTest, RecordsWithoutNodeSharesTakeTheLeadersViewQuietly) {
  std::vector<RankRecord> ranks = NodeUnionJob(/*leader=*/1);
  for (RankRecord& r : ranks) {
    r.results.regions[0].node_share = RegionResult::NodeShare();
  }
  const MergedReport m = Merge(ranks);
  EXPECT_THAT(m.warnings, ::testing::IsEmpty());
  EXPECT_FALSE(WarnsAboutNodeUnions(m));
  const SocketCount& s = m.regions[0].events[0].per_socket[0];
  EXPECT_FALSE(s.node_union);
  EXPECT_EQ(s.from_rank, 1);
  EXPECT_EQ(s.value, 800u);
  EXPECT_EQ(m.regions[0].events[0].total, 800u);
  // Nor does the older job (Job(): no node shares anywhere) warn of them.
  EXPECT_FALSE(WarnsAboutNodeUnions(Merge(Job())));
}

// A rank without a share (it sampled) is named whichever rank it is.
TEST(MergeNodeUnionTest, ARankWithoutAShareIsNamedWhateverItsPlace) {
  for (int quiet = 0; quiet < 2; ++quiet) {
    std::vector<RankRecord> ranks = NodeUnionJob(/*leader=*/0);
    ranks[quiet].results.regions[0].node_share = RegionResult::NodeShare();
    const MergedReport m = Merge(ranks);
    EXPECT_FALSE(m.regions[0].events[0].per_socket[0].node_union);
    EXPECT_EQ(m.regions[0].events[0].total, 700u);
    EXPECT_THAT(m.warnings,
                ::testing::ElementsAre(::testing::HasSubstr(
                    fmt::format("rank {} has no node share", quiet))));
  }
}

// A job without node shares says nothing of node unions, even with a rank
// whose counts are left out.
TEST(MergeTest, OldStyleJobWithAnUnmeasuredRankWarnsOfNoNodeUnion) {
  std::vector<RankRecord> ranks = Job();
  ranks[3].measured = false;
  const MergedReport m = Merge(ranks);
  EXPECT_THAT(m.warnings, ::testing::ElementsAre("w"));
}

// Counts that went down (perf's multiplexing scales them) take the sum
// below zero: it falls back and says so.
TEST(MergeNodeUnionTest, AUnionBelowZeroFallsBack) {
  std::vector<RankRecord> ranks = NodeUnionJob(/*leader=*/0);
  ranks[1].results.regions[0].node_share.counts[0].per_socket[0] = 400;
  const MergedReport m = Merge(ranks);
  EXPECT_FALSE(m.regions[0].events[0].per_socket[0].node_union);
  EXPECT_EQ(m.regions[0].events[0].total, 700u);
  EXPECT_THAT(m.warnings, ::testing::ElementsAre(
                              ::testing::HasSubstr("counts that went down")));
}

// A rank's backend scaled a count (multiplexing): the union is estimated.
TEST(MergeNodeUnionTest, AScaledShareMakesTheUnionEstimated) {
  std::vector<RankRecord> ranks = NodeUnionJob(/*leader=*/0);
  EXPECT_FALSE(Merge(ranks).regions[0].events[0].estimated);
  ranks[1].results.regions[0].node_share.counts[0].estimated = true;
  const MergedReport m = Merge(ranks);
  EXPECT_TRUE(m.regions[0].events[0].per_socket[0].node_union);
  EXPECT_TRUE(m.regions[0].events[0].estimated);
}

TEST(MergeNodeUnionTest, RecordsCarryTheirNodeShares) {
  RankRecord r = NodeUnionJob(/*leader=*/0)[0];
  r.results.run.sockets = {0, 1};
  RegionResult& region = r.results.regions[0];
  region.inclusive[0].per_socket = {700, 5};
  region.inclusive[0].total = 705;
  RegionResult::NodeShare& share = region.node_share;
  share.counts[0].per_socket = {uint64_t{0} - 500, 1500};
  share.counts[0].total = 12345;  // not carried: the sum of per_socket is
  share.opens = {2, 3};
  share.closes = {1, 4};
  share.wall_ns = {uint64_t{0} - 100, 77};
  absl::StatusOr<RankRecord> back = DecodeRank(EncodeRank(r));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->results.regions.size(), 1u);
  const RegionResult::NodeShare& got = back->results.regions[0].node_share;
  EXPECT_TRUE(got.valid);
  ASSERT_EQ(got.counts.size(), 1u);
  EXPECT_THAT(got.counts[0].per_socket,
              ::testing::ElementsAre(uint64_t{0} - 500, 1500));
  EXPECT_EQ(got.counts[0].total, 1000u);  // modulo 2^64
  EXPECT_THAT(got.opens, ::testing::ElementsAre(2, 3));
  EXPECT_THAT(got.closes, ::testing::ElementsAre(1, 4));
  EXPECT_THAT(got.wall_ns, ::testing::ElementsAre(uint64_t{0} - 100, 77));
  EXPECT_EQ(back->results.regions[0].inclusive[0].total, 705u);

  // An invalid share keeps its valid bit, and an empty one stays empty.
  share.valid = false;
  back = DecodeRank(EncodeRank(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->results.regions[0].node_share.valid);
  EXPECT_THAT(back->results.regions[0].node_share.opens,
              ::testing::ElementsAre(2, 3));
  region.node_share = RegionResult::NodeShare();
  back = DecodeRank(EncodeRank(r));
  ASSERT_TRUE(back.ok()) << back.status();
  const RegionResult::NodeShare& none = back->results.regions[0].node_share;
  EXPECT_FALSE(none.valid);
  EXPECT_TRUE(none.counts.empty());
  EXPECT_TRUE(none.opens.empty());
  EXPECT_TRUE(none.closes.empty());
  EXPECT_TRUE(none.wall_ns.empty());

  // The decoded ranks merge as the made-up ones do.
  std::vector<RankRecord> ranks = NodeUnionJob(/*leader=*/0);
  for (RankRecord& rank : ranks) {
    absl::StatusOr<RankRecord> decoded = DecodeRank(EncodeRank(rank));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    rank = *decoded;
  }
  const MergedReport m = Merge(ranks);
  EXPECT_TRUE(m.regions[0].events[0].per_socket[0].node_union);
  EXPECT_EQ(m.regions[0].events[0].total, 1000u);
}

// Issue 36 R2: with UNCORE_SAMPLE the ranks count no node unions (their
// unread intervals have no snapshots), so each socket's count is one rank's
// view, which falls short of the node union where several ranks of the
// node entered the region.  That was quiet and unmarked (a staggered
// 4-rank job read 47% low); now the merge warns once and marks those
// counts estimated (~), in every format.
TEST(MergeTest, SampledRanksViewsAreMarkedEstimatedWithAWarning) {
  std::vector<RankRecord> ranks = Job();
  for (RankRecord& r : ranks) {
    r.sample_every = 4;
    r.results.regions[0].node_share = RegionResult::NodeShare();
  }
  const MergedReport m = Merge(ranks);
  EXPECT_EQ(m.sample_every, 4);
  ASSERT_FALSE(m.sampling_warning.empty());
  EXPECT_THAT(m.sampling_warning, ::testing::HasSubstr("UNCORE_SAMPLE=4"));
  EXPECT_THAT(m.sampling_warning, ::testing::HasSubstr("node unions"));
  EXPECT_THAT(m.warnings, ::testing::Contains(m.sampling_warning).Times(1));
  // solve: node 0's sockets were entered by ranks 0 and 1: rank 0's view,
  // estimated; node 2's by one rank each: that rank's view is the union.
  const MergedEvent& solve = m.regions[0].events[0];
  EXPECT_EQ(solve.total, 1000u);
  ASSERT_EQ(solve.per_socket.size(), 4u);
  EXPECT_TRUE(solve.per_socket[0].estimated);
  EXPECT_TRUE(solve.per_socket[1].estimated);
  EXPECT_FALSE(solve.per_socket[2].estimated);
  EXPECT_FALSE(solve.per_socket[3].estimated);
  EXPECT_TRUE(solve.estimated);
  // io: rank 1 alone.
  EXPECT_FALSE(m.regions[1].events[0].estimated);
  EXPECT_FALSE(m.regions[1].events[0].per_socket[0].estimated);
  // The formats: JSON's flags, the table's ~, the CSV's estimated column.
  const nlohmann::json j = nlohmann::json::parse(Json(m));
  const nlohmann::json& e = j["regions"][0]["events"]["ubox/UCLK"];
  EXPECT_EQ(e["estimated"], true);
  EXPECT_EQ(e["per_socket"][0]["estimated"], true);
  EXPECT_EQ(e["per_socket"][3]["estimated"], false);
  EXPECT_EQ(j["regions"][1]["events"]["ubox/UCLK"]["estimated"], false);
  EXPECT_THAT(j["warnings"], ::testing::Contains(m.sampling_warning));
  const std::string table = Table(m);
  EXPECT_THAT(table, ::testing::HasSubstr("~1,000"));
  EXPECT_THAT(table, ::testing::HasSubstr("~100"));
  EXPECT_THAT(table, ::testing::HasSubstr("  - " + m.sampling_warning));
  EXPECT_TRUE(MergedResults(m).regions[0].inclusive[0].estimated);
  // Without sampling: neither.
  const MergedReport plain = Merge(Job());
  EXPECT_EQ(plain.sample_every, 1);
  EXPECT_TRUE(plain.sampling_warning.empty());
  EXPECT_FALSE(plain.regions[0].events[0].estimated);
  EXPECT_FALSE(plain.regions[0].events[0].per_socket[0].estimated);
}

TEST(MergeTest, NothingMeasured) {
  std::vector<RankRecord> ranks(2);
  ranks[1].rank = 1;
  const MergedReport m = Merge(ranks);
  EXPECT_EQ(m.backend, "off");
  EXPECT_EQ(m.ranks, 2);
  EXPECT_TRUE(m.regions.empty());
  EXPECT_TRUE(nlohmann::json::accept(Json(m)));
}

}  // namespace
}  // namespace uncore::mpi
