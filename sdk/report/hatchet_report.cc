// The Hatchet literal tree (docs/report-format.md, "Hatchet"): what
// hatchet.GraphFrame.from_literal (and Thicket) load.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sdk/common/json.h"
#include "sdk/report/report.h"
#include "sdk/report/report_internal.h"

namespace uncore::report {
namespace {

constexpr std::string_view kInclusiveSuffix = " (inc)";
constexpr std::string_view kNoRegions = "(no regions)";

// The metric names every node carries, in this order: time (inc), time,
// calls, threads, then per event "<event> (inc)" and "<event>", then per
// metric "<metric> (inc)".  The base names are made unique together, and
// apart from the columns Hatchet's reader makes itself ("name", "node"),
// before " (inc)" is added.
struct Keys {
  std::vector<std::string> names;
  size_t first_event = 4;
  size_t first_metric = 0;
};

Keys MakeKeys(const Results& results) {
  std::vector<std::string> bases = {"name", "node", "time", "calls", "threads"};
  constexpr size_t kFirstEventBase = 5;
  for (const EventInfo& event : results.events) {
    bases.push_back(internal::EventName(event));
  }
  for (const MetricInfo& metric : results.metrics) {
    bases.push_back(metric.name);
  }
  bases = internal::UniqueKeys(std::move(bases));
  const std::string inc(kInclusiveSuffix);
  Keys keys;
  keys.names = {"time" + inc, "time", "calls", "threads"};
  for (size_t e = 0; e < results.events.size(); ++e) {
    const std::string& base = bases[kFirstEventBase + e];
    keys.names.push_back(base + inc);
    keys.names.push_back(base);
  }
  keys.first_metric = keys.names.size();
  for (size_t m = 0; m < results.metrics.size(); ++m) {
    keys.names.push_back(bases[kFirstEventBase + results.events.size() + m] +
                         inc);
  }
  return keys;
}

// The region's own time: its wall time less its children's, known when one
// thread ran it (its children's calls then nest in its own, one after the
// other).  Several threads may overlap children: unknown.
std::optional<double> ExclusiveSeconds(const std::vector<RegionResult>& regions,
                                       const internal::RegionTree& tree,
                                       size_t i) {
  const RegionResult& region = regions[i];
  if (region.threads > 1) return std::nullopt;
  uint64_t children_ns = 0;
  for (const size_t child : tree.children[i]) {
    children_ns += regions[child].wall_ns;
  }
  if (children_ns > region.wall_ns) return std::nullopt;
  return static_cast<double>(region.wall_ns - children_ns) / 1e9;
}

// An event's count in its unit: the exact integer when the scale is 1.
void WriteCount(const EventInfo& event, const EventCounts* counts,
                common::JsonWriter* json) {
  if (counts == nullptr) {
    json->Null();
  } else if (event.scale == 1.0) {
    json->Uint(counts->total);
  } else {
    json->Double(internal::ScaledCount(counts->total, event.scale));
  }
}

void WriteMetrics(const Results& results, const Keys& keys,
                  const RegionResult& region, std::optional<double> own_time,
                  common::JsonWriter* json) {
  json->BeginObject();
  json->Key(keys.names[0]);
  json->Double(static_cast<double>(region.wall_ns) / 1e9);
  json->Key(keys.names[1]);
  if (own_time.has_value()) {
    json->Double(*own_time);
  } else {
    json->Null();
  }
  json->Key(keys.names[2]);
  json->Uint(region.calls);
  json->Key(keys.names[3]);
  json->Uint(region.threads);
  for (size_t e = 0; e < results.events.size(); ++e) {
    const EventInfo& event = results.events[e];
    json->Key(keys.names[keys.first_event + 2 * e]);
    WriteCount(event,
               e < region.inclusive.size() ? &region.inclusive[e] : nullptr,
               json);
    json->Key(keys.names[keys.first_event + 2 * e + 1]);
    WriteCount(event,
               e < region.exclusive.size() ? &region.exclusive[e] : nullptr,
               json);
  }
  for (size_t m = 0; m < results.metrics.size(); ++m) {
    json->Key(keys.names[keys.first_metric + m]);
    if (m < region.metrics.size() && region.metrics[m].valid) {
      json->Double(region.metrics[m].value);  // null when not finite
    } else {
      json->Null();
    }
  }
  json->EndObject();
}

// Opens a node: its frame and metrics, and the children array (left open).
void BeginNode(const Results& results, const Keys& keys,
               const RegionResult& region, std::string_view name,
               std::optional<double> own_time, common::JsonWriter* json) {
  json->BeginObject();
  json->Key("frame");
  json->BeginObject();
  json->Key("name");
  json->String(name);
  json->Key("type");
  json->String("region");
  json->EndObject();
  json->Key("metrics");
  WriteMetrics(results, keys, region, own_time, json);
  json->Key("children");
  json->BeginArray();
}

void EndNode(common::JsonWriter* json) {
  json->EndArray();
  json->EndObject();
}

}  // namespace

std::string FormatHatchet(const Results& results) {
  const Keys keys = MakeKeys(results);
  common::JsonWriter json(/*pretty=*/true);
  json.BeginArray();
  const std::vector<RegionResult>& regions = results.regions;
  if (regions.empty()) {
    // Hatchet cannot load an empty forest: one node that says so.
    RegionResult none;
    none.name = std::string(kNoRegions);
    BeginNode(results, keys, none, kNoRegions, 0.0, &json);
    EndNode(&json);
  }
  const internal::RegionTree tree = internal::BuildRegionTree(regions);
  // In tree order, closing the open nodes down to the next one's parent.
  std::vector<int> open;
  for (const size_t i : tree.order) {
    while (!open.empty() && open.back() != tree.parent[i]) {
      EndNode(&json);
      open.pop_back();
    }
    const RegionResult& region = regions[i];
    // A region whose parent is missing is a root named by its path.
    const bool orphan = tree.parent[i] < 0 && region.depth > 0;
    BeginNode(results, keys, region, orphan ? region.path : region.name,
              ExclusiveSeconds(regions, tree, i), &json);
    open.push_back(static_cast<int>(i));
  }
  for (; !open.empty(); open.pop_back()) EndNode(&json);
  json.EndArray();
  std::string text = json.Take();
  text.push_back('\n');
  return text;
}

}  // namespace uncore::report
