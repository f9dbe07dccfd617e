// The Xeon 7500's and E7's entries in the register platforms
// (runtime::RegisterPlatforms): their identity (the perf tables' record),
// what a snapshot does with the global control (en_all), and how to open
// them on their simulator (NehalemExUncore, the NehalemExDevice engine on
// top) or on this machine's MSRs (behind the allow-list guard).
//
//   const runtime::RegisterPlatform p =
//       nehalemex::RegisterPlatformEntry(nehalemex::Variant::kWestmereEx);
//   absl::StatusOr<runtime::OpenedBackend> b = p.simulate(request);
//
// Guarantees: as runtime::OpenBackend's: a programmed backend or an error
// with nothing left programmed.
#ifndef UNCORE_SDK_PLATFORMS_NEHALEMEX_BACKEND_NEHALEMEX_PLATFORM_H_
#define UNCORE_SDK_PLATFORMS_NEHALEMEX_BACKEND_NEHALEMEX_PLATFORM_H_

#include "sdk/platforms/nehalemex/model/box_descriptors.h"
#include "sdk/runtime/backends.h"

namespace uncore::nehalemex {

runtime::RegisterPlatform RegisterPlatformEntry(Variant variant);

}  // namespace uncore::nehalemex

#endif  // UNCORE_SDK_PLATFORMS_NEHALEMEX_BACKEND_NEHALEMEX_PLATFORM_H_
