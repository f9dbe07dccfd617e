// Metric expressions: compile a derived metric (or any expression in the metric
// language of sdk/platforms/ivytown/model/metrics.h) into the events it needs and a
// small evaluator.
//
//   auto spec = ParseSpec("metric/MEM_BW_TOTAL");
//   absl::StatusOr<CompiledMetric> m =
//   CompileMetric(std::get<MetricSpec>(spec->value));
//   // m->events: imc/CAS_COUNT.RD, imc/CAS_COUNT.WR
//   double bytes = m->Evaluate({reads, writes}, /*elapsed_seconds=*/1.5);
//
// References to other metrics are expanded in place; each distinct event
// (by canonical spelling) appears once in `events`, in first-use order.
// Division by zero evaluates to NaN ("not available"), never traps.
//
// Guarantees: compiling allocates; Evaluate never locks and allocates only
// for expressions of more than 128 operations (no table metric has that many).
#ifndef UNCORE_SDK_SPEC_METRIC_EXPRESSION_H_
#define UNCORE_SDK_SPEC_METRIC_EXPRESSION_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/platforms/ivytown/model/metrics.h"
#include "sdk/spec/event_spec.h"

namespace uncore::spec {

class CompiledMetric {
 public:
  struct Node {
    enum class Op : uint8_t {
      kConstant,
      kEvent,    // events[index]
      kElapsed,  // ELAPSED_SECONDS
      kAdd,
      kSub,
      kMul,
      kDiv,
      kNegate,
      kRound,
    };
    Op op = Op::kConstant;
    double constant = 0;
    int index = -1;  // event index, or the operand of kNegate/kRound
    int lhs = -1;
    int rhs = -1;
  };

  const ivytown::MetricDescriptor* metric = nullptr;  // nullptr: ad hoc
  // The metric's name with the parameters given ("NAME:x=1"), or the
  // expression.
  std::string name;
  std::string unit;        // from the descriptor ("" for ad hoc)
  std::string expression;  // with parameters substituted
  // The value is divided by the region's seconds for reports (a bandwidth
  // in bytes becomes bytes/s): the descriptor's rate_per_second, or the
  // SDK's cross-platform MEM_BW_* on a generated platform.
  bool per_second = false;
  std::vector<EventSpec> events;
  std::vector<Node> nodes;
  int root = -1;

  // `event_values[i]` is the count of `events[i]`.
  double Evaluate(std::span<const double> event_values,
                  double elapsed_seconds) const;
};

// Compiles a parsed metric spec (parameters from the spec, else defaults).
absl::StatusOr<CompiledMetric> CompileMetric(const MetricSpec& spec);

// Compiles an expression.  Bare metric names are looked up in `context_box`
// first, then among all boxes.  `params` supplies `$name` values.
absl::StatusOr<CompiledMetric> CompileExpression(
    std::string_view expression, ivytown::BoxType context_box,
    const std::vector<std::pair<std::string, int64_t>>& params = {});

}  // namespace uncore::spec

#endif  // UNCORE_SDK_SPEC_METRIC_EXPRESSION_H_
