// RegisterUnits: the PCI/MSR unit list of a platform's register model, the
// generic form machine::DiscoverTopology and machine::SimulatedTopology walk
// whatever the platform.  Units are platform-neutral ids (the platform's own
// unit enum as an int: ivytown::BoxType); each platform builds its list from
// its register model in its own folder (ivytown::TopologyUnits(), from the
// box descriptors) and its platform record carries it
// (platforms::PlatformRecord::units).
//
//   const platforms::RegisterUnits* u = record.units;  // nullptr: none
//   for (const platforms::PciUnitInstance& p : u->pci) {
//     // p.unit, p.instance: p.pmon.device:p.pmon.function, id p.pmon.device_id
//   }
//   for (const platforms::MsrUnit& m : u->msr) { /* m.instances, m.per_core */ }
//
// Guarantees: plain data; a platform's list is built once and never freed.
#ifndef UNCORE_SDK_PLATFORMS_COMMON_REGISTER_UNITS_H_
#define UNCORE_SDK_PLATFORMS_COMMON_REGISTER_UNITS_H_

#include <cstdint>
#include <vector>

namespace uncore::platforms {

// A PCI device:function and the device id that identifies it (the vendor
// is RegisterUnits::pci_vendor).
struct PciFunction {
  uint8_t device = 0;
  uint8_t function = 0;
  uint16_t device_id = 0;  // 0: no known id (the function is not looked for)

  constexpr bool present() const { return device_id != 0; }
};

// An MSR unit: how many instances a socket has at most; a per-core unit
// (IvyTown's CBo) has one per core of the socket, up to `instances`.
struct MsrUnit {
  int unit = 0;  // the platform's unit enum, as int
  int instances = 0;
  bool per_core = false;
};

// One instance of a PCI unit: its PMON function and an auxiliary function
// (IvyTown's QPI mask/match device), absent when `aux.device` is 0.
struct PciUnitInstance {
  int unit = 0;  // the platform's unit enum, as int
  int instance = 0;
  PciFunction pmon{};
  PciFunction aux{};
};

// The PCI function on each socket's uncore bus whose registers name the
// socket (IvyTown's U-Box: CPUNODEID and GIDNIDMAP): a dword at
// `node_id_offset` whose bits 2:0 are the local node id, and one at
// `node_map_offset` holding eight 3-bit node ids, one per package.
struct PciSocketAnchor {
  uint16_t device_id = 0;  // 0: none; buses go to sockets in ascending order
  uint32_t node_id_offset = 0;
  uint32_t node_map_offset = 0;
};

struct RegisterUnits {
  std::vector<MsrUnit> msr;          // in the platform's unit order
  std::vector<PciUnitInstance> pci;  // every PCI unit instance, in order
  uint16_t pci_vendor = 0;           // of every PCI function: 0x8086
  PciSocketAnchor anchor{};
  // The most instances a per-core unit has on a socket (IvyTown: 15 CBos).
  int max_per_core = 0;
};

}  // namespace uncore::platforms

#endif  // UNCORE_SDK_PLATFORMS_COMMON_REGISTER_UNITS_H_
