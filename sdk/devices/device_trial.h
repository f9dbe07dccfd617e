// RunDeviceTrial: programs a few events on a device, counts for a moment and
// releases it: the proof that a backend counts here, for probes.
//
//   DeviceTrial t = RunDeviceTrial(device.get(), {"ubox/UCLK"},
//                                  std::chrono::milliseconds(2));
//   if (!t.status.ok()) { t.stage says where it failed }
//
// Guarantees: the device is released whatever happens (registers restored
// by the device); never prints.
#ifndef UNCORE_SDK_DEVICES_DEVICE_TRIAL_H_
#define UNCORE_SDK_DEVICES_DEVICE_TRIAL_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sdk/devices/device.h"

namespace uncore::devices {

// Where a trial stopped.
enum class TrialStage {
  kParse,     // an event spec did not parse
  kProgram,   // Device::Program refused
  kSnapshot,  // a snapshot failed
  kRelease,   // Release failed
  kDone,      // counted and released
};

std::string_view TrialStageName(TrialStage stage);

struct DeviceTrial {
  absl::Status status;
  TrialStage stage = TrialStage::kParse;
  uint64_t count = 0;  // sum of the read plan's deltas
  uint64_t ns = 0;     // between the two snapshots
};

// `specs` in IvyTown's syntax (spec::ParseEventSpec).
DeviceTrial RunDeviceTrial(Device* device,
                           const std::vector<std::string>& specs,
                           std::chrono::nanoseconds duration);
// Events already resolved (another platform's names).
DeviceTrial RunDeviceTrial(Device* device, const ProgramRequest& request,
                           std::chrono::nanoseconds duration);

}  // namespace uncore::devices

#endif  // UNCORE_SDK_DEVICES_DEVICE_TRIAL_H_
