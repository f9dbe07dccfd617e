#include "sdk/spec/platform_catalog.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"

namespace uncore::spec {
namespace {

using perfmon::Composite;
using perfmon::Event;
using perfmon::Metric;
using perfmon::Platform;

constexpr std::string_view kMetricPrefix = "metric/";

bool NameInList(std::string_view name, std::string_view space_separated) {
  for (std::string_view alias :
       common::Split(space_separated, ' ', /*skip_empty=*/true)) {
    if (common::EqualsIgnoreCase(name, alias)) return true;
  }
  return false;
}

const Event* FindEvent(const Platform& platform, std::string_view name) {
  for (const Event& e : platform.events) {
    if (common::EqualsIgnoreCase(e.name, name)) return &e;
  }
  return nullptr;
}

const Composite* FindComposite(const Platform& platform,
                               std::string_view name) {
  for (const Composite& c : platform.composites) {
    if (common::EqualsIgnoreCase(c.name, name)) return &c;
  }
  return nullptr;
}

ResolvedEvent FromEvent(const Event& e, std::optional<int> instance) {
  return ResolvedEvent{&e, std::string(e.pmu), instance, PerfTerms(e)};
}

// The events a space-separated list names; an entry may carry extra terms
// after a comma (a metric's "NAME,config1=0x40433").
absl::StatusOr<std::vector<ResolvedEvent>> ResolveList(
    const Platform& platform, std::string_view list, std::string_view owner,
    std::optional<int> instance) {
  std::vector<ResolvedEvent> out;
  for (std::string_view ref : common::Split(list, ' ', /*skip_empty=*/true)) {
    std::string_view extra;
    if (size_t comma = ref.find(','); comma != std::string_view::npos) {
      extra = ref.substr(comma + 1);
      ref = ref.substr(0, comma);
    }
    const Event* e = FindEvent(platform, ref);
    if (e == nullptr) {
      return absl::InternalError(fmt::format(
          "{} on {} reads {}, which is not in the platform's table: "
          "regenerate the tables (tools/gen_perfmon_platforms.py)",
          owner, platform.name, ref));
    }
    ResolvedEvent r = FromEvent(*e, instance);
    if (!extra.empty()) r.terms += fmt::format(",{}", extra);
    out.push_back(std::move(r));
  }
  return out;
}

// Every PMU prefix the platform uses.
std::vector<std::string> Pmus(const Platform& platform) {
  std::vector<std::string> out;
  for (const Event& e : platform.events) {
    if (std::find(out.begin(), out.end(), e.pmu) == out.end()) {
      out.emplace_back(e.pmu);
    }
  }
  return out;
}

struct Target {
  std::string pmu;
  std::optional<int> instance;
};

// Whether `key` carries the event select of some event on `pmu`: "event",
// or e.g. the Xeon 7500 M-Box's "inc_sel" and "set_flag_sel".
bool IsEventTerm(const Platform& platform, std::string_view pmu,
                 std::string_view key) {
  if (key == "event") return true;
  for (const Event& e : platform.events) {
    if (e.pmu == pmu && e.event_term == key) return true;
  }
  return false;
}

// "imc", "uncore_imc", "uncore_imc_3", "umc", "amd_umc_0" -> PMU + instance.
std::optional<Target> ParseTarget(const Platform& platform,
                                  std::string_view text) {
  const std::vector<std::string> pmus = Pmus(platform);
  for (const std::string& pmu : pmus) {
    if (common::EqualsIgnoreCase(text, pmu) ||
        common::EqualsIgnoreCase(text, BoxName(pmu))) {
      return Target{pmu, std::nullopt};
    }
  }
  // A numbered instance: the longest PMU (or box) name followed by _N.
  size_t underscore = text.rfind('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  std::string_view digits = text.substr(underscore + 1);
  int n = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() ||
      digits.empty()) {
    return std::nullopt;
  }
  std::string_view base = text.substr(0, underscore);
  for (const std::string& pmu : pmus) {
    if (common::EqualsIgnoreCase(base, pmu) ||
        common::EqualsIgnoreCase(base, BoxName(pmu))) {
      return Target{pmu, n};
    }
  }
  return std::nullopt;
}

// `text` as 5 or 0x5 (no spaces around it).
absl::StatusOr<uint64_t> ParseNumber(std::string_view text,
                                     std::string_view input) {
  std::optional<uint64_t> value;
  if (text == common::StripWhitespace(text)) {
    value = common::ParseUnsigned(text);
  }
  if (!value.has_value()) {
    return absl::InvalidArgumentError(fmt::format(
        "'{}': '{}' is not a number (write 5 or 0x5)", input, text));
  }
  return *value;
}

std::string Hex(uint64_t v) { return fmt::format("0x{:02x}", v); }

// Kernel syntax: "event=0x5,umask=0xcf[,more]" on `target`.
absl::StatusOr<Resolution> ResolveTerms(const Platform& platform,
                                        const Target& target,
                                        std::string_view body,
                                        std::string_view input) {
  std::optional<uint64_t> event;
  std::string event_key = "event";
  uint64_t umask = 0;
  std::vector<std::string> extra;
  for (std::string_view term : common::Split(body, ',', /*skip_empty=*/true)) {
    term = common::StripWhitespace(term);
    size_t eq = term.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(fmt::format(
          "'{}': term '{}' needs a value (write {}=0x1)", input, term, term));
    }
    std::string key = common::ToLower(term.substr(0, eq));
    absl::StatusOr<uint64_t> value = ParseNumber(term.substr(eq + 1), input);
    if (!value.ok()) return value.status();
    if (!event.has_value() && IsEventTerm(platform, target.pmu, key)) {
      event = *value;
      event_key = key;
    } else if (key == "umask") {
      umask = *value;
    } else {
      extra.push_back(fmt::format("{}=0x{:x}", key, *value));
    }
  }
  if (!event.has_value()) {
    return absl::InvalidArgumentError(fmt::format(
        "'{}': kernel syntax needs event=, e.g. {}/event=0x5,umask=0xcf/",
        input, target.pmu));
  }
  std::string extra_terms = common::Join(extra, ",");
  Resolution out;
  out.kind = Resolution::Kind::kEvent;
  out.input = std::string(input);
  // The listed event whose own terms are all among those given (the most
  // of them); the rest are the user's (the S-Box's match and mask).
  const Event* best = nullptr;
  std::vector<std::string> best_rest;
  for (const Event& e : platform.events) {
    if (e.pmu != target.pmu || e.event != *event || e.umask != umask ||
        e.event_term != event_key) {
      continue;
    }
    std::vector<std::string> rest = extra;
    bool all = true;
    for (std::string_view own : common::Split(e.terms, ',', true)) {
      const size_t eq = own.find('=');
      absl::StatusOr<uint64_t> v = eq == std::string_view::npos
                                       ? absl::StatusOr<uint64_t>(1)
                                       : ParseNumber(own.substr(eq + 1), input);
      const std::string normal = fmt::format(
          "{}=0x{:x}", common::ToLower(own.substr(0, eq)), v.value_or(0));
      auto it = std::find(rest.begin(), rest.end(), normal);
      if (!v.ok() || it == rest.end()) {
        all = false;
        break;
      }
      rest.erase(it);
    }
    if (all && (best == nullptr || rest.size() < best_rest.size())) {
      best = &e;
      best_rest = std::move(rest);
    }
  }
  if (best != nullptr) {
    out.name = std::string(best->name);
    out.events.push_back(FromEvent(*best, target.instance));
    if (!best_rest.empty()) {
      out.events.back().terms +=
          fmt::format(",{}", common::Join(best_rest, ","));
    }
    return out;
  }
  std::string terms = fmt::format("{}={}", event_key, Hex(*event));
  if (umask != 0) terms += fmt::format(",umask={}", Hex(umask));
  if (!extra_terms.empty()) terms += "," + extra_terms;
  out.events.push_back(
      ResolvedEvent{nullptr, target.pmu, target.instance, std::move(terms)});
  return out;
}

std::vector<std::string> Candidates(const Platform& platform,
                                    const std::optional<Target>& target) {
  std::vector<std::string> out;
  for (const Event& e : platform.events) {
    if (target.has_value()) {
      if (e.pmu != target->pmu) continue;
      out.push_back(fmt::format("{}/{}", BoxName(e.pmu), ShortName(e.name)));
    } else {
      out.emplace_back(e.name);
    }
  }
  for (const Composite& c : platform.composites) out.emplace_back(c.name);
  if (!target.has_value()) {
    for (const Metric& m : platform.metrics) {
      out.push_back(fmt::format("metric/{}", m.name));
    }
  }
  return out;
}

absl::Status UnknownName(const Platform& platform, std::string_view input,
                         std::string_view name,
                         const std::optional<Target>& target) {
  std::vector<std::string> candidates = Candidates(platform, target);
  std::string probe =
      target.has_value()
          ? fmt::format("{}/{}", BoxName(target->pmu), std::string(name))
          : std::string(name);
  std::vector<std::string> near = common::ClosestNames(probe, candidates, 5);
  if (near.empty() && !target.has_value()) {
    // Perhaps a short name without its box.
    for (const Event& e : platform.events) {
      if (common::EqualsIgnoreCase(ShortName(e.name), name)) {
        near.push_back(fmt::format("{}/{}", BoxName(e.pmu), ShortName(e.name)));
      }
    }
  }
  return absl::NotFoundError(fmt::format(
      "'{}' is not an uncore event or metric of platform {} ({}){}; "
      "`uncore list --platform {}` lists them",
      input, platform.name, platform.title,
      near.empty() ? std::string()
                   : fmt::format("; closest: {}", common::Join(near, ", ")),
      platform.name));
}

absl::StatusOr<Resolution> ResolveMetric(const Platform& platform,
                                         const Metric& m,
                                         std::string_view input) {
  Resolution out;
  out.kind = Resolution::Kind::kMetric;
  out.input = std::string(input);
  out.name = std::string(m.name);
  out.metric = &m;
  absl::StatusOr<std::vector<ResolvedEvent>> events =
      ResolveList(platform, m.uncore_events, m.name, std::nullopt);
  if (!events.ok()) return events.status();
  out.events = *std::move(events);
  return out;
}

absl::StatusOr<Resolution> ResolveComposite(const Platform& platform,
                                            const Composite& c,
                                            std::optional<int> instance,
                                            std::string_view input) {
  Resolution out;
  out.kind = Resolution::Kind::kComposite;
  out.input = std::string(input);
  out.name = std::string(c.name);
  absl::StatusOr<std::vector<ResolvedEvent>> events =
      ResolveList(platform, c.parts, c.name, instance);
  if (!events.ok()) return events.status();
  out.events = *std::move(events);
  return out;
}

Resolution SingleEvent(const Event& e, std::optional<int> instance,
                       std::string_view input) {
  Resolution out;
  out.kind = Resolution::Kind::kEvent;
  out.input = std::string(input);
  out.name = std::string(e.name);
  out.events.push_back(FromEvent(e, instance));
  return out;
}

// The error of LookupPlatform and LookupPlatformRecord: no platform answers
// to `name`; `names` are the ones that would.
absl::Status UnknownPlatform(std::string_view name,
                             const std::vector<std::string>& names) {
  std::vector<std::string> near = common::ClosestNames(name, names, 3);
  return absl::NotFoundError(fmt::format(
      "no platform '{}'{}; `uncore list --platforms` lists them: {}",
      common::QuoteForMessage(name),
      near.empty() ? std::string()
                   : fmt::format(" (closest: {})", common::Join(near, ", ")),
      common::Join(names, ", ")));
}

}  // namespace

bool PlatformAnswersTo(const perfmon::Platform& platform,
                       std::string_view name) {
  name = common::StripWhitespace(name);
  return common::EqualsIgnoreCase(platform.name, name) ||
         NameInList(name, platform.aliases);
}

const perfmon::Platform* FindPlatform(std::string_view name) {
  for (const Platform* p : perfmon::AllPlatforms()) {
    if (PlatformAnswersTo(*p, name)) return p;
  }
  return nullptr;
}

absl::StatusOr<const perfmon::Platform*> LookupPlatform(std::string_view name) {
  if (const Platform* p = FindPlatform(name)) return p;
  std::vector<std::string> names;
  for (const Platform* p : perfmon::AllPlatforms()) names.emplace_back(p->name);
  return UnknownPlatform(name, names);
}

const platforms::PlatformRecord* FindPlatformRecord(std::string_view name) {
  for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords()) {
    if (PlatformAnswersTo(*r.identity, name)) return &r;
  }
  return nullptr;
}

absl::StatusOr<const platforms::PlatformRecord*> LookupPlatformRecord(
    std::string_view name) {
  if (const platforms::PlatformRecord* r = FindPlatformRecord(name)) return r;
  std::vector<std::string> names;
  for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords()) {
    names.emplace_back(r.name());
  }
  return UnknownPlatform(name, names);
}

const platforms::PlatformRecord* PlatformRecordForCpu(std::string_view vendor,
                                                      int family, int model,
                                                      int stepping) {
  for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords()) {
    for (const perfmon::CpuMatch& c : r.identity->cpus) {
      if (c.vendor == vendor && c.family == family && model >= c.model_lo &&
          model <= c.model_hi &&
          (stepping < 0 ||
           (stepping >= c.stepping_lo && stepping <= c.stepping_hi))) {
        return &r;
      }
    }
  }
  return nullptr;
}

const perfmon::Platform* PlatformForCpu(std::string_view vendor, int family,
                                        int model, int stepping) {
  for (const Platform* p : perfmon::AllPlatforms()) {
    for (const perfmon::CpuMatch& c : p->cpus) {
      if (c.vendor == vendor && c.family == family && model >= c.model_lo &&
          model <= c.model_hi && stepping >= c.stepping_lo &&
          stepping <= c.stepping_hi) {
        return p;
      }
    }
  }
  return nullptr;
}

std::vector<const perfmon::Platform*> PlatformsForModel(std::string_view vendor,
                                                        int family, int model) {
  std::vector<const Platform*> out;
  for (const Platform* p : perfmon::AllPlatforms()) {
    if (platforms::CpuIsOf(*p, vendor, family, model)) out.push_back(p);
  }
  return out;
}

std::string BoxName(std::string_view pmu) {
  for (std::string_view prefix : {"uncore_", "amd_"}) {
    if (pmu.starts_with(prefix)) return std::string(pmu.substr(prefix.size()));
  }
  return std::string(pmu);
}

std::string ShortName(std::string_view vendor_name) {
  if (!common::StartsWithIgnoreCase(vendor_name, "UNC_")) {
    return std::string(vendor_name);
  }
  std::string_view rest = vendor_name.substr(4);
  size_t underscore = rest.find('_');
  size_t dot = rest.find('.');
  if (underscore == std::string_view::npos || underscore + 1 >= rest.size() ||
      (dot != std::string_view::npos && dot < underscore)) {
    return std::string(vendor_name);
  }
  return std::string(rest.substr(underscore + 1));
}

std::string PerfTerms(const perfmon::Event& event) {
  std::string out = fmt::format("{}={}", event.event_term, Hex(event.event));
  if (event.umask != 0) out += fmt::format(",umask={}", Hex(event.umask));
  if (!event.terms.empty()) out += fmt::format(",{}", event.terms);
  return out;
}

std::string ResolvedEvent::PerfSpelling() const {
  return fmt::format(
      "{}_{}/{}/", pmu,
      instance.has_value() ? std::to_string(*instance) : std::string("N"),
      terms);
}

std::string ResolvedEvent::DisplayName() const {
  if (event == nullptr) return PerfSpelling();
  std::string out = instance.has_value()
                        ? fmt::format("{}_{}/{}", pmu, *instance, event->name)
                        : std::string(event->name);
  const std::string own = PerfTerms(*event);
  if (terms.size() > own.size() + 1 && terms.starts_with(own) &&
      terms[own.size()] == ',') {
    out += fmt::format(":{}", terms.substr(own.size() + 1));
  }
  return out;
}

std::vector<EventSpec> ToPerfEventSpecs(const Resolution& resolution) {
  std::vector<EventSpec> out;
  out.reserve(resolution.events.size());
  for (const ResolvedEvent& e : resolution.events) {
    EventSpec spec;
    spec.kind = EventSpec::Kind::kGenericPerf;
    spec.pmu = e.instance.has_value() ? fmt::format("{}_{}", e.pmu, *e.instance)
                                      : e.pmu;
    spec.text = e.DisplayName();
    for (std::string_view term :
         common::Split(e.terms, ',', /*skip_empty=*/true)) {
      const size_t eq = term.find('=');
      PerfTerm t{std::string(term.substr(0, eq)), std::nullopt};
      if (eq != std::string_view::npos) {
        absl::StatusOr<uint64_t> v = ParseNumber(term.substr(eq + 1), e.terms);
        if (v.ok()) t.value = *v;
      }
      spec.perf_terms.push_back(std::move(t));
    }
    out.push_back(std::move(spec));
  }
  return out;
}

absl::StatusOr<Resolution> ResolveMetricOnPlatform(
    const perfmon::Platform& platform, std::string_view text) {
  const std::string_view name = common::StripWhitespace(text);
  return ResolveOnPlatform(platform,
                           common::StartsWithIgnoreCase(name, kMetricPrefix)
                               ? std::string(name)
                               : fmt::format("{}{}", kMetricPrefix, name));
}

std::optional<EventSpec> KernelSyntaxEvent(std::string_view text) {
  text = common::StripWhitespace(text);
  const size_t slash = text.find('/');
  if (slash == 0 || slash == std::string_view::npos || !text.ends_with('/') ||
      slash + 1 >= text.size()) {
    return std::nullopt;
  }
  EventSpec e;
  e.kind = EventSpec::Kind::kGenericPerf;
  e.text = std::string(text);
  e.pmu = std::string(text.substr(0, slash));
  const std::string_view body = text.substr(slash + 1, text.size() - slash - 2);
  for (std::string_view term : common::Split(body, ',', true)) {
    const size_t eq = term.find('=');
    PerfTerm t{std::string(common::StripWhitespace(term.substr(0, eq))),
               std::nullopt};
    if (eq != std::string_view::npos) {
      std::optional<uint64_t> v =
          common::ParseUnsigned(common::StripWhitespace(term.substr(eq + 1)));
      if (!v) return std::nullopt;
      t.value = *v;
    }
    e.perf_terms.push_back(std::move(t));
  }
  return e;
}

const perfmon::Metric* FindMetric(const perfmon::Platform& platform,
                                  std::string_view name) {
  if (common::StartsWithIgnoreCase(name, kMetricPrefix)) {
    name.remove_prefix(kMetricPrefix.size());
  }
  for (const Metric& m : platform.metrics) {
    if (common::EqualsIgnoreCase(m.name, name)) return &m;
  }
  return nullptr;
}

absl::StatusOr<Resolution> ResolveOnPlatform(const perfmon::Platform& platform,
                                             std::string_view text) {
  std::string_view input = common::StripWhitespace(text);
  if (input.empty()) {
    return absl::InvalidArgumentError(
        "empty event name: write e.g. imc/CAS_COUNT.RD or metric/MEM_BW_TOTAL");
  }
  // metric/NAME
  if (common::StartsWithIgnoreCase(input, kMetricPrefix)) {
    std::string_view name = input.substr(kMetricPrefix.size());
    if (const Metric* m = FindMetric(platform, name)) {
      return ResolveMetric(platform, *m, input);
    }
    if ((common::EqualsIgnoreCase(name, "MEM_BW_READS") ||
         common::EqualsIgnoreCase(name, "MEM_BW_WRITES")) &&
        FindMetric(platform, "MEM_BW_TOTAL") != nullptr) {
      return absl::NotFoundError(fmt::format(
          "'{}' is not available on platform {} ({}): its memory events do "
          "not separate reads from writes; use metric/MEM_BW_TOTAL",
          input, platform.name, platform.title));
    }
    std::vector<std::string> names;
    for (const Metric& m : platform.metrics) names.emplace_back(m.name);
    std::vector<std::string> near = common::ClosestNames(name, names, 5);
    return absl::NotFoundError(fmt::format(
        "'{}' is not a metric of platform {} ({}){}; `uncore list --platform "
        "{} --metrics` lists them",
        input, platform.name, platform.title,
        near.empty() ? std::string()
                     : fmt::format("; closest: {}", common::Join(near, ", ")),
        platform.name));
  }
  size_t slash = input.find('/');
  if (slash == std::string_view::npos) {
    // A bare name: the vendor's event, a composite, or a metric.
    if (const Event* e = FindEvent(platform, input)) {
      return SingleEvent(*e, std::nullopt, input);
    }
    if (const Composite* c = FindComposite(platform, input)) {
      return ResolveComposite(platform, *c, std::nullopt, input);
    }
    if (const Metric* m = FindMetric(platform, input)) {
      return ResolveMetric(platform, *m, input);
    }
    return UnknownName(platform, input, input, std::nullopt);
  }
  // NAME:term=v,...: a named event with the user's terms (the S-Box's
  // TO_R_PROG_EV:match=0x1,mask=0x1).
  if (size_t colon = input.find(':');
      colon != std::string_view::npos && !input.ends_with('/')) {
    absl::StatusOr<Resolution> base =
        ResolveOnPlatform(platform, input.substr(0, colon));
    if (!base.ok()) return base.status();
    if (base->kind != Resolution::Kind::kEvent || base->events.size() != 1) {
      return absl::InvalidArgumentError(fmt::format(
          "'{}': terms after ':' go with one event, and '{}' is a {}", input,
          input.substr(0, colon),
          base->kind == Resolution::Kind::kMetric ? "metric" : "composite"));
    }
    std::string& terms = base->events[0].terms;
    for (std::string_view term :
         common::Split(input.substr(colon + 1), ',', true)) {
      for (std::string_view part : common::Split(term, ':', true)) {
        part = common::StripWhitespace(part);
        const size_t eq = part.find('=');
        absl::StatusOr<uint64_t> v =
            eq == std::string_view::npos
                ? absl::StatusOr<uint64_t>(1)
                : ParseNumber(part.substr(eq + 1), input);
        if (!v.ok()) return v.status();
        terms +=
            fmt::format(",{}=0x{:x}", common::ToLower(part.substr(0, eq)), *v);
      }
    }
    base->input = std::string(input);
    return base;
  }
  // TARGET/BODY[/]
  std::string_view target_text = input.substr(0, slash);
  std::string_view body = input.substr(slash + 1);
  if (body.ends_with('/')) body.remove_suffix(1);
  std::optional<Target> target = ParseTarget(platform, target_text);
  if (!target.has_value()) {
    std::vector<std::string> boxes;
    for (const std::string& pmu : Pmus(platform)) {
      boxes.push_back(BoxName(pmu));
    }
    std::vector<std::string> near = common::ClosestNames(target_text, boxes, 3);
    return absl::NotFoundError(fmt::format(
        "'{}': platform {} has no uncore PMU '{}'{}; its boxes: {}", input,
        platform.name, target_text,
        near.empty() ? std::string()
                     : fmt::format(" (closest: {})", common::Join(near, ", ")),
        common::Join(boxes, ", ")));
  }
  if (body.find('=') != std::string_view::npos) {
    return ResolveTerms(platform, *target, body, input);
  }
  // A name on the box: short or full vendor name, or a composite.
  for (const Event& e : platform.events) {
    if (e.pmu != target->pmu) continue;
    if (common::EqualsIgnoreCase(e.name, body) ||
        common::EqualsIgnoreCase(ShortName(e.name), body)) {
      return SingleEvent(e, target->instance, input);
    }
  }
  for (const Composite& c : platform.composites) {
    if (common::EqualsIgnoreCase(c.name, body) ||
        common::EqualsIgnoreCase(ShortName(c.name), body)) {
      absl::StatusOr<Resolution> r =
          ResolveComposite(platform, c, target->instance, input);
      if (r.ok() && !r->events.empty() && r->events[0].pmu == target->pmu) {
        return r;
      }
    }
  }
  return UnknownName(platform, input, body, target);
}

}  // namespace uncore::spec
