#include "sdk/devices/device_trial.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/spec/event_spec.h"

namespace uncore::devices {

std::string_view TrialStageName(TrialStage stage) {
  switch (stage) {
    case TrialStage::kParse:
      return "parse";
    case TrialStage::kProgram:
      return "program";
    case TrialStage::kSnapshot:
      return "snapshot";
    case TrialStage::kRelease:
      return "release";
    case TrialStage::kDone:
      return "done";
  }
  return "unknown";
}

DeviceTrial RunDeviceTrial(Device* device,
                           const std::vector<std::string>& specs,
                           std::chrono::nanoseconds duration) {
  DeviceTrial t;
  ProgramRequest request;
  for (const std::string& text : specs) {
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(text);
    if (!e.ok()) {
      t.status = e.status();
      t.stage = TrialStage::kParse;
      return t;
    }
    request.events.push_back(*std::move(e));
  }
  return RunDeviceTrial(device, request, duration);
}

DeviceTrial RunDeviceTrial(Device* device, const ProgramRequest& request,
                           std::chrono::nanoseconds duration) {
  DeviceTrial t;
  t.stage = TrialStage::kProgram;
  t.status = device->Program(request);
  if (!t.status.ok()) return t;
  const size_t n = device->read_plan().size();
  Snapshot a(n);
  Snapshot b(n);
  t.stage = TrialStage::kSnapshot;
  const auto begin = std::chrono::steady_clock::now();
  t.status = device->TakeSnapshot(&a);
  if (t.status.ok()) {
    std::this_thread::sleep_for(duration);
    t.status = device->TakeSnapshot(&b);
  }
  const auto end = std::chrono::steady_clock::now();
  t.ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - begin)
          .count());
  if (t.status.ok()) {
    for (size_t i = 0; i < n; ++i) t.count += b.values[i] - a.values[i];
  }
  const absl::Status released = device->Release();
  if (t.status.ok()) {
    t.status = released;
    t.stage = released.ok() ? TrialStage::kDone : TrialStage::kRelease;
  }
  return t;
}

}  // namespace uncore::devices
