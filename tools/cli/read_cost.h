// The "reads" part of `uncore describe` and `uncore doctor`: what a plan
// costs in reads per snapshot and per region pair, and which of those reads
// cross CPUs for this process's affinity.  The facts come from the SDK
// (devices/perf/read_locality.h: the perf groups, the PMU classification,
// the crossing counts); this file plans and renders them.
//
//   ReadCost cost = PlanReadCost(events, "/sys");
//   std::string text;
//   ReadCostText(cost, &text);      // "reads      perf: 1 group read ..."
//   json.Key("reads");
//   ReadCostJson(cost, &json);
//
// Internal to the CLI.
#ifndef UNCORE_TOOLS_CLI_READ_COST_H_
#define UNCORE_TOOLS_CLI_READ_COST_H_

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sdk/common/json.h"
#include "sdk/devices/perf/read_locality.h"
#include "sdk/spec/event_spec.h"

namespace uncore::cli {

struct ReadCost {
  // perf: the snapshot's groups for this process's CPUs, or why it cannot
  // be planned here (no such PMU, ...).
  std::optional<devices::perf::SnapshotReadCost> perf;
  std::string perf_error;
  // direct / sim (IvyTown register events only): counters read per socket
  // a snapshot (Device::reads_per_snapshot's count, per socket); 0 when the
  // plan has no register event.
  int direct_counters_per_socket = 0;
};

// Plans `events` as a session would: perf groups on the PMUs under
// `sysfs` for the calling thread's affinity (ThisThreadAffinity), and the
// direct backend's counters per socket for IvyTown events.
ReadCost PlanReadCost(const std::vector<spec::EventSpec>& events,
                      std::string_view sysfs);

// The same with the reader CPUs given (tests, doctor).
ReadCost PlanReadCost(const std::vector<spec::EventSpec>& events,
                      std::string_view sysfs, const std::set<int>& readers);

// Aligned lines for people: "reads", one "group" line per perf group,
// "affinity", and "direct" when it applies.
void ReadCostText(const ReadCost& cost, std::string* out);

// One object: {"per_region_pair_snapshots", "perf": {...} or null,
// "perf_error", "direct_counters_per_socket"}.
void ReadCostJson(const ReadCost& cost, common::JsonWriter* json);

}  // namespace uncore::cli

#endif  // UNCORE_TOOLS_CLI_READ_COST_H_
