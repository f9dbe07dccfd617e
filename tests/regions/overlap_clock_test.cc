#include "sdk/regions/overlap_clock.h"

#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace uncore::regions {
namespace {

TEST(OverlapClockTest, AStretchAloneSharesNothing) {
  OverlapClock clock;
  const uint64_t mark = clock.Start(100);
  EXPECT_EQ(clock.Stop(400, mark), 0u);
  const OverlapClock::Totals t = clock.Read(1'000);
  EXPECT_EQ(t.any_open, 300u);
  EXPECT_EQ(t.overcount, 0u);
}

TEST(OverlapClockTest, TwoStretchesShareTheirCommonTime) {
  // left [0, 60), right [30, 90): 30 shared, 90 with one open, 30 counted
  // twice by their sum (120 = 90 + 30).
  OverlapClock clock;
  const uint64_t left = clock.Start(0);
  const uint64_t right = clock.Start(30);
  EXPECT_EQ(clock.Stop(60, left), 30u);
  EXPECT_EQ(clock.Stop(90, right), 30u);
  const OverlapClock::Totals t = clock.Read(90);
  EXPECT_EQ(t.any_open, 90u);
  EXPECT_EQ(t.overcount, 30u);
}

TEST(OverlapClockTest, ThreeStretchesCountEachExtraOne) {
  // a [0, 100), b [10, 50), c [20, 30) and d [70, 80) (a gap between).
  OverlapClock clock;
  const uint64_t a = clock.Start(0);
  const uint64_t b = clock.Start(10);
  const uint64_t c = clock.Start(20);
  EXPECT_EQ(clock.Stop(30, c), 10u);
  EXPECT_EQ(clock.Stop(50, b), 40u);
  const uint64_t d = clock.Start(70);
  EXPECT_EQ(clock.Stop(80, d), 10u);
  EXPECT_EQ(clock.Stop(100, a), 50u);  // with b 40, with d 10
  const OverlapClock::Totals t = clock.Read(200);
  EXPECT_EQ(t.any_open, 100u);
  // The stretches' times sum to 100 + 40 + 10 + 10 = 160 = 100 + 60:
  // [10, 20) twice, [20, 30) three times (two extra), [30, 50) and
  // [70, 80) twice.
  EXPECT_EQ(t.overcount, 10u + 20u + 20u + 10u);
}

TEST(OverlapClockTest, AnEarlierTimeThanTheLastIsTakenAtTheLast) {
  // Boundaries of different threads reach the clock in any order: a time
  // before the last one counts as the last one, never as negative time.
  OverlapClock clock;
  const uint64_t a = clock.Start(100);
  const uint64_t b = clock.Start(90);  // taken at 100
  EXPECT_EQ(clock.Stop(150, a), 50u);
  EXPECT_EQ(clock.Stop(140, b), 50u);  // taken at 150
  EXPECT_EQ(clock.Read(150).any_open, 50u);
}

TEST(OverlapClockTest, ReadCountsStretchesStillOpen) {
  OverlapClock clock;
  clock.Start(0);
  clock.Start(5);
  const OverlapClock::Totals t = clock.Read(25);
  EXPECT_EQ(t.any_open, 25u);
  EXPECT_EQ(t.overcount, 20u);
}

TEST(OverlapClockTest, ManyThreadsLeaveNothingOpen) {
  // Each of 8 threads opens and closes 10,000 stretches at increasing
  // times of its own (under TSan: the lock orders every access): the clock
  // ends with nothing open, and no time past the last one is counted.
  OverlapClock clock;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&clock, i] {
      for (uint64_t k = 0; k < 10'000; ++k) {
        const uint64_t start = k * 100 + static_cast<uint64_t>(i);
        const uint64_t mark = clock.Start(start);
        clock.Stop(start + 50, mark);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const OverlapClock::Totals a = clock.Read(2'000'000);
  const OverlapClock::Totals b = clock.Read(3'000'000);
  EXPECT_EQ(a.any_open, b.any_open);  // nothing left open
  EXPECT_EQ(a.overcount, b.overcount);
  EXPECT_LE(a.any_open, 10'000u * 100u);
}

}  // namespace
}  // namespace uncore::regions
