#include "sdk/platforms/ivytown/model/topology_units.h"

#include <cstddef>

#include "gtest/gtest.h"
#include "sdk/platforms/common/platform_records.h"
#include "sdk/platforms/common/register_units.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/identity.h"

namespace uncore::ivytown {
namespace {

// IvyTown's platform record carries its unit list; no other record does
// (the tabled platforms are counted through perf, the Xeon 7500 needs no
// discovery).
TEST(TopologyUnitsTest, TheRecordCarriesTheUnitList) {
  EXPECT_EQ(Record().identity, &Identity());
  EXPECT_EQ(Record().units, &TopologyUnits());
  for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords()) {
    if (&r != &Record()) {
      EXPECT_EQ(r.units, nullptr) << r.name();
    }
  }
}

// Every MSR box in BoxType order, and every PCI box instance with its
// functions, as the descriptors give them.
TEST(TopologyUnitsTest, TheListIsTheBoxDescriptors) {
  const platforms::RegisterUnits& u = TopologyUnits();
  size_t msr = 0;
  size_t pci = 0;
  for (const BoxDescriptor& box : AllBoxes()) {
    if (box.space == AccessSpace::kMsr) {
      ASSERT_LT(msr, u.msr.size());
      EXPECT_EQ(u.msr[msr].unit, static_cast<int>(box.type));
      EXPECT_EQ(u.msr[msr].instances, box.num_instances());
      EXPECT_EQ(u.msr[msr].per_core, box.type == BoxType::kCbo) << box.name;
      ++msr;
      continue;
    }
    for (int n = 0; n < box.num_instances(); ++n) {
      ASSERT_LT(pci, u.pci.size());
      const platforms::PciUnitInstance& p = u.pci[pci++];
      EXPECT_EQ(p.unit, static_cast<int>(box.type));
      EXPECT_EQ(p.instance, n);
      EXPECT_EQ(p.pmon.device_id, box.instances[n].pmon.device_id);
      EXPECT_EQ(p.pmon.device, box.instances[n].pmon.device);
      EXPECT_EQ(p.aux.device, box.instances[n].aux.device);
      EXPECT_EQ(p.aux.device_id, box.instances[n].aux.device_id);
    }
  }
  EXPECT_EQ(msr, u.msr.size());
  EXPECT_EQ(pci, u.pci.size());
  EXPECT_EQ(u.max_per_core, 15);  // CBos
  EXPECT_EQ(u.pci_vendor, 0x8086);
  EXPECT_EQ(u.anchor.device_id, 0x0e1e);  // the U-Box's node-id function
  EXPECT_EQ(u.anchor.node_id_offset, 0x40u);
  EXPECT_EQ(u.anchor.node_map_offset, 0x54u);
}

}  // namespace
}  // namespace uncore::ivytown
