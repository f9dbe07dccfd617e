// The concurrent core in the places real programs take it: sessions stopped
// and destroyed while other threads are inside regions, uncore_finalize
// racing uncore_region_get, many threads crossing boundaries together,
// fork(), signal handlers, thread_local destructors, short-lived threads,
// and the region semantics (run-time names, every call path, outer ends,
// sampling, overhead).  Run under ASan and TSan too (label `concurrent`).
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/regions/recorder.h"
#include "sdk/runtime/session_testing.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/sanitized.h"
#include "uncore/region.h"
#include "uncore/session.h"
#include "uncore/uncore_c.h"

namespace uncore {
namespace {

using ::testing::HasSubstr;

using test_support::kSanitized;

const RegionResult* Find(const Results& r, std::string_view path) {
  for (const RegionResult& region : r.regions) {
    if (region.path == path) return &region;
  }
  return nullptr;
}

std::string AllErrors(const Results& r) {
  std::string all;
  for (const std::string& e : r.run.errors) all += e + "\n";
  return all;
}

std::unique_ptr<Session> StartSim(std::vector<std::string> events,
                                  int sample_every = 1) {
  SessionOptions o;
  o.events = std::move(events);
  o.backend = "sim";
  o.sim_demo_traffic = false;
  o.sample_every = sample_every;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  EXPECT_TRUE(s.ok()) << common::StatusMessage(s.status());
  return s.ok() ? *std::move(s) : nullptr;
}

// perf msr/tsc/, or nullptr where perf cannot count it here.
std::unique_ptr<Session> StartPerfTsc() {
  SessionOptions o;
  o.events = {"msr/tsc/"};
  o.backend = "perf";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(std::move(o));
  return s.ok() ? *std::move(s) : nullptr;
}

sim::IvyTownUncore::Traffic CasReads(int channel) {
  return {.box = ivytown::BoxType::kImc,
          .instance = channel,
          .code = 0x04,
          .umask = 0x03};
}

// Resident memory of this process, in bytes.
uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  uint64_t resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Threads that open regions in a loop until told to stop.
class Busy {
 public:
  explicit Busy(int threads) {
    for (int t = 0; t < threads; ++t) {
      threads_.emplace_back([this] {
        while (!stop_.load()) {
          UNCORE_REGION("busy");
          uncore::UncoreRegion inner(std::string("inner"));
          rounds_.fetch_add(1);
        }
      });
    }
    while (rounds_.load() < 1000) std::this_thread::yield();
  }
  ~Busy() {
    stop_.store(true);
    for (std::thread& t : threads_) t.join();
  }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;
  uint64_t rounds() const { return rounds_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> rounds_{0};
  std::vector<std::thread> threads_;
};

TEST(LifetimeTest, StopAndDestroyWhileThreadsAreInsideRegionsOnTheSimulator) {
  for (int round = 0; round < 5; ++round) {
    std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
    ASSERT_NE(session, nullptr);
    Busy busy(8);
    ASSERT_TRUE(session->Stop().ok());
    const Results r = session->Collect();
    const RegionResult* region = Find(r, "busy");
    ASSERT_NE(region, nullptr);
    EXPECT_GT(region->calls, 0u);
    session.reset();  // the device and recorder go; the threads go on
    const uint64_t before = busy.rounds();
    while (busy.rounds() < before + 1000) std::this_thread::yield();
  }
}

TEST(LifetimeTest, StopAndDestroyWhileThreadsAreInsideRegionsOnPerf) {
  std::unique_ptr<Session> probe = StartPerfTsc();
  if (probe == nullptr) GTEST_SKIP() << "perf cannot count msr/tsc/ here";
  probe.reset();
  for (int round = 0; round < 3; ++round) {
    std::unique_ptr<Session> session = StartPerfTsc();
    ASSERT_NE(session, nullptr);
    Busy busy(4);
    session.reset();
  }
}

TEST(LifetimeTest, ARegionOpenWhileItsSessionIsDestroyedEndsHarmlessly) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  std::atomic<int> phase{0};
  std::thread t([&] {
    uncore::UncoreRegion open("held");
    phase.store(1);
    while (phase.load() != 2) std::this_thread::yield();
  });  // ends while the next session counts
  while (phase.load() != 1) std::this_thread::yield();
  ASSERT_TRUE(session->Stop().ok());
  const Results r = session->Collect();
  EXPECT_THAT(AllErrors(r),
              HasSubstr("region \"held\" was still open on thread"));
  session.reset();
  // The next session may well get the old recorder's address: the old
  // region's end must not reach it.
  std::unique_ptr<Session> next = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(next, nullptr);
  phase.store(2);
  t.join();
  { UNCORE_REGION("after"); }
  const Results later = next->Collect();
  ASSERT_NE(Find(later, "after"), nullptr);
  EXPECT_EQ(Find(later, "held"), nullptr);
  EXPECT_EQ(AllErrors(later), "");
}

TEST(LifetimeTest, FinalizeRacesRegionGet) {
  for (int round = 0; round < 5; ++round) {
    ASSERT_EQ(uncore_init_with("imc/CAS_COUNT.RD", nullptr, "sim", ""), 0)
        << uncore_last_error();
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        while (!stop.load()) {
          uncore_region_begin("c");
          uncore_region_end("c");
          int n = 1;
          double events[1];
          double seconds = 0;
          int calls = 0;
          (void)uncore_region_get("c", &n, events, &seconds, &calls);
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(uncore_finalize(), 0) << uncore_last_error();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    stop.store(true);
    for (std::thread& t : threads) t.join();
  }
}

// The same with a session its C++ owner destroys while other threads read
// it through the C API (uncore_region_get, uncore_write_report): never a
// use after free (ASan in CI).
TEST(LifetimeTest, DestroyingACppSessionRacesRegionGet) {
  for (int round = 0; round < 10; ++round) {
    std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
    ASSERT_NE(session, nullptr);
    std::atomic<bool> stop{false};
    std::atomic<int> reads{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        while (!stop.load()) {
          uncore_region_begin("c");
          uncore_region_end("c");
          int n = 1;
          double events[1];
          double seconds = 0;
          int calls = 0;
          (void)uncore_region_get("c", &n, events, &seconds, &calls);
          if (t == 0) (void)uncore_write_report("/dev/null");
          reads.fetch_add(1);
        }
      });
    }
    while (reads.load() < 100) std::this_thread::yield();
    session.reset();  // Stop and free, with the readers still going
    const int after = reads.load();
    while (reads.load() < after + 100) std::this_thread::yield();
    stop.store(true);
    for (std::thread& t : threads) t.join();
  }
}

// Sixteen counters that every thread can read (socket-wide, like uncore
// counters) and each of which only one thread advances, inside its regions.
constexpr int kTagged = 16;
std::atomic<uint64_t> g_tags[kTagged];

class TaggedDevice : public test_devices::FakeDevice {
 public:
  TaggedDevice() : FakeDevice("tagged") {}
  absl::Status TakeSnapshot(devices::Snapshot* out) override {
    taken_.fetch_add(1);
    for (size_t i = 0; i < plan_.size(); ++i) {
      out->values[i] = g_tags[i].load();
    }
    // A snapshot takes a while, as reading hardware does (2 us).
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::microseconds(2);
    while (std::chrono::steady_clock::now() < until) {
    }
    out->valid = true;
    return absl::OkStatus();
  }
  static inline std::atomic<uint64_t> taken_{0};
};

// Sixteen threads cross boundaries together and share snapshots; thread t
// advances counter t by 3 in each call of its region "work t".  A snapshot
// taken before a boundary (or after the next one) would show in the exact
// totals.
TEST(LifetimeTest, SixteenThreadsSharingSnapshotsKeepExactCounts) {
  SessionOptions o;
  for (int i = 0; i < kTagged - 1; ++i) {
    o.events.push_back("cbo[" + std::to_string(i) + "]/CLOCKTICKS");
  }
  o.events.push_back("ha[0]/CLOCKTICKS");
  absl::StatusOr<std::unique_ptr<Session>> s = runtime::StartSessionOnDevice(
      std::move(o), {std::make_unique<TaggedDevice>(), "tagged"});
  ASSERT_TRUE(s.ok()) << common::StatusMessage(s.status());
  std::unique_ptr<Session> session = *std::move(s);
  constexpr int kCalls = kSanitized ? 300 : 3000;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  const uint64_t taken_before = TaggedDevice::taken_.load();
  std::vector<std::thread> threads;
  for (int t = 0; t < kTagged; ++t) {
    threads.emplace_back([&, t] {
      const std::string name = "work " + std::to_string(t);
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kCalls; ++i) {
        UNCORE_REGION(name);
        g_tags[t].fetch_add(3);
      }
    });
  }
  while (ready.load() != kTagged) std::this_thread::yield();
  go.store(true);
  for (std::thread& t : threads) t.join();
  const uint64_t taken = TaggedDevice::taken_.load() - taken_before;
  const Results r = session->Collect();
  for (int t = 0; t < kTagged; ++t) {
    const RegionResult* work = Find(r, "work " + std::to_string(t));
    ASSERT_NE(work, nullptr);
    EXPECT_EQ(work->calls, uint64_t{kCalls});
    EXPECT_EQ(work->inclusive[t].total, 3u * kCalls) << "thread " << t;
  }
  EXPECT_EQ(AllErrors(r), "");
  // How many boundaries shared (on 2 cores, few: sharing needs a third
  // thread to arrive during a snapshot; shared_snapshots_test.cc shows it).
  EXPECT_LE(taken, uint64_t{kTagged} * kCalls * 2);
  std::printf("%llu snapshots for %llu boundaries\n",
              static_cast<unsigned long long>(taken),
              static_cast<unsigned long long>(uint64_t{kTagged} * kCalls * 2));
}

// The same on the simulator: a freeze window stops the counters (traffic
// injected while one is open is not counted, as on hardware), but every
// event the counters did count is inside the region of the thread that
// caused it.
TEST(LifetimeTest, SixteenThreadsOnTheSimulatorMissNoCountedEvent) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  constexpr int kThreads = 16;
  constexpr int kCalls = kSanitized ? 200 : 2000;
  constexpr uint64_t kPerCall = 7;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  {
    UNCORE_REGION("all");
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (!go.load()) std::this_thread::yield();
        for (int i = 0; i < kCalls; ++i) {
          UNCORE_REGION("work");
          ASSERT_TRUE(sim->Inject(0, CasReads(t % 4), kPerCall, 1).ok());
        }
      });
    }
    while (ready.load() != kThreads) std::this_thread::yield();
    go.store(true);
    for (std::thread& t : threads) t.join();
  }
  const Results r = session->Collect();
  const RegionResult* all = Find(r, "all");
  const RegionResult* work = Find(r, "work");  // other threads: top level
  ASSERT_TRUE(all && work);
  const uint64_t injected = uint64_t{kThreads} * kCalls * kPerCall;
  const uint64_t counted = all->inclusive[0].total;
  EXPECT_LE(counted, injected);
  EXPECT_GT(counted, 0u);
  // How much falls into freeze windows depends on scheduling: under a
  // sanitizer, snapshots are slow and back to back, and more than half of
  // the traffic can land in them (10,983 of 22,400 counted under TSan).
  if (!kSanitized) {
    EXPECT_GT(counted, injected / 2);
  }
  EXPECT_EQ(work->calls, uint64_t{kThreads} * kCalls);
  EXPECT_GE(work->inclusive[0].total, counted);
  EXPECT_EQ(AllErrors(r), "");
}

// A device with counters that never move and no thread of its own.
class StillDevice : public test_devices::FakeDevice {
 public:
  StillDevice() : FakeDevice("still") {}
  absl::Status TakeSnapshot(devices::Snapshot* out) override {
    out->valid = true;
    return absl::OkStatus();
  }
};

TEST(LifetimeTest, AForkedChildCountsNothingAndLeavesTheParentAlone) {
  const std::string path =
      testing::TempDir() + "/fork-parent-" + std::to_string(getpid()) + ".json";
  SessionOptions o;
  o.events = {"imc/CAS_COUNT.RD"};
  o.backend = "sim";
  o.sim_demo_traffic = false;
  o.output = path;
  absl::StatusOr<std::unique_ptr<Session>> started =
      Session::Start(std::move(o));
  ASSERT_TRUE(started.ok()) << common::StatusMessage(started.status());
  std::unique_ptr<Session> session = *std::move(started);
  { UNCORE_REGION("parent before"); }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child: regions cost a pointer test; stopping and destroying the
    // parent's session writes nothing and releases nothing.
    bool ok = internal::g_active_recorder.load() == nullptr;
    { UNCORE_REGION("child"); }
    ok = ok && Session::Active() == nullptr;
    ok = ok && session->Stop().ok();
    session.reset();
    // The child may start a session of its own (on a device without a
    // background thread: ThreadSanitizer does not allow new threads after a
    // multi-threaded fork).
    SessionOptions o;
    o.events = {"cbo[0]/CLOCKTICKS"};
    absl::StatusOr<std::unique_ptr<Session>> started_in_child =
        runtime::StartSessionOnDevice(
            std::move(o), {std::make_unique<StillDevice>(), "still"});
    std::unique_ptr<Session> own =
        started_in_child.ok() ? *std::move(started_in_child) : nullptr;
    ok = ok && own != nullptr;
    if (own != nullptr) {
      { UNCORE_REGION("child's own"); }
      const Results r = own->Collect();
      ok = ok && Find(r, "child's own") != nullptr;
      ok = ok && own->Stop().ok();
    }
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "the child wrote a report";
  { UNCORE_REGION("parent after"); }
  ASSERT_TRUE(session->Stop().ok());
  std::ifstream in(path);
  const std::string report((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
  EXPECT_THAT(report, HasSubstr("\"parent before\""));
  EXPECT_THAT(report, HasSubstr("\"parent after\""));
  EXPECT_THAT(report, testing::Not(HasSubstr("\"child\"")));
  std::remove(path.c_str());
}

std::atomic<uint64_t> g_handler_runs{0};
void RegionInHandler(int) {
  UNCORE_REGION("handler");
  uncore_region_begin("handler c");
  uncore_region_end("handler c");
  g_handler_runs.fetch_add(1, std::memory_order_relaxed);
}

TEST(LifetimeTest, RegionsInASignalHandlerNeverDeadlockNorStealCalls) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  // A name's and a region path's first use on a thread allocate, which a
  // signal handler must not do (docs/concurrency.md): use them once where
  // the handler will, outside it.
  RegionInHandler(0);
  {
    UNCORE_REGION("loop");
    RegionInHandler(0);
    RegionBegin("inner");
    RegionInHandler(0);
    RegionEnd("inner");
  }
  const uint64_t warm_up_runs = g_handler_runs.load();
  struct sigaction action = {};
  action.sa_handler = &RegionInHandler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  struct sigaction old = {};
  ASSERT_EQ(sigaction(SIGALRM, &action, &old), 0);
  itimerval every = {};
  every.it_interval.tv_usec = 200;
  every.it_value.tv_usec = 200;
  ASSERT_EQ(setitimer(ITIMER_REAL, &every, nullptr), 0);
  constexpr int kLoop = 20000;
  for (int i = 0; i < kLoop; ++i) {
    UNCORE_REGION("loop");
    RegionBegin("inner");
    RegionEnd("inner");
  }
  itimerval off = {};
  setitimer(ITIMER_REAL, &off, nullptr);
  sigaction(SIGALRM, &old, nullptr);
  const Results r = session->Collect();
  const RegionResult* loop = Find(r, "loop");
  const RegionResult* inner = Find(r, "loop/inner");
  ASSERT_TRUE(loop && inner);
  EXPECT_EQ(loop->calls, uint64_t{kLoop} + 1);
  EXPECT_EQ(inner->calls, uint64_t{kLoop} + 1);
  // Every handler region is counted or refused, and the refusals are
  // reported.
  uint64_t handler_calls = 0;
  for (const RegionResult& region : r.regions) {
    if (region.name == "handler") handler_calls += region.calls;
  }
  EXPECT_GT(g_handler_runs.load(), warm_up_runs);
  if (handler_calls < g_handler_runs.load()) {
    EXPECT_THAT(AllErrors(r), HasSubstr("were refused: a signal handler"));
  }
}

TEST(LifetimeTest, RegionsInThreadLocalDestructorsAreCounted) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  struct AtExit {
    ~AtExit() {
      UNCORE_REGION("tls dtor");
      uncore_region_begin("tls dtor c");
      uncore_region_end("tls dtor c");
    }
  };
  std::thread t([] {
    thread_local AtExit at_exit;
    (void)&at_exit;
    UNCORE_REGION("thread");
  });
  t.join();
  const Results r = session->Collect();
  ASSERT_NE(Find(r, "tls dtor"), nullptr);
  EXPECT_EQ(Find(r, "tls dtor")->calls, 1u);
  ASSERT_NE(Find(r, "tls dtor/tls dtor c"), nullptr);
  EXPECT_EQ(AllErrors(r), "");
}

TEST(LifetimeTest, ShortLivedThreadsStayWithinBoundedMemory) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  const int threads = kSanitized ? 2000 : 50000;
  auto spawn = [](int n) {
    for (int i = 0; i < n; ++i) {
      std::thread([] {
        UNCORE_REGION("short");
        uncore_region_begin("short c");
        uncore_region_end("short c");
      }).join();
    }
  };
  spawn(200);  // warm up allocator pools
  const uint64_t before = ResidentBytes();
  spawn(threads);
  const uint64_t after = ResidentBytes();
  const Results r = session->Collect();
  ASSERT_NE(Find(r, "short"), nullptr);
  EXPECT_EQ(Find(r, "short")->calls, uint64_t(threads) + 200);
  if (!kSanitized) {
    EXPECT_LT(after, before + (10u << 20))
        << "resident memory grew by " << (after - before) / 1024 << " kB";
  }
}

TEST(LifetimeTest, StartStopCyclesDoNotLeak) {
  auto cycle = [] {
    std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
    ASSERT_NE(session, nullptr);
    { UNCORE_REGION("cycle"); }
    ASSERT_TRUE(session->Stop().ok());
  };
  for (int i = 0; i < 50; ++i) cycle();
  const uint64_t before = ResidentBytes();
  const int cycles = kSanitized ? 100 : 2000;
  for (int i = 0; i < cycles; ++i) cycle();
  const uint64_t after = ResidentBytes();
  if (!kSanitized) {
    // The old design kept every recorder: 8.6 kB a cycle, 17 MB here.
    EXPECT_LT(after, before + (2u << 20))
        << "resident memory grew by " << (after - before) / 1024 << " kB";
  }
}

// A device that raises a signal in the middle of every snapshot: the
// handler's regions interrupt the SDK itself and must be refused, each
// counted, the interrupted regions untouched.
std::atomic<uint64_t> g_raised{0};
void RegionInsideTheSdk(int) { UNCORE_REGION("inside the sdk"); }

class RaisingDevice : public test_devices::FakeDevice {
 public:
  RaisingDevice() : FakeDevice("raising") {}
  absl::Status TakeSnapshot(devices::Snapshot* out) override {
    g_raised.fetch_add(1);
    raise(SIGUSR1);
    for (uint64_t& v : out->values) v = ++counter_;
    out->valid = true;
    return absl::OkStatus();
  }

 private:
  uint64_t counter_ = 0;
};

TEST(LifetimeTest, ARegionInAHandlerThatInterruptsTheSdkIsRefusedAndCounted) {
  struct sigaction action = {};
  action.sa_handler = &RegionInsideTheSdk;
  sigemptyset(&action.sa_mask);
  struct sigaction old = {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &old), 0);
  SessionOptions o;
  o.events = {"cbo[0]/CLOCKTICKS"};
  absl::StatusOr<std::unique_ptr<Session>> s = runtime::StartSessionOnDevice(
      std::move(o), {std::make_unique<RaisingDevice>(), "raising"});
  ASSERT_TRUE(s.ok()) << common::StatusMessage(s.status());
  std::unique_ptr<Session> session = *std::move(s);
  const uint64_t raised_before = g_raised.load();
  for (int i = 0; i < 100; ++i) {
    UNCORE_REGION("interrupted");
  }
  const uint64_t raised = g_raised.load() - raised_before;
  const Results r = session->Collect();
  sigaction(SIGUSR1, &old, nullptr);
  ASSERT_NE(Find(r, "interrupted"), nullptr);
  EXPECT_EQ(Find(r, "interrupted")->calls, 100u);
  EXPECT_EQ(Find(r, "interrupted")->inclusive[0].total, 100u);
  EXPECT_EQ(Find(r, "inside the sdk"), nullptr);
  EXPECT_EQ(raised, 200u);  // one per boundary
  // Each handler region: its begin refused (its end then does nothing).
  EXPECT_THAT(AllErrors(r), HasSubstr("200 region boundaries were refused"));
}

TEST(RegionSemanticsTest, ExclusiveCountsStayExactWhileAParentIsOpen) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  for (int step = 0; step < 3; ++step) {
    RegionBegin("step");
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 10).ok());  // 10 own
    {
      UNCORE_REGION("solve");
      ASSERT_TRUE(sim->Inject(0, CasReads(0), 1, 100).ok());  // 100
    }
    if (step < 2) RegionEnd("step");  // the last step stays open
  }
  const Results r = session->Collect();
  const RegionResult* step = Find(r, "step");
  const RegionResult* solve = Find(r, "step/solve");
  ASSERT_TRUE(step && solve);
  EXPECT_EQ(step->calls, 2u);
  EXPECT_EQ(solve->calls, 3u);
  EXPECT_EQ(step->inclusive[0].total, 220u);
  EXPECT_EQ(step->exclusive[0].total, 20u);
  EXPECT_EQ(solve->inclusive[0].total, 300u);
  RegionEnd("step");
}

TEST(RegionSemanticsTest, ARunTimeNameIsCountedAsItself) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  const std::vector<std::string> names = {"alpha", "beta", "alpha", "gamma"};
  for (const std::string& name : names) {
    UNCORE_REGION(name);
  }
  for (const std::string& name : names) {
    UNCORE_REGION(name.c_str());
  }
  const Results r = session->Collect();
  ASSERT_TRUE(Find(r, "alpha") && Find(r, "beta") && Find(r, "gamma"));
  EXPECT_EQ(Find(r, "alpha")->calls, 4u);
  EXPECT_EQ(Find(r, "beta")->calls, 2u);
  EXPECT_EQ(Find(r, "gamma")->calls, 2u);
}

TEST(RegionSemanticsTest, RegionGetSumsEveryCallPath) {
  ASSERT_EQ(uncore_init_with("imc/CAS_COUNT.RD", nullptr, "sim", ""), 0)
      << uncore_last_error();
  for (int i = 0; i < 4; ++i) {
    RegionBegin("setup");
    RegionBegin("solve");
    RegionEnd("solve");
    RegionEnd("setup");
  }
  for (int i = 0; i < 6; ++i) {
    RegionBegin("run");
    RegionBegin("solve");
    RegionEnd("solve");
    RegionEnd("run");
  }
  int n = 1;
  double events[1] = {0};
  double seconds = 0;
  int calls = 0;
  ASSERT_EQ(uncore_region_get("solve", &n, events, &seconds, &calls), 0);
  EXPECT_EQ(calls, 10);
  EXPECT_EQ(n, 1);
  EXPECT_GT(seconds, 0);
  EXPECT_EQ(uncore_finalize(), 0);
}

TEST(RegionSemanticsTest, AnOuterEndClosesInnerRegionsWithTheirTrueWallTime) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  RegionBegin("outer");
  std::this_thread::sleep_for(std::chrono::milliseconds(4));
  RegionBegin("inner");
  std::this_thread::sleep_for(std::chrono::milliseconds(6));
  RegionEnd("outer");
  const Results r = session->Collect();
  const RegionResult* outer = Find(r, "outer");
  const RegionResult* inner = Find(r, "outer/inner");
  ASSERT_TRUE(outer && inner);
  EXPECT_GE(inner->wall_ns, 6'000'000u);
  EXPECT_GE(outer->wall_ns, 10'000'000u);
  EXPECT_LT(inner->wall_ns, outer->wall_ns);
  EXPECT_THAT(AllErrors(r), HasSubstr("\"inner\" was still open when its "
                                      "enclosing region \"outer\" ended"));
}

TEST(RegionSemanticsTest, EveryRegionCarriesItsOverhead) {
  std::unique_ptr<Session> session = StartSim({"imc/CAS_COUNT.RD"});
  ASSERT_NE(session, nullptr);
  for (int i = 0; i < 100; ++i) {
    UNCORE_REGION("measured");
  }
  const Results r = session->Collect();
  const RegionResult* measured = Find(r, "measured");
  ASSERT_NE(measured, nullptr);
  EXPECT_GT(measured->overhead_ns, 0u);
  EXPECT_EQ(measured->sampled_calls, 100u);
  EXPECT_FALSE(measured->inclusive[0].estimated);
}

TEST(RegionSemanticsTest, SamplingEstimatesSteadyTrafficExactly) {
  constexpr int kEvery = 10;
  std::unique_ptr<Session> session =
      StartSim({"imc/CAS_COUNT.RD"}, /*sample_every=*/kEvery);
  ASSERT_NE(session, nullptr);
  sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
  ASSERT_NE(sim, nullptr);
  constexpr int kCalls = 1000;
  for (int i = 0; i < kCalls; ++i) {
    UNCORE_REGION("steady");
    ASSERT_TRUE(sim->Inject(0, CasReads(0), 3, 10).ok());  // 30 a call
  }
  const Results r = session->Collect();
  const RegionResult* steady = Find(r, "steady");
  ASSERT_NE(steady, nullptr);
  EXPECT_EQ(steady->calls, uint64_t{kCalls});
  EXPECT_EQ(steady->sampled_calls, uint64_t{kCalls / kEvery});
  EXPECT_EQ(steady->inclusive[0].total, 30u * kCalls);
  EXPECT_TRUE(steady->inclusive[0].estimated);
  bool said = false;
  for (const std::string& w : r.run.warnings) {
    said = said || w.find("UNCORE_SAMPLE") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace uncore
