// uncore/benchmark_main.h: UNCORE_BENCHMARK_MAIN(), a Google Benchmark
// main() that adds uncore counters to every benchmark, by flag (target
// uncore::benchmark).
//
//   #include <uncore/benchmark_main.h>
//
//   BENCHMARK(BM_Memcpy)->Range(4 << 10, 256 << 20);
//   UNCORE_BENCHMARK_MAIN();
//
//   $ ./bench --uncore_events=imc/CAS_COUNT.RD --uncore_metrics=MEM_BW_TOTAL
//   $ ./bench --uncore_backend=sim        # auto|perf|direct|sim|off
//
// It is BENCHMARK_MAIN() plus three flags, removed from argv before Google
// Benchmark sees them; without --uncore_events and --uncore_metrics it runs
// exactly as BENCHMARK_MAIN() (--uncore_backend still sets the backend of
// every ScopedCounters, uncore/benchmark.h).
//
// With them, the counters come from a separate, untimed run of each
// benchmark that Google Benchmark makes for a hook (its memory manager on
// 1.7/1.8: min(16, N) iterations, code outside the loop counted too; its
// profiler manager from 1.9: the loop alone, 1 iteration on 1.9.0/1.9.1, N
// from 1.9.2), scaled to one iteration, and a wrapping reporter adds them
// to every row and aggregate of every reporter, with a label that says so:
//
//   uncore: scaled from a separate run of 16 iterations, 3.2 ms
//
// A separate run under 1 ms is too short to scale (the counter reads at
// its boundaries would weigh too much): its counters are withheld and the
// label says why.  A counter the benchmark's own ScopedCounters publishes
// is kept (exact, from the timed loop).
//
// Guarantees: the timed runs are untouched; a bad spec, metric, backend or
// flag, an active uncore::Session and random interleaving exit with status
// 1 and a message on stderr; a row that cannot be measured says why in its
// label.  The hook is chosen by the Google Benchmark version at configure
// time; google_benchmark_contract_test fails when the installed version
// behaves otherwise, and a version the flags do not support refuses them
// (ScopedCounters still works).  Details: docs/google_benchmark.md.
#ifndef UNCORE_BENCHMARK_MAIN_H_
#define UNCORE_BENCHMARK_MAIN_H_

#include "uncore/benchmark.h"

namespace uncore::bench {

// What UNCORE_BENCHMARK_MAIN() runs.
int BenchmarkMain(int argc, char** argv);

}  // namespace uncore::bench

// A main() for a benchmark binary, with the --uncore_* flags.
#define UNCORE_BENCHMARK_MAIN()                        \
  int main(int argc, char** argv) {                    \
    return ::uncore::bench::BenchmarkMain(argc, argv); \
  }                                                    \
  int main(int, char**)

#endif  // UNCORE_BENCHMARK_MAIN_H_
