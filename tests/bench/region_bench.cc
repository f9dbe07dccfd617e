// Region enter+exit cost, as differences against a baseline in one run:
//   BM_EmptyLoop            the floor of a benchmark loop
//   BM_RegionNoSession      UNCORE_REGION with no session (one pointer test)
//   BM_RegionBackendOff     ... with a session whose backend is off
//   BM_TwoSnapshotsSim8     two bare TakeSnapshot calls, 8 sim counters
//   BM_RegionSim8           a region pair on the same device
//   BM_TwoSnapshotsMemory8  two snapshots of an in-memory 8-counter device
//   BM_RegionMemory8        a region pair on it
//   BM_TwoReadsMsrTsc       two read() calls of a perf msr/tsc group (floor)
//   BM_RegionPerfMsrTsc     a region pair counting msr/tsc/ with perf
// The bookkeeping of a region is BM_RegionMemory8 - BM_TwoSnapshotsMemory8
// (and, drowned in the simulator's cost, BM_RegionSim8 -
// BM_TwoSnapshotsSim8); the cost of an unmeasured region is
// BM_RegionBackendOff - BM_EmptyLoop.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "sdk/devices/device.h"
#include "sdk/devices/direct/direct_device.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/runtime/session_testing.h"
#include "sdk/sim/simulated_uncore.h"
#include "sdk/spec/event_spec.h"
#include "tests/testing/fake_device.h"
#include "uncore/region.h"
#include "uncore/session.h"

namespace uncore {
namespace {

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
  sim::SimulatedUncore sim(1);
  // As the sim backend has it: with the background extender thread (a
  // second thread makes every uncontended mutex of the simulator dearer).
  devices::DirectDevice::Options options;
  options.background_extender = true;
  devices::DirectDevice device(&sim, sim.topology(), options);
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

// The perf floor: two read() calls of a one-event msr/tsc group, opened
// the way the perf backend opens it (PERF_FORMAT_GROUP with the times).
void BM_TwoReadsMsrTsc(benchmark::State& state) {
  absl::StatusOr<devices::perf::PmuCatalog> pmus =
      devices::perf::DiscoverPmus("/sys");
  const devices::perf::Pmu* msr = pmus.ok() ? pmus->Find("msr") : nullptr;
  if (msr == nullptr || msr->cpus.empty()) {
    state.SkipWithError("no msr PMU");
    return;
  }
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = msr->type;
  attr.config = 0;  // tsc
  attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                     PERF_FORMAT_TOTAL_TIME_RUNNING;
  const long fd = syscall(SYS_perf_event_open, &attr, -1, msr->cpus[0], -1,
                          PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    state.SkipWithError("perf_event_open(msr/tsc/) failed");
    return;
  }
  uint64_t buffer[4];
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        read(static_cast<int>(fd), buffer, sizeof(buffer)));
    benchmark::DoNotOptimize(
        read(static_cast<int>(fd), buffer, sizeof(buffer)));
    benchmark::ClobberMemory();
  }
  close(static_cast<int>(fd));
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

}  // namespace
}  // namespace uncore

BENCHMARK_MAIN();
