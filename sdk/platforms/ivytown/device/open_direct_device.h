// OpenDirectDevice: the direct backend on this machine's registers, ready to
// Program.  Checks the CPU, discovers the sockets and uncore PCI functions,
// opens the MSR and PCI config files, and puts the allow-list guard between
// the device and the registers.
//
//   absl::StatusOr<std::unique_ptr<devices::Device>> dev = OpenDirectDevice();
//   if (!dev.ok()) { /* says what is missing and how to fix it */ }
//   UNCORE_RETURN_IF_ERROR((*dev)->Program(request));
//   absl::Status cpu = CheckIvyTownCpu("/proc/cpuinfo");  // its first check
//
// The stack it builds: IvyTownDevice -> AllowListGuard -> LinuxRegisterSpace
// (/dev/cpu/N/msr, /sys/bus/pci/devices/.../config).  Every path can be
// moved (DirectDeviceConfig) so that tests run it on fixture trees.
//
// Errors, checked in this order, each saying what to do: not an IvyTown CPU
// (FailedPrecondition; use the perf backend), no uncore PCI function found
// (FailedPrecondition; the BIOS may hide them), the msr driver not loaded
// (FailedPrecondition; `modprobe msr`), no permission (PermissionDenied; root
// or CAP_SYS_RAWIO).  Opening only reads registers; nothing is written until
// Program.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_OPEN_DIRECT_DEVICE_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_OPEN_DIRECT_DEVICE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/platforms/ivytown/device/ivytown_device.h"

namespace uncore::devices {

struct DirectDeviceConfig {
  std::string sysfs_root = "/sys";
  std::string cpuinfo_path = "/proc/cpuinfo";
  std::string dev_cpu_root = "/dev/cpu";
  // Empty: <sysfs_root>/bus/pci/devices.
  std::string pci_root;
  IvyTownDevice::Options options;
};

absl::StatusOr<std::unique_ptr<IvyTownDevice>> OpenDirectDevice(
    const DirectDeviceConfig& config = {});

// OK on an IvyTown CPU (ivytown::Identity(): GenuineIntel family 6 model
// 0x3e, Xeon E5 v2 / E7 v2); FailedPrecondition naming what was found
// otherwise; NotFound when `cpuinfo_path` cannot be read.
absl::Status CheckIvyTownCpu(std::string_view cpuinfo_path = "/proc/cpuinfo");

}  // namespace uncore::devices

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_OPEN_DIRECT_DEVICE_H_
