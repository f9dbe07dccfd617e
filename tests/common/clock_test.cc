// TickClock: ticks become nanoseconds that agree with CLOCK_MONOTONIC.
#include "sdk/common/clock.h"

#include <chrono>
#include <cstdint>
#include <thread>

#include "gtest/gtest.h"

namespace uncore::common {
namespace {

// A sleep measured in ticks and converted, against the same sleep measured
// with CLOCK_MONOTONIC around it.
void ExpectSleepAgrees(const TickClock& clock) {
  const uint64_t ns0 = MonotonicNowNs();
  const uint64_t t0 = clock.Now();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const uint64_t t1 = clock.Now();
  const uint64_t ns1 = MonotonicNowNs();
  const uint64_t ticked = TickClock::ToNs(t1 - t0, clock.NsPerTick());
  const double monotonic = static_cast<double>(ns1 - ns0);
  EXPECT_GE(static_cast<double>(ticked), monotonic * 0.98);
  EXPECT_LE(static_cast<double>(ticked), monotonic * 1.02);
}

TEST(TickClockTest, WithoutTheTscTicksAreMonotonicNanoseconds) {
  const TickClock clock(/*use_tsc=*/false);
  EXPECT_FALSE(clock.counts_tsc());
  EXPECT_EQ(clock.NsPerTick(), 1.0);
  const uint64_t before = MonotonicNowNs();
  const uint64_t tick = clock.Now();
  const uint64_t after = MonotonicNowNs();
  EXPECT_GE(tick, before);
  EXPECT_LE(tick, after);
  ExpectSleepAgrees(clock);
}

TEST(TickClockTest, TheTscWhereUsableAgreesWithMonotonicTime) {
  const TickClock clock;
  EXPECT_EQ(clock.counts_tsc(), TscIsUsableClock());
  if (!clock.counts_tsc()) {
    GTEST_SKIP() << "no constant TSC as the kernel's clock source here";
  }
  const uint64_t a = clock.Now();
  const uint64_t b = clock.Now();
  EXPECT_GE(b, a);
  ExpectSleepAgrees(clock);
}

TEST(TickClockTest, AYoungClockWaitsAMillisecondForItsRate) {
  const TickClock clock;
  const uint64_t start = MonotonicNowNs();
  const double rate = clock.NsPerTick();
  EXPECT_GT(rate, 0.0);
  if (clock.counts_tsc()) {
    EXPECT_GE(MonotonicNowNs() - start, 900'000u);
  }
}

TEST(TickClockTest, ToNsRoundsToTheNearestNanosecond) {
  EXPECT_EQ(TickClock::ToNs(0, 0.4), 0u);
  EXPECT_EQ(TickClock::ToNs(10, 0.26), 3u);
  EXPECT_EQ(TickClock::ToNs(10, 0.24), 2u);
  EXPECT_EQ(TickClock::ToNs(3'000'000'000, 1.0 / 3.0), 1'000'000'000u);
}

}  // namespace
}  // namespace uncore::common
