// uncore::bench::ScopedCounters (uncore/benchmark.h): the stable part of
// the Google Benchmark integration, which uses only Google Benchmark's
// public State API.
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "integrations/google_benchmark/internal.h"
#include "sdk/common/status_macros.h"
#include "uncore/benchmark.h"
#include "uncore/events.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore::bench {
namespace {

using internal::Extract;
using internal::JoinLabels;
using internal::kSimulatedLabel;
using internal::MakeRequest;
using internal::MeasuredRegion;
using internal::Measurement;
using internal::NotMeasuredReason;
using internal::Request;
using internal::SessionOptionsFor;
using internal::Value;

// State::SkipWithError takes a const char* in Google Benchmark 1.7, a
// const std::string& from 1.8.
template <typename State>
void SkipWithError(State& state, const std::string& message) {
  if constexpr (requires { state.SkipWithError(message); }) {
    state.SkipWithError(message);
  } else {
    state.SkipWithError(message.c_str());
  }
}

// What a rate metric's `total` over the region is published as: Google
// Benchmark divides a kIsRate counter by its time (CPU time summed over
// threads, or real time), and from 1.9.5 on by that time divided by the
// thread count; the total thread 0 publishes is then divided by the
// threads, so that every version shows the same rate.
double RateTotal(double total, int threads) {
#if UNCORE_GBENCH_RATE_OVER_THREAD_TIME
  return threads > 0 ? total / threads : total;
#else
  static_cast<void>(threads);
  return total;
#endif
}

std::mutex& OptionsMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

Options& GlobalOptions() {
  static auto* options = new Options;
  return *options;
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
  UNCORE_ASSIGN_OR_RETURN(const Request request,
                          MakeRequest({std::string(spec)}, {}, GetOptions()));
  const std::vector<std::string> keys = request.keys();
  if (keys.empty()) return absl::InvalidArgumentError("no spec given");
  return keys.front();
}

struct ScopedCounters::Impl {
  explicit Impl(benchmark::State& s) : state(s) {}

  benchmark::State& state;
  Request request;
  std::unique_ptr<Session> session;  // while measuring
  std::string user_label;
  std::string uncore_label;  // set by Stop()
  bool paused = false;
  bool stopped = false;

  // For the --uncore_events hook (internal::YieldScopedCounters): ends
  // the measurement without publishing anything.
  void Yield() {
    if (session == nullptr) return;
    if (!paused) RegionEnd(MeasuredRegion());
    paused = false;
    session->Stop().IgnoreError();
    session.reset();
    stopped = true;
  }

  void Fail(std::string_view message) {
    const std::string text = fmt::format("uncore: {}", message);
    SkipWithError(state, text);
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
    if (active == internal::FlagSession()) {
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
  absl::StatusOr<Request> request = MakeRequest(specs, {}, GetOptions());
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
  internal::SetScopedCountersYield([impl = impl_.get()] { impl->Yield(); });
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
    internal::SetScopedCountersYield(nullptr);
    if (!s.paused) RegionEnd(MeasuredRegion());
    s.paused = false;
    const Results results = s.session->Collect();
    const absl::Status stopped = s.session->Stop();
    s.session.reset();
    const Measurement m = Extract(results, s.request);
    if (!stopped.ok()) {
      s.uncore_label =
          "uncore: not measured: " + common::StatusMessage(stopped);
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
            // The total; Google Benchmark divides it by its own time, from
            // 1.9.5 on divided by the thread count (RateTotal).
            s.state.counters[v.key] = benchmark::Counter(
                RateTotal(v.value * m.seconds, s.state.threads()),
                benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
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

}  // namespace uncore::bench
