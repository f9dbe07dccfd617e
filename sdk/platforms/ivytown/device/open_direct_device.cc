#include "sdk/platforms/ivytown/device/open_direct_device.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/machine/allowlist_guard.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/device/ivytown_allowlist.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/registers/linux_register_space.h"

namespace uncore::devices {
namespace {

// Owns the register stack below a IvyTownDevice.  A base class so that it is
// built before the device and destroyed after it (the device's destructor
// releases its registers through the stack).
struct RegisterStack {
  std::unique_ptr<registers::LinuxRegisterSpace> linux_space;
  std::unique_ptr<machine::AllowListGuard> guard;
};

class OwningDirectDevice : private RegisterStack, public IvyTownDevice {
 public:
  OwningDirectDevice(RegisterStack stack, machine::Topology topology,
                     IvyTownDevice::Options options)
      : RegisterStack(std::move(stack)),
        IvyTownDevice(guard.get(), std::move(topology), options) {}
  ~OwningDirectDevice() override { Release().IgnoreError(); }
};

int CountPciFunctions(const machine::Topology& topology) {
  int n = 0;
  for (const machine::SocketTopology& s : topology.sockets) {
    for (const machine::SocketTopology::PciInstance& p : s.pci) {
      n += p.pmon ? 1 : 0;
    }
  }
  return n;
}

}  // namespace

absl::StatusOr<std::unique_ptr<IvyTownDevice>> OpenDirectDevice(
    const DirectDeviceConfig& config) {
  UNCORE_RETURN_IF_ERROR(CheckIvyTownCpu(config.cpuinfo_path));
  UNCORE_ASSIGN_OR_RETURN(
      machine::Topology topology,
      machine::DiscoverTopology(config.sysfs_root, config.cpuinfo_path));
  if (topology.sockets.empty()) {
    return absl::FailedPreconditionError(fmt::format(
        "no online CPU found under {}/devices/system/cpu", config.sysfs_root));
  }
  const std::string pci_root = config.pci_root.empty()
                                   ? config.sysfs_root + "/bus/pci/devices"
                                   : config.pci_root;
  if (CountPciFunctions(topology) == 0) {
    return absl::FailedPreconditionError(fmt::format(
        "no IvyTown uncore PCI function (vendor 8086, device 0x0e.., 0x0e1e "
        "for the U-Box) was found under {}: the BIOS may hide the uncore "
        "devices; check `lspci -d 8086:` and enable them, or use the perf "
        "backend (UNCORE_BACKEND=perf)",
        pci_root));
  }
  RegisterStack stack;
  stack.linux_space = std::make_unique<registers::LinuxRegisterSpace>(
      config.dev_cpu_root, pci_root);
  stack.guard = std::make_unique<machine::AllowListGuard>(
      stack.linux_space.get(), ivytown::RegisterAllowList(topology));
  // Read every socket's global control now, so that a missing msr driver or
  // permission shows at open time, not at the first Program.
  for (const machine::SocketTopology& s : topology.sockets) {
    uint64_t value = 0;
    absl::Status read = stack.guard->ReadMsr(
        s.msr_cpu, ivytown::kGlobal.global_control, &value);
    if (!read.ok()) {
      return absl::Status(
          read.code(),
          fmt::format("opening the direct backend: reading "
                      "U_MSR_PMON_GLOBAL_CTL of socket {} on CPU {}: {}",
                      s.socket, s.msr_cpu, common::StatusMessage(read)));
    }
  }
  return std::unique_ptr<IvyTownDevice>(std::make_unique<OwningDirectDevice>(
      std::move(stack), std::move(topology), config.options));
}

absl::Status CheckIvyTownCpu(std::string_view cpuinfo_path) {
  UNCORE_ASSIGN_OR_RETURN(machine::CpuIdentity id,
                          machine::ReadCpuIdentity(cpuinfo_path));
  if (id.IsOf(ivytown::Identity())) return absl::OkStatus();
  return absl::FailedPreconditionError(fmt::format(
      "not an IvyTown CPU: {} says {}; the direct backend needs a Xeon E5 v2 "
      "/ E7 v2 (GenuineIntel family 6 model 0x3e); use the perf backend "
      "(UNCORE_BACKEND=perf) on other CPUs",
      cpuinfo_path, id.ToString()));
}

}  // namespace uncore::devices
