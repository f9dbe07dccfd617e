#include "integrations/google_benchmark/internal.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
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
#include "sdk/spec/event_spec.h"
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

absl::StatusOr<CanonicalSpec> Canonicalize(std::string_view spec) {
  UNCORE_ASSIGN_OR_RETURN(spec::Spec parsed, spec::ParseSpec(spec));
  CanonicalSpec out;
  out.is_metric = parsed.is_metric();
  out.canonical = out.is_metric
                      ? std::get<spec::MetricSpec>(parsed.value).Canonical()
                      : std::get<spec::EventSpec>(parsed.value).Canonical();
  return out;
}

absl::StatusOr<Request> MakeRequest(
    const std::vector<std::string>& specs,
    const std::vector<std::string>& metric_names) {
  Request request;
  auto add = [&](std::string_view text, bool metric_only) -> absl::Status {
    const std::string_view stripped = common::StripWhitespace(text);
    CanonicalSpec parsed;
    if (metric_only) {
      UNCORE_ASSIGN_OR_RETURN(spec::MetricSpec metric,
                              spec::ParseMetricName(stripped));
      parsed = {metric.Canonical(), /*is_metric=*/true};
    } else {
      UNCORE_ASSIGN_OR_RETURN(parsed, Canonicalize(stripped));
    }
    const std::string& canonical = parsed.canonical;
    std::vector<std::string>& list =
        parsed.is_metric ? request.metrics : request.events;
    std::vector<std::string>& keys =
        parsed.is_metric ? request.metric_keys : request.event_keys;
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
