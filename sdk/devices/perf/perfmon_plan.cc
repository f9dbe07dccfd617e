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

absl::StatusOr<PerfConfig> EncodeOn(const Pmu& pmu, std::string_view terms) {
  std::vector<std::pair<std::string, std::optional<uint64_t>>> fields;
  for (std::string_view term : common::Split(terms, ',', /*skip_empty=*/true)) {
    const size_t eq = term.find('=');
    std::string key(term.substr(0, eq));
    std::optional<uint64_t> value;
    if (eq != std::string_view::npos) {
      absl::StatusOr<uint64_t> v = ParseValue(term.substr(eq + 1));
      if (!v.ok()) {
        return absl::InvalidArgumentError(fmt::format(
            "{}/{}/: {}", pmu.name, terms, common::StatusMessage(v.status())));
      }
      value = *v;
    }
    fields.emplace_back(std::move(key), value);
  }
  absl::StatusOr<Pmu::Encoded> enc = pmu.Encode(fields);
  if (!enc.ok()) return enc.status();
  return enc->config;
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
  PerfmonPlan plan;
  for (size_t i = 0; i < resolutions.size(); ++i) {
    for (const spec::ResolvedEvent& e : resolutions[i].events) {
      std::vector<const Pmu*> pmus = PmuInstances(catalog, e.pmu, e.instance);
      if (pmus.empty()) {
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
      for (const Pmu* pmu : pmus) {
        absl::StatusOr<PerfConfig> config = EncodeOn(*pmu, e.terms);
        if (!config.ok()) return config.status();
        plan.counters.push_back(PlannedCounter{
            i, e.event != nullptr ? std::string(e.event->name) : e.terms, pmu,
            *config});
        if (std::find(plan.pmus.begin(), plan.pmus.end(), pmu->name) ==
            plan.pmus.end()) {
          plan.pmus.push_back(pmu->name);
          plan.group_reads += std::max<int>(1, pmu->cpus.size());
        }
      }
    }
  }
  return plan;
}

}  // namespace uncore::devices::perf
