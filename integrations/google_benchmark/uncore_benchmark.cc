#include "integrations/google_benchmark/uncore_benchmark.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/runtime/backends.h"
#include "sdk/spec/event_spec.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore::bench {
namespace {

using Run = benchmark::BenchmarkReporter::Run;

// The name of the region every measurement here opens.
constexpr std::string_view kRegionName = "google benchmark";
// Google Benchmark 1.7.1's MemoryManager run: min(16, iterations) (see
// src/benchmark_runner.cc, DoOneRepetition).
constexpr benchmark::IterationCount kExtraRunMaxIterations = 16;
constexpr std::string_view kSimulatedLabel = "uncore: SIMULATED";

RegionId MeasuredRegion() {
  static const RegionId id = InternRegionName(kRegionName);
  return id;
}

std::mutex& OptionsMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

Options& GlobalOptions() {
  static auto* options = new Options;
  return *options;
}

// The session the --uncore_events flag has open during an extra run; a
// ScopedCounters that finds it active stays idle.
std::atomic<Session*> g_flag_session{nullptr};

std::string ResolvedBackend(const Options& options) {
  if (!options.backend.empty()) {
    return common::ToLower(common::StripWhitespace(options.backend));
  }
  if (const char* env = std::getenv("UNCORE_BACKEND")) {
    std::string backend = common::ToLower(common::StripWhitespace(env));
    if (!backend.empty()) return backend;
  }
  return "auto";
}

std::string KeyForCanonical(std::string_view canonical) {
  std::string key = "uncore.";
  if (!canonical.empty() && canonical.back() == '/') {
    canonical.remove_suffix(1);
  }
  for (char c : canonical) key += c == '/' ? '.' : c;
  return key;
}

// The specs of a measurement, deduplicated, with their counter names.
struct Request {
  std::vector<std::string> events;  // canonical event specs
  std::vector<std::string> event_keys;
  std::vector<std::string> metrics;  // canonical metric specs
  std::vector<std::string> metric_keys;

  bool empty() const { return events.empty() && metrics.empty(); }
  std::vector<std::string> keys() const {
    std::vector<std::string> all = event_keys;
    all.insert(all.end(), metric_keys.begin(), metric_keys.end());
    return all;
  }
};

// `specs`: events or metrics; `metric_names`: metrics only, "metric/" is
// optional (as in UNCORE_METRICS).
absl::StatusOr<Request> MakeRequest(
    const std::vector<std::string>& specs,
    const std::vector<std::string>& metric_names) {
  Request request;
  auto add = [&](std::string_view text, bool metric_only) -> absl::Status {
    std::string full(common::StripWhitespace(text));
    if (metric_only && !common::StartsWithIgnoreCase(full, "metric/")) {
      full = "metric/" + full;
    }
    UNCORE_ASSIGN_OR_RETURN(spec::Spec parsed, spec::ParseSpec(full));
    if (metric_only && !parsed.is_metric()) {
      return absl::InvalidArgumentError(
          fmt::format("'{}' is not a metric", text));
    }
    const std::string canonical =
        parsed.is_metric()
            ? std::get<spec::MetricSpec>(parsed.value).Canonical()
            : std::get<spec::EventSpec>(parsed.value).Canonical();
    std::vector<std::string>& list =
        parsed.is_metric() ? request.metrics : request.events;
    std::vector<std::string>& keys =
        parsed.is_metric() ? request.metric_keys : request.event_keys;
    if (std::find(list.begin(), list.end(), canonical) == list.end()) {
      list.push_back(canonical);
      keys.push_back(KeyForCanonical(canonical));
    }
    return absl::OkStatus();
  };
  for (const std::string& s : specs) {
    UNCORE_RETURN_IF_ERROR(add(s, /*metric_only=*/false));
  }
  for (const std::string& s : metric_names) {
    UNCORE_RETURN_IF_ERROR(add(s, /*metric_only=*/true));
  }
  return request;
}

SessionOptions SessionOptionsFor(const Request& request,
                                 const Options& options) {
  SessionOptions o;
  o.events = request.events;
  o.metrics = request.metrics;
  o.backend = ResolvedBackend(options);
  o.sockets = options.sockets;
  o.sim_demo_traffic = options.sim_demo_traffic;
  o.output.clear();  // no report: the counters go to Google Benchmark
  return o;
}

// Why a session whose backend is `off` counts nothing.
std::string NotMeasuredReason(const Session& session,
                              const std::string& requested_backend) {
  if (requested_backend == "off") return "backend off";
  const Results r = session.Collect();
  std::string reason = common::Join(r.run.warnings, "; ");
  return reason.empty() ? "the backend counts nothing here" : reason;
}

// One published value of a measurement.
struct Value {
  enum class Kind {
    kCount,  // an event's count (times its scale)
    kRate,   // a rate metric: `value` is per second of the region
    kPlain,  // any other metric
  };
  std::string key;
  double value = 0;
  Kind kind = Kind::kCount;
  bool valid = true;
};

struct Measurement {
  bool ok = false;
  std::string error;  // why not ok
  bool simulated = false;
  double seconds = 0;         // the region's wall time
  std::vector<Value> values;  // in Request::keys() order
};

Measurement Extract(const Results& r, const Request& request) {
  Measurement m;
  m.simulated = r.run.simulated;
  if (!r.run.errors.empty()) {
    m.error = r.run.errors.front();
    return m;
  }
  const RegionResult* region = nullptr;
  for (const RegionResult& candidate : r.regions) {
    if (candidate.depth == 0 && candidate.path == kRegionName) {
      region = &candidate;
    }
  }
  if (region == nullptr || region->calls == 0) {
    m.error = "the measured region recorded nothing";
    return m;
  }
  if (r.events.size() < request.events.size() ||
      r.metrics.size() != request.metrics.size() ||
      region->inclusive.size() != r.events.size() ||
      region->metrics.size() != r.metrics.size()) {
    m.error = "the session's events do not match the request";
    return m;
  }
  m.seconds = static_cast<double>(region->wall_ns) * 1e-9;
  for (size_t i = 0; i < request.events.size(); ++i) {
    if (r.events[i].canonical != request.events[i]) {
      m.error = fmt::format("event {} was programmed as {}", request.events[i],
                            r.events[i].canonical);
      return m;
    }
    m.values.push_back(
        {request.event_keys[i],
         static_cast<double>(region->inclusive[i].total) * r.events[i].scale,
         Value::Kind::kCount, true});
  }
  for (size_t i = 0; i < request.metrics.size(); ++i) {
    const MetricValue& v = region->metrics[i];
    const std::string_view unit = r.metrics[i].unit;
    const bool rate = unit.size() >= 2 && unit.substr(unit.size() - 2) == "/s";
    m.values.push_back({request.metric_keys[i], v.value,
                        rate ? Value::Kind::kRate : Value::Kind::kPlain,
                        v.valid && std::isfinite(v.value)});
  }
  m.ok = true;
  return m;
}

std::string JoinLabels(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  return fmt::format("{}; {}", a, b);
}

}  // namespace

void SetOptions(Options options) {
  std::lock_guard<std::mutex> lock(OptionsMutex());
  GlobalOptions() = std::move(options);
}

Options GetOptions() {
  std::lock_guard<std::mutex> lock(OptionsMutex());
  return GlobalOptions();
}

absl::StatusOr<std::string> CounterName(std::string_view spec) {
  UNCORE_ASSIGN_OR_RETURN(spec::Spec parsed, spec::ParseSpec(spec));
  return KeyForCanonical(
      parsed.is_metric() ? std::get<spec::MetricSpec>(parsed.value).Canonical()
                         : std::get<spec::EventSpec>(parsed.value).Canonical());
}

// ---- ScopedCounters ----

struct ScopedCounters::Impl {
  explicit Impl(benchmark::State& s) : state(s) {}

  benchmark::State& state;
  Request request;
  std::unique_ptr<Session> session;  // while measuring
  std::string user_label;
  std::string uncore_label;  // set by Stop()
  bool paused = false;
  bool stopped = false;

  void Fail(std::string_view message) {
    const std::string text = fmt::format("uncore: {}", message);
    state.SkipWithError(text.c_str());
    stopped = true;
  }
};

ScopedCounters::ScopedCounters(benchmark::State& state,
                               const std::vector<std::string>& specs)
    : impl_(std::make_unique<Impl>(state)) {
  Impl& s = *impl_;
  // Uncore counts are socket-wide: one thread measures for all.
  if (state.thread_index() != 0 || state.error_occurred()) {
    s.stopped = true;
    return;
  }
  if (Session* active = Session::Active()) {
    if (active == g_flag_session.load(std::memory_order_acquire)) {
      // The extra run of --uncore_events: the flag's session measures it.
      s.stopped = true;
      return;
    }
    s.Fail(
        "another uncore::Session is active (an UNCORE_EVENTS or "
        "UNCORE_METRICS environment session counts too): unset those "
        "variables or stop that session to measure this benchmark");
    return;
  }
  absl::StatusOr<Request> request = MakeRequest(specs, {});
  if (!request.ok()) {
    s.Fail(common::StatusMessage(request.status()));
    return;
  }
  if (request->empty()) {
    s.Fail("ScopedCounters was given no event or metric spec");
    return;
  }
  s.request = *std::move(request);
  const Options options = GetOptions();
  SessionOptions session_options = SessionOptionsFor(s.request, options);
  const std::string backend = session_options.backend;
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Start(std::move(session_options));
  if (!session.ok()) {
    s.Fail(common::StatusMessage(session.status()));
    return;
  }
  if (!(*session)->measuring()) {
    s.uncore_label =
        "uncore: not measured: " + NotMeasuredReason(**session, backend);
    (*session)->Stop().IgnoreError();
    return;  // Stop() publishes the label
  }
  s.session = *std::move(session);
  RegionBegin(MeasuredRegion());
}

ScopedCounters::~ScopedCounters() { Stop(); }

void ScopedCounters::PauseTiming() {
  Impl& s = *impl_;
  s.state.PauseTiming();
  if (s.session != nullptr && !s.paused) {
    RegionEnd(MeasuredRegion());
    s.paused = true;
  }
}

void ScopedCounters::ResumeTiming() {
  Impl& s = *impl_;
  if (s.session != nullptr && s.paused) {
    RegionBegin(MeasuredRegion());
    s.paused = false;
  }
  s.state.ResumeTiming();
}

void ScopedCounters::Stop() {
  Impl& s = *impl_;
  if (s.stopped) return;
  s.stopped = true;
  if (s.session != nullptr) {
    if (!s.paused) RegionEnd(MeasuredRegion());
    s.paused = false;
    const Results results = s.session->Collect();
    const absl::Status stopped = s.session->Stop();
    s.session.reset();
    const Measurement m = Extract(results, s.request);
    if (!stopped.ok()) {
      s.uncore_label = "uncore: not measured: " + common::StatusMessage(stopped);
    } else if (!m.ok) {
      s.uncore_label = "uncore: not measured: " + m.error;
    } else {
      for (const Value& v : m.values) {
        if (!v.valid) continue;
        switch (v.kind) {
          case Value::Kind::kCount:
            s.state.counters[v.key] =
                benchmark::Counter(v.value, benchmark::Counter::kAvgIterations);
            break;
          case Value::Kind::kRate:
            // The total; Google Benchmark divides it by its own time.
            s.state.counters[v.key] = benchmark::Counter(
                v.value * m.seconds, benchmark::Counter::kIsRate,
                benchmark::Counter::kIs1000);
            break;
          case Value::Kind::kPlain:
            s.state.counters[v.key] = benchmark::Counter(v.value);
            break;
        }
      }
      if (m.simulated) s.uncore_label = std::string(kSimulatedLabel);
    }
  }
  const std::string label = JoinLabels(s.user_label, s.uncore_label);
  if (!label.empty()) s.state.SetLabel(label);
}

void ScopedCounters::SetLabel(std::string label) {
  Impl& s = *impl_;
  s.user_label = std::move(label);
  if (s.stopped) {
    s.state.SetLabel(JoinLabels(s.user_label, s.uncore_label));
  }
}

bool ScopedCounters::measuring() const {
  return impl_->session != nullptr && !impl_->paused;
}

Session* ScopedCounters::session() const { return impl_->session.get(); }

// ---- UNCORE_BENCHMARK_MAIN and --uncore_events ----

namespace {

// Statistics as Google Benchmark 1.7.1 computes them (src/statistics.cc).
double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double Median(const std::vector<double>& v) {
  if (v.size() < 3) return Mean(v);
  std::vector<double> copy(v);
  auto center = copy.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(copy.begin(), center, copy.end());
  if (v.size() % 2 == 1) return *center;
  auto center2 = copy.begin() + static_cast<std::ptrdiff_t>(v.size() / 2 - 1);
  std::nth_element(copy.begin(), center2, copy.end());
  return (*center + *center2) / 2.0;
}

double StdDev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double mean = Mean(v);
  double squares = 0;
  for (double x : v) squares += x * x;
  const double n = static_cast<double>(v.size());
  const double variance = n / (n - 1.0) * (squares / n - mean * mean);
  return variance > 0 ? std::sqrt(variance) : 0;
}

double Cv(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  return StdDev(v) / Mean(v);
}

std::optional<double> Statistic(std::string_view name,
                                const std::vector<double>& v) {
  if (name == "mean") return Mean(v);
  if (name == "median") return Median(v);
  if (name == "stddev") return StdDev(v);
  if (name == "cv") return Cv(v);
  return std::nullopt;
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

  // The MemoryManager's Start and Stop.
  void BeginExtraRun() {
    if (batch_reported_) {
      batch_.clear();
      divisor_ = 0;
      batch_reported_ = false;
    }
    start_error_.clear();
    absl::StatusOr<std::unique_ptr<Session>> session =
        Session::Start(SessionOptionsFor(request_, GetOptions()));
    if (!session.ok()) {
      start_error_ = common::StatusMessage(session.status());
      return;
    }
    session_ = *std::move(session);
    g_flag_session.store(session_.get(), std::memory_order_release);
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
      g_flag_session.store(nullptr, std::memory_order_release);
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
        // The hook's memory result is empty: no allocations were counted.
        run.memory_result = nullptr;
        run.allocs_per_iter = 0;
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
    if (run.error_occurred) return;
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
    const benchmark::IterationCount divisor =
        std::min(kExtraRunMaxIterations, per_thread);
    if (divisor <= 0) {
      AppendLabel(run, "uncore: not measured: no iterations");
      return;
    }
    divisor_ = divisor;
    for (const Value& v : m.values) {
      Publish(run, v.key, v.kind, v.valid ? PerIteration(v, divisor) : NAN);
    }
    if (m.simulated) AppendLabel(run, kSimulatedLabel);
  }

  void AnnotateAggregate(Run& run) {
    if (run.error_occurred) return;
    if (Statistic(run.aggregate_name, {}) == std::nullopt) return;
    if (!BatchMatches(run)) return;
    bool simulated = false;
    for (const Measurement& m : batch_) {
      if (!m.ok) {
        AppendLabel(run, "uncore: not measured: " + m.error);
        return;
      }
      simulated = simulated || m.simulated;
    }
    if (divisor_ <= 0) {
      AppendLabel(run,
                  "uncore: not measured: aggregates-only reporting hides the "
                  "iteration count the extra run's counts are divided by");
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

class ExtraRunHook : public benchmark::MemoryManager {
 public:
  explicit ExtraRunHook(FlagCounters* counters) : counters_(counters) {}
  void Start() override { counters_->BeginExtraRun(); }
  // 1.7.1 calls the deprecated Stop(Result*); Stop(Result&) is its
  // replacement, overridden alike.
  void Stop(Result* /*result*/) override { counters_->EndExtraRun(); }
  void Stop(Result& /*result*/) override { counters_->EndExtraRun(); }

 private:
  FlagCounters* counters_;
};

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
        if (run.error_occurred) {
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
      std::vector<std::string> specs = spec::SplitSpecList(*v);
      flags.events.insert(flags.events.end(), specs.begin(), specs.end());
    } else if (auto m = FlagValue(arg, "uncore_metrics", false)) {
      std::vector<std::string> names = spec::SplitSpecList(*m);
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

void PrintHelp() {
  benchmark::PrintDefaultHelp();
  std::fprintf(stdout,
               "          [--uncore_events=<spec>,...]\n"
               "          [--uncore_metrics=<metric>,...]\n"
               "          [--uncore_backend=auto|perf|direct|sim|off]\n"
               "  uncore counters of each benchmark, from an extra run of "
               "min(16, N) iterations\n"
               "  (see integrations/google_benchmark/uncore_benchmark.h)\n");
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
  const BenchmarkFlags benchmark_flags = ScanBenchmarkFlags(argc, argv);
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
  absl::StatusOr<Request> request = MakeRequest(flags->events, flags->metrics);
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
  ExtraRunHook hook(&counters);
  if (counters.not_measured().empty()) benchmark::RegisterMemoryManager(&hook);
  benchmark::RunSpecifiedBenchmarks(&display_reporter, file_reporter.get());
  benchmark::RegisterMemoryManager(nullptr);
  benchmark::Shutdown();
  return 0;
}

}  // namespace uncore::bench
