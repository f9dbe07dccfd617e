// The JSON report (docs/report-format.md gives the schema), and the MPI
// merged report's (Results::mpi set; docs/mpi.md).
#include <string>
#include <utility>
#include <vector>

#include "sdk/common/json.h"
#include "sdk/report/report.h"
#include "sdk/report/report_internal.h"

namespace uncore::report {
namespace {

void WriteUints(const std::vector<uint64_t>& values, common::JsonWriter* json) {
  json->BeginArray();
  for (uint64_t value : values) json->Uint(value);
  json->EndArray();
}

void WriteEventCounts(const RegionResult& region, const EventCounts& inclusive,
                      const EventCounts* exclusive, common::JsonWriter* json) {
  json->BeginObject();
  json->Key("total");
  json->Uint(inclusive.total);
  json->Key("per_socket");
  WriteUints(inclusive.per_socket, json);
  json->Key("per_instance");
  json->BeginArray();
  for (const InstanceCount& count : inclusive.per_instance) {
    json->BeginObject();
    json->Key("socket");
    json->Int(count.socket);
    json->Key("instance");
    json->String(count.instance);
    json->Key("value");
    json->Uint(count.value);
    json->EndObject();
  }
  json->EndArray();
  json->Key("exclusive_total");
  if (exclusive != nullptr) {
    json->Uint(exclusive->total);
  } else {
    json->Null();
  }
  json->Key("exclusive_per_socket");
  if (exclusive != nullptr) {
    WriteUints(exclusive->per_socket, json);
  } else {
    json->Null();
  }
  json->Key("estimated");
  json->Bool(IsEstimated(region, inclusive) ||
             (exclusive != nullptr && exclusive->estimated));
  json->EndObject();
}

void WriteEventsAndMetrics(const Results& results, common::JsonWriter* json) {
  json->Key("events");
  json->BeginArray();
  for (const EventInfo& event : results.events) {
    json->BeginObject();
    json->Key("spec");
    json->String(event.spec);
    json->Key("canonical");
    json->String(event.canonical);
    json->Key("encoding");
    json->String(event.encoding);
    json->Key("unit");
    json->String(event.unit);
    json->Key("scale");
    json->Double(event.scale);
    json->Key("from_metric");
    json->Bool(event.from_metric);
    json->EndObject();
  }
  json->EndArray();
  json->Key("metrics");
  json->BeginArray();
  for (const MetricInfo& metric : results.metrics) {
    json->BeginObject();
    json->Key("name");
    json->String(metric.name);
    json->Key("expression");
    json->String(metric.expression);
    json->Key("unit");
    json->String(metric.unit);
    json->EndObject();
  }
  json->EndArray();
}

// What both reports say of the backend: backend, platform, simulated.
void WriteBackendKeys(const RunInfo& run, common::JsonWriter* json) {
  json->Key("backend");
  json->String(run.backend);
  json->Key("platform");
  json->String(run.platform);
  json->Key("simulated");
  json->Bool(run.simulated);
}

// What both reports' regions begin with: name, path, depth, calls.
void WriteRegionHead(const RegionResult& region, common::JsonWriter* json) {
  json->Key("name");
  json->String(region.name);
  json->Key("path");
  json->String(region.path);
  json->Key("depth");
  json->Int(region.depth);
  json->Key("calls");
  json->Uint(region.calls);
}

void WriteRegion(const Results& results, const RegionResult& region,
                 const std::vector<std::string>& event_keys,
                 const std::vector<std::string>& metric_keys,
                 common::JsonWriter* json) {
  json->BeginObject();
  WriteRegionHead(region, json);
  json->Key("threads");
  json->Uint(region.threads);
  json->Key("wall_ns");
  json->Uint(region.wall_ns);
  json->Key("counted_ns");
  json->Uint(region.counted_ns);
  json->Key("overlap_ns");
  json->Uint(region.overlap_ns);
  json->Key("thread_ns");
  json->Uint(region.thread_ns);
  json->Key("min_ns");
  json->Uint(region.min_ns);
  json->Key("max_ns");
  json->Uint(region.max_ns);
  json->Key("overhead_ns");
  json->Uint(region.overhead_ns);
  json->Key("read_latency_dominated");
  json->Bool(OverheadFlagged(region));
  json->Key("sampled_calls");
  json->Uint(region.sampled_calls);
  json->Key("open_calls");
  json->Uint(region.open_calls);
  json->Key("events");
  json->BeginObject();
  for (size_t e = 0; e < results.events.size() && e < region.inclusive.size();
       ++e) {
    json->Key(event_keys[e]);
    WriteEventCounts(
        region, region.inclusive[e],
        e < region.exclusive.size() ? &region.exclusive[e] : nullptr, json);
  }
  json->EndObject();
  json->Key("metrics");
  json->BeginObject();
  for (size_t m = 0; m < results.metrics.size(); ++m) {
    json->Key(metric_keys[m]);
    if (m < region.metrics.size() && region.metrics[m].valid) {
      json->Double(region.metrics[m].value);  // null when not finite
    } else {
      json->Null();
    }
  }
  json->EndObject();
  json->EndObject();
}

// ---- The MPI merged report (Results::mpi; docs/mpi.md, schema 4)

void WriteInts(const std::vector<int>& values, common::JsonWriter* json) {
  json->BeginArray();
  for (int value : values) json->Int(value);
  json->EndArray();
}

void WriteNodeList(const MpiResults& mpi, common::JsonWriter* json) {
  json->Key("node_list");
  json->BeginArray();
  for (const MpiResults::Node& node : mpi.nodes) {
    json->BeginObject();
    json->Key("host");
    json->String(node.host);
    json->Key("ranks");
    WriteInts(node.ranks, json);
    json->Key("sockets");
    json->BeginArray();
    for (const MpiResults::Socket& socket : node.sockets) {
      json->BeginObject();
      json->Key("socket");
      json->Int(socket.socket);
      json->Key("leader");
      json->Int(socket.leader);
      json->Key("ranks");
      WriteInts(socket.ranks, json);
      json->EndObject();
    }
    json->EndArray();
    json->EndObject();
  }
  json->EndArray();
}

void WriteSocketCount(const MpiResults& mpi, const MpiResults::SocketCount& s,
                      common::JsonWriter* json) {
  json->BeginObject();
  json->Key("node");
  json->Int(s.node);
  json->Key("host");
  const bool known =
      s.node >= 0 && static_cast<size_t>(s.node) < mpi.nodes.size();
  json->String(known ? mpi.nodes[static_cast<size_t>(s.node)].host : "");
  json->Key("socket");
  json->Int(s.socket);
  json->Key("value");
  json->Uint(s.value);
  json->Key("node_union");
  json->Bool(s.node_union);
  json->Key("union_wall_ns");
  json->Uint(s.wall_ns);
  json->Key("from_rank");
  json->Int(s.from_rank);
  json->Key("ranks");
  json->Int(s.ranks);
  json->Key("min");
  json->Uint(s.min);
  json->Key("max");
  json->Uint(s.max);
  json->Key("estimated");
  json->Bool(s.estimated);
  json->EndObject();
}

// A region's metric: null when neither the merged value nor a rank's.
void WriteMergedMetric(const RegionResult& region, size_t k,
                       const MpiResults::Metric& spread,
                       common::JsonWriter* json) {
  const bool valid = k < region.metrics.size() && region.metrics[k].valid;
  if (spread.ranks == 0 && !valid) {
    json->Null();
    return;
  }
  json->BeginObject();
  json->Key("value");
  if (valid) {
    json->Double(region.metrics[k].value);
  } else {
    json->Null();
  }
  for (const auto& [key, value] : {std::pair{"rank_mean", spread.rank_mean},
                                   std::pair{"rank_min", spread.rank_min},
                                   std::pair{"rank_max", spread.rank_max}}) {
    json->Key(key);
    if (spread.ranks > 0) {
      json->Double(value);
    } else {
      json->Null();
    }
  }
  json->Key("ranks");
  json->Int(spread.ranks);
  json->EndObject();
}

void WriteMergedRegion(const Results& results, const RegionResult& region,
                       const MpiResults::Region& merged,
                       const std::vector<std::string>& event_keys,
                       const std::vector<std::string>& metric_keys,
                       common::JsonWriter* json) {
  const MpiResults& mpi = *results.mpi;
  json->BeginObject();
  WriteRegionHead(region, json);
  json->Key("ranks");
  json->Int(merged.ranks);
  json->Key("wall_ns");
  json->Uint(region.wall_ns);
  json->Key("wall_node_union");
  json->Bool(merged.wall_node_union);
  json->Key("per_node_wall_ns");
  WriteUints(merged.per_node_wall_ns, json);
  json->Key("rank_mean_wall_ns");
  json->Uint(merged.rank_mean_wall_ns);
  json->Key("rank_wall_min_ns");
  json->Uint(merged.rank_wall_min_ns);
  json->Key("rank_wall_max_ns");
  json->Uint(merged.rank_wall_max_ns);
  json->Key("call_min_ns");
  json->Uint(region.min_ns);
  json->Key("call_max_ns");
  json->Uint(region.max_ns);
  json->Key("overhead_ns");
  json->Uint(region.overhead_ns);
  json->Key("sampled_calls");
  json->Uint(region.sampled_calls);
  json->Key("events");
  json->BeginObject();
  for (size_t e = 0; e < results.events.size() && e < region.inclusive.size();
       ++e) {
    const EventCounts& counts = region.inclusive[e];
    const MpiResults::Event no_event;
    const MpiResults::Event& event =
        e < merged.events.size() ? merged.events[e] : no_event;
    json->Key(event_keys[e]);
    json->BeginObject();
    json->Key("total");
    json->Uint(counts.total);
    json->Key("per_node");
    WriteUints(event.per_node, json);
    json->Key("estimated");
    json->Bool(counts.estimated);
    json->Key("per_socket");
    json->BeginArray();
    for (const MpiResults::SocketCount& s : event.per_socket) {
      WriteSocketCount(mpi, s, json);
    }
    json->EndArray();
    json->EndObject();
  }
  json->EndObject();
  json->Key("metrics");
  json->BeginObject();
  for (size_t k = 0; k < results.metrics.size(); ++k) {
    json->Key(metric_keys[k]);
    WriteMergedMetric(
        region, k,
        k < merged.metrics.size() ? merged.metrics[k] : MpiResults::Metric{},
        json);
  }
  json->EndObject();
  json->Key("per_rank");
  json->BeginArray();
  for (const MpiResults::Rank& rank : merged.per_rank) {
    json->BeginObject();
    json->Key("rank");
    json->Int(rank.rank);
    json->Key("calls");
    json->Uint(rank.calls);
    json->Key("wall_ns");
    json->Uint(rank.wall_ns);
    json->Key("totals");
    WriteUints(rank.totals, json);
    json->EndObject();
  }
  json->EndArray();
  json->EndObject();
}

// The merged report's top level: its own fields (ranks, nodes, node_list)
// around the run's, the events and the metrics as a session writes them.
void WriteMerged(const Results& results, common::JsonWriter* json) {
  const RunInfo& run = results.run;
  const MpiResults& mpi = *results.mpi;
  json->Key("schema_version");
  json->Int(MpiResults::kSchemaVersion);
  json->Key("kind");
  json->String("mpi");
  json->Key("ranks");
  json->Int(mpi.ranks);
  json->Key("nodes");
  json->Uint(mpi.nodes.size());
  WriteBackendKeys(run, json);
  json->Key("cpu");
  json->String(run.cpu);
  json->Key("start_unix_ns");
  json->Uint(run.start_unix_ns);
  json->Key("duration_ns");
  json->Uint(run.duration_ns);
  json->Key("errors");
  json->StringArray(run.errors);
  json->Key("warnings");
  json->StringArray(run.warnings);
  WriteEventsAndMetrics(results, json);
  WriteNodeList(mpi, json);
  const std::vector<std::string> event_keys = internal::EventKeys(results);
  const std::vector<std::string> metric_keys = internal::MetricKeys(results);
  json->Key("regions");
  json->BeginArray();
  for (size_t i = 0; i < results.regions.size(); ++i) {
    WriteMergedRegion(
        results, results.regions[i],
        i < mpi.regions.size() ? mpi.regions[i] : MpiResults::Region{},
        event_keys, metric_keys, json);
  }
  json->EndArray();
}

// A session's report: the run, its events and metrics, its regions.
void WriteSession(const Results& results, common::JsonWriter* json) {
  const RunInfo& run = results.run;
  const std::vector<std::string> event_keys = internal::EventKeys(results);
  const std::vector<std::string> metric_keys = internal::MetricKeys(results);
  json->Key("schema_version");
  json->Int(Results::kSchemaVersion);
  WriteBackendKeys(run, json);
  json->Key("host");
  json->String(run.host);
  json->Key("cpu");
  json->String(run.cpu);
  json->Key("last_check");
  json->String(run.last_check);
  json->Key("sockets");
  json->BeginArray();
  for (int socket : run.sockets) json->Int(socket);
  json->EndArray();
  json->Key("start_unix_ns");
  json->Uint(run.start_unix_ns);
  json->Key("duration_ns");
  json->Uint(run.duration_ns);
  json->Key("frozen_ns");
  json->Uint(run.frozen_ns);
  json->Key("reads_per_snapshot");
  json->Int(run.reads_per_snapshot);
  json->Key("regions_open_ns");
  json->Uint(run.regions_open_ns);
  json->Key("exclusive_overcount_ns");
  json->Uint(run.exclusive_overcount_ns);
  json->Key("errors");
  json->StringArray(run.errors);
  json->Key("warnings");
  json->StringArray(run.warnings);

  WriteEventsAndMetrics(results, json);
  json->Key("regions");
  json->BeginArray();
  for (const RegionResult& region : results.regions) {
    WriteRegion(results, region, event_keys, metric_keys, json);
  }
  json->EndArray();
}

}  // namespace

std::string FormatJson(const Results& results) {
  common::JsonWriter json(/*pretty=*/true);
  json.BeginObject();
  if (results.mpi) {
    WriteMerged(results, &json);
  } else {
    WriteSession(results, &json);
  }
  json.EndObject();
  std::string text = json.Take();
  text.push_back('\n');
  return text;
}

}  // namespace uncore::report
