// The public events API (include/uncore/events.h): plain values converted
// from the spec layer's and the IvyTown tables' own types.
#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"
#include "sdk/platforms/ivytown/model/metrics.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"
#include "uncore/events.h"

namespace uncore {
namespace {

std::vector<int> CountersOf(uint8_t mask) {
  std::vector<int> out;
  for (int c = 0; c < 8; ++c) {
    if ((mask & (1u << c)) != 0) out.push_back(c);
  }
  return out;
}

void AddAll(std::span<const std::string_view> list,
            std::vector<std::string>* out) {
  for (std::string_view piece : list) {
    if (std::find(out->begin(), out->end(), piece) == out->end()) {
      out->emplace_back(piece);
    }
  }
}

absl::StatusOr<EventEncoding> Encode(const spec::EventSpec& event) {
  EventEncoding out;
  out.spec = event.text;
  out.canonical = event.Canonical();
  if (event.kind == spec::EventSpec::Kind::kGenericPerf) {
    out.kind = EventKind::kPerfEvent;
    out.pmu = event.pmu;
    out.notes.push_back(fmt::format(
        "encoded by the perf backend from the '{}' PMU's format/ in sysfs",
        event.pmu));
    return out;
  }
  out.kind = event.kind == spec::EventSpec::Kind::kFixedCounter
                 ? EventKind::kFixedCounter
                 : EventKind::kBoxEvent;
  UNCORE_ASSIGN_OR_RETURN(spec::Encoding enc, spec::EncodeEvent(event));
  const ivytown::BoxDescriptor& box = *enc.box;
  out.box = std::string(box.name);
  if (event.event != nullptr) out.event = std::string(event.event->name);
  for (const ivytown::UmaskDescriptor* u : event.umasks) {
    out.umasks.emplace_back(u->name);
  }
  if (event.kind == spec::EventSpec::Kind::kFixedCounter &&
      box.fixed_counter.has_value()) {
    out.event = std::string(box.fixed_counter->name);
  }
  out.control = enc.control;
  for (const spec::FilterValue& f : enc.filters) {
    out.filters.push_back(
        {std::string(box.filters[f.filter].name), f.value, f.mask});
  }
  out.counters = CountersOf(enc.counter_mask);
  out.counter_width = enc.fixed_counter && box.fixed_counter.has_value()
                          ? box.fixed_counter->width
                          : box.counter_width;
  out.instances = event.instances.ids;
  out.box_instances = box.num_instances();
  out.notes = std::move(enc.notes);
  return out;
}

MetricDefinition FromCompiled(const spec::CompiledMetric& compiled,
                              std::string spec_text) {
  MetricDefinition out;
  out.spec = std::move(spec_text);
  out.name = compiled.name;
  out.expression = compiled.expression;
  out.unit = compiled.unit;
  if (const ivytown::MetricDescriptor* m = compiled.metric) {
    out.name = std::string(m->name);
    out.box = std::string(ivytown::Box(m->box).name);
    out.description = std::string(m->description);
    out.rate_per_second = m->rate_per_second;
    out.fix = std::string(m->fix);
  }
  for (const spec::EventSpec& e : compiled.events) {
    out.events.push_back(e.Canonical());
  }
  return out;
}

// The box a pattern names, if it names one.
const ivytown::BoxDescriptor* PatternBox(std::string_view pattern) {
  return pattern.empty() ? nullptr : ivytown::FindBox(pattern);
}

}  // namespace

absl::StatusOr<EventEncoding> EncodeEvent(std::string_view spec_text) {
  UNCORE_ASSIGN_OR_RETURN(spec::EventSpec event,
                          spec::ParseEventSpec(spec_text));
  return Encode(event);
}

absl::StatusOr<SpecKind> ClassifySpec(std::string_view spec_text) {
  UNCORE_ASSIGN_OR_RETURN(spec::Spec parsed, spec::ParseSpec(spec_text));
  return parsed.is_metric() ? SpecKind::kMetric : SpecKind::kEvent;
}

std::vector<std::string> SplitSpecList(std::string_view list) {
  return spec::SplitSpecList(list);
}

std::vector<CatalogEvent> ListEvents(std::string_view pattern) {
  const ivytown::BoxDescriptor* pattern_box = PatternBox(pattern);
  std::vector<CatalogEvent> out;
  for (const ivytown::EventDescriptor& e : ivytown::AllEvents()) {
    const ivytown::BoxDescriptor& box = ivytown::Box(e.box);
    auto add = [&](const ivytown::UmaskDescriptor* u) {
      CatalogEvent row;
      row.box = std::string(box.name);
      row.event = std::string(e.name);
      row.spec = fmt::format("{}/{}", box.name, e.name);
      if (u != nullptr) {
        row.umask = std::string(u->name);
        row.umask_value = u->value;
        row.spec += fmt::format(".{}", u->name);
      }
      if (!pattern.empty() && pattern_box != &box &&
          (pattern_box != nullptr ||
           !common::ContainsIgnoreCase(row.spec, pattern))) {
        return;
      }
      row.code = e.code;
      row.extended = e.extended;
      row.counters = CountersOf(e.counter_mask);
      AddAll(e.filters, &row.filters);
      if (u != nullptr) AddAll(u->filters, &row.filters);
      row.description = std::string(e.description);
      // The control value of the event as the catalog names it (the same
      // encoder as EncodeEvent; no modifiers).
      spec::EventSpec s;
      s.box = &box;
      s.event = &e;
      s.code = e.code;
      s.extended = e.extended;
      if (u != nullptr) {
        s.umasks.push_back(u);
        s.umask = u->value;
      }
      absl::StatusOr<spec::Encoding> enc = spec::EncodeEvent(s);
      row.control = enc.ok() ? enc->control : 0;
      out.push_back(std::move(row));
    };
    if (e.umasks.empty()) {
      add(nullptr);
    } else {
      for (const ivytown::UmaskDescriptor& u : e.umasks) add(&u);
    }
  }
  return out;
}

absl::StatusOr<MetricDefinition> DescribeMetric(std::string_view spec_text) {
  UNCORE_ASSIGN_OR_RETURN(spec::Spec parsed, spec::ParseSpec(spec_text));
  const auto* metric = std::get_if<spec::MetricSpec>(&parsed.value);
  if (metric == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("\"{}\" is an event, not a metric", spec_text));
  }
  UNCORE_ASSIGN_OR_RETURN(spec::CompiledMetric compiled,
                          spec::CompileMetric(*metric));
  return FromCompiled(compiled, metric->Canonical());
}

std::vector<MetricDefinition> ListMetrics(std::string_view pattern) {
  const ivytown::BoxDescriptor* pattern_box = PatternBox(pattern);
  std::vector<MetricDefinition> out;
  for (const ivytown::MetricDescriptor& m : ivytown::AllMetrics()) {
    const ivytown::BoxDescriptor& box = ivytown::Box(m.box);
    const std::string qualified = fmt::format("{}.{}", box.name, m.name);
    if (!pattern.empty() && pattern_box != &box &&
        (pattern_box != nullptr ||
         !common::ContainsIgnoreCase(qualified, pattern))) {
      continue;
    }
    spec::MetricSpec s;
    s.metric = &m;
    s.text = "metric/" + qualified;
    absl::StatusOr<spec::CompiledMetric> compiled = spec::CompileMetric(s);
    if (compiled.ok()) {
      out.push_back(FromCompiled(*compiled, s.Canonical()));
      continue;
    }
    // Not expected for the manual's metrics (a test compiles each one);
    // list it anyway, without its events.
    MetricDefinition d;
    d.spec = s.Canonical();
    d.name = std::string(m.name);
    d.box = std::string(box.name);
    d.description = std::string(m.description);
    d.expression = std::string(m.expression);
    d.unit = std::string(m.unit);
    d.rate_per_second = m.rate_per_second;
    d.fix = std::string(m.fix);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace uncore
