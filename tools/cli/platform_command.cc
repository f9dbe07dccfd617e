// `uncore list --platforms`, `uncore list --platform NAME` and
// `uncore describe --platform NAME SPEC`: the perf-only platforms generated
// from vendor data (sdk/platforms/perfmon/, docs/platforms.md).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "sdk/common/json.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/devices/perf/perfmon_plan.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/common/platform_records.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/runtime/backends.h"
#include "sdk/runtime/session_platform.h"
#include "sdk/spec/platform_catalog.h"
#include "tools/cli/commands.h"
#include "tools/cli/read_cost.h"

namespace uncore::cli {
namespace {

using perfmon::Composite;
using perfmon::Event;
using perfmon::Metric;
using perfmon::Platform;

std::string_view KindName(perfmon::CounterKind kind) {
  switch (kind) {
    case perfmon::CounterKind::kFixed:
      return "fixed";
    case perfmon::CounterKind::kFreeRunning:
      return "free-running";
    case perfmon::CounterKind::kProgrammable:
      break;
  }
  return "programmable";
}

std::string CpuText(const perfmon::CpuMatch& c) {
  std::string models =
      c.model_lo == c.model_hi
          ? fmt::format("model 0x{:02x}", c.model_lo)
          : fmt::format("models 0x{:02x}-0x{:02x}", c.model_lo, c.model_hi);
  std::string out =
      fmt::format("{} family 0x{:x} {}", c.vendor, c.family, models);
  if (c.stepping_lo != 0 || c.stepping_hi != 15) {
    out += fmt::format(" steppings {}-{}", c.stepping_lo, c.stepping_hi);
  }
  return out;
}

std::string CpusText(const Platform& p) {
  std::vector<std::string> parts;
  for (const perfmon::CpuMatch& c : p.cpus) parts.push_back(CpuText(c));
  return common::Join(parts, "; ");
}

const Platform* PlatformOrError(const std::string& name, std::string_view cmd,
                                std::FILE* err) {
  absl::StatusOr<const Platform*> p = spec::LookupPlatform(name);
  if (!p.ok()) {
    std::vector<std::string> models;
    for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords()) {
      if (r.tabled()) continue;
      std::vector<std::string> names = {std::string(r.name())};
      for (std::string_view a : common::Split(r.aliases(), ' ', true)) {
        names.emplace_back(a);
      }
      models.push_back(fmt::format("{} name the built-in {} model",
                                   common::Join(names, " and "), r.title()));
    }
    fmt::print(err, "uncore {}: {} ({})\n", cmd,
               common::StatusMessage(p.status()), common::Join(models, "; "));
    return nullptr;
  }
  return *p;
}

// True when `pattern` names one of the platform's boxes (imc, uncore_imc).
bool IsBox(const Platform& p, std::string_view pattern) {
  return std::any_of(p.events.begin(), p.events.end(), [&](const Event& e) {
    return common::EqualsIgnoreCase(pattern, spec::BoxName(e.pmu)) ||
           common::EqualsIgnoreCase(pattern, e.pmu);
  });
}

// A box name selects that box's events; anything else is a substring of
// "box/SHORT VENDOR_NAME".
bool Selected(const Event& e, std::string_view pattern, bool box_pattern) {
  if (pattern.empty()) return true;
  std::string box = spec::BoxName(e.pmu);
  if (box_pattern) {
    return common::EqualsIgnoreCase(pattern, box) ||
           common::EqualsIgnoreCase(pattern, e.pmu);
  }
  return common::ContainsIgnoreCase(
      fmt::format("{}/{} {}", box, spec::ShortName(e.name), e.name), pattern);
}

// The selected events of one box (PMU prefix), for `uncore list`.
struct BoxGroup {
  std::string box;   // cbox
  std::string pmu;   // uncore_cbox
  std::string unit;  // the vendor's unit name of its first event: C-Box
  std::vector<const Event*> events;
};

std::vector<BoxGroup> BoxGroups(const Platform& p, std::string_view pattern,
                                bool box_pattern) {
  std::vector<BoxGroup> out;
  for (const Event& e : p.events) {
    if (!Selected(e, pattern, box_pattern)) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const BoxGroup& g) { return g.pmu == e.pmu; });
    if (it == out.end()) {
      out.push_back(BoxGroup{
          spec::BoxName(e.pmu), std::string(e.pmu), std::string(e.unit), {}});
      it = out.end() - 1;
    }
    it->events.push_back(&e);
  }
  std::sort(out.begin(), out.end(),
            [](const BoxGroup& a, const BoxGroup& b) { return a.box < b.box; });
  return out;
}

void WriteEventJson(const Event& e, common::JsonWriter* json) {
  json->BeginObject();
  json->Key("name");
  json->String(e.name);
  json->Key("short");
  json->String(
      fmt::format("{}/{}", spec::BoxName(e.pmu), spec::ShortName(e.name)));
  json->Key("box");
  json->String(spec::BoxName(e.pmu));
  json->Key("unit");
  json->String(e.unit);
  json->Key("pmu");
  json->String(e.pmu);
  json->Key("event");
  json->Uint(e.event);
  json->Key("umask");
  json->Uint(e.umask);
  json->Key("terms");
  json->String(spec::PerfTerms(e));
  json->Key("counters");
  json->String(e.counters);
  json->Key("counter_kind");
  json->String(KindName(e.kind));
  json->Key("deprecated");
  json->Bool(e.deprecated);
  // Whether the kernel's format for the PMU can express the event at all
  // (the generator's check against the kernel's format attributes).
  json->Key("opens");
  json->Bool(e.unopenable.empty());
  json->Key("unopenable");
  if (e.unopenable.empty()) {
    json->Null();
  } else {
    json->String(e.unopenable);
  }
  json->EndObject();
}

void WriteMetricJson(const Metric& m, common::JsonWriter* json) {
  json->BeginObject();
  json->Key("name");
  json->String(m.name);
  json->Key("expr");
  json->String(m.expr);
  json->Key("scale_unit");
  json->String(m.scale_unit);
  json->Key("uncore_events");
  std::vector<std::string> events;
  for (std::string_view e : common::Split(m.uncore_events, ' ', true)) {
    events.emplace_back(e);
  }
  json->StringArray(events);
  json->Key("needs_core_events");
  std::vector<std::string> core;
  for (std::string_view e : common::Split(m.core_events, ' ', true)) {
    core.emplace_back(e);
  }
  json->StringArray(core);
  json->Key("sdk_defined");
  json->Bool(m.sdk_defined);
  json->EndObject();
}

// The plan for one resolved event on this machine's PMUs (or the reason
// there is none).
absl::StatusOr<devices::perf::PerfmonPlan> PlanOne(
    const spec::Resolution& r, const spec::ResolvedEvent& e,
    const absl::StatusOr<devices::perf::PmuCatalog>& pmus,
    std::string_view platform) {
  if (!pmus.ok()) return pmus.status();
  spec::Resolution one;
  one.input = r.input;
  one.events.push_back(e);
  return devices::perf::PlanPerfmon({one}, *pmus, platform);
}

std::string OpensText(const absl::StatusOr<devices::perf::PerfmonPlan>& plan) {
  if (!plan.ok()) {
    return fmt::format("none here: {}", common::StatusMessage(plan.status()));
  }
  std::vector<std::string> configs;
  for (const devices::perf::PlannedCounter& c : plan->counters) {
    std::string text = c.config.ToString();
    if (std::find(configs.begin(), configs.end(), text) == configs.end()) {
      configs.push_back(std::move(text));
    }
  }
  return fmt::format("{} ({} PMU{}), {}", common::Join(plan->pmus, " "),
                     plan->pmus.size(), plan->pmus.size() == 1 ? "" : "s",
                     common::Join(configs, "; "));
}

// Group reads one snapshot of the whole resolution costs; 0 when it cannot
// be planned here.
int PlanAll(const spec::Resolution& r, const devices::perf::PmuCatalog& pmus,
            std::string_view platform) {
  absl::StatusOr<devices::perf::PerfmonPlan> plan =
      devices::perf::PlanPerfmon({r}, pmus, platform);
  return plan.ok() ? plan->group_reads : 0;
}

std::string_view ResolutionKind(spec::Resolution::Kind kind) {
  switch (kind) {
    case spec::Resolution::Kind::kComposite:
      return "composite (the events below, summed)";
    case spec::Resolution::Kind::kMetric:
      return "metric";
    case spec::Resolution::Kind::kEvent:
      break;
  }
  return "event";
}

}  // namespace

bool IsModelCatalogPlatform(std::string_view name) {
  const platforms::PlatformRecord* r = spec::FindPlatformRecord(name);
  return r != nullptr && !r->tabled();
}

std::string DefaultPlatformName() {
  return std::string(platforms::DefaultPlatformRecord().name());
}

std::string PlatformOrEnvironment(const std::string& platform) {
  if (!platform.empty()) return platform;
  const char* env = std::getenv("UNCORE_PLATFORM");
  return env != nullptr ? std::string(env) : std::string();
}

std::string DetectedPlatform() {
  absl::StatusOr<devices::perf::PmuCatalog> pmus =
      devices::perf::DiscoverPmus();
  absl::StatusOr<runtime::SessionPlatform> p = runtime::ChooseSessionPlatform(
      "", "auto", /*on_hardware=*/true, machine::ReadCpuIdentity(),
      pmus.ok() ? &*pmus : nullptr);
  return p.ok() && p->record->tabled() ? p->name : std::string();
}

int RunListPlatforms(const ListOptions& options, std::FILE* out,
                     std::FILE* err) {
  (void)err;
  if (options.json) {
    common::JsonWriter json(/*pretty=*/true);
    json.BeginArray();
    for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords()) {
      const Platform* p = r.identity;
      json.BeginObject();
      json.Key("name");
      json.String(p->name);
      json.Key("aliases");
      std::vector<std::string> aliases;
      for (std::string_view a : common::Split(p->aliases, ' ', true)) {
        aliases.emplace_back(a);
      }
      json.StringArray(aliases);
      json.Key("title");
      json.String(p->title);
      json.Key("cpus");
      json.String(CpusText(*p));
      json.Key("hand_made");
      json.Bool(r.hand_made);
      if (r.tabled()) {  // a model's own catalog: `uncore list`
        json.Key("events");
        json.Uint(p->events.size());
        json.Key("metrics");
        json.Uint(p->metrics.size());
      }
      json.Key("source");
      json.String(p->source);
      json.EndObject();
    }
    json.EndArray();
    fmt::print(out, "{}\n", json.Take());
    return kExitOk;
  }
  // Columns as wide as their widest entry ("xeon7500 nhmex").
  size_t alias_width = 8;
  size_t title_width = 24;
  for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords()) {
    alias_width = std::max(alias_width, r.aliases().size());
    title_width = std::max(title_width, r.title().size());
  }
  auto row = [&](std::string_view name, std::string_view alias,
                 std::string_view title, std::string_view events,
                 std::string_view metrics, std::string_view cpus) {
    fmt::print(out, "{:<16} {:<{}} {:<{}} {:>6} {:>7}  {}\n", name, alias,
               alias_width, title, title_width, events, metrics, cpus);
  };
  row("platform", "alias", "title", "events", "metrics", "CPU identity");
  for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords()) {
    const Platform& p = *r.identity;
    if (!r.tabled()) {  // its own catalog, listed by `uncore list`
      row(p.name, p.aliases, p.title, "-", "-",
          fmt::format("{} (uncore list)", CpusText(p)));
      continue;
    }
    row(p.name, p.aliases, p.title, std::to_string(p.events.size()),
        std::to_string(p.metrics.size()), CpusText(p));
  }
  fmt::print(out,
             "\nperf-only platforms: tables generated from vendor data "
             "(docs/platforms.md);\nuse --platform NAME with list and "
             "describe, or set UNCORE_PLATFORM.\n");
  return kExitOk;
}

int RunListPlatform(const ListOptions& options, std::FILE* out,
                    std::FILE* err) {
  const Platform* p = PlatformOrError(options.platform, "list", err);
  if (p == nullptr) return kExitUsage;
  const std::string_view pattern = options.pattern;
  const bool box_pattern = IsBox(*p, pattern);
  if (options.json) {
    common::JsonWriter json(/*pretty=*/true);
    json.BeginObject();
    json.Key("platform");
    json.String(p->name);
    json.Key("title");
    json.String(p->title);
    json.Key("source");
    json.String(p->source);
    json.Key("events");
    json.BeginArray();
    if (!options.metrics) {
      for (const Event& e : p->events) {
        if (Selected(e, pattern, box_pattern)) WriteEventJson(e, &json);
      }
    }
    json.EndArray();
    json.Key("composites");
    json.BeginArray();
    if (!options.metrics) {
      for (const Composite& c : p->composites) {
        if (!pattern.empty() && !common::ContainsIgnoreCase(c.name, pattern)) {
          continue;
        }
        json.BeginObject();
        json.Key("name");
        json.String(c.name);
        json.Key("parts");
        std::vector<std::string> parts;
        for (std::string_view part : common::Split(c.parts, ' ', true)) {
          parts.emplace_back(part);
        }
        json.StringArray(parts);
        json.EndObject();
      }
    }
    json.EndArray();
    json.Key("metrics");
    json.BeginArray();
    for (const Metric& m : p->metrics) {
      if (pattern.empty() || common::ContainsIgnoreCase(m.name, pattern)) {
        WriteMetricJson(m, &json);
      }
    }
    json.EndArray();
    json.EndObject();
    fmt::print(out, "{}\n", json.Take());
    return kExitOk;
  }
  size_t shown = 0;
  size_t unopenable = 0;
  if (options.metrics) {
    for (const Metric& m : p->metrics) {
      if (!pattern.empty() && !common::ContainsIgnoreCase(m.name, pattern)) {
        continue;
      }
      ++shown;
      fmt::print(out, "metric/{:<44} {}{}\n", m.name, m.expr,
                 m.core_events.empty()
                     ? std::string()
                     : fmt::format("  [needs core events: {}]", m.core_events));
    }
  } else {
    // One section per box (PMU), boxes in name order, events in table
    // order within each.
    for (const BoxGroup& box : BoxGroups(*p, pattern, box_pattern)) {
      fmt::print(out, "{}{} ({}, PMU {}): {} event{}\n", shown == 0 ? "" : "\n",
                 box.box, box.unit, box.pmu, box.events.size(),
                 box.events.size() == 1 ? "" : "s");
      for (const Event* e : box.events) {
        ++shown;
        if (!e->unopenable.empty()) ++unopenable;
        fmt::print(
            out, "  {:<50} {:<44} {}/{}/{}{}\n",
            fmt::format("{}/{}", box.box, spec::ShortName(e->name)), e->name,
            e->pmu, spec::PerfTerms(*e), e->deprecated ? "  (deprecated)" : "",
            e->unopenable.empty()
                ? std::string()
                : fmt::format("  (cannot be opened: {})", e->unopenable));
      }
    }
    for (const Composite& c : p->composites) {
      if (!pattern.empty() && !common::ContainsIgnoreCase(c.name, pattern)) {
        continue;
      }
      ++shown;
      fmt::print(out, "{:<52} = {}\n", c.name, c.parts);
    }
  }
  if (shown == 0) {
    fmt::print(err, "uncore list: nothing on {} matches '{}'\n", p->name,
               pattern);
    return kExitUsage;
  }
  fmt::print(out, "\n{} {} on {} ({}); source: {}\n", shown,
             options.metrics ? "metrics" : "entries", p->name, p->title,
             p->source);
  if (unopenable > 0) {
    fmt::print(out,
               "{} of them no kernel format can open (marked \"cannot be "
               "opened\"): listed as the vendor names them\n",
               unopenable);
  }
  return kExitOk;
}

int RunDescribePlatform(const DescribeOptions& options, std::FILE* out,
                        std::FILE* err) {
  const Platform* p = PlatformOrError(options.platform, "describe", err);
  if (p == nullptr) return kExitUsage;
  if (options.registers) {
    fmt::print(err,
               "uncore describe: --registers shows the direct backend's "
               "writes, which only the register platforms have ({}); {} is "
               "counted through perf\n",
               runtime::RegisterPlatformNames(), p->name);
    return kExitUsage;
  }
  absl::StatusOr<spec::Resolution> r =
      spec::ResolveOnPlatform(*p, options.spec);
  if (!r.ok()) {
    fmt::print(err, "uncore describe: {}\n", common::StatusMessage(r.status()));
    return kExitUsage;
  }
  const absl::StatusOr<devices::perf::PmuCatalog> pmus =
      devices::perf::DiscoverPmus(options.sysfs);
  if (options.json) {
    common::JsonWriter json(/*pretty=*/true);
    json.BeginObject();
    json.Key("platform");
    json.String(p->name);
    json.Key("spec");
    json.String(r->input);
    json.Key("kind");
    json.String(r->kind == spec::Resolution::Kind::kMetric      ? "metric"
                : r->kind == spec::Resolution::Kind::kComposite ? "composite"
                                                                : "event");
    json.Key("name");
    json.String(r->name);
    if (r->metric != nullptr) {
      json.Key("metric");
      WriteMetricJson(*r->metric, &json);
    }
    json.Key("events");
    json.BeginArray();
    for (const spec::ResolvedEvent& e : r->events) {
      absl::StatusOr<devices::perf::PerfmonPlan> plan =
          PlanOne(*r, e, pmus, p->name);
      json.BeginObject();
      json.Key("name");
      json.String(e.event != nullptr ? e.event->name : std::string_view());
      json.Key("pmu");
      json.String(e.pmu);
      json.Key("terms");
      json.String(e.terms);
      json.Key("perf");
      json.String(e.PerfSpelling());
      json.Key("pmus");
      json.StringArray(plan.ok() ? plan->pmus : std::vector<std::string>());
      json.EndObject();
    }
    json.EndArray();
    json.Key("group_reads_per_snapshot");
    json.Int(pmus.ok() ? PlanAll(*r, *pmus, p->name) : 0);
    json.Key("reads");
    ReadCostJson(PlanReadCost(spec::ToPerfEventSpecs(*r), options.sysfs),
                 &json);
    json.EndObject();
    fmt::print(out, "{}\n", json.Take());
    return kExitOk;
  }
  fmt::print(out, "{:<10} {} ({})\n", "platform", p->name, p->title);
  fmt::print(out, "{:<10} {}\n", "spec", r->input);
  fmt::print(out, "{:<10} {}\n", "kind", ResolutionKind(r->kind));
  if (!r->name.empty()) fmt::print(out, "{:<10} {}\n", "name", r->name);
  if (r->metric != nullptr) {
    fmt::print(out, "{:<10} {}\n", "formula", r->metric->expr);
    fmt::print(out, "{:<10} {}\n", "unit", r->metric->scale_unit);
    if (!r->metric->core_events.empty()) {
      fmt::print(out, "{:<10} needs core events too: {}\n", "note",
                 r->metric->core_events);
    }
  }
  for (const spec::ResolvedEvent& e : r->events) {
    absl::StatusOr<devices::perf::PerfmonPlan> plan =
        PlanOne(*r, e, pmus, p->name);
    fmt::print(out, "\n");
    if (e.event != nullptr) {
      fmt::print(out, "{:<10} {} (unit {})\n", "event", e.event->name,
                 e.event->unit);
    } else {
      fmt::print(out,
                 "{:<10} raw terms: no event of the vendor list has "
                 "them\n",
                 "event");
    }
    fmt::print(out, "{:<10} {}\n", "perf", e.PerfSpelling());
    if (e.event != nullptr && !e.event->counters.empty()) {
      fmt::print(out, "{:<10} {} ({})\n", "counters", e.event->counters,
                 KindName(e.event->kind));
    }
    fmt::print(out, "{:<10} {}\n", "opens", OpensText(plan));
  }
  if (pmus.ok() && r->metric != nullptr) {
    // Bandwidth could also come from the kernel's free-running counters.
    std::vector<std::string> pmu_names;
    for (const spec::ResolvedEvent& e : r->events) {
      if (std::find(pmu_names.begin(), pmu_names.end(), e.pmu) ==
          pmu_names.end()) {
        pmu_names.push_back(e.pmu);
      }
    }
    for (const std::string& name : pmu_names) {
      std::vector<const devices::perf::Pmu*> free =
          devices::perf::FreeRunningPmus(*pmus, name);
      if (free.empty()) continue;
      std::vector<std::string> names;
      std::vector<std::string> aliases;
      for (const devices::perf::Pmu* f : free) {
        names.push_back(f->name);
        for (const devices::perf::EventAlias& a : f->aliases) {
          if (std::find(aliases.begin(), aliases.end(), a.name) ==
              aliases.end()) {
            aliases.push_back(a.name);
          }
        }
      }
      fmt::print(
          out, "{:<10} {} also count{} without programming (events: {})\n",
          "free-run", common::Join(names, " "), names.size() == 1 ? "s" : "",
          aliases.empty() ? std::string("none listed")
                          : common::Join(aliases, ", "));
    }
  }
  if (pmus.ok() && PlanAll(*r, *pmus, p->name) > 0) {
    // One group read per PMU instance and CPU it is bound to, and which of
    // them cross CPUs from here (tools/cli/read_cost.h).
    std::string text = "\n";
    ReadCostText(PlanReadCost(spec::ToPerfEventSpecs(*r), options.sysfs),
                 &text);
    fmt::print(out, "{}", text);
  }
  return kExitOk;
}

}  // namespace uncore::cli
