// SharedSnapshots: a snapshot's reading is never before the caller arrived
// and always before it returns (a logical clock shared by callers and the
// device); one snapshot is under way at a time; a caller waits behind at
// most one snapshot before the one that serves it (sequence numbers);
// concurrent callers share.
#include "sdk/devices/shared_snapshots.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sdk/devices/device.h"

namespace uncore::devices {
namespace {

// Every event of the test draws a ticket from one clock: a caller's
// arrival and return, and the device's reading (its snapshot's value).
std::atomic<uint64_t> g_clock{1};

constexpr size_t kValues = 2;

class ClockDevice : public Device {
 public:
  explicit ClockDevice(std::chrono::microseconds duration)
      : duration_(duration), plan_(kValues) {}
  std::string_view name() const override { return "clock"; }
  absl::Status Program(const ProgramRequest&) override {
    return absl::OkStatus();
  }
  const std::vector<CounterPlacement>& read_plan() const override {
    return plan_;
  }
  absl::Status TakeSnapshot(Snapshot* out) override {
    if (in_flight_.fetch_add(1) != 0) overlaps_.fetch_add(1);
    started_.fetch_add(1);
    out->values[0] = g_clock.fetch_add(1);  // the moment of the reading
    if (duration_.count() > 0) std::this_thread::sleep_for(duration_);
    out->values[1] = out->values[0] * 2;
    out->timestamp_ns = out->values[0];
    out->valid = !fail_.load();
    in_flight_.fetch_sub(1);
    if (fail_.load()) return absl::UnavailableError("the device is gone");
    return absl::OkStatus();
  }
  absl::Status Release() override { return absl::OkStatus(); }
  uint64_t frozen_ns() const override { return 0; }

  uint64_t started() const { return started_.load(); }
  uint64_t overlaps() const { return overlaps_.load(); }
  void set_fail(bool fail) { fail_.store(fail); }

 private:
  std::chrono::microseconds duration_;
  std::vector<CounterPlacement> plan_;
  std::atomic<int> in_flight_{0};
  std::atomic<uint64_t> started_{0};
  std::atomic<uint64_t> overlaps_{0};
  std::atomic<bool> fail_{false};
};

struct Violations {
  std::atomic<uint64_t> before_arrival{0};
  std::atomic<uint64_t> after_return{0};
  std::atomic<uint64_t> torn{0};
  // Calls served by a snapshot later than the first one begun after they
  // arrived (the one under way at arrival may not serve them).
  std::atomic<uint64_t> served_late{0};
  std::atomic<uint64_t> not_retaken{0};
};

void Hammer(SharedSnapshots& shared, int threads, int calls, Violations& v) {
  std::vector<std::thread> pool;
  std::atomic<bool> go{false};
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      Snapshot s(2);
      for (int i = 0; i < calls; ++i) {
        const uint64_t arrived = g_clock.fetch_add(1);
        SharedSnapshots::Trace trace;
        ASSERT_TRUE(shared.Take(&s, &trace).ok());
        const uint64_t returned = g_clock.fetch_add(1);
        if (s.values[0] <= arrived) v.before_arrival.fetch_add(1);
        if (s.values[0] >= returned) v.after_return.fetch_add(1);
        if (s.values[1] != s.values[0] * 2) v.torn.fetch_add(1);
        // Sequence numbers: even e at arrival, the snapshot e+1 (done at
        // e+2) serves it; odd o (one under way), o+2 (done at o+3).  Unless
        // the call was away so long that its result's slot was reused.
        if (!trace.retaken) {
          v.not_retaken.fetch_add(1);
          const uint64_t bound = trace.arrived + ((trace.arrived & 1) ? 3 : 2);
          if (trace.served > bound) v.served_late.fetch_add(1);
        }
      }
    });
  }
  go.store(true);
  for (std::thread& th : pool) th.join();
}

TEST(SharedSnapshotsTest, SixteenThreadsGetSnapshotsTakenAfterTheyArrived) {
  ClockDevice device(std::chrono::microseconds(20));
  SharedSnapshots shared(&device);
  Violations v;
  constexpr int kThreads = 16;
  constexpr int kCalls = 300;
  Hammer(shared, kThreads, kCalls, v);
  EXPECT_EQ(v.before_arrival.load(), 0u);
  EXPECT_EQ(v.after_return.load(), 0u);
  EXPECT_EQ(v.torn.load(), 0u);
  EXPECT_EQ(v.served_late.load(), 0u);
  EXPECT_GT(v.not_retaken.load(), uint64_t{kThreads} * kCalls * 9 / 10);
  EXPECT_EQ(device.overlaps(), 0u) << "two snapshots were under way at once";
  // Every call was served: by its own snapshot or a shared one.
  EXPECT_EQ(shared.snapshots_taken() + shared.snapshots_shared(),
            uint64_t{kThreads} * kCalls);
  EXPECT_EQ(shared.snapshots_taken(), device.started());
  // With 16 threads and a 20 us snapshot, many calls share.
  EXPECT_GT(shared.snapshots_shared(), 0u);
}

TEST(SharedSnapshotsTest, InstantSnapshotsStayCorrect) {
  ClockDevice device(std::chrono::microseconds(0));
  SharedSnapshots shared(&device);
  Violations v;
  Hammer(shared, 8, 2000, v);
  EXPECT_EQ(v.before_arrival.load(), 0u);
  EXPECT_EQ(v.after_return.load(), 0u);
  EXPECT_EQ(v.torn.load(), 0u);
  EXPECT_EQ(device.overlaps(), 0u);
}

TEST(SharedSnapshotsTest, EachModeCallsTheDeviceEveryTime) {
  ClockDevice device(std::chrono::microseconds(0));
  SharedSnapshots shared(&device, SharedSnapshots::Mode::kEach);
  Snapshot s(2);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(shared.Take(&s).ok());
  EXPECT_EQ(device.started(), 10u);
  EXPECT_EQ(shared.snapshots_shared(), 0u);
}

TEST(SharedSnapshotsTest, AFailedSnapshotFailsEveryCallerItServes) {
  ClockDevice device(std::chrono::microseconds(50));
  device.set_fail(true);
  SharedSnapshots shared(&device);
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t) {
    pool.emplace_back([&] {
      Snapshot s(2);
      for (int i = 0; i < 50; ++i) {
        absl::Status st = shared.Take(&s);
        if (!st.ok() && !s.valid) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& th : pool) th.join();
  EXPECT_EQ(failures.load(), 8 * 50);
  device.set_fail(false);
  Snapshot s(2);
  EXPECT_TRUE(shared.Take(&s).ok());
  EXPECT_TRUE(s.valid);
}

// Solo: one thread reads with no claim; every other thread ends solo
// (EndSolo) before its first Take, and from then on readings never
// overlap, however the solo thread's reading and the end interleave (20
// rounds: the end lands inside a solo reading in about half of them).
TEST(SharedSnapshotsTest, SoloReadingsNeverOverlapTheOthers) {
  for (int round = 0; round < 20; ++round) {
    ClockDevice device(std::chrono::microseconds(2));
    SharedSnapshots shared(&device);
    shared.AllowSolo();
    ASSERT_TRUE(shared.solo());
    std::atomic<bool> others_started{false};
    std::atomic<uint64_t> solo_calls{0};
    std::thread solo([&] {
      Snapshot s(2);
      // Alone for a while, then alongside the others until they are done.
      while (!others_started.load() || solo_calls.load() < 300) {
        const uint64_t arrived = g_clock.fetch_add(1);
        ASSERT_TRUE(shared.Take(&s).ok());
        EXPECT_GT(s.values[0], arrived);
        solo_calls.fetch_add(1);
      }
    });
    while (solo_calls.load() < 20) std::this_thread::yield();
    std::vector<std::thread> others;
    for (int t = 0; t < 2; ++t) {
      others.emplace_back([&] {
        shared.EndSolo();
        others_started.store(true);
        Snapshot s(2);
        for (int i = 0; i < 50; ++i) {
          const uint64_t arrived = g_clock.fetch_add(1);
          ASSERT_TRUE(shared.Take(&s).ok());
          const uint64_t returned = g_clock.fetch_add(1);
          EXPECT_GT(s.values[0], arrived);
          EXPECT_LT(s.values[0], returned);
        }
      });
    }
    for (std::thread& th : others) th.join();
    solo.join();
    EXPECT_FALSE(shared.solo());
    ASSERT_EQ(device.overlaps(), 0u)
        << "two snapshots were under way at once (round " << round << ")";
    EXPECT_EQ(shared.snapshots_taken() + shared.snapshots_shared(),
              solo_calls.load() + 2 * 50);
    EXPECT_EQ(shared.snapshots_taken(), device.started());
  }
}

TEST(SharedSnapshotsTest, SoloIsRefusedWithAnObserverOrInEachMode) {
  ClockDevice device(std::chrono::microseconds(0));
  SharedSnapshots each(&device, SharedSnapshots::Mode::kEach);
  each.AllowSolo();
  EXPECT_FALSE(each.solo());
  struct Counting : SnapshotObserver {
    void OnSnapshot(const Snapshot&) override { ++seen; }
    int seen = 0;
  } observer;
  SharedSnapshots observed(&device);
  observed.SetObserver(&observer);
  observed.AllowSolo();
  EXPECT_FALSE(observed.solo());
  Snapshot s(2);
  ASSERT_TRUE(observed.Take(&s).ok());
  EXPECT_EQ(observer.seen, 1);
  // Ended once, never again.
  SharedSnapshots ended(&device);
  ended.AllowSolo();
  ended.EndSolo();
  ended.AllowSolo();
  EXPECT_FALSE(ended.solo());
}

}  // namespace
}  // namespace uncore::devices
