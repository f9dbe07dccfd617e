// Region pairs under threads, and what each form of region name costs.
// Figures for docs/performance.md: scripts/bench_table.py runs this once
// and prints the table.
//
// BM_Pairs/<device>_<mode>/real_time/threads:N  N threads each open and
// close one region in a loop, all on one recorder; items_per_second is the
// aggregate region-pair rate.  Devices:
//   sim       the direct device over the simulator, 8 counters (4 CBo MSR,
//             4 iMC PCI: one snapshot is 14 register accesses)
//   slowsim   the same behind SlowSpace: every register access first sleeps
//             a fixed time off the CPU (default 2 us, --slow_access_ns=),
//             a stand-in for the msr driver's system call and IPI
//   perftsc   perf msr/tsc/ on socket 0 (skipped where perf or the msr PMU
//             is not available)
// Modes: `shared` is SharedSnapshots::Mode::kShared (threads crossing
// boundaries together share one snapshot); `lock` is Mode::kEach, the
// design before it: every boundary takes its own snapshot, and the direct
// device serialises them with its per-socket mutex (perf has no such lock:
// every boundary reads the group itself).
// Counters: snapshots_per_pair (device snapshots taken / pairs; 2 when
// nothing is shared) and, on slowsim, access_us (the mean real duration of
// one access's sleep).  Every run checks that the recorder counted exactly
// iterations x threads pairs and reported no error.
//
// BM_Form/<form>  one region pair per iteration on one thread, on an
// in-memory 8-counter device (snapshots cost ~3 ns), by each way of naming
// a region: id (RegionId, interned), macro (UNCORE_REGION), const_char,
// string_view, string (UncoreRegion), begin_end (RegionBegin/RegionEnd with
// a std::string_view) and c_api (uncore_region_begin/end).  The cost of a
// string form over the interned one is the difference of the two.
#include <sys/prctl.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/device.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/devices/shared_snapshots.h"
#include "sdk/platforms/ivytown/device/ivytown_device.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/regions/recorder.h"
#include "sdk/registers/register_space.h"
#include "sdk/spec/event_spec.h"
#include "tests/testing/fake_device.h"
#include "uncore/region.h"
#include "uncore/uncore_c.h"

namespace uncore {
namespace {

using Mode = devices::SharedSnapshots::Mode;

const std::vector<std::string> kEightCounters = {
    "cbo[0]/LLC_VICTIMS.M_STATE", "cbo[0]/RxR_OCCUPANCY.IRQ",
    "cbo[0]/RING_AD_USED.CW",     "cbo[0]/RING_AK_USED.CW",
    "imc[0]/CAS_COUNT.RD",        "imc[0]/CAS_COUNT.WR",
    "imc[0]/ACT_COUNT.RD",        "imc[0]/PRE_COUNT.RD"};

// The off-CPU latency SlowSpace adds to every access; --slow_access_ns=.
int64_t g_slow_access_ns = 2000;

// A RegisterSpace that sleeps `latency` before every access of `inner`:
// the thread leaves the CPU as it does in the msr driver's IPI.  The
// calling thread's timer slack is set to 1 ns on its first access so that
// the sleep is close to `latency`; mean_sleep_ns says what it came to.
// MSR batches are read one by one (RegisterSpace's default), as the msr
// driver does.
class SlowSpace : public registers::RegisterSpace {
 public:
  SlowSpace(registers::RegisterSpace* inner, int64_t latency_ns)
      : inner_(inner), latency_ns_(latency_ns) {}

  absl::Status ReadMsr(int cpu, uint32_t msr, uint64_t* value) override {
    Wait();
    return inner_->ReadMsr(cpu, msr, value);
  }
  absl::Status WriteMsr(int cpu, uint32_t msr, uint64_t value) override {
    Wait();
    return inner_->WriteMsr(cpu, msr, value);
  }
  absl::Status ReadPci(const registers::PciAddress& fn, uint32_t offset,
                       uint32_t* value) override {
    Wait();
    return inner_->ReadPci(fn, offset, value);
  }
  absl::Status WritePci(const registers::PciAddress& fn, uint32_t offset,
                        uint32_t value) override {
    Wait();
    return inner_->WritePci(fn, offset, value);
  }

  double mean_sleep_ns() const {
    const uint64_t n = accesses_.load(std::memory_order_relaxed);
    return n == 0 ? 0.0
                  : static_cast<double>(
                        sleep_ns_.load(std::memory_order_relaxed)) /
                        static_cast<double>(n);
  }

 private:
  void Wait() {
    thread_local bool slack_set = false;
    if (!slack_set) {
      prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
      slack_set = true;
    }
    const timespec request{0, static_cast<long>(latency_ns_)};
    const auto t0 = std::chrono::steady_clock::now();
    clock_nanosleep(CLOCK_MONOTONIC, 0, &request, nullptr);
    const auto slept = std::chrono::steady_clock::now() - t0;
    sleep_ns_.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(slept).count(),
        std::memory_order_relaxed);
    accesses_.fetch_add(1, std::memory_order_relaxed);
  }

  registers::RegisterSpace* const inner_;
  const int64_t latency_ns_;
  std::atomic<uint64_t> accesses_{0};
  std::atomic<uint64_t> sleep_ns_{0};
};

enum class Target { kSim, kSlowSim, kPerfTsc };

// A programmed device and an active recorder on it, made by thread 0 of a
// BM_Pairs run before the loop and torn down by it after.
struct PairsFixture {
  std::unique_ptr<sim::IvyTownUncore> sim;
  std::unique_ptr<SlowSpace> slow;
  std::unique_ptr<devices::Device> device;
  std::unique_ptr<regions::Recorder> recorder;

  ~PairsFixture() {
    if (recorder != nullptr) {
      regions::Deactivate(recorder.get(), std::chrono::seconds(10));
    }
    recorder.reset();
    if (device != nullptr) device->Release().IgnoreError();
    device.reset();  // before the spaces it programs
    slow.reset();
    sim.reset();
  }
};

absl::StatusOr<devices::ProgramRequest> RequestOf(
    const std::vector<std::string>& specs) {
  devices::ProgramRequest request;
  for (const std::string& s : specs) {
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(s);
    if (!e.ok()) return e.status();
    request.events.push_back(*std::move(e));
  }
  return request;
}

// Opens and programs the device of `target` into `f`.
absl::Status OpenDevice(Target target, PairsFixture& f) {
  if (target == Target::kPerfTsc) {
    absl::StatusOr<std::unique_ptr<devices::perf::PerfDevice>> perf =
        devices::perf::PerfDevice::Open({});
    if (!perf.ok()) return perf.status();
    absl::StatusOr<devices::ProgramRequest> request = RequestOf({"msr/tsc/"});
    if (!request.ok()) return request.status();
    request->sockets = {0};
    UNCORE_RETURN_IF_ERROR((*perf)->Program(*request));
    f.device = *std::move(perf);
    return absl::OkStatus();
  }
  f.sim = std::make_unique<sim::IvyTownUncore>(1);
  registers::RegisterSpace* space = f.sim.get();
  if (target == Target::kSlowSim) {
    f.slow = std::make_unique<SlowSpace>(space, g_slow_access_ns);
    space = f.slow.get();
  }
  // As the sim backend has it, with the background extender thread.
  devices::IvyTownDevice::Options options;
  options.background_extender = true;
  auto direct = std::make_unique<devices::IvyTownDevice>(
      space, f.sim->topology(), options);
  absl::StatusOr<devices::ProgramRequest> request = RequestOf(kEightCounters);
  if (!request.ok()) return request.status();
  UNCORE_RETURN_IF_ERROR(direct->Program(*request));
  f.device = std::move(direct);
  return absl::OkStatus();
}

// A programmed device of `target` and an active recorder on it.
absl::StatusOr<std::unique_ptr<PairsFixture>> MakeFixture(Target target,
                                                          Mode mode) {
  auto f = std::make_unique<PairsFixture>();
  UNCORE_RETURN_IF_ERROR(OpenDevice(target, *f));
  regions::RecorderOptions options;
  options.snapshots = mode;
  f->recorder = std::make_unique<regions::Recorder>(f->device.get(), options);
  regions::Activate(f->recorder.get());
  return f;
}

// Whether perf msr/tsc/ can be programmed here (checked once).
const absl::Status& PerfTscAvailable() {
  static const absl::Status* status = [] {
    PairsFixture f;
    return new absl::Status(OpenDevice(Target::kPerfTsc, f));
  }();
  return *status;
}

PairsFixture* g_pairs = nullptr;  // thread 0 writes it outside the loop

void BM_Pairs(benchmark::State& state, Target target, Mode mode) {
  if (target == Target::kPerfTsc && !PerfTscAvailable().ok()) {
    state.SkipWithError(fmt::format("perf msr/tsc/ is not available here: {}",
                                    common::StatusMessage(PerfTscAvailable()))
                            .c_str());
    return;
  }
  // Thread 0 sets up before the loop; the loop's start is a barrier of all
  // threads, so every thread finds the recorder active.
  if (state.thread_index() == 0) {
    absl::StatusOr<std::unique_ptr<PairsFixture>> f = MakeFixture(target, mode);
    if (!f.ok()) {
      state.SkipWithError(
          fmt::format("setup: {}", common::StatusMessage(f.status())).c_str());
    } else {
      g_pairs = f->release();
    }
  }
  int x = 0;
  for (auto _ : state) {
    UNCORE_REGION("pair");
    benchmark::DoNotOptimize(x);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  // The loop's end is a barrier too: every thread has closed its regions.
  if (state.thread_index() != 0 || g_pairs == nullptr) return;
  std::unique_ptr<PairsFixture> f(g_pairs);
  g_pairs = nullptr;
  uint64_t pairs = 0;
  for (const regions::Recorder::RegionTotals& t : f->recorder->Collect()) {
    if (t.path == "pair") pairs += t.calls;
  }
  const std::vector<std::string> errors = f->recorder->Errors();
  const uint64_t expected = static_cast<uint64_t>(state.iterations()) *
                            static_cast<uint64_t>(state.threads());
  if (pairs != expected || !errors.empty()) {
    state.SkipWithError(
        fmt::format("the recorder counted {} pairs, expected {}; errors: {}",
                    pairs, expected,
                    errors.empty() ? std::string("none") : errors.front())
            .c_str());
    return;
  }
  const uint64_t taken = f->recorder->snapshots()->snapshots_taken();
  state.counters["snapshots_per_pair"] =
      pairs == 0 ? 0.0
                 : static_cast<double>(taken) / static_cast<double>(pairs);
  if (f->slow != nullptr) {
    state.counters["access_us"] = f->slow->mean_sleep_ns() / 1000.0;
  }
}

#define UNCORE_PAIRS(name, target, mode)          \
  BENCHMARK_CAPTURE(BM_Pairs, name, target, mode) \
      ->ThreadRange(1, 16)                        \
      ->UseRealTime()
UNCORE_PAIRS(sim_shared, Target::kSim, Mode::kShared);
UNCORE_PAIRS(sim_lock, Target::kSim, Mode::kEach);
UNCORE_PAIRS(slowsim_shared, Target::kSlowSim, Mode::kShared);
UNCORE_PAIRS(slowsim_lock, Target::kSlowSim, Mode::kEach);
UNCORE_PAIRS(perftsc_shared, Target::kPerfTsc, Mode::kShared);
UNCORE_PAIRS(perftsc_lock, Target::kPerfTsc, Mode::kEach);
#undef UNCORE_PAIRS

// ---------------------------------------------------------------------------
// Name forms.

// An in-memory device with 8 counters: snapshots cost almost nothing, so the
// differences between forms are the name lookups.
using test_devices::MemoryDevice;

// A realistic name length: the string forms compare it on every lookup.
constexpr char kFormName[] = "assemble_matrix";

// One region pair per iteration, opened by `pair`, on an active recorder
// over a MemoryDevice; checks that every pair was counted.
template <typename Pair>
void FormLoop(benchmark::State& state, Pair pair) {
  MemoryDevice device;
  devices::ProgramRequest request;
  request.events.resize(kEightCounters.size());
  (void)device.Program(request);
  regions::Recorder recorder(&device);
  regions::Activate(&recorder);
  for (auto _ : state) {
    pair();
    benchmark::ClobberMemory();
  }
  regions::Deactivate(&recorder, std::chrono::seconds(1));
  uint64_t pairs = 0;
  for (const regions::Recorder::RegionTotals& t : recorder.Collect()) {
    if (t.path == kFormName) pairs += t.calls;
  }
  if (pairs != static_cast<uint64_t>(state.iterations()) ||
      !recorder.Errors().empty()) {
    state.SkipWithError(fmt::format("the recorder counted {} pairs of {}",
                                    pairs, state.iterations())
                            .c_str());
  }
}

void BM_Form_id(benchmark::State& state) {
  const RegionId id = InternRegionName(kFormName);
  FormLoop(state, [id] { const UncoreRegion r(id); });
}
BENCHMARK(BM_Form_id);

void BM_Form_macro(benchmark::State& state) {
  FormLoop(state, [] { UNCORE_REGION("assemble_matrix"); });
}
BENCHMARK(BM_Form_macro);

void BM_Form_const_char(benchmark::State& state) {
  const char* name = kFormName;
  benchmark::DoNotOptimize(name);
  FormLoop(state, [name] { const UncoreRegion r(name); });
}
BENCHMARK(BM_Form_const_char);

void BM_Form_string_view(benchmark::State& state) {
  std::string_view name = kFormName;
  benchmark::DoNotOptimize(name);
  FormLoop(state, [name] { const UncoreRegion r(name); });
}
BENCHMARK(BM_Form_string_view);

void BM_Form_string(benchmark::State& state) {
  const std::string name = kFormName;
  FormLoop(state, [&name] { const UncoreRegion r(name); });
}
BENCHMARK(BM_Form_string);

void BM_Form_begin_end(benchmark::State& state) {
  std::string_view name = kFormName;
  benchmark::DoNotOptimize(name);
  FormLoop(state, [name] {
    RegionBegin(name);
    RegionEnd(name);
  });
}
BENCHMARK(BM_Form_begin_end);

void BM_Form_c_api(benchmark::State& state) {
  const char* name = kFormName;
  benchmark::DoNotOptimize(name);
  FormLoop(state, [name] {
    uncore_region_begin(name);
    uncore_region_end(name);
  });
}
BENCHMARK(BM_Form_c_api);

}  // namespace
}  // namespace uncore

// Google Benchmark's main, plus --slow_access_ns=N (SlowSpace's latency).
int main(int argc, char** argv) {
  std::vector<char*> args;
  constexpr std::string_view kFlag = "--slow_access_ns=";
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.substr(0, kFlag.size()) == kFlag) {
      int64_t ns = 0;
      if (!absl::SimpleAtoi(std::string(a.substr(kFlag.size())), &ns) ||
          ns < 1 || ns >= 1000000000) {
        fmt::print(stderr, "{}: want a latency in ns, 1 to 999999999\n", a);
        return 1;
      }
      uncore::g_slow_access_ns = ns;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
