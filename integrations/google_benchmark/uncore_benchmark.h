// integrations/google_benchmark/uncore_benchmark.h: uncore counters in
// Google Benchmark (1.7.1) results, per iteration, in every reporter.
//
//   #include "integrations/google_benchmark/uncore_benchmark.h"
//
//   void BM_Memcpy(benchmark::State& state) {
//     ...allocate and fill src and dst...
//     uncore::bench::ScopedCounters c(
//         state, {"imc/CAS_COUNT.RD", "imc/CAS_COUNT.WR",
//                 "metric/MEM_BW_TOTAL"});
//     for (auto _ : state) {
//       std::memcpy(dst, src, size);
//       benchmark::ClobberMemory();
//     }
//     c.Stop();  // optional: the destructor stops too
//     state.SetBytesProcessed(state.iterations() * state.range(0));
//   }
//   BENCHMARK(BM_Memcpy)->Range(4 << 10, 256 << 20);
//   UNCORE_BENCHMARK_MAIN();
//
//   $ ./benchmark_memcpy --uncore_backend=sim   (one line per row)
//   BM_Memcpy/262144   2990 ns   2979 ns   4734 bytes_per_second=81.9408G/s
//     uncore.imc.CAS_COUNT.RD=301.999 uncore.imc.CAS_COUNT.WR=151
//     uncore.metric.imc.MEM_BW_TOTAL=9.73055G/s uncore: SIMULATED
//
// (examples/benchmark_memcpy.cc.)  Link uncore::benchmark; find_package(
// UncoreSDK) gives it when the SDK was built with Google Benchmark.
//
// ---- ScopedCounters: counters measured in the benchmark's code ----
//
// Construct it before the benchmark loop.  It starts an uncore::Session of
// its own (backend: SetOptions or --uncore_backend, else the UNCORE_BACKEND
// environment variable, else "auto"), opens one region, and at Stop() (or
// destruction) closes it and writes into state.counters:
//   - each event: its count (times the event's scale, e.g. Joules for
//     power/energy-pkg/) as a benchmark::Counter with kAvgIterations, so
//     every reporter shows the average per iteration;
//   - each rate metric (unit ".../s", e.g. MEM_BW_TOTAL in bytes/s): the
//     metric's total over the measured time (bytes) with kIsRate, so Google
//     Benchmark divides it by its own time, as it does bytes_per_second
//     (CPU time, summed over threads, unless the benchmark uses
//     UseRealTime(): use it for bandwidth with ->Threads(n));
//   - each other metric (ratios, percentages): its value over the measured
//     time, with no flag.
// A metric that cannot be evaluated (a division by zero) is left out.  The
// events a metric needs are counted but only the metric is published.
//
// Counter names: "uncore." and the spec's canonical spelling (what `uncore
// describe` prints) with every '/' turned into '.' and a trailing '/'
// dropped:
//   imc/CAS_COUNT.RD              -> uncore.imc.CAS_COUNT.RD
//   cbo[0-3]/LLC_VICTIMS.M_STATE  -> uncore.cbo[0-3].LLC_VICTIMS.M_STATE
//   metric/MEM_BW_TOTAL           -> uncore.metric.imc.MEM_BW_TOTAL
//   msr/tsc/                      -> uncore.msr.tsc
// So one event has one name however it is spelled (case, kernel or manual
// names); CounterName(spec) computes it.
//
// What is measured: everything the sockets' uncore boxes saw from
// construction to Stop(), whichever thread or process caused it (counts are
// socket-wide), except between PauseTiming() and ResumeTiming().  Google
// Benchmark 1.7.1 has no pause hook, so call c.PauseTiming() and
// c.ResumeTiming() instead of state.PauseTiming()/ResumeTiming(): they
// pause and resume both the timer and the uncore measurement (the region is
// ended and opened again).  state.PauseTiming() called directly pauses only
// the timer; the uncore keeps counting.
//
// Multi-threaded benchmarks (->Threads(n)): only thread 0
// (state.thread_index() == 0) measures and publishes; the other threads'
// ScopedCounters do nothing, and their PauseTiming/ResumeTiming pause only
// their own timer.  Thread 0's region opens at its construction, before
// the loop's start barrier, and closes at its Stop() after the loop's end
// barrier, so it covers every thread's loop.  The socket-wide count is not
// divided per thread: Google Benchmark divides it by the iterations of all
// threads together, so a figure is per iteration of any thread.  Only
// thread 0's pauses pause the uncore measurement.
//
// Labels: with the sim backend every count is made up, and Stop() sets the
// label "uncore: SIMULATED".  When nothing can be counted (backend "off",
// or "auto" found no backend that opens here) the benchmark runs as usual,
// nothing is published and the label says "uncore: not measured: <why>".
// c.SetLabel(text) sets a label of your own that Stop() puts in front of
// its own; a state.SetLabel() after Stop() replaces both.
//
// Errors: a spec that does not parse, a backend that fails to open, or
// another active uncore::Session (e.g. one started by UNCORE_EVENTS) fail
// the benchmark with state.SkipWithError("uncore: <why>"), so its loop
// runs no iteration.
//
// Each call of the benchmark function starts and stops its own session,
// outside the timed loop, so different benchmarks may count different
// events.  Nothing is printed.
//
// ---- UNCORE_BENCHMARK_MAIN(): counters for every benchmark, by flag ----
//
// UNCORE_BENCHMARK_MAIN() is BENCHMARK_MAIN() (Initialize,
// ReportUnrecognizedArguments, RunSpecifiedBenchmarks, Shutdown) plus
// three flags, removed from argv before Google Benchmark sees them:
//   --uncore_events=SPEC,SPEC   events (a metric spec counts as a metric)
//   --uncore_metrics=NAME,NAME  metrics, e.g. MEM_BW_TOTAL
//   --uncore_backend=NAME       auto|perf|direct|sim|off, for these and for
//                               every ScopedCounters of the program
// Without --uncore_events and --uncore_metrics it runs exactly as
// BENCHMARK_MAIN() does.
//
// With them every benchmark of the binary gets counters without code
// changes, through the one bracket Google Benchmark 1.7.1 puts around every
// benchmark: its MemoryManager hook.  Exactly:
//   - After each repetition's timed run, Google Benchmark runs the benchmark
//     function once more, untimed and unreported, on one thread
//     (thread_index() 0, threads() still the benchmark's thread count), for
//     M = min(16, N) iterations, N being the timed run's iterations per
//     thread, with Setup/Teardown callbacks around it.
//   - The counters come from that extra run, NOT from the timed run: a
//     session starts just before it, and one region brackets all of it: the
//     whole benchmark function (code before and after the loop included)
//     and Setup/Teardown.
//   - Events: the extra run's count divided by M (per iteration).  Rate
//     metrics: the extra run's total divided by the extra run's wall time
//     ("/s" is per second of the extra run; kIsRate only for display).
//     Other metrics: their value over the extra run.
//   - The counters are added to each run's `counters` before it reaches the
//     display reporter (console, json or csv by --benchmark_format) and the
//     --benchmark_out file reporter (--benchmark_out_format), with the
//     names above.  With --benchmark_repetitions the mean, median, stddev
//     and cv rows get those statistics of the repetitions' values,
//     computed as Google Benchmark does (other statistics get none).
//   - A counter the benchmark publishes itself under the same name (a
//     ScopedCounters in its code, which measures the timed loop) is kept;
//     the flag's value does not replace it.  ScopedCounters do nothing in
//     the extra run.
//   - So: code outside the loop (allocating and filling buffers) is counted
//     and spread over only M iterations; a multi-threaded benchmark's extra
//     run does only thread 0's share of the work; a KeepRunningBatch(k)
//     benchmark may run up to k > M iterations in the extra run, which
//     inflates its figures.  For exact counts of the timed loop, use
//     ScopedCounters.
//   - A row that cannot get counters says why in its label ("uncore: not
//     measured: <why>"): the extra run's session failed, the backend counts
//     nothing here, or the reporting is aggregates-only
//     (ReportAggregatesOnly, --benchmark_*_aggregates_only), which hides the
//     iteration count M comes from.  Sim counts are labelled "uncore:
//     SIMULATED".
//   - The hook's empty memory results (allocs_per_iter, max_bytes_used in
//     JSON) are removed from the output: no allocations were measured.
//   - Refused with a message on stderr and exit status 1: an invalid spec,
//     metric or backend, an unknown --uncore_* flag, an active session
//     (UNCORE_EVENTS), and --benchmark_enable_random_interleaving (extra
//     runs are matched to their benchmark by order).
//
// Guarantees: nothing here changes Google Benchmark's timing of the loop
// beyond what PauseTiming/ResumeTiming cost (one counter snapshot each);
// every failure is reported as a SkipWithError, a label or (flags) an exit
// status, never thrown.
#ifndef UNCORE_INTEGRATIONS_GOOGLE_BENCHMARK_UNCORE_BENCHMARK_H_
#define UNCORE_INTEGRATIONS_GOOGLE_BENCHMARK_UNCORE_BENCHMARK_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"

namespace uncore {
class Session;
}  // namespace uncore

namespace uncore::bench {

// Process-wide choices for the sessions ScopedCounters and the
// --uncore_events flag start.
struct Options {
  // "auto", "perf", "direct", "sim" or "off"; "" means the UNCORE_BACKEND
  // environment variable, else "auto".  --uncore_backend sets it.
  std::string backend;
  // Sockets to count on; empty: every socket.
  std::vector<int> sockets;
  // sim backend: drive the simulator with the demo traffic model (true), or
  // leave it still so that only traffic a test injects is counted.
  bool sim_demo_traffic = true;
};
void SetOptions(Options options);
Options GetOptions();

// The state.counters name of an event or metric spec (see above), or the
// spec's parse error.
absl::StatusOr<std::string> CounterName(std::string_view spec);

class ScopedCounters {
 public:
  // Starts measuring (thread 0 only).  `specs`: event specs and metric
  // specs ("metric/MEM_BW_TOTAL"); duplicates (same canonical spelling) are
  // counted once.
  ScopedCounters(benchmark::State& state,
                 const std::vector<std::string>& specs);
  ~ScopedCounters();  // Stop()
  ScopedCounters(const ScopedCounters&) = delete;
  ScopedCounters& operator=(const ScopedCounters&) = delete;

  // state.PauseTiming() and a pause of the uncore measurement.
  void PauseTiming();
  // The uncore measurement resumes, then state.ResumeTiming().
  void ResumeTiming();
  // Ends the measurement and publishes the counters and label.  Safe to
  // call twice; PauseTiming/ResumeTiming after it pause only the timer.
  void Stop();
  // A label of your own, kept in front of the one Stop() sets.
  void SetLabel(std::string label);

  // Whether this object is counting now (thread 0, a session that counts,
  // not paused, not stopped).
  bool measuring() const;
  // The session this object started (until Stop()), else nullptr; with the
  // sim backend, session()->simulator() takes injected traffic.
  Session* session() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What UNCORE_BENCHMARK_MAIN() runs.
int BenchmarkMain(int argc, char** argv);

}  // namespace uncore::bench

// A main() for a benchmark binary, with the --uncore_* flags (see above).
#define UNCORE_BENCHMARK_MAIN()                        \
  int main(int argc, char** argv) {                    \
    return ::uncore::bench::BenchmarkMain(argc, argv); \
  }                                                    \
  int main(int, char**)

#endif  // UNCORE_INTEGRATIONS_GOOGLE_BENCHMARK_UNCORE_BENCHMARK_H_
