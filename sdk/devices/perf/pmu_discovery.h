// PMU discovery: the Linux perf_event PMUs a machine exposes under
// /sys/bus/event_source/devices, with their type number, the CPUs to open
// them on (one per socket), their format fields and event aliases.
//
//   absl::StatusOr<PmuCatalog> pmus = DiscoverPmus("/sys");
//   const Pmu* imc = pmus->Find("uncore_imc_0");
//   // imc->type, imc->cpus ({0, 12}: one CPU per socket),
//   // imc->FindFormat("umask") -> config:8-15,
//   // imc->FindAlias("cas_count_read") -> "event=0x04,umask=0x03", MiB
//   absl::StatusOr<PerfConfig> c = imc->Encode({{"event", 4}, {"umask", 3}});
//
// A PMU with a `cpumask` file is opened on those CPUs (uncore PMUs list one
// CPU per socket); one without (msr, software) on the first online CPU of
// each socket, from devices/system/cpu/cpu*/topology/physical_package_id.
//
// Guarantees: reads files only; never prints.
#ifndef UNCORE_SDK_DEVICES_PERF_PMU_DISCOVERY_H_
#define UNCORE_SDK_DEVICES_PERF_PMU_DISCOVERY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace uncore::devices::perf {

// perf_event_attr's three config words.
struct PerfConfig {
  uint64_t config = 0;
  uint64_t config1 = 0;
  uint64_t config2 = 0;

  bool operator==(const PerfConfig&) const = default;
  // "config=0x304,config1=0x0,config2=0x0".
  std::string ToString() const;
};

// One format field: "config:0-7,21" is two bit ranges of `config`.
struct FormatField {
  std::string name;
  int word = 0;  // 0: config, 1: config1, 2: config2
  struct Range {
    int lo = 0;
    int hi = 0;
  };
  std::vector<Range> ranges;  // low bits of the value go to the first range
  std::string text;           // as in sysfs

  int width() const;
  // Places `value` into `config`; InvalidArgument when it does not fit.
  absl::Status Insert(uint64_t value, PerfConfig* config) const;
};

struct EventAlias {
  std::string name;
  std::string terms;  // "event=0x04,umask=0x03"
  double scale = 1.0;
  std::string unit;
};

struct Pmu {
  std::string name;
  uint32_t type = 0;
  std::vector<int> cpus;     // one per socket, in socket order
  std::vector<int> sockets;  // the socket of each entry of `cpus`
  bool has_cpumask = false;
  std::vector<FormatField> formats;
  std::vector<EventAlias> aliases;

  const FormatField* FindFormat(std::string_view field) const;
  const EventAlias* FindAlias(std::string_view alias) const;
  // Encodes `terms` (field=value; a term with no value sets 1, or expands
  // an alias) with this PMU's formats; perf's raw `config=`, `config1=` and
  // `config2=` are ORed in as given.  `scale`/`unit` come from an alias.
  struct Encoded {
    PerfConfig config;
    double scale = 1.0;
    std::string unit;
  };
  absl::StatusOr<Encoded> Encode(
      const std::vector<std::pair<std::string, std::optional<uint64_t>>>& terms)
      const;
  // "event, umask, edge, ..." for messages.
  std::string FormatNames() const;
};

struct PmuCatalog {
  std::vector<Pmu> pmus;  // sorted by name
  int num_sockets = 0;
  // Every online CPU and its socket (0..num_sockets-1, in package order).
  std::map<int, int> socket_of_cpu;

  const Pmu* Find(std::string_view name) const;
  // Names starting with `prefix`, for "did you mean" messages.
  std::vector<std::string> NamesStartingWith(std::string_view prefix) const;
  bool HasUncorePmus() const;  // any "uncore_*"
};

// Parses "config:0-7,21" (NotFound-free: InvalidArgument on bad text).
absl::StatusOr<FormatField> ParseFormatField(std::string_view name,
                                             std::string_view text);

// Reads <sysfs_root>/bus/event_source/devices and
// <sysfs_root>/devices/system/cpu.  NotFound when the PMU folder is absent.
absl::StatusOr<PmuCatalog> DiscoverPmus(std::string_view sysfs_root = "/sys");

}  // namespace uncore::devices::perf

#endif  // UNCORE_SDK_DEVICES_PERF_PMU_DISCOVERY_H_
