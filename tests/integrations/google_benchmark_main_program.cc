// A benchmark binary built with UNCORE_BENCHMARK_MAIN(), run by
// google_benchmark_main_test.py.  Every benchmark injects known traffic
// into whichever simulated session is active (none during the timed runs,
// unless the benchmark has ScopedCounters; the --uncore_events session
// during the extra runs), and the simulator's demo traffic is off, so the
// counters the flags add are exact:
//   BM_AFailure          fails before its loop (first, for the CSV header)
//   BM_Reads             11 reads per iteration                     -> 11
//   BM_ReadsWithSetup    1600 reads before the loop, 11 per iteration;
//                        the extra run has 16 iterations  -> 1600/16 + 11
//   BM_FewIterations     200 reads before the loop, 11 per iteration,
//                        4 iterations: the extra run has 4 -> 200/4 + 11
//   BM_Threads           2 threads, 3 reads per iteration; the extra run
//                        is thread 0 alone                           -> 3
//   BM_Scoped            ScopedCounters in the code counts the timed loop
//                        (5 per iteration) and its value is kept     -> 5
//   BM_Auto              11 per iteration, iterations chosen by
//                        --benchmark_min_time                       -> 11
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
  for (auto _ : state) InjectReads(11);
}
BENCHMARK(BM_Reads)->Iterations(100);

void BM_ReadsWithSetup(benchmark::State& state) {
  InjectReads(1600);
  for (auto _ : state) InjectReads(11);
}
BENCHMARK(BM_ReadsWithSetup)->Iterations(100);

void BM_FewIterations(benchmark::State& state) {
  InjectReads(200);
  for (auto _ : state) InjectReads(11);
}
BENCHMARK(BM_FewIterations)->Iterations(4);

void BM_Threads(benchmark::State& state) {
  for (auto _ : state) InjectReads(3);
}
BENCHMARK(BM_Threads)->Threads(2)->Iterations(50);

void BM_Scoped(benchmark::State& state) {
  InjectReads(1600);
  uncore::bench::ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
  for (auto _ : state) InjectReads(5);
}
BENCHMARK(BM_Scoped)->Iterations(100);

void BM_Auto(benchmark::State& state) {
  for (auto _ : state) InjectReads(11);
}
BENCHMARK(BM_Auto);

}  // namespace

UNCORE_BENCHMARK_MAIN();
