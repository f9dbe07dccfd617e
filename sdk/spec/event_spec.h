// The event-spec language: one string names one event (or one metric).
//
//   absl::StatusOr<Spec> s =
//       ParseSpec("cbo[0-3]/LLC_LOOKUP.DATA_READ:filter_state=0x1f");
//   const EventSpec& e = std::get<EventSpec>(s->value);
//   // e.box->type == BoxType::kCbo, e.instances == {0,1,2,3}
//
// Grammar (names are case-insensitive; the manual's and the kernel's
// spellings both work):
//
//   spec      := metric | event
//   metric    := "metric/" [BOX "."] NAME [":" param ("," param)*]
//              | [BOX "."] NAME                 (a bare metric name)
//   param     := NAME "=" INT                   ($x, $my_node, ...)
//   event     := target "/" body
//   target    := BOX [ "[" ranges "]" ]         cbo, cbo[0-3], imc[0,2]
//              | KERNEL_PMU ["_" N]             uncore_imc, uncore_cbox_3
//   ranges    := (N | N "-" N) ("," ...)*
//   body      := EVENT ["." UMASK ("|" UMASK)*] [(":" | ",") modifiers]
//              | terms ["/"]                    kernel syntax, see below
//   modifiers := mod (("," | ":") mod)*
//   mod       := FIELD "=" INT | FLAG           thresh=1, edge, filter_opc=3
//   terms     := term ("," term)*
//   term      := FIELD "=" INT | FLAG           event=0x04,umask=0x03,edge=1
//
// Fixed counters are events: `ubox/UCLK`, `imc/DCLK` (the kernel's
// `uncore_imc/event=0xff/` names the same counter).  Any other PMU
// (`msr/tsc/`, `power/energy-pkg/`, `cpu/instructions/`) parses as a generic
// perf event whose terms are resolved later by the perf backend.
//
// Errors are absl::InvalidArgumentError whose message quotes the spec, points
// at the column where parsing failed, says why, and lists the closest valid
// names.  A value wider than its field is an error, never masked.
//
// Guarantees: never crashes on any input; allocation only in the results.
#ifndef UNCORE_SDK_SPEC_EVENT_SPEC_H_
#define UNCORE_SDK_SPEC_EVENT_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"
#include "sdk/platforms/ivytown/model/metrics.h"

namespace uncore::spec {

// Which box instances a spec selects.  Empty `ids` means every instance
// (summed in reports, kept per instance underneath).
struct InstanceSet {
  std::vector<int> ids;  // sorted, unique

  bool all() const { return ids.empty(); }
  bool Contains(int id) const;
  // "0-3,5"; "all" when every instance is selected.
  std::string ToString() const;
  bool operator==(const InstanceSet&) const = default;
};

// A user-set field: a modifier (thresh, edge, filter_*, match_*, ...).
struct FieldSetting {
  const ivytown::FieldDescriptor* field = nullptr;
  uint64_t value = 0;
};

// A generic perf term: `tsc`, `event=0x3c`, `config=0x1234`.
struct PerfTerm {
  std::string name;
  std::optional<uint64_t> value;  // nullopt for a bare alias or flag

  bool operator==(const PerfTerm&) const = default;
};

struct EventSpec {
  enum class Kind {
    kBoxEvent,      // an IvyTown box event (named or raw)
    kFixedCounter,  // ubox/UCLK, imc/DCLK
    kGenericPerf,   // any other perf PMU
  };
  Kind kind = Kind::kBoxEvent;
  std::string text;  // as written

  // kBoxEvent and kFixedCounter.
  const ivytown::BoxDescriptor* box = nullptr;
  InstanceSet instances;
  // kBoxEvent: the catalog entry (nullptr for a raw code not in the catalog).
  const ivytown::EventDescriptor* event = nullptr;
  std::vector<const ivytown::UmaskDescriptor*> umasks;  // named unit masks
  uint8_t code = 0;
  bool extended = false;
  uint8_t umask = 0;
  std::vector<FieldSetting> modifiers;  // in the order written

  // kGenericPerf.
  std::string pmu;
  std::vector<PerfTerm> perf_terms;

  // A normalised spelling that parses back to the same event:
  // "cbo[0-3]/LLC_LOOKUP.DATA_READ:filter_state=0x1f".
  std::string Canonical() const;
  // The value of modifier `name`, if set.
  std::optional<uint64_t> Modifier(std::string_view name) const;
};

struct MetricSpec {
  const ivytown::MetricDescriptor* metric = nullptr;
  std::string text;
  std::vector<std::pair<std::string, int64_t>> params;  // overrides

  std::string Canonical() const;
};

struct Spec {
  std::variant<EventSpec, MetricSpec> value;

  bool is_metric() const { return std::holds_alternative<MetricSpec>(value); }
};

// Parses an event or metric spec.
absl::StatusOr<Spec> ParseSpec(std::string_view text);
// Parses an event spec only (a metric is an error).
absl::StatusOr<EventSpec> ParseEventSpec(std::string_view text);
// Parses a metric given by name, as UNCORE_METRICS, -M and
// SessionOptions::metrics take it: "MEM_BW_TOTAL", "imc.MEM_BW_TOTAL" or a
// full "metric/..." spec.  An event is an error.
absl::StatusOr<MetricSpec> ParseMetricName(std::string_view text);
// Splits a user list "a,b;c" into specs, honouring the commas inside
// `pmu/a=1,b=2/` and `box/EV:m1=1,m2=2` (a comma starts a new spec only when
// what follows looks like the start of a spec).
std::vector<std::string> SplitSpecList(std::string_view list);

}  // namespace uncore::spec

#endif  // UNCORE_SDK_SPEC_EVENT_SPEC_H_
