// libFuzzer target for the event-spec parser, the encoder and the metric
// expression compiler.  Any input must come back as a Status; an accepted
// event must encode without reserved bits and survive a canonical round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using uncore::spec::EventSpec;
  absl::StatusOr<uncore::spec::Spec> spec = uncore::spec::ParseSpec(text);
  if (spec.ok() && !spec->is_metric()) {
    const EventSpec& e = std::get<EventSpec>(spec->value);
    absl::StatusOr<uncore::spec::Encoding> enc = uncore::spec::EncodeEvent(e);
    if (enc.ok()) {
      Check((enc->control & ~enc->box->control_writable_mask) == 0);
      absl::StatusOr<EventSpec> again =
          uncore::spec::ParseEventSpec(e.Canonical());
      Check(again.ok());
      absl::StatusOr<uncore::spec::Encoding> enc2 =
          uncore::spec::EncodeEvent(*again);
      Check(enc2.ok() && enc2->control == enc->control &&
            enc2->filters == enc->filters);
    }
  } else if (spec.ok()) {
    (void)uncore::spec::CompileMetric(
        std::get<uncore::spec::MetricSpec>(spec->value));
  }
  absl::StatusOr<uncore::spec::CompiledMetric> expr =
      uncore::spec::CompileExpression(text, uncore::ivytown::BoxType::kCbo,
                                      {{"x", 1}});
  if (expr.ok()) {
    std::vector<double> values(expr->events.size(), 1.0);
    (void)expr->Evaluate(values, 1.0);
  }
  (void)uncore::spec::SplitSpecList(text);
  return 0;
}
