// What the Google Benchmark integration relies on in Google Benchmark
// itself, checked against the installed library with plain benchmarks (no
// uncore session is involved).  UNCORE_BENCHMARK_MAIN
// (integrations/google_benchmark/benchmark_main.cc) uses the hook that
// integrations/google_benchmark/CMakeLists.txt chose by version
// (UNCORE_GBENCH_FLAG_PATH): the memory manager on 1.7.x (1) and 1.8.x
// (2), the profiler manager from 1.9 (3), none on a version it does not
// support (0); and the order in which runs reach the reporters, and how
// reporters print a Run.  This test checks the path that is built.  When a
// new Google Benchmark changes any of that, a test here fails and says
// what changed and which function to adapt; docs/google_benchmark.md
// explains the mechanics.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integrations/google_benchmark/internal.h"

namespace uncore::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;
using BenchRun = benchmark::BenchmarkReporter::Run;

constexpr char kMainFile[] = "integrations/google_benchmark/benchmark_main.cc";
constexpr char kCMakeFile[] = "integrations/google_benchmark/CMakeLists.txt";

#if UNCORE_GBENCH_FLAG_PATH != 0

std::string Adapt(std::string_view what_changed, std::string_view functions) {
  return fmt::format(
      "\nGOOGLE BENCHMARK CHANGED (installed: {}): {}\nUNCORE_BENCHMARK_MAIN "
      "relies on this.  Adapt {} in {}, then docs/google_benchmark.md.",
      UNCORE_GOOGLE_BENCHMARK_VERSION, what_changed, functions, kMainFile);
}

// ---- a trace of what Google Benchmark does, in order ----

std::mutex trace_mu;
std::vector<std::string> trace;  // guarded by trace_mu
// Set when the hook starts an extra run; cleared by the extra run's
// thread 0 when it logs at the end of the benchmark function.
std::atomic<bool> in_extra_run{false};
std::atomic<int> other_thread_calls{0};

void Log(std::string line) {
  std::lock_guard<std::mutex> lock(trace_mu);
  trace.push_back(std::move(line));
}

std::vector<std::string> TakeTrace() {
  std::lock_guard<std::mutex> lock(trace_mu);
  return std::exchange(trace, {});
}

bool Skipped(const BenchRun& run) {
#if UNCORE_GBENCH_FLAG_PATH == 1
  return run.error_occurred;
#else
  return run.skipped != benchmark::internal::NotSkipped;
#endif
}

#if UNCORE_GBENCH_FLAG_PATH == 3
// 1.9 on: ExtraRunHook is a ProfilerManager.
constexpr char kHookStart[] = "ProfilerManager::AfterSetupStart";
constexpr char kHookStop[] = "ProfilerManager::BeforeTeardownStop";
class TracingHook : public benchmark::ProfilerManager {
 public:
  void AfterSetupStart() override {
    Log(kHookStart);
    in_extra_run = true;
  }
  void BeforeTeardownStop() override { Log(kHookStop); }
  static void Register(TracingHook* hook) {
    benchmark::RegisterProfilerManager(hook);
  }
};
#else
// 1.7.x, 1.8.x: the hook is a MemoryManager.
constexpr char kHookStart[] = "MemoryManager::Start";
constexpr char kHookStop[] = "MemoryManager::Stop";
class TracingHook : public benchmark::MemoryManager {
 public:
  void Start() override {
    Log(kHookStart);
    in_extra_run = true;
  }
#if UNCORE_GBENCH_FLAG_PATH == 1
  void Stop(Result* /*result*/) override { Stopped(); }
#endif
  void Stop(Result& /*result*/) override { Stopped(); }
  static void Register(TracingHook* hook) {
    benchmark::RegisterMemoryManager(hook);
  }

 private:
  static void Stopped() {
    in_extra_run = false;
    Log(kHookStop);
  }
};
#endif

// The iterations of the extra run after a timed run of `per_thread`
// iterations per thread, as FlagCounters::AnnotateIteration divides by
// (ExtraRunIterations in benchmark_main.cc).
benchmark::IterationCount ExtraIterations(
    benchmark::IterationCount per_thread) {
#if UNCORE_GBENCH_FLAG_PATH == 3 && UNCORE_GBENCH_PROFILER_ONE_ITERATION
  return std::min<benchmark::IterationCount>(1, per_thread);
#elif UNCORE_GBENCH_FLAG_PATH == 3
  return per_thread;
#else
  return std::min<benchmark::IterationCount>(16, per_thread);
#endif
}

constexpr char kIterationsExpected[] =
#if UNCORE_GBENCH_FLAG_PATH == 3 && UNCORE_GBENCH_PROFILER_ONE_ITERATION
    "1 iteration (Google Benchmark 1.9.0/1.9.1's RunProfilerManager)";
#elif UNCORE_GBENCH_FLAG_PATH == 3
    "the timed run's iterations per thread (RunProfilerManager(iters), "
    "1.9.2 on)";
#else
    "min(16, N) iterations (RunMemoryManager)";
#endif

// A benchmark that logs each call (thread 0's; other threads are counted);
// with `before_loop`, also when its code before the loop runs.
auto Traced(std::string name, bool before_loop = false) {
  return [name, before_loop](benchmark::State& state) {
    if (before_loop && state.thread_index() == 0) {
      Log(fmt::format("{}: before the loop", name));
    }
    int64_t iterations = 0;
    for (auto _ : state) ++iterations;
    if (state.thread_index() != 0 && !in_extra_run) {
      ++other_thread_calls;
      return;
    }
    const bool extra = in_extra_run.exchange(false);
    Log(fmt::format("{}: {} run, thread {} of {}, {} iterations", name,
                    extra ? "extra" : "timed", state.thread_index(),
                    state.threads(), iterations));
  };
}

// The lines of an extra run of `iterations` of benchmark `name` (thread 0
// of `threads`): the hook brackets the whole run (memory manager: Setup,
// the function, Teardown) or the loop alone (profiler manager: the
// function's code after the loop logs after BeforeTeardownStop).
std::vector<std::string> ExtraRun(std::string_view name, int threads,
                                  benchmark::IterationCount iterations,
                                  bool setup = false) {
  const std::string body =
      fmt::format("{}: extra run, thread 0 of {}, {} iterations", name, threads,
                  iterations);
  std::vector<std::string> lines;
#if UNCORE_GBENCH_FLAG_PATH == 3
  if (setup) lines.push_back("Setup");
  if (setup) lines.push_back(fmt::format("{}: before the loop", name));
  lines.insert(lines.end(), {kHookStart, kHookStop, body});
  if (setup) lines.push_back("Teardown");
#else
  lines.push_back(kHookStart);
  if (setup) lines.push_back("Setup");
  if (setup) lines.push_back(fmt::format("{}: before the loop", name));
  lines.push_back(body);
  if (setup) lines.push_back("Teardown");
  lines.push_back(kHookStop);
#endif
  return lines;
}

void LogSetup(const benchmark::State&) { Log("Setup"); }
void LogTeardown(const benchmark::State&) { Log("Teardown"); }

std::string Describe(const BenchRun& run) {
  if (run.run_type == BenchRun::RT_Aggregate) {
    return fmt::format("{} (aggregate {})", run.benchmark_name(),
                       run.aggregate_name);
  }
  return fmt::format("{} (repetition {} of {}, {} iterations)",
                     run.benchmark_name(), run.repetition_index,
                     run.repetitions, run.iterations);
}

class TracingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<BenchRun>& report) override {
    std::string line = "ReportRuns:";
    for (const BenchRun& run : report)
      line += fmt::format(" {};", Describe(run));
    Log(line);
    runs.insert(runs.end(), report.begin(), report.end());
  }
  std::vector<BenchRun> runs;
};

class GoogleBenchmarkContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TakeTrace();
    other_thread_calls = 0;
  }
  void TearDown() override {
    TracingHook::Register(nullptr);
    benchmark::ClearRegisteredBenchmarks();
  }
};

#endif  // UNCORE_GBENCH_FLAG_PATH != 0

// The installed version is one of those the paths were tested against, and
// CMakeLists.txt chose its path.
TEST(GoogleBenchmarkVersionTest, IsOneWeKnow) {
  const std::string version = UNCORE_GOOGLE_BENCHMARK_VERSION;
  const int path = UNCORE_GBENCH_FLAG_PATH;
  int expected_path = -1;  // untested
  if (version.rfind("1.7.", 0) == 0) expected_path = 1;
  if (version.rfind("1.8.", 0) == 0) expected_path = 2;
  if (version.rfind("1.9.", 0) == 0) expected_path = 3;
  EXPECT_EQ(path, expected_path) << fmt::format(
      "\nGOOGLE BENCHMARK CHANGED: {} is installed, a version "
      "UNCORE_BENCHMARK_MAIN ({}) was not tested with (1.7.x, 1.8.x, "
      "1.9.x); {} chose flag path {} for it ({}).  The other tests of "
      "google_benchmark_contract_test say what changed and which function "
      "to adapt; when they all pass, add the version here and in {}.",
      version, kMainFile, kCMakeFile, path,
      path == 3 ? "the 1.9 ProfilerManager path, which compiles against it"
                : "none: --uncore_events is refused, ScopedCounters works",
      kCMakeFile);
  const bool one_iteration = UNCORE_GBENCH_PROFILER_ONE_ITERATION != 0;
  EXPECT_EQ(one_iteration, version == "1.9.0" || version == "1.9.1")
      << "UNCORE_GBENCH_PROFILER_ONE_ITERATION is set for 1.9.0 and 1.9.1 "
         "alone: see "
      << kCMakeFile;
}

#if UNCORE_GBENCH_FLAG_PATH != 0

// FlagCounters::BeginExtraRun/EndExtraRun: one extra run per repetition,
// after the timed run, on thread 0, of ExtraIterations(N) iterations (N:
// the timed run's iterations per thread), the hook bracketing the whole
// run with Setup/Teardown (memory manager) or the loop alone (profiler
// manager); and FlagCounters::Annotate: a benchmark's runs are reported
// after all of its extra runs and before the next benchmark's, aggregates
// separately.
TEST_F(GoogleBenchmarkContractTest, HookBracketsOneExtraRunPerRepetition) {
  TracingHook hook;
  TracingHook::Register(&hook);
  benchmark::RegisterBenchmark("BM_Fixed", Traced("BM_Fixed"))->Iterations(100);
  benchmark::RegisterBenchmark("BM_Few", Traced("BM_Few"))->Iterations(4);
  benchmark::RegisterBenchmark("BM_Threads", Traced("BM_Threads"))
      ->Threads(2)
      ->Iterations(50);
  benchmark::RegisterBenchmark("BM_Repeated", Traced("BM_Repeated"))
      ->Iterations(20)
      ->Repetitions(3);
  benchmark::RegisterBenchmark("BM_Setup", Traced("BM_Setup", true))
      ->Iterations(8)
      ->Setup(LogSetup)
      ->Teardown(LogTeardown);
  TracingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::vector<std::string> expected;
  auto add = [&expected](const std::vector<std::string>& lines) {
    expected.insert(expected.end(), lines.begin(), lines.end());
  };
  add({"BM_Fixed: timed run, thread 0 of 1, 100 iterations"});
  add(ExtraRun("BM_Fixed", 1, ExtraIterations(100)));
  add(
      {"ReportRuns: BM_Fixed/iterations:100 (repetition 0 of 1, 100 "
       "iterations);",
       "BM_Few: timed run, thread 0 of 1, 4 iterations"});
  add(ExtraRun("BM_Few", 1, ExtraIterations(4)));
  add({"ReportRuns: BM_Few/iterations:4 (repetition 0 of 1, 4 iterations);",
       "BM_Threads: timed run, thread 0 of 2, 50 iterations"});
  add(ExtraRun("BM_Threads", 2, ExtraIterations(50)));
  add(
      {"ReportRuns: BM_Threads/iterations:50/threads:2 (repetition 0 of 1, "
       "100 iterations);"});
  for (int i = 0; i < 3; ++i) {
    add({"BM_Repeated: timed run, thread 0 of 1, 20 iterations"});
    add(ExtraRun("BM_Repeated", 1, ExtraIterations(20)));
  }
  add(
      {"ReportRuns: BM_Repeated/iterations:20/repeats:3 (repetition 0 of 3, "
       "20 iterations); BM_Repeated/iterations:20/repeats:3 (repetition 1 of "
       "3, 20 iterations); BM_Repeated/iterations:20/repeats:3 (repetition 2 "
       "of 3, 20 iterations);",
       "ReportRuns: BM_Repeated/iterations:20/repeats:3_mean (aggregate "
       "mean); BM_Repeated/iterations:20/repeats:3_median (aggregate "
       "median); BM_Repeated/iterations:20/repeats:3_stddev (aggregate "
       "stddev); BM_Repeated/iterations:20/repeats:3_cv (aggregate cv);",
       "Setup", "BM_Setup: before the loop",
       "BM_Setup: timed run, thread 0 of 1, 8 iterations", "Teardown"});
  add(ExtraRun("BM_Setup", 1, ExtraIterations(8), /*setup=*/true));
  add(
      {"ReportRuns: BM_Setup/iterations:8 (repetition 0 of 1, 8 "
       "iterations);"});
  const std::vector<std::string> actual = TakeTrace();
  EXPECT_THAT(actual, ElementsAreArray(expected))
      << "What Google Benchmark did:\n  "
      << fmt::format("{}", fmt::join(actual, "\n  "))
      << Adapt(fmt::format(
                   "{}/{} no longer bracket exactly one extra run per "
                   "repetition (thread 0, {}, after the timed run; the whole "
                   "run with Setup/Teardown for a memory manager, the loop "
                   "for a profiler manager), or the runs no longer reach "
                   "ReportRuns in that order (a benchmark's iteration runs "
                   "after its extra runs, then its aggregates in a call of "
                   "their own)",
                   kHookStart, kHookStop, kIterationsExpected),
               "FlagCounters::BeginExtraRun, FlagCounters::EndExtraRun, "
               "FlagCounters::Annotate, ExtraRunIterations (and "
               "UNCORE_GBENCH_PROFILER_ONE_ITERATION in CMakeLists.txt), "
               "ExtraRunHook/ProfilerHook");
  // BM_Threads' timed run: thread 1 ran once; the extra run is thread 0's.
  EXPECT_EQ(other_thread_calls.load(), 1) << Adapt(
      "the extra run of a ->Threads(2) benchmark ran more than "
      "thread 0",
      "FlagCounters::AnnotateIteration");
}

// An iteration count Google Benchmark searches for: several timed runs,
// then one extra run of ExtraIterations(N) for the N that is reported.
TEST_F(GoogleBenchmarkContractTest, ExtraRunFollowsTheReportedIterationCount) {
  TracingHook hook;
  TracingHook::Register(&hook);
  benchmark::RegisterBenchmark("BM_Auto", Traced("BM_Auto"))->MinTime(0.002);
  TracingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const std::vector<std::string> lines = TakeTrace();
  ASSERT_EQ(reporter.runs.size(), 1u);
  const BenchRun& run = reporter.runs[0];
  ASSERT_GE(lines.size(), 5u);
  std::vector<std::string> expected =
      ExtraRun("BM_Auto", 1, ExtraIterations(run.iterations));
  expected.push_back(fmt::format("ReportRuns: {};", Describe(run)));
  EXPECT_THAT(std::vector<std::string>(lines.end() - 4, lines.end()),
              ElementsAreArray(expected))
      << Adapt(fmt::format("with a searched iteration count, the extra run "
                           "no longer comes once, after the last timed run, "
                           "with {} of the reported run",
                           kIterationsExpected),
               "ExtraRunIterations and FlagCounters::AnnotateIteration");
  EXPECT_EQ(lines[lines.size() - 5],
            fmt::format("BM_Auto: timed run, thread 0 of 1, {} iterations",
                        run.iterations))
      << Adapt("the reported run is not the last timed run",
               "FlagCounters::AnnotateIteration");
}

// FlagCounters::AnnotateAggregate computes the aggregates of its counters
// itself (internal::Statistic): they must be Google Benchmark's.
TEST_F(GoogleBenchmarkContractTest, AggregatesAreComputedAsOurStatistic) {
  static const std::vector<double> kOdd = {3, 1, 4, 1, 5};
  static const std::vector<double> kEven = {2, 7, 1, 8};
  for (const std::vector<double>* values : {&kOdd, &kEven}) {
    const std::string name = fmt::format("BM_Stats{}", values->size());
    auto next = std::make_shared<size_t>(0);
    benchmark::RegisterBenchmark(name.c_str(),
                                 [values, next](benchmark::State& state) {
                                   for (auto _ : state) {
                                   }
                                   state.counters["value"] =
                                       (*values)[(*next)++ % values->size()];
                                 })
        ->Iterations(3)
        ->Repetitions(static_cast<int>(values->size()));
  }
  TracingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::map<std::string, std::vector<std::string>> aggregates;
  for (const BenchRun& run : reporter.runs) {
    if (run.run_type != BenchRun::RT_Aggregate) continue;
    const std::vector<double>& values =
        run.run_name.function_name == "BM_Stats5" ? kOdd : kEven;
    aggregates[run.run_name.function_name].push_back(run.aggregate_name);
    const auto it = run.counters.find("value");
    ASSERT_NE(it, run.counters.end()) << Describe(run);
    const std::optional<double> ours =
        internal::Statistic(run.aggregate_name, values);
    ASSERT_TRUE(ours.has_value())
        << Adapt(fmt::format("a new aggregate '{}'", run.aggregate_name),
                 "internal::Statistic (integrations/google_benchmark/"
                 "internal.cc), if --uncore_events should fill it");
    EXPECT_NEAR(it->second.value, *ours, 1e-9 * (1 + std::abs(*ours)))
        << Describe(run)
        << Adapt(
               "Google Benchmark computes this aggregate of a counter "
               "differently",
               "internal::Statistic (integrations/google_benchmark/"
               "internal.cc)");
  }
  const std::vector<std::string> names = {"mean", "median", "stddev", "cv"};
  EXPECT_EQ(aggregates["BM_Stats5"], names)
      << Adapt("the default aggregates changed", "internal::Statistic");
  EXPECT_EQ(aggregates["BM_Stats4"], names)
      << Adapt("the default aggregates changed", "internal::Statistic");
}

// ---- AnnotatingReporter: the fields it fills reach every reporter ----

// Fills a Run as AnnotatingReporter does, then forwards it.
class FillingReporter : public benchmark::BenchmarkReporter {
 public:
  explicit FillingReporter(benchmark::BenchmarkReporter* inner)
      : inner_(inner) {}
  bool ReportContext(const Context& context) override {
    inner_->SetOutputStream(&GetOutputStream());
    inner_->SetErrorStream(&GetErrorStream());
    return inner_->ReportContext(context);
  }
  void ReportRuns(const std::vector<BenchRun>& report) override {
    std::vector<BenchRun> runs = report;
    for (BenchRun& run : runs) {
#if UNCORE_GBENCH_FLAG_PATH != 3
      saw_memory_result = saw_memory_result || run.memory_result != nullptr;
#endif
      // Every row, error rows included (CompleteCsvHeader).
      run.counters["uncore.count"] =
          benchmark::Counter(2.5, benchmark::Counter::kAvgIterations);
      run.counters["uncore.rate"] = benchmark::Counter(
          1500, benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
      run.counters["uncore.plain"] = benchmark::Counter(0.25);
      if (Skipped(run)) continue;
#if UNCORE_GBENCH_FLAG_PATH != 3
      run.memory_result = nullptr;
      run.allocs_per_iter = 0;
#endif
      run.report_label = "uncore: SIMULATED";
    }
    inner_->ReportRuns(runs);
  }
  void Finalize() override { inner_->Finalize(); }
  bool saw_memory_result = false;

 private:
  benchmark::BenchmarkReporter* inner_;
};

// The hook as the main registers it, doing nothing.
#if UNCORE_GBENCH_FLAG_PATH == 3
class IdleHook : public benchmark::ProfilerManager {
 public:
  void AfterSetupStart() override {}
  void BeforeTeardownStop() override {}
};
#else
class IdleHook : public benchmark::MemoryManager {
 public:
  void Start() override {}
#if UNCORE_GBENCH_FLAG_PATH == 1
  void Stop(Result* /*result*/) override {}
#endif
  void Stop(Result& /*result*/) override {}
};
#endif

void RegisterHook(IdleHook* hook) {
#if UNCORE_GBENCH_FLAG_PATH == 3
  benchmark::RegisterProfilerManager(hook);
#else
  benchmark::RegisterMemoryManager(hook);
#endif
}

// Runs BM_AError (fails before its loop) and BM_Work through a
// FillingReporter in front of `inner`; returns what `inner` wrote.
std::string RunFilled(benchmark::BenchmarkReporter& inner,
                      bool* saw_memory_result) {
  IdleHook hook;
  RegisterHook(&hook);
  benchmark::RegisterBenchmark("BM_AError", [](benchmark::State& state) {
    state.SkipWithError("expected failure");
    for (auto _ : state) {
    }
  });
  benchmark::RegisterBenchmark("BM_Work", [](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(state.iterations());
  })->Iterations(10);
  std::ostringstream out;
  std::ostringstream err;
  FillingReporter filling(&inner);
  filling.SetOutputStream(&out);
  filling.SetErrorStream(&err);
  benchmark::RunSpecifiedBenchmarks(&filling);
  RegisterHook(nullptr);
  *saw_memory_result = filling.saw_memory_result;
  return out.str();
}

constexpr char kReporterFunctions[] =
    "AnnotatingReporter and FlagCounters::Publish";

TEST_F(GoogleBenchmarkContractTest, FilledRunsReachTheJsonReporter) {
  benchmark::JSONReporter json;
  bool saw_memory_result = false;
  const std::string text = RunFilled(json, &saw_memory_result);
#if UNCORE_GBENCH_FLAG_PATH != 3
  EXPECT_TRUE(saw_memory_result) << Adapt(
      "a run measured with a memory manager no longer carries "
      "Run::memory_result",
      "FlagCounters::Annotate (which removes the empty memory result)");
#endif
  const std::string message = Adapt(
      "the JSON reporter no longer prints a Run's counters, label and "
      "memory result as it finds them in ReportRuns",
      kReporterFunctions);
  EXPECT_THAT(text, HasSubstr("\"name\": \"BM_Work/iterations:10\""))
      << message;
  EXPECT_THAT(text, HasSubstr("\"uncore.count\": 2.5000000000000000e+00"))
      << message;
  EXPECT_THAT(text, HasSubstr("\"uncore.rate\": 1.5000000000000000e+03"))
      << message;
  EXPECT_THAT(text, HasSubstr("\"uncore.plain\": 2.5000000000000000e-01"))
      << message;
  EXPECT_THAT(text, HasSubstr("\"label\": \"uncore: SIMULATED\"")) << message;
  EXPECT_THAT(text, Not(HasSubstr("allocs_per_iter"))) << message;
  EXPECT_THAT(text, Not(HasSubstr("max_bytes_used"))) << message;
}

TEST_F(GoogleBenchmarkContractTest, FilledRunsReachTheConsoleReporter) {
  benchmark::ConsoleReporter console(benchmark::ConsoleReporter::OO_None);
  bool saw_memory_result = false;
  const std::string text = RunFilled(console, &saw_memory_result);
  std::string line;
  std::istringstream lines(text);
  std::string work;
  while (std::getline(lines, line)) {
    if (line.rfind("BM_Work", 0) == 0) work = line;
  }
  const std::string message = Adapt(
      "the console reporter no longer prints a Run's counters (kIsRate as "
      "\"/s\") and label as it finds them in ReportRuns",
      kReporterFunctions);
  EXPECT_THAT(work, HasSubstr("uncore.count=2.5 ")) << text << message;
  EXPECT_THAT(work, HasSubstr("uncore.rate=1.5k/s")) << text << message;
  EXPECT_THAT(work, HasSubstr("uncore: SIMULATED")) << text << message;
}

TEST_F(GoogleBenchmarkContractTest, CsvColumnsComeFromTheFirstReport) {
  // The first report is BM_AError alone: its counters name the columns
  // that BM_Work's row fills (CompleteCsvHeader).  A Google Benchmark that
  // checks the columns otherwise aborts here.
  BENCHMARK_DISABLE_DEPRECATED_WARNING
  benchmark::CSVReporter csv;
  BENCHMARK_RESTORE_DEPRECATED_WARNING
  bool saw_memory_result = false;
  const std::string text = RunFilled(csv, &saw_memory_result);
  const std::string message = Adapt(
      "the CSV reporter no longer takes its columns from the counters of "
      "every row of its first report, error rows included",
      "AnnotatingReporter::CompleteCsvHeader");
  std::istringstream lines(text);
  std::string header;
  std::string error_row;
  std::string work_row;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("name,", 0) == 0) header = line;
    if (line.rfind("\"BM_AError", 0) == 0) error_row = line;
    if (line.rfind("\"BM_Work", 0) == 0) work_row = line;
  }
  EXPECT_THAT(header, HasSubstr("\"uncore.count\"")) << text << message;
  EXPECT_THAT(error_row, HasSubstr("expected failure")) << text << message;
  EXPECT_THAT(work_row, HasSubstr(",2.5")) << text << message;
}

// AnnotatingReporter::ReportContext hands the wrapped file reporter the
// stream Google Benchmark gave the wrapper: it must be the --benchmark_out
// file by then.
TEST_F(GoogleBenchmarkContractTest, FileReporterStreamIsSetByReportContext) {
  const std::string path =
      ::testing::TempDir() + "google_benchmark_contract_out.json";
  std::string out_flag = "--benchmark_out=" + path;
  char arg0[] = "google_benchmark_contract_test";
  {
    char* argv[] = {arg0, out_flag.data(), nullptr};
    int argc = 2;
    benchmark::Initialize(&argc, argv);
  }
  benchmark::RegisterBenchmark("BM_ToFile", [](benchmark::State& state) {
    for (auto _ : state) {
    }
  })->Iterations(5);
  std::ostringstream display_out;
  std::ostringstream display_err;
  benchmark::ConsoleReporter display(benchmark::ConsoleReporter::OO_None);
  display.SetOutputStream(&display_out);
  display.SetErrorStream(&display_err);
  benchmark::JSONReporter json;
  FillingReporter file(&json);
  benchmark::RunSpecifiedBenchmarks(&display, &file);
  {
    std::string empty_flag = "--benchmark_out=";
    char* argv[] = {arg0, empty_flag.data(), nullptr};
    int argc = 2;
    benchmark::Initialize(&argc, argv);
  }
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  const std::string message = Adapt(
      "a file reporter's output stream is not the --benchmark_out file "
      "when its ReportContext is called",
      "AnnotatingReporter::ReportContext and BenchmarkMain");
  EXPECT_THAT(text, HasSubstr("\"name\": \"BM_ToFile/iterations:5\""))
      << message;
  EXPECT_THAT(text, HasSubstr("\"uncore.count\": 2.5")) << message;
}

#endif  // UNCORE_GBENCH_FLAG_PATH != 0

// ---- ScopedCounters: what it relies on in a ->Threads(n) benchmark ----
// (with every Google Benchmark: the public State API only)

class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<BenchRun>& report) override {
    runs.insert(runs.end(), report.begin(), report.end());
  }
  std::vector<BenchRun> runs;
};

class ScopedCountersContractTest : public ::testing::Test {
 protected:
  void TearDown() override { benchmark::ClearRegisteredBenchmarks(); }
};

// Thread 0's code before the loop runs before any thread's first
// iteration, its code after the loop after every thread's last one, and
// counters only thread 0 sets are divided by every thread's iterations
// (kAvgIterations) or by the CPU time of all threads (kIsRate).
TEST_F(ScopedCountersContractTest, ThreadZeroBracketsEveryThreadsLoop) {
  static std::atomic<int64_t> iterations_done{0};
  static std::atomic<int64_t> seen_before{-1};
  static std::atomic<int64_t> seen_after{-1};
  iterations_done = 0;
  benchmark::RegisterBenchmark(
      "BM_Bracket",
      [](benchmark::State& state) {
        if (state.thread_index() == 0) {
          // Give the other threads time to run ahead if nothing stops them.
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          seen_before = iterations_done.load();
        }
        for (auto _ : state) ++iterations_done;
        if (state.thread_index() == 0) {
          seen_after = iterations_done.load();
          state.counters["count"] =
              benchmark::Counter(400, benchmark::Counter::kAvgIterations);
          state.counters["rate"] =
              benchmark::Counter(1000, benchmark::Counter::kIsRate);
        }
      })
      ->Threads(4)
      ->Iterations(50);
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const std::string message = fmt::format(
      "\nGOOGLE BENCHMARK CHANGED (installed: {}): a ->Threads(n) benchmark "
      "no longer works as ScopedCounters assumes (only thread 0 measures, "
      "from before the loop's start barrier to after its end barrier).  "
      "Adapt ScopedCounters in integrations/google_benchmark/"
      "scoped_counters.cc, then docs/google_benchmark.md.",
      UNCORE_GOOGLE_BENCHMARK_VERSION);
  EXPECT_EQ(seen_before.load(), 0) << message;
  EXPECT_EQ(seen_after.load(), 200) << message;
  ASSERT_EQ(reporter.runs.size(), 1u);
  const BenchRun& run = reporter.runs[0];
  EXPECT_EQ(run.iterations, 200) << message;
  EXPECT_DOUBLE_EQ(run.counters.at("count").value, 2.0) << message;
  ASSERT_GT(run.cpu_accumulated_time, 0);
  // kIsRate: divided by the CPU time of all threads, from 1.9.5 on by that
  // time over the thread count (ScopedCounters' RateTotal).
  const double divided_by = UNCORE_GBENCH_RATE_OVER_THREAD_TIME ? 4 : 1;
  EXPECT_NEAR(run.counters.at("rate").value * run.cpu_accumulated_time,
              1000 * divided_by, 1e-6)
      << message
      << "\nA kIsRate counter is no longer divided by the time that "
         "UNCORE_GBENCH_RATE_OVER_THREAD_TIME says ("
      << UNCORE_GBENCH_RATE_OVER_THREAD_TIME
      << ": 1 = time / threads, 0 = time): adapt it in " << kCMakeFile
      << " and RateTotal in scoped_counters.cc.";
}

}  // namespace
}  // namespace uncore::bench
