#include "tools/cli/read_cost.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/devices/perf/read_locality.h"

namespace uncore::cli {
namespace {

using devices::perf::CpuListText;
using devices::perf::Crossing;
using devices::perf::GroupReadCost;
using devices::perf::kSnapshotsPerRegionPair;
using devices::perf::SnapshotReadCost;

constexpr std::string_view kBoundaryRule =
    "a boundary reads only when it opens or closes a region path, i.e. the "
    "first thread in and the last out; a thread joining or leaving a region "
    "other threads hold reads nothing";

std::string Plural(int n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// What a read of `g` is from the CPUs this process may run on.
std::string HereText(const GroupReadCost& g) {
  switch (g.crossing) {
    case Crossing::kAlways:
      return "an IPI wherever it runs";
    case Crossing::kSometimes:
      return fmt::format("local only on CPU{} {}",
                         g.local_cpus.size() == 1 ? "" : "s",
                         CpuListText(g.local_cpus));
    case Crossing::kNever:
      break;
  }
  return "local wherever it runs";
}

}  // namespace

ReadCost PlanReadCost(const std::vector<spec::EventSpec>& events,
                      std::string_view sysfs, const std::set<int>& readers) {
  ReadCost cost;
  for (const spec::EventSpec& e : events) {
    if (e.kind == spec::EventSpec::Kind::kGenericPerf || e.box == nullptr) {
      continue;
    }
    for (int i = 0; i < e.box->num_instances(); ++i) {
      if (e.instances.Contains(i)) ++cost.direct_counters_per_socket;
    }
  }
  absl::StatusOr<devices::perf::PmuCatalog> pmus =
      devices::perf::DiscoverPmus(sysfs);
  if (!pmus.ok()) {
    cost.perf_error = common::StatusMessage(pmus.status());
    return cost;
  }
  devices::ProgramRequest request;
  request.events = events;
  absl::StatusOr<std::vector<devices::perf::PerfCounter>> counters =
      devices::perf::PlanPerfCounters(request, *pmus);
  if (!counters.ok()) {
    cost.perf_error = common::StatusMessage(counters.status());
    return cost;
  }
  cost.perf = devices::perf::CostOfSnapshot(
      devices::perf::GroupPerfCounters(*counters,
                                       /*allow_multiplexing=*/false),
      *counters, *pmus, readers);
  return cost;
}

ReadCost PlanReadCost(const std::vector<spec::EventSpec>& events,
                      std::string_view sysfs) {
  absl::StatusOr<std::set<int>> readers = devices::perf::ThisThreadAffinity();
  ReadCost cost =
      PlanReadCost(events, sysfs, readers.ok() ? *readers : std::set<int>());
  if (!readers.ok() && cost.perf) {
    cost.perf_error = fmt::format("this process's CPUs are unknown: {}",
                                  common::StatusMessage(readers.status()));
  }
  return cost;
}

void ReadCostText(const ReadCost& cost, std::string* out) {
  if (cost.perf) {
    const SnapshotReadCost& p = *cost.perf;
    *out += fmt::format(
        "reads      perf: {} per snapshot; a region pair takes {} snapshots, "
        "{} ({})\n",
        Plural(p.reads, "group read", "group reads"), kSnapshotsPerRegionPair,
        Plural(kSnapshotsPerRegionPair * p.reads, "read", "reads"),
        kBoundaryRule);
    for (const GroupReadCost& g : p.groups) {
      *out += fmt::format(
          "  group    {} on CPU {} (socket {}): {}; from this process: {} "
          "[{}]\n",
          g.pmu, g.cpu, g.socket, g.verdict, HereText(g),
          common::Join(g.events, " "));
    }
    *out += fmt::format(
        "affinity   this process may run on CPU{} {}: of a boundary's {}, {} "
        "cross{} CPUs wherever it runs, {} depend{} on the CPU, {} never "
        "cross{}\n",
        p.reader_cpus.size() == 1 ? "" : "s", CpuListText(p.reader_cpus),
        Plural(p.reads, "read", "reads"), p.always_cross,
        p.always_cross == 1 ? "es" : "", p.sometimes_cross,
        p.sometimes_cross == 1 ? "s" : "", p.never_cross,
        p.never_cross == 1 ? "es" : "");
  } else {
    *out +=
        fmt::format("reads      perf: not planned here: {}\n", cost.perf_error);
  }
  if (cost.direct_counters_per_socket > 0) {
    const int n = cost.direct_counters_per_socket;
    *out += fmt::format(
        "direct     {} per socket a snapshot (a 48-bit PCI counter is two "
        "32-bit reads), between one freeze and one unfreeze write; {} per "
        "socket a region pair (sim: the same)\n",
        Plural(n, "counter read", "counter reads"),
        kSnapshotsPerRegionPair * n);
  }
}

void ReadCostJson(const ReadCost& cost, common::JsonWriter* json) {
  json->BeginObject();
  json->Key("snapshots_per_region_pair");
  json->Int(kSnapshotsPerRegionPair);
  json->Key("perf");
  if (!cost.perf) {
    json->Null();
  } else {
    const SnapshotReadCost& p = *cost.perf;
    json->BeginObject();
    json->Key("reads_per_snapshot");
    json->Int(p.reads);
    json->Key("reads_per_region_pair");
    json->Int(int64_t{kSnapshotsPerRegionPair} * p.reads);
    json->Key("reader_cpus");
    json->BeginArray();
    for (int cpu : p.reader_cpus) json->Int(cpu);
    json->EndArray();
    json->Key("always_cross");
    json->Int(p.always_cross);
    json->Key("sometimes_cross");
    json->Int(p.sometimes_cross);
    json->Key("never_cross");
    json->Int(p.never_cross);
    json->Key("groups");
    json->BeginArray();
    for (const GroupReadCost& g : p.groups) {
      json->BeginObject();
      json->Key("pmu");
      json->String(g.pmu);
      json->Key("socket");
      json->Int(g.socket);
      json->Key("cpu");
      json->Int(g.cpu);
      json->Key("locality");
      json->String(devices::perf::ReadLocalityName(g.locality));
      json->Key("verdict");
      json->String(g.verdict);
      json->Key("crossing");
      json->String(devices::perf::CrossingName(g.crossing));
      json->Key("local_cpus");
      json->BeginArray();
      for (int cpu : g.local_cpus) json->Int(cpu);
      json->EndArray();
      json->Key("events");
      json->StringArray(g.events);
      json->EndObject();
    }
    json->EndArray();
    json->EndObject();
  }
  json->Key("perf_error");
  if (cost.perf_error.empty()) {
    json->Null();
  } else {
    json->String(cost.perf_error);
  }
  json->Key("direct_counters_per_socket");
  json->Int(cost.direct_counters_per_socket);
  json->EndObject();
}

}  // namespace uncore::cli
