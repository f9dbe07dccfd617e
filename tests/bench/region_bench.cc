// Region enter+exit cost, as differences against a baseline in one run:
//   BM_EmptyLoop            the floor of a benchmark loop
//   BM_RegionNoSession      UNCORE_REGION with no session (one pointer test)
//   BM_RegionBackendOff     ... with a session whose backend is off
//   BM_TwoSnapshotsSim8     two bare TakeSnapshot calls, 8 sim counters
//   BM_RegionSim8           a region pair on the same device
//   BM_TwoSnapshotsMemory8  two snapshots of an in-memory 8-counter device
//   BM_RegionMemory8        a region pair on it
//   BM_RegionMemory1        a region pair on a 1-counter in-memory device:
//                           BM_PairOverTwoReads's bookkeeping without its
//                           system calls
//   BM_RegionMemory8Traced  ... with a trace (to /dev/null: every call
//                           recorded, formatted and written by the trace's
//                           writer thread); minus BM_RegionMemory8 it is
//                           what tracing adds to a pair (two boundaries)
//                           while the writer keeps up; past its pace the
//                           loop waits for it (bounded memory)
//   BM_TraceRecordCall      what a traced call costs its own thread: one
//                           record into its buffer, with 8 counts
//   BM_TraceWriter          the writer's pace: calls formatted and written
//                           (to /dev/null) per second, counts included
//   BM_TwoReadsMsrTsc       two read() calls of a perf msr/tsc group (floor)
//   BM_RegionPerfMsrTsc     a region pair counting msr/tsc/ with perf
//   BM_PairOverTwoReads     the two above as a ratio in one run: blocks of
//                           1,000 bare read pairs and 1,000 region pairs
//                           alternate on the event's CPU; counter `ratio`
//                           is region time / bare time
//                           (docs/performance.md: the goal is 1.05, at
//                           most 1.10)
//   BM_FloorPairOverTwoReads  the same ratio for the least a boundary under
//                           the union rule must do (no SDK code): one
//                           compare-and-swap on a path word held busy over
//                           the read, the read, the TSC, the interval's
//                           counts and time added; what any design of the
//                           boundary could reach on this machine
//   BM_LeanPairOverTwoReads the same ratio for the floor plus a call's whole
//                           bookkeeping (thread state, a stack of calls,
//                           calls, times, minimum, maximum, inclusive and
//                           exclusive counts), inline with no layers
// The bookkeeping of a region is BM_RegionMemory8 - BM_TwoSnapshotsMemory8
// (and, drowned in the simulator's cost, BM_RegionSim8 -
// BM_TwoSnapshotsSim8); the cost of an unmeasured region is
// BM_RegionBackendOff - BM_EmptyLoop.
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "sdk/devices/device.h"
#include "sdk/platforms/ivytown/device/ivytown_device.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/runtime/session_testing.h"
#include "sdk/spec/event_spec.h"
#include "sdk/trace/trace_collector.h"
#include "tests/bench/over_two_reads.h"
#include "tests/testing/fake_device.h"
#include "uncore/region.h"
#include "uncore/session.h"

namespace uncore {
namespace {

using bench_support::OpenMsrTsc;
using bench_support::OverTwoReads;

const std::vector<std::string> kEightCounters = {
    "cbo[0]/LLC_VICTIMS.M_STATE", "cbo[0]/RxR_OCCUPANCY.IRQ",
    "cbo[0]/RING_AD_USED.CW",     "cbo[0]/RING_AK_USED.CW",
    "imc[0]/CAS_COUNT.RD",        "imc[0]/CAS_COUNT.WR",
    "imc[0]/ACT_COUNT.RD",        "imc[0]/PRE_COUNT.RD"};

// An in-memory device with 8 counters: snapshots cost almost nothing, so
// BM_RegionMemory8 - BM_TwoSnapshotsMemory8 isolates the bookkeeping.
using test_devices::MemoryDevice;

// Two snapshots of `device` per iteration: the floor of a measured region.
void TwoSnapshotsLoop(benchmark::State& state, devices::Device& device) {
  devices::Snapshot a(device.read_plan().size());
  devices::Snapshot b(device.read_plan().size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(device.TakeSnapshot(&a));
    benchmark::DoNotOptimize(device.TakeSnapshot(&b));
    benchmark::ClobberMemory();
  }
}

// One region enter+exit per iteration, in a session made of `options`.
void RegionLoop(benchmark::State& state, SessionOptions options,
                std::unique_ptr<devices::Device> device = nullptr) {
  auto session = device == nullptr
                     ? Session::Start(std::move(options))
                     : runtime::StartSessionOnDevice(std::move(options),
                                                     {std::move(device)});
  if (!session.ok()) {
    state.SkipWithError("session");
    return;
  }
  int x = 0;
  for (auto _ : state) {
    UNCORE_REGION("bench");
    benchmark::DoNotOptimize(x);
    benchmark::ClobberMemory();
  }
}

void BM_TwoSnapshotsMemory8(benchmark::State& state) {
  MemoryDevice device;
  devices::ProgramRequest request;
  request.events.resize(8);
  (void)device.Program(request);
  TwoSnapshotsLoop(state, device);
}
BENCHMARK(BM_TwoSnapshotsMemory8);

void BM_RegionMemory8(benchmark::State& state) {
  SessionOptions o;
  o.events = kEightCounters;
  RegionLoop(state, std::move(o), std::make_unique<MemoryDevice>());
}
BENCHMARK(BM_RegionMemory8);

// One counter, as the perf pair below reads (msr/tsc/): the bookkeeping of
// BM_PairOverTwoReads without its system calls.
void BM_RegionMemory1(benchmark::State& state) {
  SessionOptions o;
  o.events = {kEightCounters[0]};
  RegionLoop(state, std::move(o), std::make_unique<MemoryDevice>());
}
BENCHMARK(BM_RegionMemory1);

void BM_RegionMemory8Traced(benchmark::State& state) {
  SessionOptions o;
  o.events = kEightCounters;
  o.trace = "/dev/null";
  RegionLoop(state, std::move(o), std::make_unique<MemoryDevice>());
}
BENCHMARK(BM_RegionMemory8Traced);

void BM_EmptyLoop(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_EmptyLoop);

void BM_RegionNoSession(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) {
    UNCORE_REGION("bench");
    benchmark::DoNotOptimize(x);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_RegionNoSession);

void BM_RegionBackendOff(benchmark::State& state) {
  SessionOptions o;
  o.events = {"imc/CAS_COUNT.RD"};
  o.backend = "off";
  RegionLoop(state, std::move(o));
}
BENCHMARK(BM_RegionBackendOff);

void BM_TwoSnapshotsSim8(benchmark::State& state) {
  sim::IvyTownUncore sim(1);
  // As the sim backend has it: with the background extender thread (a
  // second thread makes every uncontended mutex of the simulator dearer).
  devices::IvyTownDevice::Options options;
  options.background_extender = true;
  devices::IvyTownDevice device(&sim, sim.topology(), options);
  devices::ProgramRequest request;
  for (const std::string& s : kEightCounters) {
    request.events.push_back(*spec::ParseEventSpec(s));
  }
  if (!device.Program(request).ok()) {
    state.SkipWithError("program");
    return;
  }
  TwoSnapshotsLoop(state, device);
}
BENCHMARK(BM_TwoSnapshotsSim8);

void BM_RegionSim8(benchmark::State& state) {
  SessionOptions o;
  o.events = kEightCounters;
  o.backend = "sim";
  o.sim_demo_traffic = false;
  RegionLoop(state, std::move(o));
}
BENCHMARK(BM_RegionSim8);

// The perf floor: two read() calls of a one-event msr/tsc group.
void BM_TwoReadsMsrTsc(benchmark::State& state) {
  int cpu = 0;
  const int fd = OpenMsrTsc(&cpu);
  if (fd < 0) {
    state.SkipWithError("perf_event_open(msr/tsc/) failed");
    return;
  }
  uint64_t buffer[4];
  for (auto _ : state) {
    benchmark::DoNotOptimize(read(fd, buffer, sizeof(buffer)));
    benchmark::DoNotOptimize(read(fd, buffer, sizeof(buffer)));
    benchmark::ClobberMemory();
  }
  close(fd);
}
BENCHMARK(BM_TwoReadsMsrTsc);

// A region pair counting msr/tsc/ with the perf backend on one socket.
void BM_RegionPerfMsrTsc(benchmark::State& state) {
  SessionOptions o;
  o.events = {"msr/tsc/"};
  o.backend = "perf";
  o.sockets = {0};
  RegionLoop(state, std::move(o));
}
BENCHMARK(BM_RegionPerfMsrTsc);

// BM_TwoReadsMsrTsc and BM_RegionPerfMsrTsc in one run, interleaved so that
// both see the same machine: the ratio is what a region adds to its reads.
// Pinned to the event's CPU, as a region's reads are cheapest there; with
// `cross_cpu` the thread runs on another CPU (a read then costs an IPI).
void BM_PairOverTwoReads(benchmark::State& state, bool cross_cpu) {
  bench_support::RegionPairOverTwoReads(state, cross_cpu);
}
BENCHMARK_CAPTURE(BM_PairOverTwoReads, on_event_cpu, false);

// The least a region pair under the union rule does: a path word stepped
// with a compare-and-swap and held busy over the read that opens or closes
// the path, the read (a one-event group, as the perf backend reads), the
// TSC, the interval's counts and time added up.
struct FloorPath {
  std::atomic<uint64_t> word{0};
  uint64_t begin = 0;
  uint64_t open_ticks = 0;
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> ticks{0};
  std::atomic<uint64_t> count{0};
};
constexpr uint64_t kFloorBusy = uint64_t{1} << 63;

inline uint64_t FloorTicks() {
  _mm_lfence();
  return __rdtsc();
}

__attribute__((noinline)) uint64_t FloorRead(int fd) {
  uint64_t buffer[4];
  if (read(fd, buffer, sizeof(buffer)) != sizeof(buffer)) return 0;
  return buffer[3];
}

// Steps `p`'s count of threads inside by one thread in (`enter`) or out,
// held busy where the step opens or closes the path; the word before it.
inline uint64_t StepFloorWord(FloorPath& p, bool enter) {
  uint64_t w = p.word.load(std::memory_order_acquire);
  for (;;) {
    const uint64_t next =
        (enter ? w + 1 : w - 1) | (w == (enter ? 0 : 1) ? kFloorBusy : 0);
    if (p.word.compare_exchange_weak(w, next, std::memory_order_acq_rel)) {
      return w;
    }
  }
}

__attribute__((noinline)) void FloorBegin(int fd, FloorPath& p) {
  if (StepFloorWord(p, /*enter=*/true) != 0) return;
  p.begin = FloorRead(fd);
  p.open_ticks = FloorTicks();
  p.word.store(1, std::memory_order_release);
}

__attribute__((noinline)) void FloorEnd(int fd, FloorPath& p) {
  const uint64_t w = StepFloorWord(p, /*enter=*/false);
  p.calls.store(p.calls.load(std::memory_order_relaxed) + 1,
                std::memory_order_relaxed);
  if (w != 1) return;
  const uint64_t now = FloorTicks();
  const uint64_t value = FloorRead(fd);
  p.count.store(p.count.load(std::memory_order_relaxed) + value - p.begin,
                std::memory_order_relaxed);
  p.ticks.store(p.ticks.load(std::memory_order_relaxed) + now - p.open_ticks,
                std::memory_order_relaxed);
  p.word.store(0, std::memory_order_release);
}

void BM_FloorPairOverTwoReads(benchmark::State& state) {
  FloorPath path;
  OverTwoReads(state, "floor_ns", /*cross_cpu=*/false, [&path](int fd) {
    FloorBegin(fd, path);
    benchmark::ClobberMemory();
    FloorEnd(fd, path);
  });
  benchmark::DoNotOptimize(path.count.load());
}
BENCHMARK(BM_FloorPairOverTwoReads);

// The floor plus what a call must record besides its path's interval, all
// inline, no layers: the thread's state through thread-local storage, a
// stack of open calls, and per thread and path the calls, their time,
// minimum and maximum, and the interval's inclusive and exclusive counts
// and wall time.  What a boundary with the report's whole bookkeeping and
// nothing else could reach here (docs/performance.md).
struct LeanAccumulator {
  uint64_t calls = 0;
  uint64_t thread_ticks = 0;
  uint64_t min_ticks = UINT64_MAX;
  uint64_t max_ticks = 0;
  uint64_t intervals = 0;
  uint64_t wall_ticks = 0;
  uint64_t inclusive = 0;
  uint64_t exclusive = 0;
};
struct LeanFrame {
  FloorPath* path;
  LeanAccumulator* accumulator;
  uint64_t start;
};
struct LeanThread {
  int depth = 0;
  std::array<LeanFrame, 8> frames{};
  LeanAccumulator accumulator;  // the one path's, of this thread
};
thread_local LeanThread* t_lean = nullptr;

__attribute__((noinline)) void LeanBegin(int fd, FloorPath& p) {
  LeanThread& t = *t_lean;
  const bool opens = StepFloorWord(p, /*enter=*/true) == 0;
  if (opens) p.begin = FloorRead(fd);
  const uint64_t now = FloorTicks();
  if (opens) {
    p.open_ticks = now;
    p.word.store(1, std::memory_order_release);
  }
  t.frames[t.depth++] = {&p, &t.accumulator, now};
}

__attribute__((noinline)) void LeanEnd(int fd) {
  LeanThread& t = *t_lean;
  const LeanFrame& f = t.frames[--t.depth];
  FloorPath& p = *f.path;
  LeanAccumulator& a = *f.accumulator;
  const bool closes = StepFloorWord(p, /*enter=*/false) == 1;
  const uint64_t now = FloorTicks();
  if (closes) {
    const uint64_t value = FloorRead(fd);
    a.inclusive += value - p.begin;
    a.exclusive += value - p.begin;  // no child path was open
    a.wall_ticks += now - p.open_ticks;
    ++a.intervals;
    p.word.store(0, std::memory_order_release);
  }
  const uint64_t ticks = now - f.start;
  ++a.calls;
  a.thread_ticks += ticks;
  a.min_ticks = std::min(a.min_ticks, ticks);
  a.max_ticks = std::max(a.max_ticks, ticks);
}

void BM_LeanPairOverTwoReads(benchmark::State& state) {
  FloorPath path;
  LeanThread thread;
  t_lean = &thread;
  OverTwoReads(state, "lean_ns", /*cross_cpu=*/false, [&path](int fd) {
    LeanBegin(fd, path);
    benchmark::ClobberMemory();
    LeanEnd(fd);
  });
  benchmark::DoNotOptimize(thread.accumulator.inclusive);
  t_lean = nullptr;
}
BENCHMARK(BM_LeanPairOverTwoReads);
BENCHMARK_CAPTURE(BM_PairOverTwoReads, cross_cpu, true);

trace::TraceLayout EightCounterLayout() {
  trace::TraceLayout layout;
  layout.sockets = {0};
  for (int e = 0; e < 8; ++e) {
    layout.value_event.push_back(e);
    layout.value_socket.push_back(0);
    EventInfo info;
    info.spec = info.canonical = kEightCounters[e];
    layout.events.push_back(info);
  }
  return layout;
}

void BM_TraceRecordCall(benchmark::State& state) {
  trace::TraceOptions options;  // no file: the writer drops the buffers
  auto collector = trace::TraceCollector::Open(options, EightCounterLayout());
  trace::TraceCollector::ThreadLog* log = (*collector)->AttachThread();
  const std::vector<uint64_t> counts(8, 12345);
  uint64_t t = 1;
  for (auto _ : state) {
    (*collector)->RecordCall(log, 0, t, t + 100, false, false, counts.data());
    t += 200;
  }
  (void)(*collector)->Finish();
}
BENCHMARK(BM_TraceRecordCall);

void BM_TraceWriter(benchmark::State& state) {
  const std::vector<uint64_t> counts(8, 12345);
  for (auto _ : state) {
    trace::TraceOptions options;
    options.path = "/dev/null";
    auto collector = trace::TraceCollector::Open(options, EightCounterLayout());
    (*collector)->SetPathNames([](int) {
      return std::make_pair(std::string("bench"), std::string("bench"));
    });
    trace::TraceCollector::ThreadLog* log = (*collector)->AttachThread();
    for (uint64_t i = 0; i < 100'000; ++i) {
      (*collector)
          ->RecordCall(log, 0, i * 200, i * 200 + 100, false, false,
                       counts.data());
    }
    benchmark::DoNotOptimize((*collector)->Finish());
  }
  state.SetItemsProcessed(state.iterations() * 100'000);
}
BENCHMARK(BM_TraceWriter)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uncore

BENCHMARK_MAIN();
