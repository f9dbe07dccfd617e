// libFuzzer target for perf's metric language as the vendor tables write
// it (sdk/spec/perf_metric.h): CompileResolution over a made-up metric, and
// ParseScaleUnit.
//
// The input is a metric record of sdk/platforms/perfmon/ in three parts:
//   line 1   its uncore events, separated by spaces
//            ("UNC_CHA_TOR_INSERTS.IA_MISS,config1=0x40433 UNC_CHA_CLOCKTICKS")
//   line 2   its scale unit ("1MB/s", "100%")
//   the rest its formula ("UNC_CHA_CLOCKTICKS / duration_time * 1e-9")
//
// Properties: compiling never crashes (a formula is an error, not an
// abort); a compiled metric's nodes only refer to nodes made before them
// and to its own events, its root is a node, and evaluating it with any
// counts gives a value (NaN at worst), never a trap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/common/text.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/spec/metric_expression.h"
#include "sdk/spec/perf_metric.h"
#include "sdk/spec/platform_catalog.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using uncore::spec::CompiledMetric;

void CheckCompiled(const CompiledMetric& m) {
  const int n = static_cast<int>(m.nodes.size());
  FUZZ_CHECK(m.root >= 0 && m.root < n);
  const int events = static_cast<int>(m.events.size());
  for (int i = 0; i < n; ++i) {
    const CompiledMetric::Node& node = m.nodes[static_cast<size_t>(i)];
    using Op = CompiledMetric::Node::Op;
    switch (node.op) {
      case Op::kConstant:
      case Op::kElapsed:
        break;
      case Op::kEvent:
        FUZZ_CHECK(node.index >= 0 && node.index < events);
        break;
      case Op::kNegate:
      case Op::kRound:
        FUZZ_CHECK(node.index >= 0 && node.index < i);
        break;
      case Op::kAdd:
      case Op::kSub:
      case Op::kMul:
      case Op::kDiv:
        FUZZ_CHECK(node.lhs >= 0 && node.lhs < i);
        FUZZ_CHECK(node.rhs >= 0 && node.rhs < i);
        break;
    }
  }
  std::vector<double> counts(m.events.size(), 1.0);
  (void)m.Evaluate(counts, 1.0);
  std::fill(counts.begin(), counts.end(), 0.0);
  (void)m.Evaluate(counts, 0.0);
  (void)m.Evaluate({}, 2.5);  // fewer counts than events: NaN, not a read
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)uncore::spec::ParseScaleUnit(text);

  const size_t first = text.find('\n');
  const std::string_view events_line = text.substr(0, first);
  std::string_view rest = first == std::string_view::npos
                              ? std::string_view()
                              : text.substr(first + 1);
  const size_t second = rest.find('\n');
  const std::string_view scale_unit = rest.substr(0, second);
  const std::string_view expr = second == std::string_view::npos
                                    ? std::string_view()
                                    : rest.substr(second + 1);

  const uncore::spec::ScaleUnit su = uncore::spec::ParseScaleUnit(scale_unit);
  FUZZ_CHECK(su.unit.size() <= scale_unit.size() || su.unit == "bytes");

  uncore::perfmon::Metric metric;
  metric.name = "fuzz_metric";
  metric.expr = expr;
  metric.scale_unit = scale_unit;
  metric.uncore_events = events_line;
  metric.sdk_defined = (size & 1) != 0;

  uncore::spec::Resolution resolution;
  resolution.kind = uncore::spec::Resolution::Kind::kMetric;
  resolution.input = "metric/fuzz_metric";
  resolution.name = "fuzz_metric";
  resolution.metric = &metric;
  // One resolved event per entry, as ResolveOnPlatform makes them.
  const size_t num_events =
      uncore::common::Split(events_line, ' ', /*skip_empty=*/true).size();
  for (size_t i = 0; i < num_events; ++i) {
    uncore::spec::ResolvedEvent e;
    e.pmu = "uncore_cha";
    e.terms = "event=0x35,umask=0xc8177e01";
    resolution.events.push_back(e);
  }

  uncore::spec::PerfMetricContext context;
  context.num_packages = 2;
  context.num_cores = 112;
  context.source_count = [](size_t event) {
    return static_cast<int>(event % 4) + 1;
  };
  absl::StatusOr<CompiledMetric> m =
      uncore::spec::CompileResolution(resolution, context);
  if (m.ok()) {
    FUZZ_CHECK(m->events.size() == resolution.events.size());
    FUZZ_CHECK(m->expression == expr);
    FUZZ_CHECK(m->per_second == metric.sdk_defined);
    CheckCompiled(*m);
  }

  // A composite of the same events: their sum.
  resolution.kind = uncore::spec::Resolution::Kind::kComposite;
  absl::StatusOr<CompiledMetric> sum =
      uncore::spec::CompileResolution(resolution, context);
  if (sum.ok() && !resolution.events.empty()) {
    CheckCompiled(*sum);
    std::vector<double> ones(sum->events.size(), 1.0);
    FUZZ_CHECK(sum->Evaluate(ones, 1.0) ==
               static_cast<double>(resolution.events.size()));
  }
  return 0;
}
