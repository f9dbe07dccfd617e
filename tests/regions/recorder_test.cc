// Regions end to end through uncore::Session: exact counts on the simulator,
// inclusive and exclusive values, many threads, misuse.
#include "sdk/regions/recorder.h"

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/device.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/report/report.h"
#include "sdk/report/report_internal.h"
#include "sdk/runtime/session_testing.h"
#include "tests/testing/fake_device.h"
#include "uncore/region.h"
#include "uncore/session.h"
#include "uncore/uncore_c.h"

namespace uncore {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A device with two process-wide counters that move only when a test says
// so (Bump, from any thread) and never freeze: per-region totals are
// exactly predictable with many threads.
std::atomic<uint64_t> g_counters[2] = {0, 0};

class CountingDevice : public devices::Device {
 public:
  std::string_view name() const override { return "counting"; }
  absl::Status Program(const devices::ProgramRequest& request) override {
    ++program_calls;
    plan_.clear();
    for (size_t e = 0; e < request.events.size() && e < 2; ++e) {
      devices::CounterPlacement p;
      p.event = static_cast<int>(e);
      p.unit = "CBo" + std::to_string(e);
      p.instance = static_cast<int>(e);
      plan_.push_back(p);
    }
    return absl::OkStatus();
  }
  const std::vector<devices::CounterPlacement>& read_plan() const override {
    return plan_;
  }
  absl::Status TakeSnapshot(devices::Snapshot* out) override {
    return test_devices::SnapshotOf(g_counters, plan_.size(), out);
  }
  absl::Status Release() override { return absl::OkStatus(); }
  uint64_t frozen_ns() const override { return 0; }

  static void Bump(int counter, uint64_t n) {
    g_counters[counter].fetch_add(n, std::memory_order_seq_cst);
  }
  static inline std::atomic<int> program_calls{0};

 private:
  std::vector<devices::CounterPlacement> plan_;
};

std::unique_ptr<Session> StartCounting() {
  SessionOptions o;
  o.events = {"cbo[0]/CLOCKTICKS", "cbo[1]/CLOCKTICKS"};
  absl::StatusOr<std::unique_ptr<Session>> s = runtime::StartSessionOnDevice(
      std::move(o), {std::make_unique<CountingDevice>(), "counting"});
  EXPECT_TRUE(s.ok()) << common::StatusMessage(s.status());
  return s.ok() ? *std::move(s) : nullptr;
}

const RegionResult* Find(const Results& r, std::string_view path) {
  for (const RegionResult& region : r.regions) {
    if (region.path == path) return &region;
  }
  return nullptr;
}

std::unique_ptr<Session> StartSim(std::vector<std::string> events) {
  SessionOptions o;
  o.events = std::move(events);
  o.backend = "sim";
  o.sim_sockets = 2;
  o.sim_demo_traffic = false;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  EXPECT_TRUE(s.ok()) << common::StatusMessage(s.status());
  return s.ok() ? *std::move(s) : nullptr;
}

sim::IvyTownUncore::Traffic CasReads(int channel) {
  return {.box = ivytown::BoxType::kImc,
          .instance = channel,
          .code = 0x04,
          .umask = 0x03};
}

TEST(RegionTest, ExactCountsPerRegionOnTheSimulator) {
  std::unique_ptr<Session> session =
      StartSim({"imc/CAS_COUNT.RD", "cbo[2]/LLC_VICTIMS.M_STATE"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  const sim::IvyTownUncore::Traffic victims{.box = ivytown::BoxType::kCbo,
                                            .instance = 2,
                                            .code = 0x37,
                                            .umask = 0x01};
  ASSERT_TRUE(sim->Inject(0, CasReads(0), 5, 10).ok());  // outside: ignored
  for (int call = 0; call < 3; ++call) {
    UNCORE_REGION("load");
    ASSERT_TRUE(sim->Inject(0, CasReads(1), 2, 100).ok());  // 200
    ASSERT_TRUE(sim->Inject(1, CasReads(7), 1, 30).ok());   // 30, socket 1
    ASSERT_TRUE(sim->Inject(1, victims, 1, 4).ok());        // 4
  }
  { uncore::UncoreRegion r("idle"); }
  const Results results = session->Collect();
  EXPECT_TRUE(results.run.simulated);
  EXPECT_EQ(results.run.backend, "sim");
  EXPECT_THAT(results.run.sockets, ElementsAre(0, 1));
  const RegionResult* load = Find(results, "load");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->calls, 3u);
  const EventCounts& cas = load->inclusive[0];
  EXPECT_EQ(cas.total, 3u * 230u);
  EXPECT_THAT(cas.per_socket, ElementsAre(600u, 90u));
  ASSERT_EQ(cas.per_instance.size(), 16u);  // 8 channels x 2 sockets
  EXPECT_EQ(cas.per_instance[1].instance, "iMC0 channel 1");
  EXPECT_EQ(cas.per_instance[1].value, 600u);
  EXPECT_EQ(load->inclusive[1].total, 12u);
  EXPECT_THAT(load->inclusive[1].per_socket, ElementsAre(0u, 12u));
  EXPECT_EQ(load->exclusive[0].total, load->inclusive[0].total);
  const RegionResult* idle = Find(results, "idle");
  ASSERT_NE(idle, nullptr);
  EXPECT_EQ(idle->inclusive[0].total, 0u);
  EXPECT_TRUE(session->Stop().ok());
}

TEST(RegionTest, NestedRegionsAreInclusiveAndExclusive) {
  std::unique_ptr<Session> session = StartSim({"imc[0]/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  {
    UNCORE_REGION("outer");
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 10).ok());
    for (int i = 0; i < 2; ++i) {
      UNCORE_REGION("inner");
      ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 100).ok());
      {
        UNCORE_REGION("leaf");
        ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 1000).ok());
      }
    }
    RegionBegin("manual");
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 7).ok());
    RegionEnd("manual");
  }
  const Results r = session->Collect();
  const RegionResult* outer = Find(r, "outer");
  const RegionResult* inner = Find(r, "outer/inner");
  const RegionResult* leaf = Find(r, "outer/inner/leaf");
  const RegionResult* manual = Find(r, "outer/manual");
  ASSERT_TRUE(outer && inner && leaf && manual);
  EXPECT_EQ(outer->depth, 0);
  EXPECT_EQ(leaf->depth, 2);
  EXPECT_EQ(leaf->name, "leaf");
  EXPECT_EQ(outer->inclusive[0].total, 10u + 2 * 1100u + 7u);
  EXPECT_EQ(outer->exclusive[0].total, 10u);
  EXPECT_EQ(inner->calls, 2u);
  EXPECT_EQ(inner->inclusive[0].total, 2 * 1100u);
  EXPECT_EQ(inner->exclusive[0].total, 200u);
  EXPECT_EQ(leaf->inclusive[0].total, 2000u);
  EXPECT_EQ(leaf->exclusive[0].total, 2000u);
  EXPECT_EQ(manual->inclusive[0].total, 7u);
  EXPECT_TRUE(r.run.errors.empty());
  // Wall time: a region contains its children.
  EXPECT_GE(outer->wall_ns, inner->wall_ns);
  EXPECT_LE(inner->min_ns, inner->max_ns);
}

// A name that holds the path separator is a region of its own: "a/b" at
// the top and "b" inside "a" have two paths ('/' and '\\' escaped in a
// name), in the results and in every report built from them (issue 36 R1:
// both had the path "a/b").
TEST(RegionTest, ANameWithTheSeparatorKeepsItsOwnPath) {
  std::unique_ptr<Session> session = StartSim({"imc[0]/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  {
    UNCORE_REGION("a/b");
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 5).ok());
  }
  {
    UNCORE_REGION("a");
    UNCORE_REGION("b");
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 7).ok());
  }
  {
    UNCORE_REGION("x\\");
    UNCORE_REGION("y");
  }
  { UNCORE_REGION("x/y"); }
  { UNCORE_REGION("x\\/y"); }
  const Results r = session->Collect();
  const RegionResult* slash = Find(r, "a\\/b");
  const RegionResult* nested = Find(r, "a/b");
  ASSERT_TRUE(slash && nested);
  EXPECT_EQ(slash->name, "a/b");
  EXPECT_EQ(slash->depth, 0);
  EXPECT_EQ(slash->inclusive[0].total, 5u);
  EXPECT_EQ(nested->name, "b");
  EXPECT_EQ(nested->depth, 1);
  EXPECT_EQ(nested->inclusive[0].total, 7u);
  // Backslashes are escaped too: three names, three paths.
  // y inside the region named x-backslash; x/y; x-backslash-slash-y.
  EXPECT_NE(Find(r, "x\\\\/y"), nullptr);
  EXPECT_NE(Find(r, "x\\/y"), nullptr);
  EXPECT_NE(Find(r, "x\\\\\\/y"), nullptr);
  std::set<std::string> paths;
  for (const RegionResult& region : r.regions) paths.insert(region.path);
  EXPECT_EQ(paths.size(), r.regions.size());
  // The reports' tree: "b" under "a", "a/b" at the top.
  const report::internal::RegionTree tree =
      report::internal::BuildRegionTree(r.regions);
  const auto index = [&](const RegionResult* region) {
    return static_cast<int>(region - r.regions.data());
  };
  EXPECT_EQ(tree.parent[index(slash)], -1);
  EXPECT_EQ(tree.parent[index(nested)], index(Find(r, "a")));
  const std::string table = report::FormatTable(r);
  EXPECT_THAT(table, HasSubstr("\na/b "));
  EXPECT_THAT(table, HasSubstr("\n  b "));
  EXPECT_TRUE(session->Stop().ok());
}

TEST(RegionTest, SixteenThreadsOfNestedRegionsGiveExactTotals) {
  std::unique_ptr<Session> session = StartCounting();
  ASSERT_NE(session, nullptr);
  constexpr int kIterations = 100000;
  constexpr int kThreads = 16;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kIterations; ++i) {
        UNCORE_REGION("outer");
        CountingDevice::Bump(0, 1);
        {
          UNCORE_REGION("inner");
          CountingDevice::Bump(0, 2);
          CountingDevice::Bump(1, static_cast<uint64_t>(t));
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  // The threads have exited: their results stay.
  const Results r = session->Collect();
  const RegionResult* outer = Find(r, "outer");
  const RegionResult* inner = Find(r, "outer/inner");
  ASSERT_TRUE(outer && inner);
  const uint64_t n = uint64_t{kThreads} * kIterations;
  EXPECT_EQ(outer->calls, n);
  EXPECT_EQ(inner->calls, n);
  EXPECT_EQ(outer->threads, uint64_t{kThreads});
  // Every count happened inside "outer" on some thread: counted once.
  EXPECT_EQ(outer->inclusive[0].total, 3 * n);
  // A thread's own "outer" work may fall while another thread is inside
  // "inner": that is "inner" time.  Exclusive and child add up exactly.
  EXPECT_GE(inner->inclusive[0].total, 2 * n);
  EXPECT_EQ(outer->exclusive[0].total + inner->inclusive[0].total, 3 * n);
  const uint64_t sum_t = uint64_t{kThreads} * (kThreads - 1) / 2;
  EXPECT_EQ(inner->inclusive[1].total, sum_t * kIterations);
  EXPECT_EQ(outer->exclusive[1].total, 0u);
  // The union is never longer than the calls' own time.
  EXPECT_LE(outer->wall_ns, outer->thread_ns);
  EXPECT_TRUE(r.run.errors.empty());
}

TEST(RegionTest, CollectWhileThreadsCount) {
  std::unique_ptr<Session> session = StartCounting();
  ASSERT_NE(session, nullptr);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        UNCORE_REGION("busy");
        CountingDevice::Bump(0, 1);
      }
    });
  }
  // Collect repeatedly while the threads count, until they have done a
  // good number of regions.
  uint64_t last = 0;
  uint64_t last_count = 0;
  int collects = 0;
  while (last < 20000 || collects < 20) {
    const Results r = session->Collect();
    ++collects;
    if (const RegionResult* busy = Find(r, "busy")) {
      // Collect reads the threads one after the other while they count: a
      // call read on one thread may already be in an interval another
      // thread closed and credited, so counts and calls are only
      // compared once the threads are done (below).  Neither goes back.
      EXPECT_GE(busy->calls, last);
      EXPECT_GE(busy->inclusive[0].total, last_count);
      last = busy->calls;
      last_count = busy->inclusive[0].total;
    }
  }
  stop = true;
  for (std::thread& th : threads) th.join();
  const Results final_results = session->Collect();
  const RegionResult* busy = Find(final_results, "busy");
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->inclusive[0].total, busy->calls);
}

TEST(RegionTest, MisuseIsRecordedNeverFatal) {
  std::unique_ptr<Session> session = StartCounting();
  ASSERT_NE(session, nullptr);
  RegionEnd("never-begun");
  RegionBegin("a");
  RegionBegin("b");
  RegionEnd("a");  // b is still open: closed with a
  RegionBegin("c");
  RegionEnd("zzz");  // not open: ignored
  RegionEnd("c");
  for (int i = 0; i < kMaxRegionDepth + 3; ++i) RegionBegin("deep");
  for (int i = 0; i < kMaxRegionDepth + 3; ++i) RegionEnd("deep");
  try {
    UNCORE_REGION("throws");
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  const Results r = session->Collect();
  std::string errors;
  for (const std::string& e : r.run.errors) errors += e + "\n";
  EXPECT_THAT(errors, HasSubstr("end of region \"never-begun\" on a thread "
                                "with no open region"));
  EXPECT_THAT(errors, HasSubstr("region \"b\" was still open when its "
                                "enclosing region \"a\" ended"));
  EXPECT_THAT(errors, HasSubstr("\"zzz\" is not open on this thread"));
  EXPECT_THAT(errors, HasSubstr("deeper than the 32 nesting levels"));
  EXPECT_THAT(errors, HasSubstr("(x3)"));
  EXPECT_THAT(errors, HasSubstr("\"throws\" was closed by an exception"));
  const RegionResult* a = Find(r, "a");
  const RegionResult* b = Find(r, "a/b");
  const RegionResult* c = Find(r, "c");
  const RegionResult* deepest = nullptr;
  for (const RegionResult& region : r.regions) {
    if (region.name == "deep" &&
        (deepest == nullptr || region.depth > deepest->depth)) {
      deepest = &region;
    }
  }
  ASSERT_TRUE(a && b && c && deepest);
  EXPECT_EQ(a->calls, 1u);
  EXPECT_EQ(b->calls, 1u);
  EXPECT_EQ(c->calls, 1u);
  EXPECT_EQ(deepest->depth, kMaxRegionDepth - 1);
  EXPECT_EQ(Find(r, "throws")->calls, 1u);
  // Everything balanced out: a new region is outermost again.
  { UNCORE_REGION("after"); }
  const Results later = session->Collect();
  const RegionResult* after = Find(later, "after");
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->depth, 0);
}

TEST(RegionTest, ErrorsBeyondTheLimitAreCountedApart) {
  std::unique_ptr<Session> session = StartCounting();
  ASSERT_NE(session, nullptr);
  for (int i = 0; i < 100; ++i) RegionEnd("stray end " + std::to_string(i));
  RegionEnd("stray end 99");  // a repeat of one not listed
  const Results r = session->Collect();
  ASSERT_EQ(r.run.errors.size(), 65u);
  EXPECT_THAT(r.run.errors[63], HasSubstr("\"stray end 63\""));
  EXPECT_THAT(r.run.errors[63], Not(HasSubstr("(x")));
  EXPECT_EQ(r.run.errors[64],
            "37 more errors, not listed: a report lists the first 64 "
            "distinct ones");
}

// A program's macro that opens two regions puts both on one line.
#define UNCORE_TEST_TWO_REGIONS(a, b) \
  UNCORE_REGION(a);                   \
  UNCORE_REGION(b)

TEST(RegionTest, TwoRegionsOnOneLineCompileAndNest) {
  std::unique_ptr<Session> session = StartSim({"imc[0]/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  {
    UNCORE_TEST_TWO_REGIONS("outer", "inner");
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 10).ok());
  }
  {
    // clang-format off
    UNCORE_REGION("left"); UNCORE_REGION("right");
    // clang-format on
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 5).ok());
  }
  const Results r = session->Collect();
  const RegionResult* inner = Find(r, "outer/inner");
  const RegionResult* right = Find(r, "left/right");
  ASSERT_TRUE(inner && right);
  EXPECT_EQ(inner->inclusive[0].total, 10u);
  EXPECT_EQ(right->inclusive[0].total, 5u);
  EXPECT_TRUE(r.run.errors.empty());
}

TEST(RegionTest, RegionsOpenAtStopAreCountedUpToTheStopAndMarkedOpen) {
  std::unique_ptr<Session> session = StartCounting();
  ASSERT_NE(session, nullptr);
  RegionBegin("left-open");
  CountingDevice::Bump(0, 5);
  { UNCORE_REGION("closed inside"); }
  ASSERT_TRUE(session->Stop().ok());
  RegionEnd("left-open");  // after Stop: no session, nothing happens
  const Results r = session->Collect();
  const RegionResult* open = Find(r, "left-open");
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->calls, 1u);
  EXPECT_EQ(open->open_calls, 1u);
  EXPECT_EQ(open->inclusive[0].total, 5u);
  EXPECT_GT(open->wall_ns, 0u);
  const RegionResult* inside = Find(r, "left-open/closed inside");
  ASSERT_NE(inside, nullptr);
  EXPECT_EQ(inside->open_calls, 0u);
  ASSERT_EQ(r.run.errors.size(), 1u);
  EXPECT_THAT(r.run.errors[0],
              HasSubstr("region \"left-open\" was still open on thread 0 when "
                        "the session stopped: counted up to then"));
}

// Issue 36, R6: a region open on each of 300 threads was 300 errors (600
// with a region inside it), past the 64-error cap: an OpenMP run gave
// 41,636.  One line per region path with its count of threads, under the
// same cap as every other error.
TEST(RegionTest, RegionsOpenAtStopAreOneLinePerPathUnderTheCap) {
  std::unique_ptr<Session> session = StartCounting();
  ASSERT_NE(session, nullptr);
  constexpr int kTeam = 300;      // open "outer" and "outer/inner"
  constexpr int kDistinct = 100;  // each opens a region of its own
  std::atomic<int> opened{0};
  std::atomic<bool> stopped{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kTeam + kDistinct; ++i) {
    threads.emplace_back([i, &opened, &stopped] {
      if (i < kTeam) {
        RegionBegin("outer");
        RegionBegin("inner");
      } else {
        RegionBegin("distinct " + std::to_string(i - kTeam));
      }
      opened.fetch_add(1);
      while (!stopped.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  while (opened.load() < kTeam + kDistinct) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const absl::Status stop = session->Stop();
  stopped.store(true);
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(stop.ok()) << stop;
  const Results r = session->Collect();
  ASSERT_NE(Find(r, "outer"), nullptr);
  EXPECT_EQ(Find(r, "outer")->open_calls, uint64_t{kTeam});
  EXPECT_EQ(Find(r, "outer/inner")->open_calls, uint64_t{kTeam});
  // 2 + 100 paths: the first 64 listed, then one line for the rest.
  ASSERT_EQ(r.run.errors.size(), 65u) << r.run.errors.size() << " errors";
  EXPECT_THAT(r.run.errors,
              ::testing::Contains(
                  "region \"outer\" was still open on 300 threads when the "
                  "session stopped: counted up to then (its open_calls)"));
  EXPECT_THAT(r.run.errors,
              ::testing::Contains(
                  "region \"outer/inner\" was still open on 300 threads when "
                  "the session stopped: counted up to then (its open_calls)"));
  EXPECT_EQ(r.run.errors[64],
            "38 more errors, not listed: a report lists the first 64 "
            "distinct ones");
}

// The fast path (OpenFast/CloseFast) is for recorders with no trace, no
// node groups and no sampling; regions_general_test runs this suite with it
// off everywhere.
TEST(RegionTest, OnlyPlainRecordersTryTheFastPath) {
  CountingDevice device;
  ASSERT_TRUE(device.Program({}).ok());
  const bool general_only = regions::GeneralBoundariesOnlyForTesting();
  EXPECT_EQ(regions::Recorder(&device).fast_boundaries(), !general_only);
  EXPECT_EQ(regions::Recorder(nullptr).fast_boundaries(), !general_only);
  regions::RecorderOptions sampled;
  sampled.sample_every = 4;
  EXPECT_FALSE(regions::Recorder(&device, sampled).fast_boundaries());
}

// The first thread's snapshots skip the shared-snapshot claim
// (SharedSnapshots::AllowSolo) until a second thread uses the recorder;
// the counts are the same either way.
TEST(RegionTest, SnapshotsAreSoloUntilASecondThreadComes) {
  CountingDevice device;
  devices::ProgramRequest request;
  request.events.resize(1);
  ASSERT_TRUE(device.Program(request).ok());
  regions::Recorder rec(&device);
  ASSERT_NE(rec.snapshots(), nullptr);
  EXPECT_EQ(rec.snapshots()->solo(), rec.fast_boundaries());
  regions::Activate(&rec);
  {
    UNCORE_REGION("solo");
    CountingDevice::Bump(0, 5);
  }
  EXPECT_EQ(rec.snapshots()->solo(), rec.fast_boundaries());
  std::thread([] {
    UNCORE_REGION("solo");
    CountingDevice::Bump(0, 7);
  }).join();
  EXPECT_FALSE(rec.snapshots()->solo());
  {
    UNCORE_REGION("solo");
    CountingDevice::Bump(0, 11);
  }
  ASSERT_EQ(regions::Deactivate(&rec, std::chrono::seconds(10)),
            regions::Quiescence::kQuiet);
  const std::vector<regions::Recorder::RegionTotals> totals = rec.Collect();
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0].calls, 3u);
  EXPECT_EQ(totals[0].threads, 2u);
  EXPECT_EQ(totals[0].inclusive, std::vector<uint64_t>{5 + 7 + 11});
  EXPECT_EQ(totals[0].exclusive, std::vector<uint64_t>{5 + 7 + 11});
  EXPECT_EQ(rec.snapshots()->snapshots_taken(), 6u);
}

TEST(RegionTest, WithoutASessionRegionsDoNothing) {
  ASSERT_EQ(Session::Active(), nullptr);
  ASSERT_EQ(internal::g_active_recorder.load(), nullptr);
  for (int i = 0; i < 10; ++i) {
    UNCORE_REGION("nothing");
    uncore::UncoreRegion r("nothing either");
    RegionBegin("x");
    RegionEnd("y");
  }
  SUCCEED();
}

TEST(RegionTest, BackendOffMeasuresNothingAndSaysSoOnce) {
  SessionOptions o;
  o.events = {"imc/CAS_COUNT.RD"};
  o.backend = "off";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  ASSERT_TRUE(s.ok()) << common::StatusMessage(s.status());
  EXPECT_FALSE((*s)->measuring());
  EXPECT_EQ(internal::g_active_recorder.load(), nullptr);
  for (int i = 0; i < 1000; ++i) {
    UNCORE_REGION("unmeasured");
  }
  const Results r = (*s)->Collect();
  EXPECT_TRUE(r.regions.empty());
  ASSERT_EQ(r.run.warnings.size(), 1u);
  EXPECT_THAT(r.run.warnings[0], HasSubstr("backend off"));
}

TEST(RegionTest, OneSessionAtATime) {
  std::unique_ptr<Session> first = StartCounting();
  ASSERT_NE(first, nullptr);
  // The second session is refused before its device is programmed.
  const int calls = CountingDevice::program_calls.load();
  SessionOptions o;
  o.events = {"cbo[0]/CLOCKTICKS"};
  o.output = "-";
  absl::StatusOr<std::unique_ptr<Session>> second =
      runtime::StartSessionOnDevice(std::move(o),
                                    {std::make_unique<CountingDevice>()});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CountingDevice::program_calls.load(), calls);
  EXPECT_EQ(Session::Active(), first.get());
  first.reset();
  EXPECT_EQ(Session::Active(), nullptr);
}

TEST(RegionTest, BadOptionsAreClearErrors) {
  SessionOptions o;
  o.events = {"imc/CAS_COUNT.RDX"};
  o.backend = "sim";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(s.status()), HasSubstr("RDX"));
  SessionOptions b;
  b.events = {"imc/CAS_COUNT.RD"};
  b.backend = "gpu";
  s = Session::Start(std::move(b));
  EXPECT_THAT(common::StatusMessage(s.status()),
              HasSubstr("unknown backend 'gpu': use auto, perf, direct, sim "
                        "or off"));
  SessionOptions m;
  m.metrics = {"NO_SUCH_METRIC"};
  m.backend = "sim";
  s = Session::Start(std::move(m));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(Session::Active(), nullptr);
}

TEST(RegionTest, MetricsAreEvaluatedPerRegion) {
  SessionOptions o;
  o.metrics = {"MEM_BW_READS"};
  o.backend = "sim";
  o.sim_demo_traffic = false;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  ASSERT_TRUE(s.ok()) << common::StatusMessage(s.status());
  sim::IvyTownUncore* sim = runtime::SimulatorOf(**s);
  {
    UNCORE_REGION("read");
    ASSERT_TRUE(sim->Inject(0, CasReads(3), 1, 1000).ok());
  }
  const Results r = (*s)->Collect();
  ASSERT_EQ(r.metrics.size(), 1u);
  EXPECT_EQ(r.metrics[0].name, "MEM_BW_READS");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_TRUE(r.events[0].from_metric);
  const RegionResult* read = Find(r, "read");
  ASSERT_NE(read, nullptr);
  ASSERT_TRUE(read->metrics[0].valid);
  // Per second of the counters' own window: from the begin snapshot to the
  // end one, which hold the call's clock reads between them.
  ASSERT_GT(read->counted_ns, 0u);
  const double seconds = static_cast<double>(read->counted_ns) * 1e-9;
  EXPECT_DOUBLE_EQ(read->metrics[0].value, 1000.0 * 64.0 / seconds);
}

// ---------------------------------------------------------------------------
// Teams: a region's counts are what the socket counted while at least one
// thread was inside (docs/concurrency.md, "Teams of threads").

// Runs actions in a fixed global order across threads: each actor does its
// steps in turn (step k waits until steps 0..k-1 are done).
class Steps {
 public:
  void Run(int step, const std::function<void()>& action) {
    while (next_.load(std::memory_order_acquire) != step) {
      std::this_thread::yield();
    }
    action();
    next_.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  std::atomic<int> next_{0};
};

TEST(RegionTeamTest, AFullyOverlappingTeamCountsTheSocketOnce) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  constexpr int kThreads = 4;
  std::barrier sync(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      sync.arrive_and_wait();
      RegionBegin("team");
      sync.arrive_and_wait();  // all four inside
      if (t == 0) {
        ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 500).ok());
      }
      sync.arrive_and_wait();
      RegionEnd("team");
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 7).ok());  // nobody inside
  const Results r = session->Collect();
  const RegionResult* team = Find(r, "team");
  ASSERT_NE(team, nullptr);
  EXPECT_EQ(team->calls, 4u);
  EXPECT_EQ(team->threads, 4u);
  EXPECT_EQ(team->inclusive[0].total, 500u);  // not 4 x 500
  EXPECT_EQ(team->exclusive[0].total, 500u);
  EXPECT_LE(team->wall_ns, team->thread_ns);
  EXPECT_GE(team->wall_ns, team->max_ns);
  EXPECT_TRUE(r.run.errors.empty());
}

TEST(RegionTeamTest, StaggeredThreadsAndAReopenedPathCountTheUnion) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  auto inject = [&](uint64_t n) {
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, n).ok());
  };
  Steps steps;
  std::thread first([&] {
    steps.Run(0, [] { RegionBegin("p"); });
    steps.Run(4, [] { RegionEnd("p"); });
    steps.Run(8, [] { RegionBegin("p"); });  // reopened right after
    steps.Run(10, [] { RegionEnd("p"); });
  });
  std::thread second([&] {
    steps.Run(2, [] { RegionBegin("p"); });
    steps.Run(6, [] { RegionEnd("p"); });
  });
  steps.Run(1, [&] { inject(1); });      // first alone
  steps.Run(3, [&] { inject(10); });     // both
  steps.Run(5, [&] { inject(100); });    // second alone
  steps.Run(7, [&] { inject(1000); });   // nobody
  steps.Run(9, [&] { inject(10000); });  // first again
  first.join();
  second.join();
  const Results r = session->Collect();
  const RegionResult* p = Find(r, "p");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->calls, 3u);
  EXPECT_EQ(p->threads, 2u);
  EXPECT_EQ(p->inclusive[0].total, 10111u);
  EXPECT_EQ(p->exclusive[0].total, 10111u);
  EXPECT_TRUE(r.run.errors.empty());
}

TEST(RegionTeamTest, ChildrenOnOtherThreadsAreSubtractedOnce) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  auto inject = [&](uint64_t n) {
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, n).ok());
  };
  Steps steps;
  std::thread t1([&] {
    steps.Run(0, [] { RegionBegin("p"); });
    steps.Run(12, [] { RegionEnd("p"); });
  });
  std::thread t2([&] {
    steps.Run(2, [] { RegionBegin("p"); });
    steps.Run(3, [] { RegionBegin("c"); });
    steps.Run(8, [] { RegionEnd("c"); });
    steps.Run(13, [] { RegionEnd("p"); });
  });
  std::thread t3([&] {
    steps.Run(5, [] { RegionBegin("p"); });
    steps.Run(6, [] { RegionBegin("d"); });
    steps.Run(10, [] { RegionEnd("d"); });
    steps.Run(15, [] { RegionEnd("p"); });
  });
  steps.Run(1, [&] { inject(1); });         // p alone
  steps.Run(4, [&] { inject(10); });        // p/c open
  steps.Run(7, [&] { inject(100); });       // p/c and p/d open
  steps.Run(9, [&] { inject(1000); });      // p/d open
  steps.Run(11, [&] { inject(10000); });    // p, no child
  steps.Run(14, [&] { inject(100000); });   // p (third thread only)
  steps.Run(16, [&] { inject(1000000); });  // nobody
  t1.join();
  t2.join();
  t3.join();
  const Results r = session->Collect();
  const RegionResult* p = Find(r, "p");
  const RegionResult* c = Find(r, "p/c");
  const RegionResult* d = Find(r, "p/d");
  ASSERT_TRUE(p && c && d);
  EXPECT_EQ(p->calls, 3u);
  EXPECT_EQ(p->threads, 3u);
  EXPECT_EQ(p->inclusive[0].total, 111111u);
  // Not open in any child path: 1 + 10,000 + 100,000.
  EXPECT_EQ(p->exclusive[0].total, 110001u);
  EXPECT_EQ(c->inclusive[0].total, 110u);
  EXPECT_EQ(c->exclusive[0].total, 110u);
  EXPECT_EQ(d->inclusive[0].total, 1100u);
  EXPECT_TRUE(r.run.errors.empty());
}

TEST(RegionTeamTest, EachThreadsShareSumsToTheSocketOnce) {
  std::unique_ptr<Session> session = StartCounting();
  ASSERT_NE(session, nullptr);
  constexpr int kThreads = 8;
  constexpr int kCalls = 2000;
  std::atomic<uint64_t> shares{0};
  std::atomic<uint64_t> calls{0};
  std::barrier sync(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) {
        UNCORE_REGION("shared");
        CountingDevice::Bump(0, 3);
      }
      sync.arrive_and_wait();  // every interval closed
      const Results mine = session->CollectCallingThread();
      const RegionResult* shared = Find(mine, "shared");
      ASSERT_NE(shared, nullptr);
      EXPECT_EQ(shared->calls, uint64_t{kCalls});
      EXPECT_EQ(shared->threads, 1u);
      shares.fetch_add(shared->inclusive[0].total);
      calls.fetch_add(shared->calls);
    });
  }
  for (std::thread& th : threads) th.join();
  const Results all = session->Collect();
  const RegionResult* shared = Find(all, "shared");
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->inclusive[0].total, 3u * kThreads * kCalls);
  EXPECT_EQ(shares.load(), shared->inclusive[0].total);
  EXPECT_EQ(calls.load(), shared->calls);
}

// Sibling child paths open and close on different threads at once: the
// parent's exclusive stretches and the children's intervals never leave a
// gap (every count inside the parent is exclusive or in some child) and a
// child never counts more than its parent.
TEST(RegionTeamTest, SiblingChildrenOnManyThreadsLeaveNoGap) {
  std::unique_ptr<Session> session = StartCounting();
  ASSERT_NE(session, nullptr);
  constexpr int kThreads = 8;
  constexpr int kIterations = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      const char* child = t % 2 == 0 ? "c" : "d";
      for (int i = 0; i < kIterations; ++i) {
        UNCORE_REGION("p");
        CountingDevice::Bump(0, 1);
        uncore::UncoreRegion inner(child);
        CountingDevice::Bump(0, 2);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  const Results r = session->Collect();
  const RegionResult* p = Find(r, "p");
  const RegionResult* c = Find(r, "p/c");
  const RegionResult* d = Find(r, "p/d");
  ASSERT_TRUE(p && c && d);
  const uint64_t n = uint64_t{kThreads} * kIterations;
  EXPECT_EQ(p->inclusive[0].total, 3 * n);
  EXPECT_GE(
      p->exclusive[0].total + c->inclusive[0].total + d->inclusive[0].total,
      3 * n);
  EXPECT_LE(c->inclusive[0].total, 3 * n);
  EXPECT_LE(d->inclusive[0].total, 3 * n);
  EXPECT_LE(p->exclusive[0].total, n);
  EXPECT_TRUE(r.run.errors.empty());
}

// docs/regions.md ("Each socket once, however many threads"): the worked
// example of three threads (once in the README, hence the test's name), in
// simulated megabytes (one per millisecond).
TEST(RegionTeamTest, TheReadmesThreeThreadExample) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  auto megabytes = [&](uint64_t n) {
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, n).ok());
  };
  Steps steps;
  std::thread a([&] {
    steps.Run(0, [] { RegionBegin("solve"); });  // 0 ms
    steps.Run(6, [] { RegionEnd("solve"); });    // 30 ms
  });
  std::thread b([&] {
    steps.Run(2, [] { RegionBegin("solve"); });  // 10 ms
    steps.Run(10, [] { RegionEnd("solve"); });   // 40 ms
  });
  std::thread c([&] {
    steps.Run(4, [] { RegionBegin("solve"); });  // 25 ms
    steps.Run(7, [] { RegionBegin("io"); });     // 30 ms
    steps.Run(9, [] { RegionEnd("io"); });       // 40 ms
    steps.Run(12, [] { RegionEnd("solve"); });   // 45 ms
  });
  steps.Run(1, [&] { megabytes(10); });  // 0-10: A
  steps.Run(3, [&] { megabytes(15); });  // 10-25: A, B
  steps.Run(5, [&] { megabytes(5); });   // 25-30: A, B, C
  steps.Run(8, [&] { megabytes(10); });  // 30-40: B, C in io
  steps.Run(11, [&] { megabytes(5); });  // 40-45: C
  a.join();
  b.join();
  c.join();
  const Results r = session->Collect();
  const RegionResult* solve = Find(r, "solve");
  const RegionResult* io = Find(r, "solve/io");
  ASSERT_TRUE(solve && io);
  EXPECT_EQ(solve->calls, 3u);
  EXPECT_EQ(solve->threads, 3u);
  EXPECT_EQ(solve->inclusive[0].total, 45u);
  EXPECT_EQ(solve->exclusive[0].total, 35u);
  EXPECT_EQ(io->inclusive[0].total, 10u);
  EXPECT_EQ(io->calls, 1u);
  EXPECT_TRUE(r.run.errors.empty());
}

// LIKWID's semantics: markers keyed per thread by name, overlapping.
TEST(RegionMarkerTest, MarkersOverlapAndFollowLikwidsRules) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  auto inject = [&](uint64_t n) {
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, n).ok());
  };
  ASSERT_EQ(uncore_marker_start("A"), 0);
  inject(1);
  ASSERT_EQ(uncore_marker_start("B"), 0);
  inject(10);
  EXPECT_EQ(uncore_marker_start("B"), -1);  // already running
  EXPECT_THAT(uncore_last_error(), HasSubstr("already runs"));
  ASSERT_EQ(uncore_marker_stop("A"), 0);  // not the innermost: fine
  inject(100);
  ASSERT_EQ(uncore_marker_stop("B"), 0);
  EXPECT_EQ(uncore_marker_stop("B"), -1);  // not running
  EXPECT_THAT(uncore_last_error(), HasSubstr("does not run"));
  {
    UNCORE_REGION("outer");
    ASSERT_EQ(uncore_marker_start("A"), 0);  // top level, not outer/A
    inject(1000);
    ASSERT_EQ(uncore_marker_stop("A"), 0);
  }
  const Results r = session->Collect();
  const RegionResult* a = Find(r, "A");
  const RegionResult* b = Find(r, "B");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(Find(r, "outer/A"), nullptr);
  EXPECT_EQ(a->calls, 2u);
  EXPECT_EQ(a->inclusive[0].total, 1011u);
  EXPECT_EQ(b->calls, 1u);
  EXPECT_EQ(b->inclusive[0].total, 110u);
  // GET: this thread's share; RESET zeroes it.
  int n = 1;
  double events[1] = {0};
  double seconds = 0;
  int calls = 0;
  ASSERT_EQ(uncore_region_get("A", &n, events, &seconds, &calls), 0);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(events[0], 1011.0);
  ASSERT_EQ(uncore_marker_start("A"), 0);
  EXPECT_EQ(uncore_marker_reset("A"), -1);  // runs
  ASSERT_EQ(uncore_marker_stop("A"), 0);
  ASSERT_EQ(uncore_marker_reset("A"), 0);
  ASSERT_EQ(uncore_region_get("A", &n, events, &seconds, &calls), 0);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(events[0], 0.0);
  std::string errors;
  for (const std::string& e : session->Collect().run.errors) errors += e;
  EXPECT_THAT(errors, HasSubstr("marker region \"B\" started again"));
  EXPECT_THAT(errors, HasSubstr("marker region \"B\" stopped on a thread"));
}

// A team's workers open their first region under the region the team's
// first thread is in: one path for the whole team (the OpenMP tool).
TEST(RegionTeamTest, WorkersOpenUnderTheirTeamsRegion) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  regions::Recorder* recorder = internal::g_active_recorder.load();
  ASSERT_NE(recorder, nullptr);
  const int name = InternRegionName("team").value;
  RegionBegin("solve");
  const internal::RegionParent parent = internal::CurrentRegionParent(recorder);
  EXPECT_NE(parent.generation, 0u);
  constexpr int kThreads = 4;
  std::barrier sync(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const uint64_t generation =
          internal::BeginRegionUnder(recorder, parent, name);
      sync.arrive_and_wait();
      if (t == 0) {
        ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 500).ok());
      }
      sync.arrive_and_wait();
      internal::EndRegion(recorder, name, false, generation);
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 7).ok());
  RegionEnd("solve");
  const Results r = session->Collect();
  const RegionResult* solve = Find(r, "solve");
  const RegionResult* team = Find(r, "solve/team");
  ASSERT_TRUE(solve && team);
  EXPECT_EQ(team->calls, 4u);
  EXPECT_EQ(team->threads, 4u);
  EXPECT_EQ(team->inclusive[0].total, 500u);
  EXPECT_EQ(solve->inclusive[0].total, 507u);
  EXPECT_EQ(solve->exclusive[0].total, 7u);
  EXPECT_TRUE(r.run.errors.empty());
}

}  // namespace
}  // namespace uncore
