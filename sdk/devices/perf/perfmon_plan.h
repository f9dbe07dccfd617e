// The counting plan for names on a generated perf-only platform
// (sdk/spec/platform_catalog.h): which kernel PMU instances each resolved
// event opens, with which perf_event_attr config words, and what one
// snapshot costs.
//
//   absl::StatusOr<PmuCatalog> pmus = DiscoverPmus("/sys");
//   absl::StatusOr<spec::Resolution> r =
//       spec::ResolveOnPlatform(*spec::FindPlatform("spr"), "imc/CAS_COUNT.RD");
//   absl::StatusOr<PerfmonPlan> plan = PlanPerfmon({*r}, *pmus);
//   // plan->counters: uncore_imc_0 .. uncore_imc_11, config 0xcf05 each
//   // plan->group_reads: PMU instances x sockets (one group read each)
//
// Instances: `uncore_imc` resolves to every `uncore_imc` and
// `uncore_imc_<digits>` PMU (never `uncore_imc_free_running_*`); a spec that
// named `uncore_imc_3` opens that one only.  Terms are encoded with each
// PMU's own format/ fields, so a field the kernel lacks is an error naming
// the PMU and its fields.  config/config1/config2 terms are ORed into the
// words as given.
//
// Guarantees: pure function of its inputs; no files read, no events opened.
#ifndef UNCORE_SDK_DEVICES_PERF_PERFMON_PLAN_H_
#define UNCORE_SDK_DEVICES_PERF_PERFMON_PLAN_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/spec/platform_catalog.h"

namespace uncore::devices::perf {

struct PlannedCounter {
  size_t resolution = 0;   // index into the resolutions given
  std::string event_name;  // vendor name, or the raw terms
  const Pmu* pmu = nullptr;
  PerfConfig config;
  size_t event = 0;  // index of the event over every resolution's events
};

struct PerfmonPlan {
  std::vector<PlannedCounter> counters;
  std::vector<std::string> pmus;  // distinct PMU instances, in order of use
  // Group reads one snapshot costs: one per PMU instance that carries an
  // event, per socket it is opened on.  PMUs with no event are not read.
  int group_reads = 0;
};

// The PMU instances `pmu` (a prefix such as "uncore_imc") names in
// `catalog`, in numeric order; only `<pmu>_<instance>` when set.
std::vector<const Pmu*> PmuInstances(const PmuCatalog& catalog,
                                     std::string_view pmu,
                                     std::optional<int> instance);

// The free-running PMUs of `pmu` (`<pmu>_free_running_<n>`, e.g. the
// kernel's uncore_imc_free_running_0 with its read/write bandwidth aliases),
// in numeric order: counters that need no programming and no general
// counter.
std::vector<const Pmu*> FreeRunningPmus(const PmuCatalog& catalog,
                                        std::string_view pmu);

// The plan for every event of every resolution, made by the planner the
// perf backend runs (PlanPerfCounters over spec::ToPerfEventSpecs: what a
// session would open); NotFound when a PMU is absent (the message says
// which platform it belongs to), InvalidArgument when a term does not fit
// the PMU's formats.
absl::StatusOr<PerfmonPlan> PlanPerfmon(
    const std::vector<spec::Resolution>& resolutions, const PmuCatalog& catalog,
    std::string_view platform_name = "");

}  // namespace uncore::devices::perf

#endif  // UNCORE_SDK_DEVICES_PERF_PERFMON_PLAN_H_
