// UNCORE_BENCHMARK_MAIN (uncore/benchmark_main.h): the part of the Google
// Benchmark integration that depends on how Google Benchmark runs a
// benchmark.  integrations/google_benchmark/CMakeLists.txt picks the path
// by version at configure time (UNCORE_GBENCH_FLAG_PATH):
//   1  1.7.x: MemoryManager (Stop(Result*) and Stop(Result&)), whose
//      Start/Stop bracket one extra, untimed run per repetition of
//      min(16, N) iterations on thread 0, after the timed run, the whole
//      benchmark function and Setup/Teardown included (ExtraRunHook);
//   2  1.8.x: the same with Stop(Result&) only and Run::skipped;
//   3  1.9.x (and a newer version it compiles against, untested): the
//      ProfilerManager, whose AfterSetupStart/BeforeTeardownStop bracket
//      the loop of one extra run per repetition on one thread: 1 iteration
//      on 1.9.0/1.9.1 (UNCORE_GBENCH_PROFILER_ONE_ITERATION), the timed
//      run's iterations per thread from 1.9.2 (ProfilerHook);
//   0  anything else: the --uncore_* counter flags are refused.
// What every path relies on, and what tests it
// (google_benchmark_contract_test):
//   - the extra runs of a benchmark's repetitions come before ReportRuns
//     gets its iteration runs, before the next benchmark's, then its
//     aggregates in a call of their own (FlagCounters::Annotate);
//   - reporters print the counters and label of a Run as they find them,
//     the CSV reporter takes its columns from its first report, and a
//     file reporter's stream is the --benchmark_out file by ReportContext
//     (AnnotatingReporter);
//   - aggregates are computed as internal::Statistic computes them.
// The counters are the extra run's, scaled to one timed iteration, and say
// so in the label; an extra run shorter than kMinExtraRunSeconds is too
// short to scale and its counters are withheld.  docs/google_benchmark.md
// explains the mechanics.
#include "uncore/benchmark_main.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "integrations/google_benchmark/internal.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/runtime/backends.h"
#include "uncore/benchmark.h"
#include "uncore/events.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

#ifndef UNCORE_GBENCH_FLAG_PATH
#error "UNCORE_GBENCH_FLAG_PATH: set by its CMakeLists.txt"
#endif

namespace uncore::bench {
namespace {

#if UNCORE_GBENCH_FLAG_PATH != 0

using internal::Extract;
using internal::JoinLabels;
using internal::kSimulatedLabel;
using internal::MakeRequest;
using internal::MeasuredRegion;
using internal::Measurement;
using internal::NotMeasuredReason;
using internal::Request;
using internal::SessionOptionsFor;
using internal::Statistic;
using internal::Value;
using Run = benchmark::BenchmarkReporter::Run;

// Below this wall time an extra run's counts are withheld: its region
// reads the counters twice, 1-80 us a read (README "Teams and the cost of
// a boundary": ~1.6 us a pair on the counters' CPU, 17-19 us from the
// other), so from 1 ms on the usual pair is 0.2-2% of the run
// (docs/google_benchmark.md).
constexpr double kMinExtraRunSeconds = 1e-3;

// The iterations of the extra run that follows a timed run of `per_thread`
// iterations per thread (src/benchmark_runner.cc, DoOneRepetition).
benchmark::IterationCount ExtraRunIterations(
    benchmark::IterationCount per_thread) {
#if UNCORE_GBENCH_FLAG_PATH == 3 && UNCORE_GBENCH_PROFILER_ONE_ITERATION
  // 1.9.0, 1.9.1: RunProfilerManager runs one iteration.
  return std::min<benchmark::IterationCount>(1, per_thread);
#elif UNCORE_GBENCH_FLAG_PATH == 3
  // 1.9.2 on: RunProfilerManager(iters), the timed run's count per thread.
  return per_thread;
#else
  // 1.7.x, 1.8.x: RunMemoryManager of min(16, iters).
  return std::min<benchmark::IterationCount>(16, per_thread);
#endif
}

bool Skipped(const Run& run) {
#if UNCORE_GBENCH_FLAG_PATH == 1
  return run.error_occurred;
#else
  return run.skipped != benchmark::internal::NotSkipped;
#endif
}

// "3.2 us", "12.5 ms", "1.02 s".
std::string Duration(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.3g} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3g} ms", seconds * 1e3);
  return fmt::format("{:.3g} s", seconds);
}

void AppendLabel(Run& run, std::string_view text) {
  if (run.report_label.find(text) != std::string::npos) return;
  run.report_label = JoinLabels(run.report_label, text);
}

// The --uncore_events measurement: a session per extra run (the
// MemoryManager hook), matched to the reported runs by order.
class FlagCounters {
 public:
  explicit FlagCounters(Request request) : request_(std::move(request)) {}

  // Starts and stops one session to check the specs and the backend.
  absl::Status Probe() {
    const Options options = GetOptions();
    SessionOptions session_options = SessionOptionsFor(request_, options);
    const std::string backend = session_options.backend;
    UNCORE_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                            Session::Start(std::move(session_options)));
    if (!session->measuring()) {
      not_measured_ = NotMeasuredReason(*session, backend);
    }
    return session->Stop();
  }
  // Why nothing is measured in this program ("" when it is).
  const std::string& not_measured() const { return not_measured_; }

  // The hook's start and stop (ExtraRunHook, ProfilerHook).
  void BeginExtraRun() {
    if (batch_reported_) {
      batch_.clear();
      divisor_ = 0;
      batch_reported_ = false;
    }
    start_error_.clear();
    // On the ProfilerManager path this hook comes at the loop, after a
    // ScopedCounters in the benchmark's code started its session: it gives
    // way, as it does when it finds the flag's session (its counters in
    // the extra run would not be reported anyway).
    internal::YieldScopedCounters();
    absl::StatusOr<std::unique_ptr<Session>> session =
        Session::Start(SessionOptionsFor(request_, GetOptions()));
    if (!session.ok()) {
      start_error_ = common::StatusMessage(session.status());
      return;
    }
    session_ = *std::move(session);
    internal::SetFlagSession(session_.get());
    RegionBegin(MeasuredRegion());
  }

  void EndExtraRun() {
    if (batch_reported_) {  // a Stop without a Start: keep the order
      batch_.clear();
      divisor_ = 0;
      batch_reported_ = false;
    }
    Measurement m;
    if (session_ == nullptr) {
      m.error =
          start_error_.empty() ? "the session did not start" : start_error_;
    } else {
      RegionEnd(MeasuredRegion());
      const Results results = session_->Collect();
      internal::SetFlagSession(nullptr);
      const absl::Status stopped = session_->Stop();
      session_.reset();
      m = Extract(results, request_);
      if (m.ok && !stopped.ok()) {
        m.ok = false;
        m.error = common::StatusMessage(stopped);
      }
    }
    batch_.push_back(std::move(m));
  }

  // Adds the counters of the current batch to `runs` (one ReportRuns).
  void Annotate(std::vector<Run>& runs) {
    batch_reported_ = true;
    for (Run& run : runs) {
      if (run.run_type == Run::RT_Iteration) {
#if UNCORE_GBENCH_FLAG_PATH != 3
        // The hook's memory result is empty: no allocations were counted.
        run.memory_result = nullptr;
        run.allocs_per_iter = 0;
#endif
        AnnotateIteration(run);
      } else {
        AnnotateAggregate(run);
      }
    }
  }

  std::vector<std::string> keys() const { return request_.keys(); }

 private:
  // Whether the batch holds one extra run per repetition of `run`'s
  // benchmark; when not, the label says why.
  bool BatchMatches(Run& run) {
    if (!not_measured_.empty()) {
      AppendLabel(run, "uncore: not measured: " + not_measured_);
      return false;
    }
    if (static_cast<int64_t>(batch_.size()) != run.repetitions) {
      AppendLabel(run, fmt::format("uncore: not measured: {} extra runs for "
                                   "{} repetitions",
                                   batch_.size(), run.repetitions));
      return false;
    }
    return true;
  }

  void AnnotateIteration(Run& run) {
    if (Skipped(run)) return;
    if (!BatchMatches(run)) return;
    if (run.repetition_index < 0 ||
        run.repetition_index >= static_cast<int64_t>(batch_.size())) {
      AppendLabel(run,
                  "uncore: not measured: no extra run for this "
                  "repetition");
      return;
    }
    const Measurement& m = batch_[static_cast<size_t>(run.repetition_index)];
    if (!m.ok) {
      AppendLabel(run, "uncore: not measured: " + m.error);
      return;
    }
    const benchmark::IterationCount per_thread =
        run.threads > 0 ? run.iterations / run.threads : 0;
    const benchmark::IterationCount divisor = ExtraRunIterations(per_thread);
    if (divisor <= 0) {
      AppendLabel(run, "uncore: not measured: no iterations");
      return;
    }
    divisor_ = divisor;
    if (m.seconds < kMinExtraRunSeconds) {
      AppendLabel(run, WithheldLabel(1, divisor, m.seconds));
      return;
    }
    for (const Value& v : m.values) {
      Publish(run, v.key, v.kind, v.valid ? PerIteration(v, divisor) : NAN);
    }
    AppendLabel(run, fmt::format("uncore: scaled from a separate run of {} "
                                 "iteration{}, {}",
                                 divisor, divisor == 1 ? "" : "s",
                                 Duration(m.seconds)));
    if (m.simulated) AppendLabel(run, kSimulatedLabel);
  }

  // `runs`: the separate runs behind the row (an aggregate's: several,
  // of which `seconds` is the shortest).
  static std::string WithheldLabel(size_t runs,
                                   benchmark::IterationCount iterations,
                                   double seconds) {
    return fmt::format(
        "uncore: withheld: the {} of {} iteration{} lasted {}, under the {} "
        "its counts need to be scaled",
        runs == 1 ? "separate run"
                  : fmt::format("shortest of {} separate runs", runs),
        iterations, iterations == 1 ? "" : "s", Duration(seconds),
        Duration(kMinExtraRunSeconds));
  }

  void AnnotateAggregate(Run& run) {
    if (Skipped(run)) return;
    if (Statistic(run.aggregate_name, {}) == std::nullopt) return;
    if (!BatchMatches(run)) return;
    bool simulated = false;
    double shortest = batch_.front().seconds;  // BatchMatches: not empty
    double longest = shortest;
    for (const Measurement& m : batch_) {
      if (!m.ok) {
        AppendLabel(run, "uncore: not measured: " + m.error);
        return;
      }
      simulated = simulated || m.simulated;
      shortest = std::min(shortest, m.seconds);
      longest = std::max(longest, m.seconds);
    }
    if (divisor_ <= 0) {
      AppendLabel(run,
                  "uncore: not measured: aggregates-only reporting hides the "
                  "iteration count the extra run's counts are divided by");
      return;
    }
    if (shortest < kMinExtraRunSeconds) {
      AppendLabel(run, WithheldLabel(batch_.size(), divisor_, shortest));
      return;
    }
    const size_t n = batch_.front().values.size();
    for (size_t k = 0; k < n; ++k) {
      std::vector<double> per_repetition;
      bool valid = true;
      for (const Measurement& m : batch_) {
        const Value& v = m.values[k];
        valid = valid && v.valid;
        per_repetition.push_back(PerIteration(v, divisor_));
      }
      const Value& first = batch_.front().values[k];
      const double stat =
          valid ? *Statistic(run.aggregate_name, per_repetition) : NAN;
      Publish(run, first.key, first.kind, stat);
    }
    AppendLabel(run,
                fmt::format("uncore: scaled from {} separate runs of {} "
                            "iteration{}, {} to {}",
                            batch_.size(), divisor_, divisor_ == 1 ? "" : "s",
                            Duration(shortest), Duration(longest)));
    if (simulated) AppendLabel(run, kSimulatedLabel);
  }

  static double PerIteration(const Value& v,
                             benchmark::IterationCount divisor) {
    return v.kind == Value::Kind::kCount
               ? v.value / static_cast<double>(divisor)
               : v.value;
  }

  // Values that are not finite are left out (the reporters would print an
  // invalid JSON number); CompleteCsvHeader adds what a CSV header needs.
  static void Publish(Run& run, const std::string& key, Value::Kind kind,
                      double value) {
    if (!std::isfinite(value)) return;
    if (run.counters.find(key) != run.counters.end()) return;  // the code's
    switch (kind) {
      case Value::Kind::kCount:
        run.counters[key] =
            benchmark::Counter(value, benchmark::Counter::kAvgIterations);
        break;
      case Value::Kind::kRate:
        run.counters[key] = benchmark::Counter(
            value, benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
        break;
      case Value::Kind::kPlain:
        run.counters[key] = benchmark::Counter(value);
        break;
    }
  }

  Request request_;
  std::string not_measured_;
  std::unique_ptr<Session> session_;  // during an extra run
  std::string start_error_;
  // The extra runs since the last report, one per repetition, and the
  // iteration count their counts are divided by.
  std::vector<Measurement> batch_;
  bool batch_reported_ = false;
  benchmark::IterationCount divisor_ = 0;
};

#if UNCORE_GBENCH_FLAG_PATH == 3
// 1.9 on: the profiler run, one per repetition, after the timed run; the
// hook brackets its loop (State::StartKeepRunning/FinishKeepRunning).
class ProfilerHook : public benchmark::ProfilerManager {
 public:
  explicit ProfilerHook(FlagCounters* counters) : counters_(counters) {}
  void AfterSetupStart() override { counters_->BeginExtraRun(); }
  void BeforeTeardownStop() override { counters_->EndExtraRun(); }
  static void Register(ProfilerHook* hook) {
    benchmark::RegisterProfilerManager(hook);
  }

 private:
  FlagCounters* counters_;
};
using Hook = ProfilerHook;
#else
// 1.7.x, 1.8.x: the memory manager's run, one per repetition, after the
// timed run; Start/Stop bracket the whole run, Setup/Teardown included.
class ExtraRunHook : public benchmark::MemoryManager {
 public:
  explicit ExtraRunHook(FlagCounters* counters) : counters_(counters) {}
  void Start() override { counters_->BeginExtraRun(); }
#if UNCORE_GBENCH_FLAG_PATH == 1
  // 1.7.1 calls the deprecated Stop(Result*); Stop(Result&) is its
  // replacement, overridden alike (1.8 keeps only that one).
  void Stop(Result* /*result*/) override { counters_->EndExtraRun(); }
#endif
  void Stop(Result& /*result*/) override { counters_->EndExtraRun(); }
  static void Register(ExtraRunHook* hook) {
    benchmark::RegisterMemoryManager(hook);
  }

 private:
  FlagCounters* counters_;
};
using Hook = ExtraRunHook;
#endif

// Forwards to a Google Benchmark reporter after adding the counters.
class AnnotatingReporter : public benchmark::BenchmarkReporter {
 public:
  AnnotatingReporter(benchmark::BenchmarkReporter* inner, bool csv,
                     FlagCounters* counters)
      : inner_(inner), csv_(csv), counters_(counters) {}

  bool ReportContext(const Context& context) override {
    // RunSpecifiedBenchmarks points this reporter at the --benchmark_out
    // file; the reporter that writes must follow.
    inner_->SetOutputStream(&GetOutputStream());
    inner_->SetErrorStream(&GetErrorStream());
    return inner_->ReportContext(context);
  }

  void ReportRuns(const std::vector<Run>& report) override {
    std::vector<Run> runs = report;
    counters_->Annotate(runs);
    if (csv_ && first_) CompleteCsvHeader(runs);
    first_ = false;
    inner_->ReportRuns(runs);
  }

  void Finalize() override { inner_->Finalize(); }

 private:
  // Google Benchmark's CSV reporter takes its columns from the first
  // report and aborts when a later run has a counter the header lacks: put
  // every counter name in the first report.  An error row prints no
  // counters, so a name goes there when one exists; else the first row
  // gets NaN ("nan": not measured).
  void CompleteCsvHeader(std::vector<Run>& runs) {
    if (runs.empty()) return;
    for (const std::string& key : counters_->keys()) {
      bool present = false;
      for (const Run& run : runs) {
        present = present || run.counters.find(key) != run.counters.end();
      }
      if (present) continue;
      Run* carrier = &runs.front();
      for (Run& run : runs) {
        if (Skipped(run)) {
          carrier = &run;
          break;
        }
      }
      carrier->counters[key] = benchmark::Counter(NAN);
    }
  }

  benchmark::BenchmarkReporter* inner_;
  bool csv_;
  FlagCounters* counters_;
  bool first_ = true;
};

BENCHMARK_DISABLE_DEPRECATED_WARNING
std::unique_ptr<benchmark::BenchmarkReporter> FileReporter(
    std::string_view format) {
  if (format == "console") {
    return std::make_unique<benchmark::ConsoleReporter>(
        benchmark::ConsoleReporter::OO_None);
  }
  if (format == "csv") return std::make_unique<benchmark::CSVReporter>();
  return std::make_unique<benchmark::JSONReporter>();
}
BENCHMARK_RESTORE_DEPRECATED_WARNING

#endif  // UNCORE_GBENCH_FLAG_PATH != 0

// Google Benchmark's flag syntax: "--name=value", or "--name" alone for a
// boolean.  The value of `name` in `arg`, or nullopt.
std::optional<std::string_view> FlagValue(std::string_view arg,
                                          std::string_view name, bool boolean) {
  if (arg.size() < 2 || arg.substr(0, 2) != "--") return std::nullopt;
  arg.remove_prefix(2);
  if (arg.substr(0, name.size()) != name) return std::nullopt;
  arg.remove_prefix(name.size());
  if (arg.empty() && boolean) return arg;
  if (arg.empty() || arg.front() != '=') return std::nullopt;
  return arg.substr(1);
}

// Google Benchmark's IsTruthyFlagValue.
bool Truthy(std::string_view value) {
  if (value.size() == 1) {
    const char v = value[0];
    return std::isalnum(static_cast<unsigned char>(v)) &&
           !(v == '0' || v == 'f' || v == 'F' || v == 'n' || v == 'N');
  }
  if (value.empty()) return true;
  const std::string lower = common::ToLower(value);
  return !(lower == "false" || lower == "no" || lower == "off");
}

// The Google Benchmark flags this main must know before Initialize
// consumes them: the file reporter's, and random interleaving.  A flag
// that is not given takes its environment variable, as in Google
// Benchmark.
struct BenchmarkFlags {
  std::string out;
  std::string out_format = "json";
  bool random_interleaving = false;
};

BenchmarkFlags ScanBenchmarkFlags(int argc, char** argv) {
  BenchmarkFlags flags;
  if (const char* env = std::getenv("BENCHMARK_OUT")) flags.out = env;
  if (const char* env = std::getenv("BENCHMARK_OUT_FORMAT")) {
    flags.out_format = env;
  }
  if (const char* env = std::getenv("BENCHMARK_ENABLE_RANDOM_INTERLEAVING")) {
    flags.random_interleaving = Truthy(env);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (auto v = FlagValue(arg, "benchmark_out", false)) {
      flags.out = std::string(*v);
    } else if (auto f = FlagValue(arg, "benchmark_out_format", false)) {
      flags.out_format = std::string(*f);
    } else if (auto r = FlagValue(arg, "benchmark_enable_random_interleaving",
                                  true)) {
      flags.random_interleaving = Truthy(*r);
    }
  }
  return flags;
}

struct UncoreFlags {
  std::vector<std::string> events;
  std::vector<std::string> metrics;
  std::optional<std::string> backend;
};

// Removes the --uncore_* flags from argv.
absl::StatusOr<UncoreFlags> StripUncoreFlags(int* argc, char** argv) {
  UncoreFlags flags;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, 9) != "--uncore_") {
      argv[kept++] = argv[i];
      continue;
    }
    if (auto v = FlagValue(arg, "uncore_events", false)) {
      std::vector<std::string> specs = SplitSpecList(*v);
      flags.events.insert(flags.events.end(), specs.begin(), specs.end());
    } else if (auto m = FlagValue(arg, "uncore_metrics", false)) {
      std::vector<std::string> names = SplitSpecList(*m);
      flags.metrics.insert(flags.metrics.end(), names.begin(), names.end());
    } else if (auto b = FlagValue(arg, "uncore_backend", false)) {
      flags.backend = common::ToLower(common::StripWhitespace(*b));
    } else {
      return absl::InvalidArgumentError(
          fmt::format("unknown flag '{}': use --uncore_events=SPECS, "
                      "--uncore_metrics=NAMES or --uncore_backend=NAME",
                      arg));
    }
  }
  argv[kept] = nullptr;
  *argc = kept;
  return flags;
}

// Where the --uncore_events counters come from, on this build's path.
#if UNCORE_GBENCH_FLAG_PATH == 0
constexpr char kFlagCountersSource[] =
    "not available with this Google Benchmark (" UNCORE_GOOGLE_BENCHMARK_VERSION
    "): use ScopedCounters";
#elif UNCORE_GBENCH_FLAG_PATH == 3 && UNCORE_GBENCH_PROFILER_ONE_ITERATION
constexpr char kFlagCountersSource[] =
    "scaled from a separate run of 1 iteration";
#elif UNCORE_GBENCH_FLAG_PATH == 3
constexpr char kFlagCountersSource[] =
    "scaled from a separate run of N iterations";
#else
constexpr char kFlagCountersSource[] =
    "scaled from a separate run of min(16, N) iterations";
#endif

void PrintHelp() {
  benchmark::PrintDefaultHelp();
  std::fprintf(stdout,
               "          [--uncore_events=<spec>,...]\n"
               "          [--uncore_metrics=<metric>,...]\n"
               "          [--uncore_backend=auto|perf|direct|sim|off]\n"
               "  uncore counters of each benchmark, %s\n"
               "  (see docs/google_benchmark.md)\n",
               kFlagCountersSource);
}

int Fail(std::string_view message) {
  std::fprintf(stderr, "uncore: %.*s\n", static_cast<int>(message.size()),
               message.data());
  return 1;
}

}  // namespace

int BenchmarkMain(int argc, char** argv) {
  char arg0_default[] = "benchmark";
  char* args_default[] = {arg0_default, nullptr};
  if (argv == nullptr || argc < 1) {
    argc = 1;
    argv = args_default;
  }
  absl::StatusOr<UncoreFlags> flags = StripUncoreFlags(&argc, argv);
  if (!flags.ok()) return Fail(common::StatusMessage(flags.status()));
  [[maybe_unused]] const BenchmarkFlags benchmark_flags =
      ScanBenchmarkFlags(argc, argv);
  benchmark::Initialize(&argc, argv, &PrintHelp);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  if (flags->backend) {
    const std::string& name = *flags->backend;
    if (std::find(std::begin(runtime::kBackendNames),
                  std::end(runtime::kBackendNames),
                  name) == std::end(runtime::kBackendNames)) {
      return Fail(fmt::format(
          "--uncore_backend={}: use auto, perf, direct, sim or off", name));
    }
    Options options = GetOptions();
    options.backend = name;
    SetOptions(std::move(options));
  }
  if (flags->events.empty() && flags->metrics.empty()) {
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }

#if UNCORE_GBENCH_FLAG_PATH == 0
  return Fail(
      "--uncore_events and --uncore_metrics: Google "
      "Benchmark " UNCORE_GOOGLE_BENCHMARK_VERSION
      " is not supported for the flag mode of UNCORE_BENCHMARK_MAIN (its "
      "ProfilerManager hook does not compile here; supported: 1.7, 1.8, "
      "1.9).  ScopedCounters (uncore/benchmark.h) works with this version: "
      "put one in the benchmark's code.");
#else
  if (benchmark_flags.random_interleaving) {
    return Fail(
        "--uncore_events does not work with "
        "--benchmark_enable_random_interleaving: the extra runs are matched "
        "to their benchmarks by order");
  }
  if (Session::Active() != nullptr) {
    return Fail(
        "--uncore_events: another uncore::Session is active (UNCORE_EVENTS "
        "or UNCORE_METRICS is set?): unset those variables or drop the "
        "flag");
  }
  absl::StatusOr<Request> request =
      MakeRequest(flags->events, flags->metrics, GetOptions());
  if (!request.ok()) {
    return Fail("--uncore_events: " + common::StatusMessage(request.status()));
  }
  FlagCounters counters(*std::move(request));
  if (absl::Status probe = counters.Probe(); !probe.ok()) {
    return Fail("--uncore_events: " + common::StatusMessage(probe));
  }
  if (!counters.not_measured().empty()) {
    std::fprintf(stderr, "uncore: not measured: %s\n",
                 counters.not_measured().c_str());
  }

  // Google Benchmark keeps the default display reporter (a static).
  benchmark::BenchmarkReporter* display =
      benchmark::CreateDefaultDisplayReporter();
  // Whether the display is CSV: only that reporter needs its header whole.
  BENCHMARK_DISABLE_DEPRECATED_WARNING
  const bool display_csv =
      dynamic_cast<benchmark::CSVReporter*>(display) != nullptr;
  BENCHMARK_RESTORE_DEPRECATED_WARNING
  AnnotatingReporter display_reporter(display, display_csv, &counters);
  std::unique_ptr<benchmark::BenchmarkReporter> file;
  std::unique_ptr<AnnotatingReporter> file_reporter;
  if (!benchmark_flags.out.empty()) {
    file = FileReporter(benchmark_flags.out_format);
    file_reporter = std::make_unique<AnnotatingReporter>(
        file.get(), benchmark_flags.out_format == "csv", &counters);
  }
  Hook hook(&counters);
  if (counters.not_measured().empty()) Hook::Register(&hook);
  benchmark::RunSpecifiedBenchmarks(&display_reporter, file_reporter.get());
  Hook::Register(nullptr);
  benchmark::Shutdown();
  return 0;
#endif  // UNCORE_GBENCH_FLAG_PATH == 0
}

}  // namespace uncore::bench
