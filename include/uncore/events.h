// uncore/events.h: name IvyTown uncore events and derived metrics, and see
// exactly how they are programmed.  Nothing here touches hardware.
//
//   #include <uncore/events.h>
//
//   absl::StatusOr<uncore::EventEncoding> e =
//       uncore::EncodeEvent("cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f");
//   if (!e.ok()) { /* e.status(): where and why, and the closest names */ }
//   // e->control == 0x00400334; e->filters[0].register_name ==
//   // "Cn_MSR_PMON_BOX_FILTER", e->filters[0].value == 0x003e0000
//
//   for (const uncore::CatalogEvent& ev : uncore::ListEvents("imc")) ...
//   absl::StatusOr<uncore::MetricDefinition> m =
//       uncore::DescribeMetric("MEM_BW_TOTAL");  // m->events: the specs
//
// The spec language is in docs/regions.md ("Event specs"): `imc/CAS_COUNT.RD`,
// `cbo[0-3]/CLOCKTICKS`, `uncore_imc/event=0x04,umask=0x03/`,
// `metric/MEM_BW_READS`, `msr/tsc/` (any other perf PMU).  Uncore counters
// belong to a socket, not a thread: an event counts everything its box sees.
//
// Guarantees: every function never crashes on any input and reports bad
// input as absl::InvalidArgumentError quoting the spec, with the column
// where it went wrong; results are plain values.
#ifndef UNCORE_EVENTS_H_
#define UNCORE_EVENTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace uncore {

// What an event spec names.
enum class EventKind {
  kBoxEvent,      // an IvyTown box event, named or raw (`imc/event=0x04`)
  kFixedCounter,  // `ubox/UCLK`, `imc/DCLK`
  kPerfEvent,     // any other perf PMU (`msr/tsc/`): the perf backend
                  // encodes it from the PMU's sysfs `format/` on the machine
};

// One filter (or match/mask) register value an event needs.
struct FilterSetting {
  std::string register_name;  // the manual's: "Cn_MSR_PMON_BOX_FILTER"
  uint64_t value = 0;         // the register value (0 outside `mask`)
  uint64_t mask = 0;          // the bits this event sets: two events that
                              // set them differently cannot count together
};

// An event spec resolved to the register values that program it.
struct EventEncoding {
  std::string spec;       // as given
  std::string canonical;  // a normalised spelling that parses back to it
  EventKind kind = EventKind::kBoxEvent;
  std::string box;    // "cbo", "imc", ...; "" for kPerfEvent
  std::string pmu;    // kPerfEvent: the perf PMU ("msr"); else ""
  std::string event;  // the catalog name ("LLC_LOOKUP"); "" when raw
  std::vector<std::string> umasks;  // named unit masks ("DATA_READ")
  // The counter control register value while it counts (enable bit set):
  // the general counter's control, or the fixed counter's.  0 for
  // kPerfEvent.
  uint64_t control = 0;
  std::vector<FilterSetting> filters;
  std::vector<int> counters;       // general counters that may hold it; empty
                                   // for a fixed counter and for kPerfEvent
  int counter_width = 0;           // bits of the box's counters (44 or 48)
  std::vector<int> instances;      // selected box instances; empty: all
  int box_instances = 0;           // instances of the box on a socket (at most)
  std::vector<std::string> notes;  // facts worth telling (a raw code not in
                                   // the catalog, an unprogrammable filter)
};

// Parses and encodes one event spec.  A metric spec is InvalidArgument.
absl::StatusOr<EventEncoding> EncodeEvent(std::string_view spec);

enum class SpecKind { kEvent, kMetric };
// Parses `spec` and says whether it names an event or a metric.
absl::StatusOr<SpecKind> ClassifySpec(std::string_view spec);

// Splits a user list "a,b;c" into specs, honouring the commas inside
// `pmu/a=1,b=2/` and `box/EV:m1=1,m2=2` (as UNCORE_EVENTS does).
std::vector<std::string> SplitSpecList(std::string_view list);

// One catalog event with one of its unit masks (or none): a row of
// `uncore list`.
struct CatalogEvent {
  std::string spec;   // the spec that names it: "imc/CAS_COUNT.RD"
  std::string box;    // "imc"
  std::string event;  // "CAS_COUNT"
  std::string umask;  // "RD"; "" when the event has no unit masks
  uint8_t code = 0;   // ev_sel
  uint8_t umask_value = 0;
  bool extended = false;             // needs the extra select bit (PCU, QPI)
  uint64_t control = 0;              // counter control value, enable bit set
  std::vector<int> counters;         // general counters that may count it
  std::vector<std::string> filters;  // filter fields it needs set
                                     // ("filter_opc"), kernel spelling
  std::string description;
};

// Catalog events.  `pattern` (case-insensitive): "" for all, a box name
// ("imc", "cbox") for that box's, else a part of the spec
// ("CAS_COUNT", "cbo/TOR").
std::vector<CatalogEvent> ListEvents(std::string_view pattern = "");

// A derived metric, compiled.
struct MetricDefinition {
  std::string spec;  // canonical: "metric/imc.MEM_BW_TOTAL"
  std::string name;  // "MEM_BW_TOTAL"
  std::string box;   // "imc"
  std::string description;
  std::string expression;           // events as {SPEC}, parameters substituted
  std::string unit;                 // "bytes", "%", "ratio", "cycles", ...
  bool rate_per_second = false;     // reports also show it per second
  std::vector<std::string> events;  // canonical specs of the events it
                                    // counts, in first-use order
  std::string fix;  // "" unless the manual's formula was corrected: why
};

// Resolves a metric spec: "MEM_BW_TOTAL", "metric/r2pcie.CYC_USED_DNEVEN",
// "metric/PCT_CYCLES_DRAM_RANKx_IN_CKE:x=3".
absl::StatusOr<MetricDefinition> DescribeMetric(std::string_view spec);
// The manual's derived metrics; `pattern` as for ListEvents, matched
// against "box.NAME".
std::vector<MetricDefinition> ListMetrics(std::string_view pattern = "");

}  // namespace uncore

#endif  // UNCORE_EVENTS_H_
