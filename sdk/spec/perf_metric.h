// Formulas of the generated platforms (sdk/platforms/perfmon/): compile a
// composite name or a vendor metric, resolved by ResolveOnPlatform, into the
// CompiledMetric a session evaluates per region.
//
//   absl::StatusOr<Resolution> r =
//       ResolveOnPlatform(*FindPlatform("spr"), "memory_bandwidth_read");
//   PerfMetricContext context;               // after the counters are planned
//   context.num_packages = 2;
//   absl::StatusOr<CompiledMetric> m = CompileResolution(*r, context);
//   // m->events == ToPerfEventSpecs(*r); m->unit == "MB/s"
//   double mb_per_s = m->Evaluate({cas_reads}, /*elapsed_seconds=*/0.5);
//
// The formulas are perf's metric language as the vendor data writes it:
// numbers (1e6 too), + - * / and parentheses, event names (an event with
// extra terms is written `cha@NAME\,config1\=0x40433@`), `duration_time`
// (the region's seconds), `#num_packages`, `#num_cores` and
// `source_count(EVENT)` (the PMU instances per socket that count EVENT).
// The metric's scale unit ("1MB/s", "100%") scales the value and names its
// unit.  The SDK's MEM_BW_READS / _WRITES / _TOTAL are bytes, reported per
// second (per_second), as on IvyTown.  A composite is the sum of its parts.
//
// Guarantees: pure; errors say which metric, which platform and why (a
// metric that reads core events is refused: the SDK counts uncore PMUs).
#ifndef UNCORE_SDK_SPEC_PERF_METRIC_H_
#define UNCORE_SDK_SPEC_PERF_METRIC_H_

#include <cstddef>
#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "sdk/spec/metric_expression.h"
#include "sdk/spec/platform_catalog.h"

namespace uncore::spec {

struct PerfMetricContext {
  int num_packages = 1;  // sockets counted
  int num_cores = 1;     // online CPUs
  // PMU instances per socket that count resolution.events[i]; 1 when unset.
  std::function<int(size_t event)> source_count;
};

// A kComposite or kMetric resolution as a formula over
// ToPerfEventSpecs(resolution) (in that order).  InvalidArgument for a
// kEvent resolution, FailedPrecondition for a metric that needs core events.
absl::StatusOr<CompiledMetric> CompileResolution(
    const Resolution& resolution, const PerfMetricContext& context);

// "1MB/s" -> {1, "MB/s"}, "100%" -> {100, "%"}, "1B" -> {1, "bytes"}.
struct ScaleUnit {
  double scale = 1.0;
  std::string unit;
};
ScaleUnit ParseScaleUnit(std::string_view text);

}  // namespace uncore::spec

#endif  // UNCORE_SDK_SPEC_PERF_METRIC_H_
