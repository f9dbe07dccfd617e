#include "integrations/google_benchmark/internal.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/runtime/name_resolution.h"
#include "uncore/events.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore::bench::internal {
namespace {

std::atomic<Session*> g_flag_session{nullptr};

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

}  // namespace

RegionId MeasuredRegion() {
  static const RegionId id = InternRegionName(kRegionName);
  return id;
}

Session* FlagSession() {
  return g_flag_session.load(std::memory_order_acquire);
}

void SetFlagSession(Session* session) {
  g_flag_session.store(session, std::memory_order_release);
}

namespace {

std::mutex& YieldMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

std::function<void()>& Yield() {
  static auto* yield = new std::function<void()>;
  return *yield;
}

}  // namespace

void SetScopedCountersYield(std::function<void()> yield) {
  std::lock_guard<std::mutex> lock(YieldMutex());
  Yield() = std::move(yield);
}

bool YieldScopedCounters() {
  std::function<void()> yield;
  {
    std::lock_guard<std::mutex> lock(YieldMutex());
    yield = std::exchange(Yield(), nullptr);
  }
  if (!yield) return false;
  yield();
  return true;
}

std::vector<std::string> Request::keys() const {
  std::vector<std::string> all = event_keys;
  all.insert(all.end(), metric_keys.begin(), metric_keys.end());
  return all;
}

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

std::string ResolvedPlatform() {
  if (const char* env = std::getenv("UNCORE_PLATFORM")) {
    return std::string(common::StripWhitespace(env));
  }
  return "";
}

absl::StatusOr<Request> MakeRequest(
    const std::vector<std::string>& specs,
    const std::vector<std::string>& metric_names, const Options& options) {
  const std::string backend = ResolvedBackend(options);
  // The names as the session will resolve them: the same platform, the
  // same function.
  UNCORE_ASSIGN_OR_RETURN(
      const runtime::SessionMachine machine,
      runtime::ReadSessionMachine(ResolvedPlatform(), backend,
                                  /*on_hardware=*/true));
  runtime::NameRequest names;
  for (const std::string& s : specs) {
    names.events.emplace_back(common::StripWhitespace(s));
  }
  for (const std::string& s : metric_names) {
    names.metrics.emplace_back(common::StripWhitespace(s));
  }
  names.backend = backend;
  names.events_list = "";
  names.metrics_list = "";
  UNCORE_ASSIGN_OR_RETURN(
      const runtime::ResolvedNames resolved,
      runtime::ResolveNames(machine.platform, names, machine.pmus_or()));
  Request request;
  // The session numbers the events of its events list first, in order,
  // then the metrics' events, and lists the metrics given as specs before
  // the metric names: so the events go first, then the metrics in input
  // order (specs before names), and Extract finds each at its place.
  std::vector<std::string> metric_canonicals;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < resolved.inputs.size(); ++i) {
      const runtime::ResolvedInput& in = resolved.inputs[i];
      const bool is_spec = i < names.events.size();
      if (in.is_metric != (pass == 1)) continue;
      if (!in.is_metric) {
        if (std::find(request.events.begin(), request.events.end(),
                      in.canonical) == request.events.end()) {
          request.events.push_back(in.canonical);
          request.event_keys.push_back(KeyForCanonical(in.canonical));
        }
        continue;
      }
      if (std::find(metric_canonicals.begin(), metric_canonicals.end(),
                    in.canonical) != metric_canonicals.end()) {
        continue;
      }
      metric_canonicals.push_back(in.canonical);
      request.metrics.push_back(in.text);
      request.metric_is_spec.push_back(is_spec);
      request.metric_keys.push_back(KeyForCanonical(in.canonical));
    }
  }
  return request;
}

SessionOptions SessionOptionsFor(const Request& request,
                                 const Options& options) {
  SessionOptions o;
  o.events = request.events;
  for (size_t i = 0; i < request.metrics.size(); ++i) {
    (request.metric_is_spec[i] ? o.events : o.metrics)
        .push_back(request.metrics[i]);
  }
  o.backend = ResolvedBackend(options);
  o.platform = ResolvedPlatform();
  o.sockets = options.sockets;
  o.sim_demo_traffic = options.sim_demo_traffic;
  o.output.clear();  // no report: the counters go to Google Benchmark
  return o;
}

std::string NotMeasuredReason(const Session& session,
                              const std::string& requested_backend) {
  if (requested_backend == "off") return "backend off";
  const Results r = session.Collect();
  std::string reason = common::Join(r.run.warnings, "; ");
  return reason.empty() ? "the backend counts nothing here" : reason;
}

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
  // The time the metrics' rates divide by (the counters' own window).
  m.seconds = static_cast<double>(region->rate_window_ns()) * 1e-9;
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
    m.values.push_back(
        {request.metric_keys[i], v.value,
         r.metrics[i].per_second ? Value::Kind::kRate : Value::Kind::kPlain,
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

std::optional<double> Statistic(std::string_view name,
                                const std::vector<double>& v) {
  if (name == "mean") return Mean(v);
  if (name == "median") return Median(v);
  if (name == "stddev") return StdDev(v);
  if (name == "cv") return Cv(v);
  return std::nullopt;
}

}  // namespace uncore::bench::internal
