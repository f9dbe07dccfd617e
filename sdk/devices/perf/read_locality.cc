#include "sdk/devices/perf/read_locality.h"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/text.h"

namespace uncore::devices::perf {
namespace {

// "amd_umc_3" is "amd_umc" followed by "_<digits>"; "amd_umc" itself too.
bool IsPmuOrInstance(std::string_view name, std::string_view base) {
  if (!name.starts_with(base)) return false;
  std::string_view rest = name.substr(base.size());
  if (rest.empty()) return true;
  if (rest.front() != '_' || rest.size() == 1) return false;
  for (char c : rest.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

ReadLocality PmuReadLocality(std::string_view pmu_name) {
  // Intel's uncore driver names every PMU uncore_<box>[_<n>] (discovery
  // tables included: uncore_type_<t>_<n>), and sets
  // PERF_EV_CAP_READ_ACTIVE_PKG in uncore_pmu_event_init.
  if (pmu_name.starts_with("uncore_")) return ReadLocality::kPackage;
  // AMD's uncore driver (amd_nb/amd_l2 before family 17h, amd_df/amd_l3
  // from it, amd_umc_<n> from Zen 4) and the msr PMU: per-CPU reads.
  for (std::string_view base :
       {"amd_l3", "amd_df", "amd_umc", "amd_nb", "amd_l2", "msr"}) {
    if (IsPmuOrInstance(pmu_name, base)) return ReadLocality::kEventCpu;
  }
  return ReadLocality::kUnknown;
}

std::string_view ReadLocalityName(ReadLocality locality) {
  switch (locality) {
    case ReadLocality::kPackage:
      return "package";
    case ReadLocality::kEventCpu:
      return "event_cpu";
    case ReadLocality::kUnknown:
      break;
  }
  return "unknown";
}

bool ReadCrossesCpus(ReadLocality locality, int event_cpu, int event_socket,
                     int reader_cpu, int reader_socket) {
  if (reader_cpu == event_cpu) return false;
  if (locality == ReadLocality::kPackage) {
    return event_socket < 0 || reader_socket != event_socket;
  }
  return true;
}

absl::StatusOr<std::set<int>> ThisThreadAffinity() {
  // Large enough for any machine (CPU_SETSIZE is 1024).
  constexpr int kMaxCpus = 8192;
  cpu_set_t* set = CPU_ALLOC(kMaxCpus);
  if (set == nullptr) {
    return absl::ResourceExhaustedError("cannot allocate a CPU set");
  }
  const size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  CPU_ZERO_S(size, set);
  if (sched_getaffinity(0, size, set) != 0) {
    const int err = errno;
    CPU_FREE(set);
    return absl::InternalError(
        fmt::format("sched_getaffinity failed: {}", std::strerror(err)));
  }
  std::set<int> cpus;
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) {
    if (CPU_ISSET_S(cpu, size, set)) cpus.insert(cpu);
  }
  CPU_FREE(set);
  return cpus;
}

std::string CpuListText(const std::set<int>& cpus) {
  std::vector<std::string> parts;
  for (auto it = cpus.begin(); it != cpus.end();) {
    const int lo = *it;
    int hi = lo;
    ++it;
    while (it != cpus.end() && *it == hi + 1) {
      hi = *it;
      ++it;
    }
    parts.push_back(hi == lo ? fmt::format("{}", lo)
                             : fmt::format("{}-{}", lo, hi));
  }
  return parts.empty() ? std::string("none") : common::Join(parts, ",");
}

std::string_view CrossingName(Crossing crossing) {
  switch (crossing) {
    case Crossing::kNever:
      return "never";
    case Crossing::kSometimes:
      return "sometimes";
    case Crossing::kAlways:
      break;
  }
  return "always";
}

SnapshotReadCost CostOfSnapshot(const std::vector<PerfGroupPlan>& groups,
                                const std::vector<PerfCounter>& counters,
                                const PmuCatalog& pmus,
                                const std::set<int>& reader_cpus) {
  SnapshotReadCost cost;
  cost.reader_cpus = reader_cpus;
  cost.reads = static_cast<int>(groups.size());
  auto socket_of = [&](int cpu) {
    auto it = pmus.socket_of_cpu.find(cpu);
    return it == pmus.socket_of_cpu.end() ? -1 : it->second;
  };
  for (const PerfGroupPlan& g : groups) {
    GroupReadCost r;
    r.pmu = g.pmu != nullptr ? g.pmu->name : std::string();
    r.socket = g.socket;
    r.cpu = g.cpu;
    r.locality = PmuReadLocality(r.pmu);
    for (int i : g.entries) r.events.push_back(counters[i].spec);
    switch (r.locality) {
      case ReadLocality::kPackage: {
        std::set<int> socket_cpus;
        for (const auto& [cpu, socket] : pmus.socket_of_cpu) {
          if (socket == g.socket) socket_cpus.insert(cpu);
        }
        r.verdict = fmt::format(
            "local on any CPU of socket {}{}{}", g.socket,
            socket_cpus.empty()
                ? std::string()
                : fmt::format(" (CPUs {})", CpuListText(socket_cpus)),
            pmus.num_sockets > 1 ? "; IPI from other sockets" : "");
        break;
      }
      case ReadLocality::kEventCpu:
        r.verdict = fmt::format("IPI unless the reader runs on CPU {}", g.cpu);
        break;
      case ReadLocality::kUnknown:
        r.verdict = fmt::format(
            "PMU not classified: assumed IPI unless the reader runs on CPU {}",
            g.cpu);
        break;
    }
    for (int cpu : reader_cpus) {
      if (!ReadCrossesCpus(r.locality, g.cpu, g.socket, cpu, socket_of(cpu))) {
        r.local_cpus.insert(cpu);
      }
    }
    if (r.local_cpus.empty()) {
      r.crossing = Crossing::kAlways;
      ++cost.always_cross;
    } else if (r.local_cpus.size() < reader_cpus.size()) {
      r.crossing = Crossing::kSometimes;
      ++cost.sometimes_cross;
    } else {
      r.crossing = Crossing::kNever;
      ++cost.never_cross;
    }
    cost.groups.push_back(std::move(r));
  }
  return cost;
}

}  // namespace uncore::devices::perf
