// Internal hooks on uncore::Session for tests and benchmarks: count on a
// device made in code, start on a recorded machine, and reach the simulator
// behind the `sim` backend.  Not installed; not part of the public API.
// The SDK's own tools and integrations use session_internal.h (included
// here) instead.
//
//   sim::IvyTownUncore* sim = runtime::SimulatorOf(*session);
//   if (sim != nullptr) sim->Inject(...);
//
// Guarantees: as session_internal.h; nothing here is used by shipped code.
#ifndef UNCORE_SDK_RUNTIME_SESSION_TESTING_H_
#define UNCORE_SDK_RUNTIME_SESSION_TESTING_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/runtime/name_resolution.h"
#include "sdk/runtime/session_internal.h"
#include "sdk/sim/simulated_activity.h"
#include "uncore/session.h"

namespace uncore::runtime {

// A device given in code instead of a backend; Start programs it.
struct InjectedDevice {
  std::unique_ptr<devices::Device> device;
  std::string name = "custom";  // the report's backend name
  bool simulated = false;       // the report says SIMULATED
};

// Session::Start, counting on `device` (InvalidArgument when it is null).
absl::StatusOr<std::unique_ptr<Session>> StartSessionOnDevice(
    SessionOptions options, InjectedDevice device);

// The IvyTown simulator behind the `sim` backend (nullptr for other
// backends and platforms): tests and benchmarks inject traffic into it.
// The activity a program declares, on every simulator: SimulatedActivityOf
// (session_internal.h).
sim::IvyTownUncore* SimulatorOf(const Session& session);

// Session::Start on the machine `files` describe (MachineFiles:
// name_resolution.h).
absl::StatusOr<std::unique_ptr<Session>> StartSessionOnMachine(
    SessionOptions options, const MachineFiles& files);

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_SESSION_TESTING_H_
