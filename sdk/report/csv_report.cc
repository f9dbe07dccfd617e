// The CSV report (docs/report-format.md gives the columns).
#include <cmath>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sdk/report/report.h"

namespace uncore::report {
namespace {

constexpr std::string_view kLineEnd = "\r\n";

void AppendRow(const std::vector<std::string>& fields, std::string* out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out->push_back(',');
    *out += CsvField(fields[i]);
  }
  *out += kLineEnd;
}

std::string Number(double value) {
  return std::isfinite(value) ? fmt::format("{}", value) : "";
}

}  // namespace

std::string FormatCsv(const Results& results) {
  std::string out;
  AppendRow({"region", "path", "depth", "calls", "wall_ns", "overhead_ns",
             "sampled_calls", "open_calls", "event", "socket", "inclusive",
             "exclusive", "estimated", "unit", "scale", "threads", "thread_ns"},
            &out);
  const std::vector<int>& socket_ids = results.run.sockets;
  for (const RegionResult& region : results.regions) {
    const std::vector<std::string> prefix = {
        region.name,
        region.path,
        fmt::format("{}", region.depth),
        fmt::format("{}", region.calls),
        fmt::format("{}", region.wall_ns),
        fmt::format("{}", region.overhead_ns),
        fmt::format("{}", region.sampled_calls),
        fmt::format("{}", region.open_calls)};
    auto row = [&](std::vector<std::string> rest) {
      std::vector<std::string> fields = prefix;
      fields.insert(fields.end(), rest.begin(), rest.end());
      fields.push_back(fmt::format("{}", region.threads));
      fields.push_back(fmt::format("{}", region.thread_ns));
      AppendRow(fields, &out);
    };
    for (size_t e = 0; e < results.events.size() && e < region.inclusive.size();
         ++e) {
      const EventInfo& event = results.events[e];
      const EventCounts& inclusive = region.inclusive[e];
      const EventCounts* exclusive =
          e < region.exclusive.size() ? &region.exclusive[e] : nullptr;
      const std::string name =
          event.canonical.empty() ? event.spec : event.canonical;
      const std::string estimated =
          IsEstimated(region, inclusive) ||
                  (exclusive != nullptr && exclusive->estimated)
              ? "1"
              : "0";
      const std::string scale = Number(event.scale);
      for (size_t s = 0; s < inclusive.per_socket.size(); ++s) {
        const std::string socket = s < socket_ids.size()
                                       ? fmt::format("{}", socket_ids[s])
                                       : fmt::format("#{}", s);
        const std::string excl =
            exclusive != nullptr && s < exclusive->per_socket.size()
                ? fmt::format("{}", exclusive->per_socket[s])
                : "";
        row({name, socket, fmt::format("{}", inclusive.per_socket[s]), excl,
             estimated, event.unit, scale});
      }
      row({name, "all", fmt::format("{}", inclusive.total),
           exclusive != nullptr ? fmt::format("{}", exclusive->total) : "",
           estimated, event.unit, scale});
    }
    for (size_t m = 0; m < results.metrics.size(); ++m) {
      const MetricInfo& metric = results.metrics[m];
      const std::string value =
          m < region.metrics.size() && region.metrics[m].valid
              ? Number(region.metrics[m].value)
              : "";
      row({"metric/" + metric.name, "all", value, "", "", metric.unit, "1"});
    }
  }
  return out;
}

}  // namespace uncore::report
