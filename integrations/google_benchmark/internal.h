// integrations/google_benchmark/internal.h: what ScopedCounters
// (scoped_counters.cc) and UNCORE_BENCHMARK_MAIN (benchmark_main.cc) share:
// the request (specs and counter names), the session options, and the
// extraction of a measurement from a session's results.  Not installed;
// tests may include it.
#ifndef UNCORE_INTEGRATIONS_GOOGLE_BENCHMARK_INTERNAL_H_
#define UNCORE_INTEGRATIONS_GOOGLE_BENCHMARK_INTERNAL_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "uncore/benchmark.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore::bench::internal {

// The name of the region every measurement here opens.
inline constexpr std::string_view kRegionName = "google benchmark";
inline constexpr std::string_view kSimulatedLabel = "uncore: SIMULATED";

RegionId MeasuredRegion();

// The session the --uncore_events flag has open during an extra run
// (nullptr outside one); a ScopedCounters that finds it active stays idle.
Session* FlagSession();
void SetFlagSession(Session* session);

// The ScopedCounters measuring now, as a function that makes it give up its
// session: counting nothing, publishing nothing.  On Google Benchmark 1.9
// the --uncore_events hook (ProfilerManager::AfterSetupStart) comes at the
// extra run's loop, after the benchmark's ScopedCounters started its
// session; the hook makes it yield, as it stays idle when the flag's
// session starts first (1.7, 1.8).  `yield` is set by ScopedCounters
// (empty: none measuring) and called from the extra run's thread.
void SetScopedCountersYield(std::function<void()> yield);
// Calls and clears the registered yield; false when there is none.
bool YieldScopedCounters();

// The backend `options` asks for: its own, else UNCORE_BACKEND, else "auto".
std::string ResolvedBackend(const Options& options);

// The platform the sessions speak: UNCORE_PLATFORM, else "" (the session
// decides).
std::string ResolvedPlatform();

// "uncore." and `canonical` with '/' as '.' and no trailing '/'.
std::string KeyForCanonical(std::string_view canonical);

// The specs of a measurement, deduplicated by their canonical spelling on
// the session's platform, with their counter names.
struct Request {
  // Events: their canonical spelling (Results::events' `canonical`, which
  // the session takes back as a spec).
  std::vector<std::string> events;
  std::vector<std::string> event_keys;
  // Metrics (and composites) as given, and whether they go to the
  // session's events list (a spec among `specs`) or its metrics list.
  std::vector<std::string> metrics;
  std::vector<bool> metric_is_spec;
  std::vector<std::string> metric_keys;

  bool empty() const { return events.empty() && metrics.empty(); }
  std::vector<std::string> keys() const;
};

// `specs`: events or metrics; `metric_names`: metrics only, "metric/" is
// optional (as in UNCORE_METRICS).  Resolved as the session `options`
// describe resolves them (runtime::ResolveNames), on any platform.
absl::StatusOr<Request> MakeRequest(
    const std::vector<std::string>& specs,
    const std::vector<std::string>& metric_names, const Options& options);

// A session that counts `request` and writes no report.
SessionOptions SessionOptionsFor(const Request& request,
                                 const Options& options);

// Why a session that is not measuring counts nothing.
std::string NotMeasuredReason(const Session& session,
                              const std::string& requested_backend);

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

// The kRegionName region's values in `r`.
Measurement Extract(const Results& r, const Request& request);

// "a; b", or whichever is not empty.
std::string JoinLabels(std::string_view a, std::string_view b);

// The statistic `name` ("mean", "median", "stddev", "cv") of `v`, computed
// as Google Benchmark 1.7.1 computes its aggregates (src/statistics.cc);
// nullopt for other names.  google_benchmark_contract_test checks that the
// installed Google Benchmark agrees.
std::optional<double> Statistic(std::string_view name,
                                const std::vector<double>& v);

}  // namespace uncore::bench::internal

#endif  // UNCORE_INTEGRATIONS_GOOGLE_BENCHMARK_INTERNAL_H_
