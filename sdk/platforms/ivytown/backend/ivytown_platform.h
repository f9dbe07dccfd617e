// IvyTown's entry in the register platforms (runtime::RegisterPlatforms):
// its identity, what a snapshot does with the global control, and how to
// open it on its simulator (IvyTownUncore with the demo traffic, the
// IvyTownDevice engine on top) or on this machine's registers (the direct
// backend behind the allow-list guard); and, for tests, the simulator
// behind a backend it opened.
//
//   const runtime::RegisterPlatform p = ivytown::RegisterPlatformEntry();
//   absl::StatusOr<runtime::OpenedBackend> b = p.simulate(request);
//   sim::IvyTownUncore* sim = ivytown::SimulatorOf(*b->backend);
//
// Guarantees: as runtime::OpenBackend's: a programmed backend or an error
// with nothing left programmed.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_BACKEND_IVYTOWN_PLATFORM_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_BACKEND_IVYTOWN_PLATFORM_H_

#include "sdk/runtime/backends.h"

namespace uncore::sim {
class IvyTownUncore;
}  // namespace uncore::sim

namespace uncore::ivytown {

runtime::RegisterPlatform RegisterPlatformEntry();

// The IvyTown simulator behind `backend` (this platform's `sim` backend,
// also behind the backends that wrap it), else nullptr: tests inject
// traffic into it (runtime::SimulatorOf, session_testing.h).
sim::IvyTownUncore* SimulatorOf(const runtime::Backend& backend);

}  // namespace uncore::ivytown

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_BACKEND_IVYTOWN_PLATFORM_H_
