#include "sdk/devices/perf/perfmon_plan.h"

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
#include "sdk/common/status_macros.h"
#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"
#include "sdk/devices/device.h"
#include "sdk/devices/perf/perf_device.h"

namespace uncore::devices::perf {
namespace {

// The instance number of `name` when it is `pmu_<digits>`; -1 for `pmu`
// itself; nullopt otherwise.
std::optional<int> InstanceNumber(std::string_view name, std::string_view pmu) {
  if (name == pmu) return -1;
  if (name.size() <= pmu.size() + 1 || !name.starts_with(pmu) ||
      name[pmu.size()] != '_') {
    return std::nullopt;
  }
  std::string_view digits = name.substr(pmu.size() + 1);
  int n = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return n;
}

// `text` as 5 or 0x5 (no spaces around it).
absl::StatusOr<uint64_t> ParseValue(std::string_view text) {
  std::optional<uint64_t> v;
  if (text == common::StripWhitespace(text)) v = common::ParseUnsigned(text);
  if (!v.has_value()) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not a number", text));
  }
  return *v;
}

}  // namespace

std::vector<const Pmu*> PmuInstances(const PmuCatalog& catalog,
                                     std::string_view pmu,
                                     std::optional<int> instance) {
  std::vector<std::pair<int, const Pmu*>> found;
  for (const Pmu& p : catalog.pmus) {
    std::optional<int> n = InstanceNumber(p.name, pmu);
    if (!n.has_value()) continue;
    if (instance.has_value() && *n != *instance) continue;
    found.emplace_back(*n, &p);
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const Pmu*> out;
  out.reserve(found.size());
  for (const auto& [n, p] : found) out.push_back(p);
  return out;
}

std::vector<const Pmu*> FreeRunningPmus(const PmuCatalog& catalog,
                                        std::string_view pmu) {
  return PmuInstances(catalog, fmt::format("{}_free_running", pmu),
                      std::nullopt);
}

absl::StatusOr<PerfmonPlan> PlanPerfmon(
    const std::vector<spec::Resolution>& resolutions, const PmuCatalog& catalog,
    std::string_view platform_name) {
  // The events as a session programs them (spec::ToPerfEventSpecs), planned
  // by the planner PerfDevice::Program runs: what `describe` shows is what
  // a session opens.  Only the messages for a PMU that is not here and a
  // term that is not a number are this function's own.
  ProgramRequest request;
  std::vector<size_t> resolution_of;
  std::vector<std::string> name_of;
  for (size_t i = 0; i < resolutions.size(); ++i) {
    for (const spec::ResolvedEvent& e : resolutions[i].events) {
      if (PmuInstances(catalog, e.pmu, e.instance).empty()) {
        std::string which = e.instance.has_value()
                                ? fmt::format("{}_{}", e.pmu, *e.instance)
                                : fmt::format("{} or {}_N", e.pmu, e.pmu);
        std::vector<std::string> near = catalog.NamesStartingWith(e.pmu);
        return absl::NotFoundError(fmt::format(
            "'{}' needs the kernel PMU {}, which is not here: this machine "
            "is not {}, or its uncore driver is not loaded{}",
            resolutions[i].input, which,
            platform_name.empty() ? std::string("the platform named")
                                  : std::string(platform_name),
            near.empty()
                ? std::string()
                : fmt::format(" (it has {})", common::Join(near, ", "))));
      }
      for (std::string_view term :
           common::Split(e.terms, ',', /*skip_empty=*/true)) {
        const size_t eq = term.find('=');
        if (eq == std::string_view::npos) continue;
        absl::StatusOr<uint64_t> v = ParseValue(term.substr(eq + 1));
        if (!v.ok()) {
          return absl::InvalidArgumentError(fmt::format(
              "{}/{}/: {}", e.pmu, e.terms, common::StatusMessage(v.status())));
        }
      }
      resolution_of.push_back(i);
      name_of.push_back(e.event != nullptr ? std::string(e.event->name)
                                           : e.terms);
    }
    for (spec::EventSpec& s : spec::ToPerfEventSpecs(resolutions[i])) {
      request.events.push_back(std::move(s));
    }
  }
  UNCORE_ASSIGN_OR_RETURN(const std::vector<PerfCounter> counters,
                          PlanPerfCounters(request, catalog));
  PerfmonPlan plan;
  for (const PerfCounter& c : counters) {
    // One row per event and PMU instance (the planner opens it once per
    // socket the instance serves).
    const bool seen = std::any_of(
        plan.counters.begin(), plan.counters.end(),
        [&](const PlannedCounter& p) {
          return p.pmu == c.pmu && p.event == static_cast<size_t>(c.event);
        });
    if (seen) continue;
    plan.counters.push_back(PlannedCounter{resolution_of[c.event],
                                           name_of[c.event], c.pmu, c.config,
                                           static_cast<size_t>(c.event)});
    if (std::find(plan.pmus.begin(), plan.pmus.end(), c.pmu->name) ==
        plan.pmus.end()) {
      plan.pmus.push_back(c.pmu->name);
      plan.group_reads += std::max<int>(1, c.pmu->cpus.size());
    }
  }
  return plan;
}

}  // namespace uncore::devices::perf
