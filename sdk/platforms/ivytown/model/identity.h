// IvyTown's identity: its names, title and CPUs, in the record every
// platform's identity has (perfmon::Platform).  IvyTown's events and
// metrics are its own catalogs (event_catalog.h, metrics.h), so the record
// has no vendor table; it is not one of perfmon::AllPlatforms(), which
// lists the platforms perf's tables name.
//
//   const perfmon::Platform& p = ivytown::Identity();
//   p.name;     // "ivytown"
//   p.aliases;  // "ivbep"
//   p.cpus;     // GenuineIntel family 6 model 0x3E
//   const platforms::PlatformRecord& r = ivytown::Record();  // its record
//
// Guarantees: constant data, no allocation.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_IDENTITY_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_IDENTITY_H_

#include "sdk/platforms/common/platform_records.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"

namespace uncore::ivytown {

const perfmon::Platform& Identity();
// IvyTown's platform record (platforms::RecordOf(Identity())): names from
// its own catalog, its PCI/MSR units (TopologyUnits()).
const platforms::PlatformRecord& Record();

}  // namespace uncore::ivytown

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_IDENTITY_H_
