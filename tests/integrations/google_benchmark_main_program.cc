// A benchmark binary built with UNCORE_BENCHMARK_MAIN(), run by
// google_benchmark_main_test.py.  Every benchmark injects known traffic
// into whichever simulated session is active (none during the timed runs,
// unless the benchmark has ScopedCounters; the --uncore_events session
// during the extra runs), and the simulator's demo traffic is off, so the
// counters the flags add are exact.  M is the extra run's iteration count
// (min(16, N) on Google Benchmark 1.7/1.8, 1 on 1.9.0/1.9.1, N from
// 1.9.2); on 1.7/1.8 the extra run is the whole function, from 1.9 its
// loop only (docs/google_benchmark.md):
//   BM_AFailure          fails before its loop (first, for the CSV header)
//   BM_Reads             11 reads per iteration                     -> 11
//   BM_ReadsWithSetup    1600 reads before the loop, 11 per iteration
//                        -> 1600/M + 11 (1.7/1.8), 11 (1.9)
//   BM_FewIterations     200 reads before the loop, 11 per iteration,
//                        4 iterations -> 200/M + 11 (1.7/1.8), 11 (1.9)
//   BM_Threads           2 threads, 3 reads per iteration; the extra run
//                        is one thread                               -> 3
//   BM_Scoped            ScopedCounters in the code counts the timed loop
//                        (5 per iteration) and its value is kept     -> 5
//   BM_Auto              11 per iteration, iterations chosen by
//                        --benchmark_min_time                       -> 11
//   BM_Short             11 per iteration and no wait: its extra run is
//                        under 1 ms, so its counters are withheld (on a
//                        slow build on a loaded machine it may last
//                        longer; the test then checks they are scaled)
// Every benchmark but BM_Short waits kIterationWait an iteration, so that
// any extra run (one iteration, on 1.9.0/1.9.1) lasts over 1 ms.
#include <chrono>
#include <cstdint>

#include "benchmark/benchmark.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/runtime/session_testing.h"
#include "uncore/benchmark.h"
#include "uncore/benchmark_main.h"
#include "uncore/session.h"

namespace {

// Only the injected traffic counts.
[[maybe_unused]] const bool kQuietSimulator = [] {
  uncore::bench::SetOptions(
      {.backend = "", .sockets = {}, .sim_demo_traffic = false});
  return true;
}();

constexpr std::chrono::microseconds kIterationWait(1200);

// Busy: a sleep could last much longer on a loaded machine.
void Wait() {
  const auto end = std::chrono::steady_clock::now() + kIterationWait;
  while (std::chrono::steady_clock::now() < end) {
  }
}

void InjectReads(uint64_t n) {
  uncore::Session* session = uncore::Session::Active();
  uncore::sim::IvyTownUncore* simulator =
      session == nullptr ? nullptr : uncore::runtime::SimulatorOf(*session);
  if (simulator == nullptr) return;
  const uncore::sim::IvyTownUncore::Traffic reads{
      .box = uncore::ivytown::BoxType::kImc,
      .instance = 0,
      .code = 0x04,
      .umask = 0x03};
  simulator->Inject(0, reads, n, 1).IgnoreError();
}

void BM_AFailure(benchmark::State& state) {
  state.SkipWithError("expected failure");
  for (auto _ : state) {
  }
}
BENCHMARK(BM_AFailure);

void BM_Reads(benchmark::State& state) {
  for (auto _ : state) {
    InjectReads(11);
    Wait();
  }
}
BENCHMARK(BM_Reads)->Iterations(20);

void BM_ReadsWithSetup(benchmark::State& state) {
  InjectReads(1600);
  for (auto _ : state) {
    InjectReads(11);
    Wait();
  }
}
BENCHMARK(BM_ReadsWithSetup)->Iterations(20);

void BM_FewIterations(benchmark::State& state) {
  InjectReads(200);
  for (auto _ : state) {
    InjectReads(11);
    Wait();
  }
}
BENCHMARK(BM_FewIterations)->Iterations(4);

void BM_Threads(benchmark::State& state) {
  for (auto _ : state) {
    InjectReads(3);
    Wait();
  }
}
BENCHMARK(BM_Threads)->Threads(2)->Iterations(20);

void BM_Scoped(benchmark::State& state) {
  InjectReads(1600);
  uncore::bench::ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
  for (auto _ : state) {
    InjectReads(5);
    Wait();
  }
}
BENCHMARK(BM_Scoped)->Iterations(20);

void BM_Auto(benchmark::State& state) {
  for (auto _ : state) {
    InjectReads(11);
    Wait();
  }
}
BENCHMARK(BM_Auto);

void BM_Short(benchmark::State& state) {
  for (auto _ : state) InjectReads(11);
}
BENCHMARK(BM_Short)->Iterations(20);

}  // namespace

UNCORE_BENCHMARK_MAIN();
