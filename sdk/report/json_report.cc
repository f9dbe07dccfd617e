// The JSON report (docs/report-format.md gives the schema).
#include <string>
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

void WriteRegion(const Results& results, const RegionResult& region,
                 const std::vector<std::string>& event_keys,
                 const std::vector<std::string>& metric_keys,
                 common::JsonWriter* json) {
  json->BeginObject();
  json->Key("name");
  json->String(region.name);
  json->Key("path");
  json->String(region.path);
  json->Key("depth");
  json->Int(region.depth);
  json->Key("calls");
  json->Uint(region.calls);
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

}  // namespace

std::string FormatJson(const Results& results) {
  const RunInfo& run = results.run;
  const std::vector<std::string> event_keys = internal::EventKeys(results);
  const std::vector<std::string> metric_keys = internal::MetricKeys(results);

  common::JsonWriter json(/*pretty=*/true);
  json.BeginObject();
  json.Key("schema_version");
  json.Int(Results::kSchemaVersion);
  json.Key("backend");
  json.String(run.backend);
  json.Key("platform");
  json.String(run.platform);
  json.Key("simulated");
  json.Bool(run.simulated);
  json.Key("host");
  json.String(run.host);
  json.Key("cpu");
  json.String(run.cpu);
  json.Key("last_check");
  json.String(run.last_check);
  json.Key("sockets");
  json.BeginArray();
  for (int socket : run.sockets) json.Int(socket);
  json.EndArray();
  json.Key("start_unix_ns");
  json.Uint(run.start_unix_ns);
  json.Key("duration_ns");
  json.Uint(run.duration_ns);
  json.Key("frozen_ns");
  json.Uint(run.frozen_ns);
  json.Key("reads_per_snapshot");
  json.Int(run.reads_per_snapshot);
  json.Key("regions_open_ns");
  json.Uint(run.regions_open_ns);
  json.Key("exclusive_overcount_ns");
  json.Uint(run.exclusive_overcount_ns);
  json.Key("errors");
  json.StringArray(run.errors);
  json.Key("warnings");
  json.StringArray(run.warnings);

  json.Key("events");
  json.BeginArray();
  for (const EventInfo& event : results.events) {
    json.BeginObject();
    json.Key("spec");
    json.String(event.spec);
    json.Key("canonical");
    json.String(event.canonical);
    json.Key("encoding");
    json.String(event.encoding);
    json.Key("unit");
    json.String(event.unit);
    json.Key("scale");
    json.Double(event.scale);
    json.Key("from_metric");
    json.Bool(event.from_metric);
    json.EndObject();
  }
  json.EndArray();

  json.Key("metrics");
  json.BeginArray();
  for (const MetricInfo& metric : results.metrics) {
    json.BeginObject();
    json.Key("name");
    json.String(metric.name);
    json.Key("expression");
    json.String(metric.expression);
    json.Key("unit");
    json.String(metric.unit);
    json.EndObject();
  }
  json.EndArray();

  json.Key("regions");
  json.BeginArray();
  for (const RegionResult& region : results.regions) {
    WriteRegion(results, region, event_keys, metric_keys, &json);
  }
  json.EndArray();
  json.EndObject();
  std::string text = json.Take();
  text.push_back('\n');
  return text;
}

}  // namespace uncore::report
