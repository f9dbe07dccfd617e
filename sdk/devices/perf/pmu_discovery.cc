#include "sdk/devices/perf/pmu_discovery.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
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

namespace fs = std::filesystem;

// Online CPUs and their package ids.
std::map<int, int> ReadPackages(const fs::path& cpu_root) {
  std::map<int, int> package_of_cpu;
  std::error_code ec;
  // Iterated with increment(ec): operator++ throws on an error.
  for (fs::directory_iterator it_e(cpu_root, ec), end_e; !ec && it_e != end_e;
       it_e.increment(ec)) {
    const fs::directory_entry& e = *it_e;
    const std::string name = e.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0) continue;
    std::optional<uint64_t> cpu = common::ParseUnsigned(name.substr(3));
    if (!cpu) continue;
    std::optional<std::string> pkg =
        common::ReadSmallFile(e.path() / "topology" / "physical_package_id");
    if (!pkg) continue;  // offline
    std::optional<uint64_t> id = common::ParseUnsigned(*pkg);
    if (id) package_of_cpu[static_cast<int>(*cpu)] = static_cast<int>(*id);
  }
  return package_of_cpu;
}

}  // namespace

std::string PerfConfig::ToString() const {
  return fmt::format("config=0x{:x},config1=0x{:x},config2=0x{:x}", config,
                     config1, config2);
}

int FormatField::width() const {
  int w = 0;
  for (const Range& r : ranges) w += r.hi - r.lo + 1;
  return w;
}

absl::Status FormatField::Insert(uint64_t value, PerfConfig* out) const {
  const int w = width();
  if (w < 64 && (value >> w) != 0) {
    return absl::InvalidArgumentError(
        fmt::format("0x{:x} does not fit in field '{}' ({} bits: {})", value,
                    name, w, text));
  }
  uint64_t* target = word == 0   ? &out->config
                     : word == 1 ? &out->config1
                                 : &out->config2;
  int shift = 0;
  for (const Range& r : ranges) {
    const int n = r.hi - r.lo + 1;
    const uint64_t mask = n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    const uint64_t part = (shift >= 64 ? 0 : value >> shift) & mask;
    *target = (*target & ~(mask << r.lo)) | (part << r.lo);
    shift += n;
  }
  return absl::OkStatus();
}

absl::StatusOr<FormatField> ParseFormatField(std::string_view name,
                                             std::string_view text) {
  FormatField f;
  f.name = std::string(name);
  f.text = std::string(common::StripWhitespace(text));
  std::string_view t = f.text;
  const size_t colon = t.find(':');
  auto bad = [&] {
    return absl::InvalidArgumentError(fmt::format(
        "format field '{}': cannot read '{}' (expected e.g. config:0-7,21)",
        name, f.text));
  };
  if (colon == std::string_view::npos) return bad();
  const std::string_view word = t.substr(0, colon);
  if (word == "config") {
    f.word = 0;
  } else if (word == "config1") {
    f.word = 1;
  } else if (word == "config2") {
    f.word = 2;
  } else {
    return bad();
  }
  for (std::string_view part : common::Split(t.substr(colon + 1), ',')) {
    const size_t dash = part.find('-');
    std::optional<uint64_t> lo = common::ParseUnsigned(
        dash == std::string_view::npos ? part : part.substr(0, dash));
    std::optional<uint64_t> hi =
        dash == std::string_view::npos
            ? lo
            : common::ParseUnsigned(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi > 63) return bad();
    f.ranges.push_back({static_cast<int>(*lo), static_cast<int>(*hi)});
  }
  if (f.ranges.empty()) return bad();
  return f;
}

const FormatField* Pmu::FindFormat(std::string_view field) const {
  for (const FormatField& f : formats) {
    if (f.name == field) return &f;
  }
  return nullptr;
}

const EventAlias* Pmu::FindAlias(std::string_view alias) const {
  for (const EventAlias& a : aliases) {
    if (common::EqualsIgnoreCase(a.name, alias)) return &a;
  }
  return nullptr;
}

std::string Pmu::FormatNames() const {
  std::vector<std::string> names;
  for (const FormatField& f : formats) names.push_back(f.name);
  return common::Join(names, ", ");
}

absl::StatusOr<Pmu::Encoded> Pmu::Encode(
    const std::vector<std::pair<std::string, std::optional<uint64_t>>>& terms)
    const {
  Encoded out;
  bool used_alias = false;
  for (const auto& [term, value] : terms) {
    if (const FormatField* f = FindFormat(term)) {
      absl::Status s = f->Insert(value.value_or(1), &out.config);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("{}/: {}", name, common::StatusMessage(s)));
      }
      continue;
    }
    if (value && (term == "config" || term == "config1" || term == "config2")) {
      // perf's built-in terms: the raw words, ORed into what the fields set.
      uint64_t* word = term == "config"    ? &out.config.config
                       : term == "config1" ? &out.config.config1
                                           : &out.config.config2;
      *word |= *value;
      continue;
    }
    const EventAlias* alias = value ? nullptr : FindAlias(term);
    if (alias == nullptr) {
      std::vector<std::string> known;
      for (const FormatField& f : formats) known.push_back(f.name);
      for (const EventAlias& a : aliases) known.push_back(a.name);
      const std::vector<std::string> close = common::ClosestNames(term, known);
      return absl::InvalidArgumentError(fmt::format(
          "PMU {} has no format field or event alias '{}'{}; its fields: {}; "
          "its events: {}",
          name, term,
          close.empty()
              ? ""
              : "; did you mean " + common::JoinAlternatives(close) + "?",
          FormatNames(), [&] {
            std::vector<std::string> a;
            for (const EventAlias& e : aliases) a.push_back(e.name);
            return a.empty() ? std::string("none") : common::Join(a, ", ");
          }()));
    }
    if (used_alias) {
      return absl::InvalidArgumentError(fmt::format(
          "{}/: two event aliases in one event ('{}')", name, term));
    }
    used_alias = true;
    for (std::string_view part : common::Split(alias->terms, ',')) {
      part = common::StripWhitespace(part);
      if (part.empty()) continue;
      const size_t eq = part.find('=');
      const std::string field(part.substr(0, eq));
      const FormatField* f = FindFormat(field);
      std::optional<uint64_t> v =
          eq == std::string_view::npos
              ? std::optional<uint64_t>(1)
              : common::ParseUnsigned(part.substr(eq + 1));
      if (f == nullptr || !v) {
        return absl::InvalidArgumentError(fmt::format(
            "PMU {}: event alias {} = '{}' uses '{}', which its format does "
            "not define",
            name, alias->name, alias->terms, part));
      }
      UNCORE_RETURN_IF_ERROR(f->Insert(*v, &out.config));
    }
    out.scale = alias->scale;
    out.unit = alias->unit;
  }
  return out;
}

const Pmu* PmuCatalog::Find(std::string_view name) const {
  for (const Pmu& p : pmus) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> PmuCatalog::NamesStartingWith(
    std::string_view prefix) const {
  std::vector<std::string> names;
  for (const Pmu& p : pmus) {
    if (p.name.starts_with(prefix)) names.push_back(p.name);
  }
  return names;
}

bool PmuCatalog::HasUncorePmus() const {
  return !NamesStartingWith("uncore_").empty();
}

absl::StatusOr<PmuCatalog> DiscoverPmus(std::string_view sysfs_root) {
  const fs::path root{std::string(sysfs_root)};
  const fs::path pmu_root = root / "bus" / "event_source" / "devices";
  std::error_code ec;
  if (!fs::is_directory(pmu_root, ec)) {
    return absl::NotFoundError(fmt::format(
        "{} does not exist: this kernel exposes no perf_event PMUs (is "
        "/sys mounted, and the kernel built with CONFIG_PERF_EVENTS?)",
        pmu_root.string()));
  }
  PmuCatalog catalog;
  const std::map<int, int> package_of_cpu =
      ReadPackages(root / "devices" / "system" / "cpu");
  std::vector<int> packages;
  packages.reserve(package_of_cpu.size());
  for (const auto& [cpu, pkg] : package_of_cpu) packages.push_back(pkg);
  std::sort(packages.begin(), packages.end());
  packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  catalog.num_sockets = static_cast<int>(packages.size());
  auto socket_of = [&](int cpu) {
    auto it = package_of_cpu.find(cpu);
    if (it == package_of_cpu.end()) return -1;
    return static_cast<int>(
        std::lower_bound(packages.begin(), packages.end(), it->second) -
        packages.begin());
  };
  // The first online CPU of each socket.
  std::vector<int> first_cpu(packages.size(), -1);
  for (const auto& [cpu, pkg] : package_of_cpu) {
    const int s = socket_of(cpu);
    catalog.socket_of_cpu[cpu] = s;
    if (first_cpu[s] < 0) first_cpu[s] = cpu;
  }

  // Iterated with increment(ec): operator++ throws on an error.
  for (fs::directory_iterator it_e(pmu_root, ec), end_e; !ec && it_e != end_e;
       it_e.increment(ec)) {
    const fs::directory_entry& e = *it_e;
    Pmu pmu;
    pmu.name = e.path().filename().string();
    std::optional<std::string> type = common::ReadSmallFile(e.path() / "type");
    std::optional<uint64_t> type_number =
        type ? common::ParseUnsigned(*type) : std::nullopt;
    if (!type_number) continue;
    pmu.type = static_cast<uint32_t>(*type_number);
    if (std::optional<std::string> mask =
            common::ReadSmallFile(e.path() / "cpumask")) {
      pmu.has_cpumask = true;
      for (int cpu : common::ParseCpuList(*mask).value_or(std::set<int>{})) {
        pmu.cpus.push_back(cpu);
        pmu.sockets.push_back(socket_of(cpu));
      }
    } else {
      for (size_t s = 0; s < first_cpu.size(); ++s) {
        pmu.cpus.push_back(first_cpu[s]);
        pmu.sockets.push_back(static_cast<int>(s));
      }
    }
    std::error_code ec2;
    // Iterated with increment(ec): operator++ throws on an error.
    for (fs::directory_iterator it_f(e.path() / "format", ec2), end_f;
         !ec2 && it_f != end_f; it_f.increment(ec2)) {
      const fs::directory_entry& f = *it_f;
      std::optional<std::string> text = common::ReadSmallFile(f.path());
      if (!text) continue;
      absl::StatusOr<FormatField> field =
          ParseFormatField(f.path().filename().string(), *text);
      if (field.ok()) pmu.formats.push_back(*std::move(field));
    }
    std::sort(pmu.formats.begin(), pmu.formats.end(),
              [](const FormatField& a, const FormatField& b) {
                return a.name < b.name;
              });
    std::error_code ec3;
    // Iterated with increment(ec): operator++ throws on an error.
    for (fs::directory_iterator it_a(e.path() / "events", ec3), end_a;
         !ec3 && it_a != end_a; it_a.increment(ec3)) {
      const fs::directory_entry& a = *it_a;
      const std::string name = a.path().filename().string();
      if (name.find('.') != std::string::npos) continue;  // .scale, .unit
      std::optional<std::string> terms = common::ReadSmallFile(a.path());
      if (!terms) continue;
      EventAlias alias;
      alias.name = name;
      alias.terms = std::string(common::StripWhitespace(*terms));
      if (std::optional<std::string> scale =
              common::ReadSmallFile(e.path() / "events" / (name + ".scale"))) {
        const std::string text(common::StripWhitespace(*scale));
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end != nullptr && *end == '\0' && !text.empty()) alias.scale = v;
      }
      if (std::optional<std::string> unit =
              common::ReadSmallFile(e.path() / "events" / (name + ".unit"))) {
        alias.unit = std::string(common::StripWhitespace(*unit));
      }
      pmu.aliases.push_back(std::move(alias));
    }
    std::sort(pmu.aliases.begin(), pmu.aliases.end(),
              [](const EventAlias& a, const EventAlias& b) {
                return a.name < b.name;
              });
    catalog.pmus.push_back(std::move(pmu));
  }
  std::sort(catalog.pmus.begin(), catalog.pmus.end(),
            [](const Pmu& a, const Pmu& b) { return a.name < b.name; });
  return catalog;
}

}  // namespace uncore::devices::perf
