// uncore/events.h: name IvyTown uncore events and derived metrics, and see
// exactly how they are programmed.
//
//   #include <uncore/events.h>
//
//   absl::StatusOr<uncore::EventSpec> e =
//       uncore::ParseEventSpec("cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f");
//   if (!e.ok()) { /* e.status() says where and why, and what was meant */ }
//   absl::StatusOr<uncore::Encoding> enc = uncore::EncodeEvent(*e);
//   // enc->control == 0x00400334, enc->filters[0] is FILTER0 = 0x3e0000
//
//   for (const uncore::ivytown::EventDescriptor& ev :
//   uncore::ivytown::AllEvents()) ... const auto* m =
//   uncore::ivytown::FindMetric("MEM_BW_READS");
//
// The spec language is documented in README.md ("Event specs") and in
// sdk/spec/event_spec.h.  Uncore counters belong to a socket, not a thread:
// an event counts everything the socket's box sees.
//
// Guarantees: parsing and encoding never crash on any input and report bad
// input as absl::InvalidArgumentError; nothing here touches hardware.
#ifndef UNCORE_EVENTS_H_
#define UNCORE_EVENTS_H_

#include "sdk/common/status_macros.h"
#include "sdk/platforms/ivytown/box_descriptors.h"
#include "sdk/platforms/ivytown/event_catalog.h"
#include "sdk/platforms/ivytown/metrics.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"

namespace uncore {

using spec::CompiledMetric;
using spec::CompileExpression;
using spec::CompileMetric;
using spec::DecodeEvent;
using spec::EncodeEvent;
using spec::Encoding;
using spec::EventSpec;
using spec::FilterValue;
using spec::MetricSpec;
using spec::ParseEventSpec;
using spec::ParseSpec;
using spec::Spec;
using spec::SplitSpecList;

}  // namespace uncore

#endif  // UNCORE_EVENTS_H_
