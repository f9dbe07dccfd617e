#include "sdk/platforms/ivytown/device/ivytown_device.h"

#include <utility>
#include <vector>

#include "sdk/common/status_macros.h"

namespace uncore::devices {

IvyTownDevice::IvyTownDevice(registers::RegisterSpace* space,
                             machine::Topology topology)
    : IvyTownDevice(space, std::move(topology), Options{}) {}

IvyTownDevice::IvyTownDevice(registers::RegisterSpace* space,
                             machine::Topology topology, Options options)
    : RegisterEngine(space, options), topology_(std::move(topology)) {}

absl::StatusOr<engine::RegisterProgram> IvyTownDevice::Plan(
    const ProgramRequest& request) {
  return direct::BuildRegisterProgram(request, {}, topology_);
}

absl::Status IvyTownDevice::Program(const ProgramRequest& request,
                                    const ProgramOptions& options) {
  UNCORE_ASSIGN_OR_RETURN(
      engine::RegisterProgram program,
      direct::BuildRegisterProgram(request, options, topology_));
  return Load(std::move(program), request.force);
}

absl::StatusOr<std::vector<RegisterWrite>> IvyTownDevice::PlanWrites(
    const ProgramRequest& request, const ProgramOptions& options) const {
  return direct::PlanWrites(request, topology_, options);
}

}  // namespace uncore::devices
