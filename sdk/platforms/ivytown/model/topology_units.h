// IvyTown's PCI/MSR unit list (platforms::RegisterUnits), made from its box
// descriptors: what its platform record hands machine::DiscoverTopology and
// machine::SimulatedTopology.  Units are ivytown::BoxType as int.
//
//   const platforms::RegisterUnits& u = ivytown::TopologyUnits();
//   u.pci.front();      // HA 0: D14:F1, device id 0x0e30
//   u.max_per_core;     // 15 (CBos)
//   u.anchor.device_id; // 0x0e1e: the U-Box's bus-to-node function
//
// Guarantees: built once from constant data, never freed.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_TOPOLOGY_UNITS_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_TOPOLOGY_UNITS_H_

#include "sdk/platforms/common/register_units.h"

namespace uncore::ivytown {

const platforms::RegisterUnits& TopologyUnits();

}  // namespace uncore::ivytown

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_TOPOLOGY_UNITS_H_
