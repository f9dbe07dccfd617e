// Topology: the discovered facts about a machine's uncore: which sockets
// exist, one CPU per socket to address its MSRs, and each socket's PCI
// functions for every PCI unit instance.  Which units there are is the
// platform record's (platforms::PlatformRecord::units, register_units.h):
// discovery walks that list, whatever the platform, and never writes into
// it.
//
//   absl::StatusOr<Topology> t = DiscoverTopology(sysfs_root);   // Linux
//   Topology sim = SimulatedTopology(record, /*sockets=*/2);     // simulator
//   const SocketTopology::PciInstance* imc0 =
//       t->sockets[0].FindPci(ivytown::BoxType::kImc, 0);  // 0000:7f:10.4
//
// Units are platform-neutral ids (the platform's own unit enum, as int:
// ivytown::BoxType); FindPci and HasInstance take the enum as well.
//
// Guarantees: discovery only reads files; it never writes.
#ifndef UNCORE_SDK_MACHINE_TOPOLOGY_H_
#define UNCORE_SDK_MACHINE_TOPOLOGY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/platforms/common/platform_records.h"
#include "sdk/platforms/common/register_units.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/registers/register_space.h"

namespace uncore::machine {

struct SocketTopology {
  int socket = 0;
  int msr_cpu = 0;        // a CPU of this socket, for its MSRs
  std::vector<int> cpus;  // every online CPU of the socket
  // The instances a per-core unit (IvyTown's CBo) has on this socket: its
  // cores, at most the platform's RegisterUnits::max_per_core.
  int per_core_instances = 0;
  // The socket's MSR units: per unit, how many instances the platform
  // defines; a per-core unit has only the first per_core_instances.
  using MsrUnit = platforms::MsrUnit;
  std::vector<MsrUnit> msr_units;
  // PCI functions found on this socket: per unit, per instance, the PMON
  // function and the auxiliary function (QPI mask/match); absent ones are
  // nullopt.
  struct PciInstance {
    int unit = 0;
    int instance = 0;
    std::optional<registers::PciAddress> pmon;
    std::optional<registers::PciAddress> aux;
  };
  std::vector<PciInstance> pci;

  const PciInstance* FindPci(int unit, int instance) const;
  // Whether instance `instance` of `unit` exists on this socket: MSR units
  // by msr_units, PCI units when their PMON function was found.
  bool HasInstance(int unit, int instance) const;

  // The same, by the platform's unit enum (ivytown::BoxType::kImc).
  template <typename Unit>
  requires std::is_enum_v<Unit>
  const PciInstance* FindPci(Unit unit, int instance) const {
    return FindPci(static_cast<int>(unit), instance);
  }
  template <typename Unit>
  requires std::is_enum_v<Unit>
  bool HasInstance(Unit unit, int instance) const {
    return HasInstance(static_cast<int>(unit), instance);
  }
};

struct Topology {
  std::vector<SocketTopology> sockets;
  std::string cpu_model;  // "GenuineIntel family 6 model 0x3e", from cpuinfo
  // The name of the CPU's platform record (platforms::AllPlatformRecords():
  // the first whose CPUs match vendor, family and model), or "".
  std::string platform;
};

// The processor as /proc/cpuinfo names it (its first CPU).
struct CpuIdentity {
  std::string vendor;  // "GenuineIntel"; "unknown" when cpuinfo has none
  int family = 0;
  int model = 0;
  int stepping = -1;        // -1 when cpuinfo does not say
  std::string model_name;   // "Intel(R) Xeon(R) CPU E5-2697 v2 @ 2.70GHz"
  bool hypervisor = false;  // the `hypervisor` flag: a virtual machine

  // "GenuineIntel family 6 model 0x3e".
  std::string ToString() const;
  // Whether this CPU is one of `platform`'s (vendor, family, model; any
  // stepping): IsOf(ivytown::Identity()) for GenuineIntel 6 0x3e.
  bool IsOf(const perfmon::Platform& platform) const;
};

// Reads vendor_id, cpu family and model of the first CPU listed in
// `cpuinfo_path`.  NotFound when the file cannot be read.
absl::StatusOr<CpuIdentity> ReadCpuIdentity(
    std::string_view cpuinfo_path = "/proc/cpuinfo");

// The identity of the first CPU in `cpuinfo_text` (the contents of
// /proc/cpuinfo): what ReadCpuIdentity returns once the file is read.  Any
// text gives an identity (vendor "unknown" when it names none).
CpuIdentity ParseCpuIdentity(std::string_view cpuinfo_text);

// The PCI address SimulatedTopology gives device:function on `socket`:
// segment socket / 4, bus 0x7f, 0xff, 0x3f, 0xbf for socket % 4 = 0..3.
registers::PciAddress SimulatedPciAddress(int socket, uint8_t device,
                                          uint8_t function);

// A machine with `sockets` sockets of `platform` (its first CPU model), every
// unit instance of its RegisterUnits present, PCI bus 0x7f for socket 0,
// 0xff for socket 1, ... (SimulatedPciAddress: what IvyTownUncore answers
// to); per_core_instances is the platform's max_per_core (cpus_per_socket
// when it has no units).
Topology SimulatedTopology(const platforms::PlatformRecord& platform,
                           int sockets, int cpus_per_socket = 2);

// Reads /proc/cpuinfo-equivalent facts and PCI devices under `sysfs_root`
// (normally "/sys"): sockets from devices/system/cpu/cpu*/topology/
// physical_package_id (online CPUs only), and the units of the CPU's
// platform record (Topology::platform; its RegisterUnits): its MSR units,
// and its PCI functions by the record's vendor and device ids, grouped by
// bus.  A bus
// holding the record's anchor function (IvyTown's U-Box, device 0x0e1e) is
// given to a socket by the anchor's node-id registers (readable by root
// only) when every anchor's can be read and they are distinct; otherwise
// anchor buses go to sockets in ascending (segment, bus) order.  A bus
// without an anchor (IvyTown's IRP lives on the socket's IIO bus, 0x00 /
// 0x80) takes the socket of the nearest anchor bus above it in the same
// segment.  per_core_instances is the number of distinct cores of the
// socket, at most the record's max_per_core.  Sockets are numbered 0..n-1
// in physical_package_id order.  A CPU whose record has no units (or that
// no record knows) gives sockets and CPUs with no units, not an error.
absl::StatusOr<Topology> DiscoverTopology(
    std::string_view sysfs_root = "/sys",
    std::string_view cpuinfo_path = "/proc/cpuinfo");

}  // namespace uncore::machine

#endif  // UNCORE_SDK_MACHINE_TOPOLOGY_H_
