#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "sdk/common/json.h"
#include "sdk/common/status_macros.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/device/program_plan.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"
#include "tools/cli/commands.h"
#include "tools/cli/describe.h"
#include "tools/cli/read_cost.h"
#include "tools/cli/register_listing.h"

namespace uncore::cli {
namespace {

int DescribeMetric(const spec::MetricSpec& metric_spec, bool json_output,
                   std::string_view sysfs, std::FILE* out, std::FILE* err) {
  absl::StatusOr<spec::CompiledMetric> compiled =
      spec::CompileMetric(metric_spec);
  if (!compiled.ok()) {
    fmt::print(err, "uncore describe: {}\n",
               common::StatusMessage(compiled.status()));
    return kExitUsage;
  }
  const ivytown::MetricDescriptor& m = *metric_spec.metric;
  std::vector<spec::Encoding> encodings;
  for (const spec::EventSpec& e : compiled->events) {
    if (e.kind == spec::EventSpec::Kind::kGenericPerf) {
      encodings.emplace_back();
      continue;
    }
    absl::StatusOr<spec::Encoding> enc = spec::EncodeEvent(e);
    if (!enc.ok()) {
      fmt::print(err, "uncore describe: metric {}: {}\n", m.name,
                 common::StatusMessage(enc.status()));
      return kExitUsage;
    }
    encodings.push_back(*std::move(enc));
  }
  if (json_output) {
    common::JsonWriter json(/*pretty=*/true);
    json.BeginObject();
    json.Key("metric");
    json.String(m.name);
    json.Key("canonical");
    json.String(metric_spec.Canonical());
    json.Key("box");
    json.String(ivytown::Box(m.box).name);
    json.Key("unit");
    json.String(m.unit);
    json.Key("rate_per_second");
    json.Bool(m.rate_per_second);
    json.Key("description");
    json.String(m.description);
    json.Key("expression");
    json.String(compiled->expression);
    json.Key("manual_formula");
    json.String(m.manual_formula);
    json.Key("fix");
    if (m.fix.empty()) {
      json.Null();
    } else {
      json.String(m.fix);
    }
    json.Key("events");
    json.BeginArray();
    for (size_t i = 0; i < compiled->events.size(); ++i) {
      const spec::EventSpec& e = compiled->events[i];
      if (e.kind == spec::EventSpec::Kind::kGenericPerf) {
        json.BeginObject();
        json.Key("spec");
        json.String(e.Canonical());
        json.Key("kind");
        json.String("perf");
        json.EndObject();
      } else {
        DescribeEventJson(e, encodings[i], &json);
      }
    }
    json.EndArray();
    json.Key("reads");
    ReadCostJson(PlanReadCost(compiled->events, sysfs), &json);
    json.EndObject();
    fmt::print(out, "{}\n", json.str());
    return kExitOk;
  }
  std::string text;
  text +=
      fmt::format("metric      {} ({})\n", m.name, ivytown::Box(m.box).name);
  text += fmt::format("meaning     {}\n", m.description);
  text += fmt::format(
      "unit        {}{}\n", m.unit,
      m.rate_per_second ? " (reports also show the rate per second)" : "");
  text += fmt::format("expression  {}\n", compiled->expression);
  text += fmt::format("manual      {} ({})\n", m.manual_formula, m.manual_line);
  if (!m.fix.empty()) text += fmt::format("fixed       {}\n", m.fix);
  for (const auto& p : m.params) {
    if (!p.present()) continue;
    text +=
        fmt::format("parameter   ${} = {} by default ({}..{}): {}\n", p.name,
                    p.default_value, p.min_value, p.max_value, p.meaning);
  }
  text += fmt::format("events      {}\n", compiled->events.size());
  for (size_t i = 0; i < compiled->events.size(); ++i) {
    const spec::EventSpec& e = compiled->events[i];
    text += fmt::format("  [{}] {}\n", i, e.Canonical());
    if (e.kind == spec::EventSpec::Kind::kGenericPerf) {
      text += "      a perf event: counted only by the perf backend\n";
      continue;
    }
    text += fmt::format(
        "      control 0x{:08x} ({}), counters {}\n", encodings[i].control,
        ControlFields(*e.box, encodings[i].control),
        encodings[i].fixed_counter ? std::string("fixed")
                                   : CounterList(encodings[i].counter_mask));
    for (const spec::FilterValue& fv : encodings[i].filters) {
      text += fmt::format("      filter {} = 0x{:08x}\n",
                          e.box->filters[fv.filter].name, fv.value);
    }
  }
  ReadCostText(PlanReadCost(compiled->events, sysfs), &text);
  fmt::print(out, "{}", text);
  return kExitOk;
}

}  // namespace

int RunDescribe(const DescribeOptions& options, std::FILE* out,
                std::FILE* err) {
  const bool json_output = options.json;
  const std::string_view spec_text = options.spec;
  absl::StatusOr<spec::Spec> parsed = spec::ParseSpec(spec_text);
  if (!parsed.ok()) {
    fmt::print(err, "uncore describe: {}\n",
               common::StatusMessage(parsed.status()));
    return kExitUsage;
  }
  if (parsed->is_metric()) {
    return DescribeMetric(std::get<spec::MetricSpec>(parsed->value),
                          json_output, options.sysfs, out, err);
  }
  const spec::EventSpec& event = std::get<spec::EventSpec>(parsed->value);
  if (event.kind == spec::EventSpec::Kind::kGenericPerf) {
    if (json_output) {
      common::JsonWriter json(/*pretty=*/true);
      json.BeginObject();
      json.Key("spec");
      json.String(event.text);
      json.Key("canonical");
      json.String(event.Canonical());
      json.Key("kind");
      json.String("perf");
      json.Key("pmu");
      json.String(event.pmu);
      json.Key("reads");
      ReadCostJson(PlanReadCost({event}, options.sysfs), &json);
      json.EndObject();
      fmt::print(out, "{}\n", json.str());
    } else {
      std::string text;
      DescribeGenericPerfText(event, &text);
      ReadCostText(PlanReadCost({event}, options.sysfs), &text);
      fmt::print(out, "{}", text);
    }
    return kExitOk;
  }
  absl::StatusOr<spec::Encoding> enc = spec::EncodeEvent(event);
  if (!enc.ok()) {
    fmt::print(err, "uncore describe: {}\n",
               common::StatusMessage(enc.status()));
    return kExitUsage;
  }
  if (json_output) {
    common::JsonWriter json(/*pretty=*/true);
    DescribeEventJson(event, *enc, &json, /*close=*/false);
    json.Key("reads");
    ReadCostJson(PlanReadCost({event}, options.sysfs), &json);
    json.EndObject();
    fmt::print(out, "{}\n", json.str());
  } else {
    std::string text;
    DescribeEventText(event, *enc, &text);
    ReadCostText(PlanReadCost({event}, options.sysfs), &text);
    fmt::print(out, "{}", text);
  }
  return kExitOk;
}

}  // namespace uncore::cli
