// Snapshot cost of the direct backend on the simulator: 8 counters, MSR-only
// (CBo) and mixed (CBo + iMC, whose PCI counters cost two reads each),
// against a baseline of the same register accesses made directly.  Run:
//   snapshot_bench --benchmark_counters_tabular=true
// Counters: accesses/snapshot (register reads + writes per snapshot) and
// frozen_ns/snapshot (time the socket was held frozen).
#include <cstdint>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "sdk/devices/engine/register_program.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/device/ivytown_device.h"
#include "sdk/platforms/ivytown/device/program_plan.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/spec/event_spec.h"

namespace uncore {

using ::uncore::platforms::AccessSpace;
namespace {

devices::ProgramRequest Request(bool mixed) {
  std::vector<std::string_view> specs;
  if (mixed) {
    specs = {"cbo[0]/LLC_VICTIMS.M_STATE", "cbo[0]/RxR_OCCUPANCY.IRQ",
             "cbo[0]/RING_AD_USED.CW",     "cbo[0]/RING_AK_USED.CW",
             "imc[0]/CAS_COUNT.RD",        "imc[0]/CAS_COUNT.WR",
             "imc[0]/ACT_COUNT.RD",        "imc[0]/PRE_COUNT.RD"};
  } else {
    specs = {"cbo[0-1]/LLC_VICTIMS.M_STATE", "cbo[0-1]/RxR_OCCUPANCY.IRQ",
             "cbo[0-1]/RING_AD_USED.CW", "cbo[0-1]/RING_AK_USED.CW"};
  }
  devices::ProgramRequest r;
  for (std::string_view s : specs) r.events.push_back(*spec::ParseEventSpec(s));
  return r;
}

void BM_DirectSnapshot(benchmark::State& state) {
  const bool mixed = state.range(0) != 0;
  sim::IvyTownUncore sim(1);
  devices::IvyTownDevice::Options o;
  o.background_extender = false;
  devices::IvyTownDevice dev(&sim, sim.topology(), o);
  if (!dev.Program(Request(mixed)).ok()) {
    state.SkipWithError("Program failed");
    return;
  }
  devices::Snapshot snap(dev.read_plan().size());
  const uint64_t accesses0 = sim.access_count();
  const uint64_t frozen0 = dev.frozen_ns();
  for (auto _ : state) {
    benchmark::DoNotOptimize(dev.TakeSnapshot(&snap));
    benchmark::DoNotOptimize(snap.values.data());
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["counters"] = static_cast<double>(dev.read_plan().size());
  state.counters["accesses/snapshot"] =
      static_cast<double>(sim.access_count() - accesses0) / n;
  state.counters["frozen_ns/snapshot"] =
      static_cast<double>(dev.frozen_ns() - frozen0) / n;
  state.SetLabel(mixed ? "4 MSR + 4 PCI counters" : "8 MSR counters");
}
BENCHMARK(BM_DirectSnapshot)->Arg(0)->Arg(1);

// Baseline: the same freeze, reads and unfreeze made straight on the
// simulator, without the device (no lock, no extension, no batching).
void BM_RawAccessBaseline(benchmark::State& state) {
  const bool mixed = state.range(0) != 0;
  sim::IvyTownUncore sim(1);
  devices::IvyTownDevice::Options o;
  o.background_extender = false;
  devices::IvyTownDevice dev(&sim, sim.topology(), o);
  if (!dev.Program(Request(mixed)).ok()) {
    state.SkipWithError("Program failed");
    return;
  }
  const machine::SocketTopology& socket = sim.topology().sockets[0];
  struct Read {
    bool pci;
    registers::PciAddress fn;
    uint32_t address;
  };
  // The counters the device reads, from the planner it runs.
  absl::StatusOr<devices::engine::RegisterProgram> program =
      devices::direct::BuildRegisterProgram(Request(mixed), {}, sim.topology());
  if (!program.ok() || program->sockets.empty()) {
    state.SkipWithError("BuildRegisterProgram failed");
    return;
  }
  std::vector<Read> reads;
  for (const devices::engine::CounterRead& r : program->sockets[0].reads) {
    const bool pci = r.reg.space != AccessSpace::kMsr;
    reads.push_back(
        {pci, pci ? r.reg.pci : registers::PciAddress{}, r.reg.address});
  }
  const uint64_t accesses0 = sim.access_count();
  uint64_t sum = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        sim.WriteMsr(socket.msr_cpu, 0x0C00, uint64_t{1} << 31));
    for (const Read& r : reads) {
      if (r.pci) {
        uint32_t lo = 0, hi = 0;
        benchmark::DoNotOptimize(sim.ReadPci(r.fn, r.address, &lo));
        benchmark::DoNotOptimize(sim.ReadPci(r.fn, r.address + 4, &hi));
        sum += lo + (uint64_t{hi} << 32);
      } else {
        uint64_t v = 0;
        benchmark::DoNotOptimize(sim.ReadMsr(socket.msr_cpu, r.address, &v));
        sum += v;
      }
    }
    benchmark::DoNotOptimize(
        sim.WriteMsr(socket.msr_cpu, 0x0C00, uint64_t{1} << 29));
  }
  benchmark::DoNotOptimize(sum);
  state.counters["accesses/snapshot"] =
      static_cast<double>(sim.access_count() - accesses0) /
      static_cast<double>(state.iterations());
  state.SetLabel(mixed ? "4 MSR + 4 PCI counters" : "8 MSR counters");
}
BENCHMARK(BM_RawAccessBaseline)->Arg(0)->Arg(1);

// Contention: snapshots from several threads share one socket's window.
void BM_DirectSnapshotThreads(benchmark::State& state) {
  static sim::IvyTownUncore* sim = nullptr;
  static devices::IvyTownDevice* dev = nullptr;
  if (state.thread_index() == 0) {
    sim = new sim::IvyTownUncore(1);
    devices::IvyTownDevice::Options o;
    o.background_extender = false;
    dev = new devices::IvyTownDevice(sim, sim->topology(), o);
    if (!dev->Program(Request(false)).ok()) state.SkipWithError("Program");
  }
  devices::Snapshot snap(8);
  for (auto _ : state) {
    benchmark::DoNotOptimize(dev->TakeSnapshot(&snap));
  }
  if (state.thread_index() == 0) {
    delete dev;
    delete sim;
  }
}
BENCHMARK(BM_DirectSnapshotThreads)->Threads(1)->Threads(4)->UseRealTime();

}  // namespace
}  // namespace uncore

BENCHMARK_MAIN();
