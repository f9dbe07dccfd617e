// The region hot path allocates nothing once a call site has run: a
// replaced global operator new counts every allocation of this binary.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "uncore/region.h"
#include "uncore/session.h"
#include "uncore/uncore_c.h"

#define LIKWID_PERFMON
#include "uncore/likwid_marker.h"

namespace {
std::atomic<bool> g_counting{false};
volatile int benchmark_sink = 0;
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace uncore {
namespace {

// Runs `body` 10000 times after two warm-up runs; returns the allocations
// made by the counted runs.
template <typename F>
long AllocationsOf(F body) {
  body();
  body();
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 10000; ++i) body();
  g_counting = false;
  return g_allocations.load();
}

const RegionId kInterned = InternRegionName("interned");
const std::string kStdString = "std::string";
// A name built at run time, in a buffer whose address is not a literal's.
char g_buffer_name[] = "buffer";

// Every public form of a region, nested.
void NestedRegions() {
  UNCORE_REGION("outer");
  {
    uncore::UncoreRegion by_pointer("inner");
    uncore::UncoreRegion by_id(kInterned);
    uncore::UncoreRegion by_view(std::string_view("view"));
    uncore::UncoreRegion by_string(kStdString);
    uncore::UncoreRegion by_buffer(static_cast<const char*>(g_buffer_name));
    UNCORE_REGION(kStdString);  // the macro with a run-time name
    RegionBegin("begin-end");
    RegionBegin(kInterned);
    RegionEnd(kInterned);
    RegionEnd("begin-end");
    uncore_region_begin("c-api");
    uncore_region_end("c-api");
    LIKWID_MARKER_START("likwid");
    LIKWID_MARKER_STOP("likwid");
  }
}

TEST(RegionAllocationTest, TheCounterWorks) {
  // A call of ::operator new itself cannot be elided (a new-expression
  // can).
  const long n = AllocationsOf([] {
    void* p = ::operator new(16);
    benchmark_sink =
        benchmark_sink + static_cast<int>(reinterpret_cast<uintptr_t>(p) & 1);
    ::operator delete(p);
  });
  EXPECT_EQ(n, 10000);
}

TEST(RegionAllocationTest, NoAllocationPerRegionOnTheSimulator) {
  SessionOptions o;
  // 8 counters on one socket: 4 CBo events on CBo0, 4 iMC events.
  o.events = {"cbo[0]/LLC_VICTIMS.M_STATE", "cbo[0]/RxR_OCCUPANCY.IRQ",
              "cbo[0]/RING_AD_USED.CW",     "cbo[0]/RING_AK_USED.CW",
              "imc[0]/CAS_COUNT.RD",        "imc[0]/CAS_COUNT.WR",
              "imc[0]/ACT_COUNT.RD",        "imc[0]/PRE_COUNT.RD"};
  o.backend = "sim";
  o.sim_demo_traffic = false;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  ASSERT_TRUE(s.ok()) << common::StatusMessage(s.status());
  EXPECT_EQ(AllocationsOf(NestedRegions), 0);
  const Results r = (*s)->Collect();
  ASSERT_FALSE(r.regions.empty());
  EXPECT_EQ(r.regions[0].calls, 10002u);
  EXPECT_GE(r.regions.size(), 10u);
  for (const RegionResult& region : r.regions) {
    EXPECT_EQ(region.calls, 10002u) << region.path;
  }
  EXPECT_TRUE(r.run.errors.empty());
}

// With the demo traffic model, which each snapshot brings up to its time.
TEST(RegionAllocationTest, NoAllocationPerRegionWithDemoTraffic) {
  SessionOptions o;
  o.events = {"cbo[0]/CLOCKTICKS", "imc/CAS_COUNT.RD", "imc/CAS_COUNT.WR",
              "ubox/UCLK"};
  o.backend = "sim";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  ASSERT_TRUE(s.ok()) << common::StatusMessage(s.status());
  EXPECT_EQ(AllocationsOf(NestedRegions), 0);
  const Results r = (*s)->Collect();
  ASSERT_FALSE(r.regions.empty());
  EXPECT_GT(r.regions[0].inclusive[1].total, 0u);  // the traffic was there
  EXPECT_TRUE(r.run.errors.empty());
}

TEST(RegionAllocationTest, NoAllocationWithoutASession) {
  ASSERT_EQ(Session::Active(), nullptr);
  EXPECT_EQ(AllocationsOf(NestedRegions), 0);
}

TEST(RegionAllocationTest, NoAllocationWithBackendOff) {
  SessionOptions o;
  o.events = {"imc/CAS_COUNT.RD"};
  o.backend = "off";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(AllocationsOf(NestedRegions), 0);
}

}  // namespace
}  // namespace uncore
