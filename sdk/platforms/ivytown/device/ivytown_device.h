// IvyTownDevice: the direct backend for IvyTown.  The generic register
// engine (engine/register_engine.h) with IvyTown's planner
// (program_plan.h): programs the uncore PMON boxes with the manual's own
// register sequences over a RegisterSpace, and takes snapshots by freezing
// every box of a socket at once.
//
//   machine::Topology topo = ...;  // or SimulatedTopology(ivytown::Record(), 1)
//   machine::AllowListGuard guard(&linux_space);  // production
//   devices::IvyTownDevice dev(&guard, topo);      // the space is not owned
//   ProgramRequest req;
//   req.events.push_back(*spec::ParseEventSpec("imc/CAS_COUNT.RD"));
//   UNCORE_RETURN_IF_ERROR(dev.Program(req));
//   Snapshot a(dev.read_plan().size()), b(dev.read_plan().size());
//   UNCORE_RETURN_IF_ERROR(dev.TakeSnapshot(&a));
//   ... the measured phase ...
//   UNCORE_RETURN_IF_ERROR(dev.TakeSnapshot(&b));
//   uint64_t reads = b.values[0] - a.values[0];   // 64-bit, never wraps
//   UNCORE_RETURN_IF_ERROR(dev.Release());        // registers as found
//
// Guarantees: Program refuses boxes another agent uses (unless forced) and
// rolls back every write on failure; Release restores every register it
// saved.  A snapshot is one freeze window per socket (2 writes, 1 read per
// MSR counter, 2 per PCI counter); values are 64-bit and exact while the
// background extender reads each counter within its wrap period.
// TakeSnapshot and ExtendNow are safe from many threads at once; Program and
// Release are not safe with each other or with snapshots.  The space must
// outlive the device.  Never prints, exits or throws.  The whole protocol
// (in-use test, rollback, freeze windows, width extension, sampling):
// docs/direct-backend.md.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_IVYTOWN_DEVICE_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_IVYTOWN_DEVICE_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/engine/register_engine.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/device/program_plan.h"
#include "sdk/registers/register_space.h"

namespace uncore::devices {

using direct::ProgramOptions;
using direct::RegisterWrite;
using direct::SampleInterval;

class IvyTownDevice : public engine::RegisterEngine {
 public:
  using Options = engine::RegisterEngine::Options;

  IvyTownDevice(registers::RegisterSpace* space, machine::Topology topology);
  IvyTownDevice(registers::RegisterSpace* space, machine::Topology topology,
                Options options);

  std::string_view name() const override { return "direct"; }
  using RegisterEngine::Program;
  // With sampling (ProgramOptions::samples).
  absl::Status Program(const ProgramRequest& request,
                       const ProgramOptions& options);

  // The exact ordered writes Program would perform for `request` (with the
  // global control's kept bits taken as 0), without touching a register.
  absl::StatusOr<std::vector<RegisterWrite>> PlanWrites(
      const ProgramRequest& request, const ProgramOptions& options = {}) const;

 protected:
  absl::StatusOr<engine::RegisterProgram> Plan(
      const ProgramRequest& request) override;

 private:
  machine::Topology topology_;
};

}  // namespace uncore::devices

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_IVYTOWN_DEVICE_H_
