#include "sdk/platforms/ivytown/model/topology_units.h"

#include <cstdint>

#include "sdk/platforms/ivytown/model/box_descriptors.h"

namespace uncore::ivytown {
namespace {

constexpr uint16_t kIntelVendor = 0x8086;
// The U-Box's bus-to-node function (D11:F0 on each socket's uncore bus):
// CPUNODEID at 0x40, GIDNIDMAP at 0x54 (the kernel's
// snbep_pci2phy_map_init reads the same).
constexpr platforms::PciSocketAnchor kUboxAnchor = {
    .device_id = 0x0e1e, .node_id_offset = 0x40, .node_map_offset = 0x54};

platforms::RegisterUnits MakeUnits() {
  platforms::RegisterUnits out;
  out.pci_vendor = kIntelVendor;
  out.anchor = kUboxAnchor;
  out.max_per_core = Box(BoxType::kCbo).num_instances();
  for (const BoxDescriptor& box : AllBoxes()) {
    const int unit = static_cast<int>(box.type);
    if (box.space == AccessSpace::kMsr) {
      out.msr.push_back({.unit = unit,
                         .instances = box.num_instances(),
                         .per_core = box.type == BoxType::kCbo});
      continue;
    }
    for (int n = 0; n < box.num_instances(); ++n) {
      out.pci.push_back({.unit = unit,
                         .instance = n,
                         .pmon = box.instances[n].pmon,
                         .aux = box.instances[n].aux});
    }
  }
  return out;
}

}  // namespace

const platforms::RegisterUnits& TopologyUnits() {
  static const platforms::RegisterUnits* const kUnits =
      new platforms::RegisterUnits(MakeUnits());
  return *kUnits;
}

}  // namespace uncore::ivytown
