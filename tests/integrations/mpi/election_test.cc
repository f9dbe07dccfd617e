// ElectLeaders (integrations/mpi/election.h) on made-up node layouts.
#include "integrations/mpi/election.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uncore::mpi {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Every counted socket is programmed by exactly one rank.
void ExpectEachSocketOnce(const Election& e) {
  std::vector<int> programmed;
  for (const std::vector<int>& leads : e.leads) {
    programmed.insert(programmed.end(), leads.begin(), leads.end());
  }
  std::sort(programmed.begin(), programmed.end());
  EXPECT_EQ(programmed, e.sockets);
}

TEST(ElectLeadersTest, OneSocketManyUnboundRanks) {
  const Election e = ElectLeaders({0}, {{0}, {0}, {0}, {0}});
  EXPECT_THAT(e.leader_of, ElementsAre(0));
  EXPECT_THAT(e.leads[0], ElementsAre(0));
  for (int r = 1; r < 4; ++r) {
    EXPECT_THAT(e.leads[r], IsEmpty());
    EXPECT_THAT(e.sources[r], ElementsAre(0));
  }
  ExpectEachSocketOnce(e);
}

TEST(ElectLeadersTest, OneRank) {
  const Election e = ElectLeaders({0, 1}, {{0, 1}});
  EXPECT_THAT(e.leads[0], ElementsAre(0, 1));
  EXPECT_THAT(e.sources[0], IsEmpty());
}

TEST(ElectLeadersTest, BoundRanksLeadTheirSocketLowestFirst) {
  // Two sockets, ranks 0,1 on socket 0 and 2,3 on socket 1.
  const Election e = ElectLeaders({0, 1}, {{0}, {0}, {1}, {1}});
  EXPECT_THAT(e.leader_of, ElementsAre(0, 2));
  EXPECT_THAT(e.leads[0], ElementsAre(0));
  EXPECT_THAT(e.leads[2], ElementsAre(1));
  EXPECT_THAT(e.sources[1], ElementsAre(0));
  EXPECT_THAT(e.sources[3], ElementsAre(2));
  ExpectEachSocketOnce(e);
}

TEST(ElectLeadersTest, UnboundRanksReadEveryLeader) {
  // Rank 0 unbound leads socket 0 (no bound rank there); rank 1 bound to
  // socket 1 leads it; rank 2 unbound reads both.
  const Election e = ElectLeaders({0, 1}, {{0, 1}, {1}, {0, 1}});
  EXPECT_THAT(e.leader_of, ElementsAre(0, 1));
  EXPECT_THAT(e.leads[0], ElementsAre(0));
  EXPECT_THAT(e.leads[1], ElementsAre(1));
  EXPECT_THAT(e.sources[2], ElementsAre(0, 1));
  ExpectEachSocketOnce(e);
}

TEST(ElectLeadersTest, NodeRankZeroLeadsSocketsNoBoundRankLeads) {
  // Four sockets; only socket 2 has a bound rank (rank 3).
  const Election e =
      ElectLeaders({3, 2, 1, 0}, {{0}, {0, 1}, {0, 1, 2, 3}, {2}});
  EXPECT_THAT(e.sockets, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(e.leader_of, ElementsAre(0, 0, 3, 0));
  EXPECT_THAT(e.leads[0], ElementsAre(0, 1, 3));
  EXPECT_THAT(e.leads[3], ElementsAre(2));
  EXPECT_THAT(e.sources[1], ElementsAre(0));
  EXPECT_THAT(e.sources[2], ElementsAre(0, 3));
  ExpectEachSocketOnce(e);
}

TEST(ElectLeadersTest, SocketsOutsideTheCountedSetAreIgnored) {
  // UNCORE_SOCKETS=1: rank 0 runs on socket 0 only, so it is not bound to
  // a counted socket; rank 1 is bound to socket 1 and leads it.  Rank 0
  // still leads nothing and reads every counted socket.
  const Election e = ElectLeaders({1}, {{0}, {1}, {0}});
  EXPECT_THAT(e.leader_of, ElementsAre(1));
  EXPECT_THAT(e.leads[0], IsEmpty());
  EXPECT_THAT(e.sources[0], ElementsAre(1));
  EXPECT_THAT(e.sources[2], ElementsAre(1));
  ExpectEachSocketOnce(e);
}

TEST(ElectLeadersTest, OversubscribedSocketsStillOneLeaderEach) {
  // 16 ranks on 2 sockets, alternating, all bound.
  std::vector<std::vector<int>> packages;
  for (int r = 0; r < 16; ++r) packages.push_back({r % 2});
  const Election e = ElectLeaders({0, 1}, packages);
  EXPECT_THAT(e.leader_of, ElementsAre(0, 1));
  for (int r = 2; r < 16; ++r) {
    EXPECT_THAT(e.leads[r], IsEmpty());
    EXPECT_THAT(e.sources[r], ElementsAre(r % 2));
  }
  ExpectEachSocketOnce(e);
}

TEST(ElectLeadersTest, NothingCounted) {
  const Election e = ElectLeaders({}, {{0}, {0}});
  EXPECT_THAT(e.leads[0], IsEmpty());
  EXPECT_THAT(e.sources[1], IsEmpty());
}

}  // namespace
}  // namespace uncore::mpi
