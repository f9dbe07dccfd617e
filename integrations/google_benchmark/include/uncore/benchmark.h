// uncore/benchmark.h: uncore counters in Google Benchmark results, per
// iteration, in every reporter (target uncore::benchmark).
//
//   #include <uncore/benchmark.h>
//
//   void BM_Memcpy(benchmark::State& state) {
//     ...allocate and fill src and dst...
//     uncore::bench::ScopedCounters c(
//         state, {"imc/CAS_COUNT.RD", "imc/CAS_COUNT.WR",
//                 "metric/MEM_BW_TOTAL"});
//     for (auto _ : state) std::memcpy(dst, src, size);
//     c.Stop();  // optional: the destructor stops too
//   }
//
// Counters "uncore.<spec with '/' as '.'>" (CounterName): events as
// averages per iteration, rate metrics (".../s") as rates over Google
// Benchmark's own time, other metrics as plain values.  Only thread 0 of a
// ->Threads(n) benchmark measures (counts are socket-wide).  Use
// c.PauseTiming()/c.ResumeTiming() to pause the uncore count with the timer.
// For counters without code changes, see uncore/benchmark_main.h.
//
// Guarantees: nothing is printed; the timed loop runs exactly as without
// ScopedCounters (PauseTiming/ResumeTiming cost one counter snapshot each);
// a bad spec or another active uncore::Session fails the benchmark with
// SkipWithError("uncore: ..."); a machine that counts nothing runs the
// benchmark and labels it "uncore: not measured: <why>"; sim counts are
// labelled "uncore: SIMULATED".  Works with any Google Benchmark that has
// State::counters and SkipWithError.  Details: docs/google_benchmark.md.
#ifndef UNCORE_BENCHMARK_H_
#define UNCORE_BENCHMARK_H_

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
// --uncore_events flag (uncore/benchmark_main.h) start.  Their names are
// those of the platform UNCORE_PLATFORM names ("nehalemex", "skylakex",
// ...; docs/platforms.md), else the session's choice (the CPU's platform
// on hardware, IvyTown on `sim`): every platform's names are taken.
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

// The state.counters name of an event or metric spec on the sessions'
// platform (Options): "imc/CAS_COUNT.RD" -> "uncore.imc.CAS_COUNT.RD",
// "metric/MEM_BW_TOTAL" -> "uncore.metric.imc.MEM_BW_TOTAL" on IvyTown;
// "wbox/UNCORE_CLOCK" -> "uncore.UNCORE_CLOCK" on the Xeon 7500, whose
// events go by their vendor names); or why the spec names nothing there.
absl::StatusOr<std::string> CounterName(std::string_view spec);

// Measures the uncore from construction to Stop() and publishes the
// counters into state.counters (docs/google_benchmark.md, "ScopedCounters").
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
  // sim backend, session()->SetSimulatedActivity() drives the simulator.
  Session* session() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uncore::bench

#endif  // UNCORE_BENCHMARK_H_
