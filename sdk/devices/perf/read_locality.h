// What a perf snapshot costs in reads, and which of those reads cross CPUs:
// one read() per perf group (PMU instance and CPU it is bound to), and,
// per PMU driver, from which CPUs the kernel reads the group on the
// reader's own CPU and from which it sends an inter-processor interrupt
// (IPI) to the event's CPU.
//
//   absl::StatusOr<PmuCatalog> pmus = DiscoverPmus("/sys");
//   absl::StatusOr<std::vector<PerfCounter>> counters =
//       PlanPerfCounters(request, *pmus);
//   absl::StatusOr<std::set<int>> cpus = ThisThreadAffinity();
//   SnapshotReadCost cost = CostOfSnapshot(
//       GroupPerfCounters(*counters, false), *counters, *pmus, *cpus);
//   // cost.reads: read() calls a snapshot makes; cost.groups[i].verdict:
//   // "local on any CPU of socket 0" / "IPI unless the reader runs on CPU 0"
//   // cost.always_cross: reads that cross CPUs from every reader CPU given
//
// The classification (PmuReadLocality), from the mainline Linux sources
// (docs/performance.md, "Where the thread runs matters"):
//   - Intel's uncore PMUs (uncore_*, arch/x86/events/intel/uncore.c):
//     uncore_pmu_event_init sets PERF_EV_CAP_READ_ACTIVE_PKG, so
//     __perf_event_read_cpu (kernel/events/core.c) reads the group on the
//     reader's CPU when it is in the event's package (Linux >= 4.9); a
//     reader on another socket pays one IPI per group read.
//   - AMD's uncore (amd_l3, amd_df, amd_umc_N, and the older amd_nb and
//     amd_l2; arch/x86/events/amd/uncore.c) and the msr PMU
//     (arch/x86/events/msr.c) do not set it: any reader on a CPU other than
//     the event's pays one IPI per group read.
//   - Every other PMU is kUnknown: its driver may set the flag, or (Linux
//     >= 6.12) declare a PMU scope; the SDK counts it as kEventCpu, the
//     worst case, and says it assumed so.
//
// A region boundary reads only when it opens or closes a region path (the
// first thread in, the last out); a thread joining or leaving a region
// other threads hold reads nothing (docs/concurrency.md).  So a region pair
// costs two snapshots: kSnapshotsPerRegionPair.
//
// Guarantees: pure functions of their inputs, but ThisThreadAffinity, which
// asks the kernel (sched_getaffinity).
#ifndef UNCORE_SDK_DEVICES_PERF_READ_LOCALITY_H_
#define UNCORE_SDK_DEVICES_PERF_READ_LOCALITY_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/devices/perf/pmu_discovery.h"

namespace uncore::devices::perf {

// Snapshots a region pair takes when no other thread holds the region.
inline constexpr int kSnapshotsPerRegionPair = 2;

enum class ReadLocality {
  kPackage,   // read locally from any CPU of the event's socket
  kEventCpu,  // read locally only on the event's CPU
  kUnknown,   // not classified; counted as kEventCpu
};

// The locality of a PMU by its sysfs name ("uncore_imc_3", "amd_l3", "msr").
ReadLocality PmuReadLocality(std::string_view pmu_name);

// "package", "event_cpu", "unknown": for JSON.
std::string_view ReadLocalityName(ReadLocality locality);

// Whether a group read made on `reader_cpu` (on `reader_socket`) of an
// event bound to `event_cpu` (on `event_socket`) is sent to another CPU.
bool ReadCrossesCpus(ReadLocality locality, int event_cpu, int event_socket,
                     int reader_cpu, int reader_socket);

// The CPUs the calling thread may run on (sched_getaffinity).
absl::StatusOr<std::set<int>> ThisThreadAffinity();

// "0-3,8": a CPU set as the kernel's cpulist syntax writes it; "none".
std::string CpuListText(const std::set<int>& cpus);

// How often a group's read crosses CPUs from the reader CPUs given.
enum class Crossing {
  kNever,      // local from every reader CPU
  kSometimes,  // local from some of them only
  kAlways,     // an IPI from every one of them
};
std::string_view CrossingName(Crossing crossing);  // "never", ...

struct GroupReadCost {
  std::string pmu;
  int socket = 0;
  int cpu = 0;  // the CPU the group is bound to (cpumask, or the first
                // online CPU of the socket for PMUs without one)
  ReadLocality locality = ReadLocality::kUnknown;
  std::vector<std::string> events;  // the specs of its counters, in order
  // "local on any CPU of socket 0 (CPUs 0-3); IPI from other sockets",
  // "IPI unless the reader runs on CPU 0", or for kUnknown "PMU not
  // classified: assumed IPI unless the reader runs on CPU 0".
  std::string verdict;
  std::set<int> local_cpus;  // the reader CPUs given that read it locally
  Crossing crossing = Crossing::kNever;
};

struct SnapshotReadCost {
  int reads = 0;  // group read() calls per snapshot
  std::vector<GroupReadCost> groups;
  std::set<int> reader_cpus;  // as given
  // Of `reads`: how many cross CPUs from every reader CPU, from some, none.
  int always_cross = 0;
  int sometimes_cross = 0;
  int never_cross = 0;
};

// The cost of one snapshot of `groups` (GroupPerfCounters over `counters`)
// for a thread that may run on `reader_cpus`.  CPUs of `reader_cpus` the
// catalog does not know (offline) are taken as on no socket.
SnapshotReadCost CostOfSnapshot(const std::vector<PerfGroupPlan>& groups,
                                const std::vector<PerfCounter>& counters,
                                const PmuCatalog& pmus,
                                const std::set<int>& reader_cpus);

}  // namespace uncore::devices::perf

#endif  // UNCORE_SDK_DEVICES_PERF_READ_LOCALITY_H_
