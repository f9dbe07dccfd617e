// The perf region pair as most programs build it: linked against the
// shared library (uncore::sdk), through the public API only, against two
// bare read()s of the same msr/tsc/ group in one run (over_two_reads.h).
// region_bench's BM_PairOverTwoReads measures the same pair linked
// statically; calls into a shared library go through its PLT and its
// thread-local variables through __tls_get_addr (docs/performance.md).
//   BM_SharedPairOverTwoReads/on_event_cpu  pinned to the event's CPU
//   BM_SharedPairOverTwoReads/cross_cpu     on another CPU (an IPI a read)
#include "benchmark/benchmark.h"
#include "tests/bench/over_two_reads.h"

namespace uncore {
namespace {

void BM_SharedPairOverTwoReads(benchmark::State& state, bool cross_cpu) {
  bench_support::RegionPairOverTwoReads(state, cross_cpu);
}
BENCHMARK_CAPTURE(BM_SharedPairOverTwoReads, on_event_cpu, false);
BENCHMARK_CAPTURE(BM_SharedPairOverTwoReads, cross_cpu, true);

}  // namespace
}  // namespace uncore

BENCHMARK_MAIN();
