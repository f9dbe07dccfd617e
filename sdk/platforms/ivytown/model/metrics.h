// Derived metrics: the manual's 93 "Common Metrics (Derived Events)", as
// expressions over events (with their filters) and elapsed time.
//
//   const MetricDescriptor* m = FindMetric("MEM_BW_READS");
//   // m->expression == "{imc/CAS_COUNT.RD} * 64", m->unit == "bytes"
//
// Expression language (parsed by sdk/spec/metric_expression.h):
//   - numbers (decimal, hex, scientific), + - * / and parentheses;
//   - `{SPEC}`: the count of an event spec, e.g. `{imc/CAS_COUNT.RD}` or
//     `{cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182}`;
//   - a bare NAME: another metric of the same box (or of any box if unique);
//   - `ELAPSED_SECONDS`: wall-clock length of the measured interval;
//   - `round(x)`;
//   - `$param`: a metric parameter (e.g. `$x` for a rank or node id),
//     substituted before parsing; MetricDescriptor::params lists them with
//     their defaults.  The value is written in decimal, since it may complete
//     a name (`POWER_CKE_CYCLES.RANK$x` -> `RANK3`).  A metric that refers to
//     parameterised metrics declares the same parameters (same defaults) and
//     its values are passed down to them.
// Percentages (PCT_*, *_PCT) are scaled to percent (x 100) with unit "%".
// Where the manual's formula is wrong (digest section 8, items 20-21) the
// expression is the corrected one, `manual_formula` keeps what the manual
// printed and `fix` says what changed and why.
//
// Guarantees: pure data, no allocation.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_METRICS_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_METRICS_H_

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "sdk/platforms/ivytown/model/box_descriptors.h"

namespace uncore::ivytown {

struct MetricParameter {
  std::string_view name;  // without the '$'
  int64_t default_value = 0;
  int64_t min_value = 0;
  int64_t max_value = 0;
  std::string_view meaning;

  constexpr bool present() const { return !name.empty(); }
};

struct MetricDescriptor {
  std::string_view name;  // manual spelling, e.g. "MEM_BW_READS"
  BoxType box;
  std::string_view description;  // our own short words
  std::string_view expression;   // see the language above
  std::string_view unit;         // "bytes", "MB", "%", "ratio", "cycles",
                                 // "entries", "count", "GT/s"
  // True for byte and count totals whose rate (per second) is meaningful,
  // e.g. bandwidths; reports show both the total and the rate.
  bool rate_per_second = false;
  std::array<MetricParameter, 2> params{};
  std::string_view manual_formula;  // as the manual printed it
  std::string_view fix;             // empty unless corrected: what and why
  std::string_view manual_line;     // "L2157" in the manual's text file
};

// All 93 metrics, grouped by box in BoxType order.
std::span<const MetricDescriptor> AllMetrics();
// Intel's perf metric name for an IvyTown metric that means the same.
struct PerfMetricName {
  std::string_view perf_name;  // "memory_bandwidth_read"
  std::string_view metric;     // "MEM_BW_READS"
};
std::span<const PerfMetricName> PerfMetricNames();

// Lookup by name, case-insensitive.  `name` may be qualified with a box
// ("r2pcie.CYC_USED_DNEVEN"), or one of PerfMetricNames(); an unqualified
// name that several boxes define returns nullptr and sets *ambiguous (if
// given) to true.
const MetricDescriptor* FindMetric(std::string_view name,
                                   bool* ambiguous = nullptr);

}  // namespace uncore::ivytown

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_METRICS_H_
