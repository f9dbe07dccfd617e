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
//
// Guarantees: constant data, no allocation.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_IDENTITY_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_IDENTITY_H_

#include "sdk/platforms/perfmon/perfmon_tables.h"

namespace uncore::ivytown {

const perfmon::Platform& Identity();

}  // namespace uncore::ivytown

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_IDENTITY_H_
