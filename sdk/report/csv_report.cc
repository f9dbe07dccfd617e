// The CSV report, in tidy long form: one row per value
// (docs/report-format.md gives the columns and which rows exist).
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "sdk/report/report.h"
#include "sdk/report/report_internal.h"

namespace uncore::report {
namespace {

constexpr std::string_view kLineEnd = "\r\n";

constexpr std::string_view kColumns[] = {
    "region",        "path",
    "parent",        "depth",
    "calls",         "threads",
    "wall_ns",       "counted_ns",
    "overlap_ns",    "thread_ns",
    "min_ns",        "max_ns",
    "overhead_ns",   "read_latency_dominated",
    "sampled_calls", "open_calls",
    "kind",          "name",
    "scope",         "level",
    "socket",        "instance",
    "value",         "unit",
    "count",         "scale",
    "estimated"};

// The shortest text that reads back exactly; "" when not finite.
std::string Number(double value) {
  return std::isfinite(value) ? fmt::format("{}", value) : "";
}

// Appends one record: the region's columns (already CSV fields, joined),
// then `fields`, each made a CSV field.
void AppendRecord(std::string_view region_fields,
                  const std::vector<std::string>& fields, std::string* out) {
  *out += region_fields;
  for (const std::string& field : fields) {
    out->push_back(',');
    *out += CsvField(field);
  }
  *out += kLineEnd;
}

// One event's counts in one scope: the total, then per socket, then per
// box instance.
void AppendEventRows(std::string_view region_fields, const Results& results,
                     const EventInfo& event, const std::string& name,
                     std::string_view scope, const EventCounts& counts,
                     bool estimated, std::string* out) {
  const std::string scale = Number(event.scale);
  const std::string flag = estimated ? "1" : "0";
  auto value_of = [&](uint64_t count) {
    return event.scale == 1.0
               ? fmt::format("{}", count)
               : Number(internal::ScaledCount(count, event.scale));
  };
  auto row = [&](std::string_view level, std::string socket,
                 std::string instance, uint64_t count) {
    AppendRecord(region_fields,
                 {"event", name, std::string(scope), std::string(level),
                  std::move(socket), std::move(instance), value_of(count),
                  event.unit, fmt::format("{}", count), scale, flag},
                 out);
  };
  row("total", "", "", counts.total);
  for (size_t s = 0; s < counts.per_socket.size(); ++s) {
    row("socket", internal::SocketLabel(results.run.sockets, s), "",
        counts.per_socket[s]);
  }
  for (const InstanceCount& instance : counts.per_instance) {
    row("instance", fmt::format("{}", instance.socket), instance.instance,
        instance.value);
  }
}

void AppendRegion(const Results& results, const RegionResult& region,
                  const std::vector<std::string>& event_names,
                  std::string* out) {
  std::string fields;
  bool first = true;
  for (const std::string& field :
       {region.name, region.path,
        std::string(internal::ParentPath(region).value_or("")),
        fmt::format("{}", region.depth), fmt::format("{}", region.calls),
        fmt::format("{}", region.threads), fmt::format("{}", region.wall_ns),
        fmt::format("{}", region.counted_ns),
        fmt::format("{}", region.overlap_ns),
        fmt::format("{}", region.thread_ns), fmt::format("{}", region.min_ns),
        fmt::format("{}", region.max_ns), fmt::format("{}", region.overhead_ns),
        std::string(OverheadFlagged(region) ? "1" : "0"),
        fmt::format("{}", region.sampled_calls),
        fmt::format("{}", region.open_calls)}) {
    // By position, not by what came before: a leading field may be empty.
    if (!first) fields.push_back(',');
    first = false;
    fields += CsvField(field);
  }
  const size_t size_before = out->size();
  // A metric is computed from the inclusive counts: an estimate when the
  // region is sampled or one of them is.
  bool any_estimated = IsSampled(region);
  for (size_t e = 0; e < results.events.size() && e < region.inclusive.size();
       ++e) {
    const EventCounts& inclusive = region.inclusive[e];
    any_estimated = any_estimated || inclusive.estimated;
    AppendEventRows(fields, results, results.events[e], event_names[e],
                    "inclusive", inclusive, IsEstimated(region, inclusive),
                    out);
    if (e < region.exclusive.size()) {
      const EventCounts& exclusive = region.exclusive[e];
      AppendEventRows(fields, results, results.events[e], event_names[e],
                      "exclusive", exclusive, IsEstimated(region, exclusive),
                      out);
    }
  }
  for (size_t m = 0; m < results.metrics.size(); ++m) {
    const MetricInfo& metric = results.metrics[m];
    const std::string value =
        m < region.metrics.size() && region.metrics[m].valid
            ? Number(region.metrics[m].value)
            : "";
    AppendRecord(fields,
                 {"metric", metric.name, "inclusive", "total", "", "", value,
                  metric.unit, "", "", any_estimated ? "1" : "0"},
                 out);
  }
  if (out->size() == size_before) {  // no value at all: still the region
    AppendRecord(fields,
                 {"region", "", "", "total", "", "", "", "", "", "", "0"}, out);
  }
}

}  // namespace

std::string FormatCsv(const Results& results) {
  std::string out;
  for (const std::string_view column : kColumns) {
    if (!out.empty()) out.push_back(',');
    out += column;
  }
  out += kLineEnd;
  // Events by the name the JSON report keys them with ("#2" when two share
  // a spelling), so that rows of two such events stay apart.
  const std::vector<std::string> event_names = internal::EventKeys(results);
  for (const RegionResult& region : results.regions) {
    AppendRegion(results, region, event_names, &out);
  }
  return out;
}

}  // namespace uncore::report
