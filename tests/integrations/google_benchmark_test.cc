// uncore::bench::ScopedCounters inside real Google Benchmark runs: the
// benchmarks are registered and run here (RunSpecifiedBenchmarks with a
// capturing reporter) on the sim backend with its demo traffic off, and
// every iteration injects known traffic, so the published figures are
// exact.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/runtime/session_testing.h"
#include "uncore/benchmark.h"
#include "uncore/session.h"

namespace uncore::bench {
namespace {

using ::testing::HasSubstr;
using BenchRun = benchmark::BenchmarkReporter::Run;

// Whether a run failed, and why, in any Google Benchmark: 1.7 has
// Run::error_occurred/error_message, 1.8 on Run::skipped/skip_message.
template <typename R>
bool Failed(const R& run) {
  if constexpr (requires { run.error_occurred; }) {
    return run.error_occurred;
  } else {
    return run.skipped == decltype(run.skipped)::SkippedWithError;
  }
}

template <typename R>
std::string FailureMessage(const R& run) {
  if constexpr (requires { run.error_message; }) {
    return run.error_message;
  } else {
    return run.skip_message;
  }
}

constexpr char kReads[] = "uncore.imc.CAS_COUNT.RD";
constexpr char kWrites[] = "uncore.imc.CAS_COUNT.WR";
constexpr char kBandwidth[] = "uncore.metric.imc.MEM_BW_TOTAL";

sim::IvyTownUncore::Traffic Imc(uint8_t code, uint8_t umask) {
  return {.box = ivytown::BoxType::kImc,
          .instance = 0,
          .code = code,
          .umask = umask};
}
const sim::IvyTownUncore::Traffic kCasRead = Imc(0x04, 0x03);
const sim::IvyTownUncore::Traffic kCasWrite = Imc(0x04, 0x0C);
const sim::IvyTownUncore::Traffic kPageMiss = Imc(0x02, 0x01);

// `n` occurrences of `traffic` on socket 0, in whatever session is active.
void Inject(const sim::IvyTownUncore::Traffic& traffic, uint64_t n) {
  Session* session = Session::Active();
  sim::IvyTownUncore* simulator =
      session == nullptr ? nullptr : runtime::SimulatorOf(*session);
  if (simulator == nullptr) {
    ADD_FAILURE() << "no simulated session is active";
    return;
  }
  const absl::Status s = simulator->Inject(0, traffic, n, 1);
  EXPECT_TRUE(s.ok()) << common::StatusMessage(s);
}

std::atomic<int> paused_but_measuring{0};

class CaptureReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<BenchRun>& report) override {
    runs.insert(runs.end(), report.begin(), report.end());
  }
  std::vector<BenchRun> runs;
};

class ScopedCountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetOptions({.backend = "sim", .sockets = {}, .sim_demo_traffic = false});
  }
  void TearDown() override {
    benchmark::ClearRegisteredBenchmarks();
    SetOptions({});
  }

  // Runs every registered benchmark; returns the reported runs.
  static std::vector<BenchRun> RunAll() {
    CaptureReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    return reporter.runs;
  }
  static const benchmark::Counter* Find(const BenchRun& run, const char* name) {
    auto it = run.counters.find(name);
    return it == run.counters.end() ? nullptr : &it->second;
  }
};

TEST(CounterNameTest, CanonicalSpellingWithDots) {
  EXPECT_EQ(*CounterName("imc/CAS_COUNT.RD"), "uncore.imc.CAS_COUNT.RD");
  EXPECT_EQ(*CounterName("IMC/cas_count.rd"), "uncore.imc.CAS_COUNT.RD");
  EXPECT_EQ(*CounterName("cbo[3,0-2]/LLC_VICTIMS.M_STATE"),
            "uncore.cbo[0-3].LLC_VICTIMS.M_STATE");
  EXPECT_EQ(*CounterName("metric/MEM_BW_TOTAL"),
            "uncore.metric.imc.MEM_BW_TOTAL");
  EXPECT_EQ(*CounterName("MEM_BW_TOTAL"), "uncore.metric.imc.MEM_BW_TOTAL");
  EXPECT_EQ(*CounterName("msr/tsc/"), "uncore.msr.tsc");
  const absl::StatusOr<std::string> bad = CounterName("imc/CAS_CONT.RD");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(common::StatusMessage(bad.status()), HasSubstr("CAS_COUNT"));
}

TEST_F(ScopedCountersTest, EventsAreExactPerIterationAverages) {
  benchmark::RegisterBenchmark("BM_Traffic", [](benchmark::State& state) {
    ScopedCounters c(state, {"imc/CAS_COUNT.RD", "imc/CAS_COUNT.WR",
                             "metric/MEM_BW_TOTAL", "imc/CAS_COUNT.RD"});
    for (auto _ : state) {
      Inject(kCasRead, 7);
      Inject(kCasWrite, 3);
    }
  })->Iterations(100);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  const BenchRun& run = runs[0];
  ASSERT_FALSE(Failed(run)) << FailureMessage(run);
  EXPECT_EQ(run.iterations, 100);
  const benchmark::Counter* reads = Find(run, kReads);
  const benchmark::Counter* writes = Find(run, kWrites);
  ASSERT_NE(reads, nullptr);
  ASSERT_NE(writes, nullptr);
  EXPECT_EQ(reads->value, 7.0);
  EXPECT_EQ(writes->value, 3.0);
  EXPECT_EQ(reads->flags, benchmark::Counter::kAvgIterations);
  EXPECT_EQ(writes->flags, benchmark::Counter::kAvgIterations);
  // The metric's events are not published on their own; the metric is.
  EXPECT_EQ(run.counters.size(), 3u);
  EXPECT_EQ(run.report_label, "uncore: SIMULATED");
}

TEST_F(ScopedCountersTest, RateMetricIsTheTotalOverBenchmarksTime) {
  for (const bool real_time : {false, true}) {
    auto* b = benchmark::RegisterBenchmark(
        real_time ? "BM_RateReal" : "BM_RateCpu", [](benchmark::State& state) {
          ScopedCounters c(state, {"metric/MEM_BW_TOTAL"});
          for (auto _ : state) {
            Inject(kCasRead, 6);
            Inject(kCasWrite, 4);
          }
        });
    b->Iterations(50);
    if (real_time) b->UseRealTime();
  }
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 2u);
  for (const BenchRun& run : runs) {
    SCOPED_TRACE(run.benchmark_name());
    const benchmark::Counter* bw = Find(run, kBandwidth);
    ASSERT_NE(bw, nullptr);
    EXPECT_EQ(bw->flags, benchmark::Counter::kIsRate);
    // 50 iterations x 10 lines x 64 bytes, divided by the time Google
    // Benchmark measured (CPU time, or real time with UseRealTime).
    const bool real = run.run_name.time_type == "real_time";
    const double seconds =
        real ? run.real_accumulated_time : run.cpu_accumulated_time;
    ASSERT_GT(seconds, 0);
    EXPECT_NEAR(bw->value * seconds, 50.0 * 10 * 64, 1e-6 * 32000);
    EXPECT_EQ(Find(run, kReads), nullptr);
  }
}

TEST_F(ScopedCountersTest, OtherMetricsArePlainValues) {
  benchmark::RegisterBenchmark("BM_PageMisses", [](benchmark::State& state) {
    ScopedCounters c(state, {"metric/PCT_REQUESTS_PAGE_MISS"});
    for (auto _ : state) {
      Inject(kPageMiss, 1);
      Inject(kCasRead, 3);
      Inject(kCasWrite, 1);
    }
  })->Iterations(20);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  const benchmark::Counter* pct =
      Find(runs[0], "uncore.metric.imc.PCT_REQUESTS_PAGE_MISS");
  ASSERT_NE(pct, nullptr);
  EXPECT_EQ(pct->flags, benchmark::Counter::kDefaults);
  EXPECT_DOUBLE_EQ(pct->value, 25.0);
}

// QPI_SPEED's unit, GT/s, ends in "/s" but is no rate over the region's
// time: Google Benchmark must not divide it by its own time again.
TEST_F(ScopedCountersTest, AUnitEndingInPerSecondIsNotARate) {
  benchmark::RegisterBenchmark("BM_QpiSpeed", [](benchmark::State& state) {
    ScopedCounters c(state, {"metric/QPI_SPEED"});
    for (auto _ : state) {
      benchmark::ClobberMemory();
    }
  })->Iterations(5);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  const benchmark::Counter* speed =
      Find(runs[0], "uncore.metric.qpi.QPI_SPEED");
  ASSERT_NE(speed, nullptr);
  EXPECT_EQ(speed->flags, benchmark::Counter::kDefaults);
}

TEST_F(ScopedCountersTest, PausedWorkIsNotCounted) {
  static std::atomic<int> paused_measuring{0};
  static std::atomic<int> running_measuring{0};
  paused_measuring = 0;
  running_measuring = 0;
  benchmark::RegisterBenchmark("BM_Paused", [](benchmark::State& state) {
    ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
    for (auto _ : state) {
      Inject(kCasRead, 5);
      c.PauseTiming();
      paused_measuring += c.measuring() ? 1 : 0;
      Inject(kCasRead, 1000);  // setup for the next iteration: excluded
      c.ResumeTiming();
      running_measuring += c.measuring() ? 1 : 0;
    }
  })->Iterations(40);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  const benchmark::Counter* reads = Find(runs[0], kReads);
  ASSERT_NE(reads, nullptr);
  EXPECT_EQ(reads->value, 5.0);
  EXPECT_EQ(paused_measuring.load(), 0);
  EXPECT_EQ(running_measuring.load(), 40);
}

TEST_F(ScopedCountersTest, TrafficAfterStopIsNotCounted) {
  benchmark::RegisterBenchmark("BM_Stop", [](benchmark::State& state) {
    ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
    for (auto _ : state) Inject(kCasRead, 2);
    c.Stop();
    EXPECT_FALSE(c.measuring());
    EXPECT_EQ(c.session(), nullptr);
    EXPECT_EQ(Session::Active(), nullptr);
    c.Stop();  // twice is fine
  })->Iterations(10);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  const benchmark::Counter* reads = Find(runs[0], kReads);
  ASSERT_NE(reads, nullptr);
  EXPECT_EQ(reads->value, 2.0);
}

TEST_F(ScopedCountersTest, OnlyThreadZeroMeasuresAndCountsAreNotDivided) {
  static std::atomic<int> measuring_threads{0};
  static std::atomic<int> threads_seen{0};
  measuring_threads = 0;
  threads_seen = 0;
  benchmark::RegisterBenchmark(
      "BM_Threads",
      [](benchmark::State& state) {
        ScopedCounters c(state, {"imc/CAS_COUNT.RD", "metric/MEM_BW_READS"});
        ++threads_seen;
        if (c.measuring()) {
          ++measuring_threads;
          EXPECT_EQ(state.thread_index(), 0);
          EXPECT_NE(c.session(), nullptr);
        } else {
          EXPECT_EQ(c.session(), nullptr);
        }
        // Every thread's traffic lands on the socket thread 0 counts.
        for (auto _ : state) Inject(kCasRead, 2);
      })
      ->Threads(4)
      ->Iterations(50);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  const BenchRun& run = runs[0];
  ASSERT_FALSE(Failed(run)) << FailureMessage(run);
  EXPECT_EQ(run.threads, 4);
  EXPECT_EQ(run.iterations, 200);  // 50 per thread
  EXPECT_EQ(threads_seen.load(), 4);
  EXPECT_EQ(measuring_threads.load(), 1);
  // 4 threads x 50 iterations x 2 reads over 200 iterations: 2 per
  // iteration.  Published by every thread it would be 8; divided per
  // thread, 0.5.
  const benchmark::Counter* reads = Find(run, kReads);
  ASSERT_NE(reads, nullptr);
  EXPECT_EQ(reads->value, 2.0);
  EXPECT_EQ(reads->flags & benchmark::Counter::kAvgThreads, 0);
  const benchmark::Counter* bw = Find(run, "uncore.metric.imc.MEM_BW_READS");
  ASSERT_NE(bw, nullptr);
  EXPECT_NEAR(bw->value * run.cpu_accumulated_time, 400.0 * 64, 1e-3);
}

// Every thread pauses its own timer, concurrently; only thread 0's pause
// pauses the uncore count.  Only thread 0 makes traffic (what another
// thread makes while thread 0 is paused would not be counted): 3 reads per
// iteration, and 1000 while paused, which are excluded.
void ThreadsWithPauses(benchmark::State& state) {
  ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
  const bool thread0 = state.thread_index() == 0;
  for (auto _ : state) {
    if (thread0) Inject(kCasRead, 3);
    c.PauseTiming();
    if (c.measuring()) ++paused_but_measuring;
    if (thread0) Inject(kCasRead, 1000);
    c.ResumeTiming();
  }
}

TEST_F(ScopedCountersTest, EveryThreadPausesItsTimerOnlyThreadZeroTheCount) {
  paused_but_measuring = 0;
  benchmark::RegisterBenchmark("BM_ThreadsPaused", ThreadsWithPauses)
      ->Threads(3)
      ->Iterations(20);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  const BenchRun& run = runs[0];
  ASSERT_FALSE(Failed(run)) << FailureMessage(run);
  EXPECT_EQ(run.iterations, 60);
  EXPECT_EQ(paused_but_measuring.load(), 0);
  // 20 x 3 reads over the 60 iterations of the 3 threads.
  const benchmark::Counter* reads = Find(run, kReads);
  ASSERT_NE(reads, nullptr);
  EXPECT_EQ(reads->value, 1.0);
  EXPECT_EQ(run.report_label, "uncore: SIMULATED");
}

TEST_F(ScopedCountersTest, CountersReachTheJsonReporter) {
  benchmark::RegisterBenchmark("BM_Json", [](benchmark::State& state) {
    ScopedCounters c(state, {"imc/CAS_COUNT.RD", "metric/MEM_BW_TOTAL"});
    for (auto _ : state) Inject(kCasRead, 3);
  })->Iterations(8);
  std::ostringstream out;
  std::ostringstream err;
  benchmark::JSONReporter json;
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  benchmark::RunSpecifiedBenchmarks(&json);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("\"name\": \"BM_Json/iterations:8\""));
  EXPECT_THAT(text,
              HasSubstr("\"uncore.imc.CAS_COUNT.RD\": 3.0000000000000000e+00"));
  EXPECT_THAT(text, HasSubstr("\"uncore.metric.imc.MEM_BW_TOTAL\": "));
  EXPECT_THAT(text, HasSubstr("\"label\": \"uncore: SIMULATED\""));
}

TEST_F(ScopedCountersTest, UserLabelIsKept) {
  benchmark::RegisterBenchmark("BM_Label", [](benchmark::State& state) {
    ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
    c.SetLabel("4 KiB");
    for (auto _ : state) Inject(kCasRead, 1);
  })->Iterations(3);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].report_label, "4 KiB; uncore: SIMULATED");
}

TEST_F(ScopedCountersTest, AnotherActiveSessionIsAnError) {
  SessionOptions options;
  options.events = {"imc/CAS_COUNT.WR"};
  options.backend = "sim";
  absl::StatusOr<std::unique_ptr<Session>> other =
      Session::Start(std::move(options));
  ASSERT_TRUE(other.ok()) << common::StatusMessage(other.status());
  static std::atomic<int> iterations{0};
  iterations = 0;
  benchmark::RegisterBenchmark("BM_Conflict", [](benchmark::State& state) {
    ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
    for (auto _ : state) ++iterations;
  })->Iterations(5);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(Failed(runs[0]));
  EXPECT_THAT(FailureMessage(runs[0]),
              HasSubstr("uncore: another uncore::Session is active"));
  EXPECT_EQ(iterations.load(), 0);
  EXPECT_TRUE(runs[0].counters.empty());
  EXPECT_TRUE((*other)->Stop().ok());
}

TEST_F(ScopedCountersTest, InvalidSpecIsAnError) {
  benchmark::RegisterBenchmark("BM_BadSpec", [](benchmark::State& state) {
    ScopedCounters c(state, {"imc/CAS_CONT.RD"});
    for (auto _ : state) {
    }
  })->Iterations(5);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(Failed(runs[0]));
  EXPECT_THAT(FailureMessage(runs[0]), HasSubstr("uncore: "));
  EXPECT_THAT(FailureMessage(runs[0]), HasSubstr("CAS_CONT"));
}

// Every platform's names (runtime::ResolveNames): the Xeon 7500's W-Box
// clock and MEM_BW_TOTAL on its simulator, with UNCORE_PLATFORM=nehalemex
// (IvyTown's grammar said "unknown box 'wbox'").  Its events go by their
// vendor names; the demo traffic follows SetSimulatedActivity.
TEST_F(ScopedCountersTest, TheXeon7500sNamesCountOnItsSimulator) {
  SetOptions({.backend = "sim", .sockets = {}, .sim_demo_traffic = true});
  ASSERT_EQ(setenv("UNCORE_PLATFORM", "nehalemex", 1), 0);
  const absl::StatusOr<std::string> name = CounterName("wbox/UNCORE_CLOCK");
  benchmark::RegisterBenchmark(
      "BM_Xeon7500",
      [](benchmark::State& state) {
        ScopedCounters c(state, {"wbox/UNCORE_CLOCK", "metric/MEM_BW_TOTAL"});
        if (c.session() != nullptr) c.session()->SetSimulatedActivity(6.4e9);
        for (auto _ : state) {
          const auto until =
              std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
          while (std::chrono::steady_clock::now() < until) {
          }
        }
      })
      ->Iterations(20)
      ->UseRealTime();
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(unsetenv("UNCORE_PLATFORM"), 0);
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "uncore.UNCORE_CLOCK");
  ASSERT_EQ(runs.size(), 1u);
  const BenchRun& run = runs[0];
  ASSERT_FALSE(Failed(run)) << FailureMessage(run);
  EXPECT_EQ(run.report_label, "uncore: SIMULATED");
  const benchmark::Counter* clock = Find(run, "uncore.UNCORE_CLOCK");
  const benchmark::Counter* bw = Find(run, "uncore.metric.MEM_BW_TOTAL");
  ASSERT_NE(clock, nullptr);
  ASSERT_NE(bw, nullptr);
  // The simulator's 2 GHz uncore clock over the measured region, which
  // holds the timed loop (at least 1 ms per iteration, more on a loaded
  // machine) and a little around it; 6.4 GB/s of memory traffic over the
  // same time, divided by Google Benchmark's (real) time.
  const double seconds = run.real_accumulated_time;
  ASSERT_GT(seconds, 0);
  EXPECT_GE(clock->value, 0.9 * 2e9 * 1e-3);
  EXPECT_GE(clock->value, 0.9 * 2e9 * seconds / 20);
  EXPECT_LE(clock->value, 2e9 * (seconds + 0.05) / 20);
  EXPECT_EQ(bw->flags, benchmark::Counter::kIsRate);
  EXPECT_GE(bw->value, 6.4e9 * 0.9);
  EXPECT_LE(bw->value, 6.4e9 * (seconds + 0.05) / seconds);
}

TEST_F(ScopedCountersTest, BackendOffRunsTheBenchmarkAndSaysSo) {
  SetOptions({.backend = "off", .sockets = {}, .sim_demo_traffic = false});
  static std::atomic<int> iterations{0};
  iterations = 0;
  benchmark::RegisterBenchmark("BM_Off", [](benchmark::State& state) {
    ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
    EXPECT_FALSE(c.measuring());
    for (auto _ : state) ++iterations;
  })->Iterations(6);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(Failed(runs[0]));
  EXPECT_EQ(iterations.load(), 6);
  EXPECT_TRUE(runs[0].counters.empty());
  EXPECT_EQ(runs[0].report_label, "uncore: not measured: backend off");
}

TEST_F(ScopedCountersTest, BackendComesFromTheEnvironmentWhenNotSet) {
  SetOptions({.backend = "", .sockets = {}, .sim_demo_traffic = false});
  ASSERT_EQ(setenv("UNCORE_BACKEND", "Off", 1), 0);
  benchmark::RegisterBenchmark("BM_EnvOff", [](benchmark::State& state) {
    ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
    for (auto _ : state) {
    }
  })->Iterations(2);
  const std::vector<BenchRun> runs = RunAll();
  ASSERT_EQ(unsetenv("UNCORE_BACKEND"), 0);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].report_label, "uncore: not measured: backend off");
}

TEST_F(ScopedCountersTest, RepetitionsGetGoogleBenchmarksAggregates) {
  benchmark::RegisterBenchmark("BM_Repeat",
                               [](benchmark::State& state) {
                                 ScopedCounters c(state, {"imc/CAS_COUNT.RD"});
                                 for (auto _ : state) Inject(kCasRead, 4);
                               })
      ->Iterations(10)
      ->Repetitions(3);
  const std::vector<BenchRun> runs = RunAll();
  int aggregates = 0;
  for (const BenchRun& run : runs) {
    SCOPED_TRACE(run.benchmark_name());
    const benchmark::Counter* reads = Find(run, kReads);
    ASSERT_NE(reads, nullptr);
    if (run.run_type == BenchRun::RT_Aggregate) {
      ++aggregates;
      if (run.aggregate_name == "mean" || run.aggregate_name == "median") {
        EXPECT_EQ(reads->value, 4.0);
      }
      if (run.aggregate_name == "stddev") {
        EXPECT_EQ(reads->value, 0.0);
      }
    } else {
      EXPECT_EQ(reads->value, 4.0);
    }
  }
  EXPECT_EQ(aggregates, 4);  // mean, median, stddev, cv
}

}  // namespace
}  // namespace uncore::bench
