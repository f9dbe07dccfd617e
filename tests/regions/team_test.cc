// Teams of threads on perf msr/tsc/ (a socket-wide count at a known rate):
// a region's count is the TSC rate times the time at least one thread was
// inside it, and its wall_ns is that time, however many threads overlap
// and however their calls are staggered (README "What a region reports").
// Skipped where perf cannot count msr/tsc/ (not root, no msr PMU).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore {
namespace {

using Clock = std::chrono::steady_clock;

std::unique_ptr<Session> StartPerfTsc() {
  SessionOptions o;
  o.events = {"msr/tsc/"};
  o.backend = "perf";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  return s.ok() ? *std::move(s) : nullptr;
}

const RegionResult* Find(const Results& r, const std::string& path) {
  for (const RegionResult& region : r.regions) {
    if (region.path == path) return &region;
  }
  return nullptr;
}

// The length of the union of [begin, end) intervals, in nanoseconds.
uint64_t UnionNs(
    std::vector<std::pair<Clock::time_point, Clock::time_point>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  uint64_t total = 0;
  Clock::time_point covered{};
  for (const auto& [begin, end] : intervals) {
    const Clock::time_point from = std::max(begin, covered);
    if (end > from) {
      total += static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(end - from)
              .count());
    }
    covered = std::max(covered, end);
  }
  return total;
}

// `threads` threads each open `name` at start + i * stagger for `hold`;
// returns the union of their calls as each thread saw them.
uint64_t RunTeam(const std::string& name, int threads,
                 std::chrono::milliseconds stagger,
                 std::chrono::milliseconds hold) {
  std::mutex mu;
  std::vector<std::pair<Clock::time_point, Clock::time_point>> calls;
  const Clock::time_point start = Clock::now() + std::chrono::milliseconds(20);
  std::vector<std::thread> team;
  for (int i = 0; i < threads; ++i) {
    team.emplace_back([&, i] {
      std::this_thread::sleep_until(start + i * stagger);
      RegionBegin(name);
      const Clock::time_point in = Clock::now();
      std::this_thread::sleep_until(in + hold);
      const Clock::time_point out = Clock::now();
      RegionEnd(name);
      std::lock_guard<std::mutex> lock(mu);
      calls.emplace_back(in, out);
    });
  }
  for (std::thread& t : team) t.join();
  return UnionNs(std::move(calls));
}

class TeamOnPerfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    session_ = StartPerfTsc();
    if (session_ == nullptr) GTEST_SKIP() << "perf cannot count msr/tsc/ here";
  }
  // The TSC rate per nanosecond, from one thread alone in a region.
  double TscPerNs() {
    RunTeam("rate", 1, std::chrono::milliseconds(0),
            std::chrono::milliseconds(200));
    const Results r = session_->Collect();
    const RegionResult* rate = Find(r, "rate");
    EXPECT_NE(rate, nullptr);
    if (rate == nullptr || rate->wall_ns == 0) return 0;
    return static_cast<double>(rate->inclusive[0].total) /
           static_cast<double>(rate->wall_ns);
  }
  // Checks the rule for a region whose calls' union is `union_ns`.
  void ExpectSocketOnce(const std::string& name, int threads, uint64_t union_ns,
                        double tsc_per_ns) {
    const Results r = session_->Collect();
    const RegionResult* region = Find(r, name);
    ASSERT_NE(region, nullptr) << name;
    EXPECT_EQ(region->calls, static_cast<uint64_t>(threads)) << name;
    EXPECT_EQ(region->threads, static_cast<uint64_t>(threads)) << name;
    const double wall = static_cast<double>(region->wall_ns);
    EXPECT_NEAR(wall, static_cast<double>(union_ns), 0.02 * union_ns)
        << name << ": wall_ns is the union of the calls";
    const double expected = tsc_per_ns * static_cast<double>(union_ns);
    EXPECT_NEAR(static_cast<double>(region->inclusive[0].total), expected,
                0.01 * expected)
        << name << ": the socket counted once over the union";
    EXPECT_GE(region->thread_ns, region->wall_ns) << name;
    EXPECT_TRUE(r.run.errors.empty()) << r.run.errors.front();
  }

  std::unique_ptr<Session> session_;
};

TEST_F(TeamOnPerfTest, FourThreadsHoldingARegionTogetherCountTheSocketOnce) {
  const double tsc_per_ns = TscPerNs();
  ASSERT_GT(tsc_per_ns, 0);
  const uint64_t union_ns = RunTeam("parallel", 4, std::chrono::milliseconds(0),
                                    std::chrono::milliseconds(200));
  ExpectSocketOnce("parallel", 4, union_ns, tsc_per_ns);
  const uint64_t serial_ns = RunTeam("serial", 1, std::chrono::milliseconds(0),
                                     std::chrono::milliseconds(200));
  ExpectSocketOnce("serial", 1, serial_ns, tsc_per_ns);
}

TEST_F(TeamOnPerfTest, OneFourAndSixteenThreadsFullyOverlapping) {
  const double tsc_per_ns = TscPerNs();
  ASSERT_GT(tsc_per_ns, 0);
  for (int threads : {1, 4, 16}) {
    const std::string name = "overlap " + std::to_string(threads);
    const uint64_t union_ns =
        RunTeam(name, threads, std::chrono::milliseconds(0),
                std::chrono::milliseconds(100));
    ExpectSocketOnce(name, threads, union_ns, tsc_per_ns);
  }
}

TEST_F(TeamOnPerfTest, StaggeredThreadsCountTheirUnion) {
  const double tsc_per_ns = TscPerNs();
  ASSERT_GT(tsc_per_ns, 0);
  for (int threads : {1, 4, 16}) {
    // Thread i enters at i x 10 ms for 100 ms: the union is 100 + 10 (n-1).
    const std::string name = "staggered " + std::to_string(threads);
    const uint64_t union_ns =
        RunTeam(name, threads, std::chrono::milliseconds(10),
                std::chrono::milliseconds(100));
    // The threads did stagger: a late wake-up (a loaded machine) only
    // lengthens the union, which the checks below measure as it came.
    const double planned = 1e6 * (100.0 + 10.0 * (threads - 1));
    EXPECT_GE(static_cast<double>(union_ns), planned - 1e6);
    EXPECT_LE(static_cast<double>(union_ns), 1.5 * planned);
    ExpectSocketOnce(name, threads, union_ns, tsc_per_ns);
  }
}

}  // namespace
}  // namespace uncore
