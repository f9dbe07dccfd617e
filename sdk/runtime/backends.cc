#include "sdk/runtime/backends.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/devices/device_trial.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/platforms/ivytown/backend/ivytown_platform.h"
#include "sdk/platforms/nehalemex/backend/nehalemex_platform.h"
#include "sdk/registers/msr_access_probe.h"
#include "sdk/report/report.h"
#include "sdk/runtime/backend_policy.h"
#include "sdk/spec/platform_catalog.h"

namespace uncore::runtime {
namespace {

// No device: regions are not measured.
class OffBackend : public Backend {
 public:
  std::string_view name() const override { return "off"; }
  devices::Device* device() const override { return nullptr; }
  absl::Status Stop() override { return absl::OkStatus(); }
};

}  // namespace

// A programmed device the backend owns.
class DeviceBackend : public Backend {
 public:
  DeviceBackend(std::string name, std::unique_ptr<devices::Device> device,
                bool simulated)
      : name_(std::move(name)),
        device_(std::move(device)),
        simulated_(simulated) {}
  ~DeviceBackend() override { Stop().IgnoreError(); }
  std::string_view name() const override { return name_; }
  bool simulated() const override { return simulated_; }
  devices::Device* device() const override { return device_.get(); }
  absl::Status Stop() override {
    return device_ == nullptr ? absl::OkStatus() : device_->Release();
  }

 private:
  std::string name_;
  std::unique_ptr<devices::Device> device_;
  bool simulated_;
};

std::unique_ptr<Backend> MakeDeviceBackend(
    std::string name, std::unique_ptr<devices::Device> device, bool simulated) {
  return std::make_unique<DeviceBackend>(std::move(name), std::move(device),
                                         simulated);
}

int SimSockets(const BackendRequest& request) {
  int n = std::max(request.sim_sockets, 1);
  for (int s : request.program.sockets) n = std::max(n, s + 1);
  return n;
}

std::string SimulatedWarning(std::string_view platform) {
  return fmt::format(
      "backend sim: every count is SIMULATED (a made-up traffic model on a "
      "simulated {}), not measured on this machine",
      platform);
}

bool DirectProbe::Ready() const {
  for (const ProbeCheck& c : checks) {
    if (c.state != ProbeState::kOk) return false;
  }
  return true;
}

std::optional<machine::Topology> ProbeTopology(
    const DirectProbeRequest& request, std::string_view name,
    std::string_view unreadable, std::string_view why, DirectProbe* probe) {
  absl::StatusOr<machine::Topology> topology =
      machine::DiscoverTopology(request.sysfs_root, request.cpuinfo);
  if (topology.ok()) return *std::move(topology);
  probe->Fail(std::string(name), common::StatusMessage(topology.status()),
              fmt::format("make {} readable (mount sysfs)", unreadable),
              std::string(why), "discovery_failed", Rejection::kUnavailable);
  return std::nullopt;
}

void ProbeMsrChecks(const DirectProbeRequest& request, DirectProbe* probe) {
  probe->msr = registers::ProbeMsrAccess(request.dev_cpu_root);
  const registers::MsrAccessProbe& msr = probe->msr;
  const std::string code(registers::MsrAccessReasonName(msr.reason));
  if (!msr.driver_loaded()) {
    probe->Fail("msr driver", msr.detail, msr.fix, "msr driver not loaded",
                code, Rejection::kUnavailable);
    probe->Skip("MSR access", "no msr device to open", code);
    return;
  }
  probe->Ok("msr driver",
            fmt::format("{} CPUs have {}/N/msr{}", msr.msr_devices,
                        request.dev_cpu_root,
                        msr.msr_safe_devices > 0
                            ? fmt::format(", {} msr_safe", msr.msr_safe_devices)
                            : std::string()));
  if (msr.ok()) {
    probe->Ok("MSR access", fmt::format("{} (TSC)", msr.detail), code);
    return;
  }
  const bool permission =
      msr.reason == registers::MsrAccessReason::kNoPermission ||
      msr.reason == registers::MsrAccessReason::kReadRefused;
  std::string fix = msr.fix;
  if (permission) {
    fix += fmt::format(" (this process has CAP_SYS_RAWIO: {})",
                       request.cap_sys_rawio ? "yes" : "no");
  }
  probe->Fail(
      "MSR access", msr.detail, std::move(fix),
      msr.opened_read_write ? "MSR reads fail" : "no write access to the MSRs",
      code, permission ? Rejection::kNoPermission : Rejection::kFailed);
}

void ProbeTrial(const DirectProbeRequest& request, std::string_view name,
                absl::StatusOr<devices::Device*> device,
                absl::StatusOr<std::vector<spec::EventSpec>> events,
                std::string_view files, std::string_view explain,
                DirectProbe* probe) {
  const std::string trial_name = fmt::format("trial {}", name);
  devices::DeviceTrial t;
  if (!events.ok()) {
    t.status = events.status();
    probe->trial_stage = "parse";
  } else if (!device.ok()) {
    t.status = device.status();
    probe->trial_stage = "open";
  } else {
    devices::ProgramRequest program;
    program.events = *std::move(events);
    t = devices::RunDeviceTrial(*device, program, request.trial_time);
    probe->trial_stage = std::string(devices::TrialStageName(t.stage));
  }
  if (t.status.ok()) {
    probe->usable = true;
    probe->Ok(trial_name,
              fmt::format(
                  "programmed (no other agent uses these boxes), counted {} "
                  "in {}, registers restored",
                  report::GroupDigits(t.count), report::FormatDuration(t.ns)));
    return;
  }
  // Classified by stage and status code.
  const Rejection rejection = RejectionFromStatus(t.status);
  std::string fix;
  std::string code = "failed";
  if (rejection == Rejection::kNoPermission) {
    code = "no_permission";
    fix = fmt::format(
        "run as root, or give the program CAP_SYS_RAWIO and write access to "
        "{}",
        files);
  } else if (t.stage == devices::TrialStage::kProgram &&
             t.status.code() == absl::StatusCode::kFailedPrecondition) {
    // The engines refuse boxes another agent has enabled with
    // FailedPrecondition (a write the CPU faults on is the other cause).
    code = "in_use";
    fix =
        "another agent has these counters enabled (perf's uncore driver in "
        "use, another tool): stop it, or take them over with UNCORE_FORCE=1 "
        "(uncore stat --force); if none does, the CPU refused a write: read "
        "the error above";
  } else {
    fix = fmt::format("read the error above; {} shows what the trial writes",
                      explain);
  }
  probe->Fail(trial_name, common::StatusMessage(t.status), std::move(fix),
              "programming the trial events failed", code,
              code == "in_use" ? Rejection::kBusy : rejection);
}

void ProbeTrialSkipped(std::string_view name, DirectProbe* probe) {
  probe->Skip(fmt::format("trial {}", name),
              "not tried: the checks above failed", "not_tried");
}

namespace {

// Linux perf_event: instance names are the PMUs, scale and unit come from
// the PMUs' event aliases, counts may be multiplexing estimates.
class PerfBackend : public Backend {
 public:
  explicit PerfBackend(std::unique_ptr<devices::perf::PerfDevice> device)
      : device_(std::move(device)) {}
  ~PerfBackend() override { Stop().IgnoreError(); }
  std::string_view name() const override { return "perf"; }
  devices::Device* device() const override { return device_.get(); }
  EventScale ScaleOf(int event) const override {
    EventScale out;
    for (const devices::perf::PerfCounter& c : device_->counters()) {
      if (c.event != event) continue;
      out.scale = c.scale;
      out.unit = c.unit;
      out.encoding = fmt::format("{}: {}", c.pmu->name, c.config.ToString());
      break;
    }
    return out;
  }
  bool Estimated(int entry) const override {
    return device_->estimated(static_cast<size_t>(entry));
  }
  std::vector<std::string> Warnings() const override {
    return device_->warnings();
  }
  absl::Status Stop() override { return device_->Release(); }

 private:
  std::unique_ptr<devices::perf::PerfDevice> device_;
};

// The register platform a sim or direct request opens, or why none does.
absl::StatusOr<const RegisterPlatform*> RegisterPlatformFor(
    const BackendRequest& request) {
  const RegisterPlatform* p = FindRegisterPlatform(request.platform);
  if (p != nullptr) return p;
  return absl::FailedPreconditionError(fmt::format(
      "the {} backend has a register model of {} only; platform {} is "
      "counted through perf (UNCORE_BACKEND=perf)",
      request.name, RegisterPlatformNames(), request.platform));
}

absl::StatusOr<std::unique_ptr<Backend>> OpenPerf(
    const devices::ProgramRequest& program, const std::string& sysfs_root) {
  devices::perf::PerfDevice::Options options;
  options.sysfs_root = sysfs_root;
  UNCORE_ASSIGN_OR_RETURN(std::unique_ptr<devices::perf::PerfDevice> device,
                          devices::perf::PerfDevice::Open(options));
  UNCORE_RETURN_IF_ERROR(device->Program(program));
  return std::unique_ptr<Backend>(
      std::make_unique<PerfBackend>(std::move(device)));
}

absl::StatusOr<std::unique_ptr<Backend>> OpenDirectFor(
    const BackendRequest& request) {
  UNCORE_ASSIGN_OR_RETURN(const RegisterPlatform* platform,
                          RegisterPlatformFor(request));
  return platform->open_direct(request);
}

}  // namespace

std::string Backend::InstanceName(size_t entry,
                                  const devices::CounterPlacement& p) const {
  return p.unit.empty() ? fmt::format("entry {}", entry) : p.unit;
}

EventScale Backend::ScaleOf(int) const { return {}; }

bool Backend::Estimated(int) const { return false; }

// The register platforms: one entry each, defined in the platform's own
// folder (sdk/platforms/<platform>/backend/).  "" names the default record
// (platforms::DefaultPlatformRecord()).
std::span<const RegisterPlatform> RegisterPlatforms() {
  static const RegisterPlatform kRegisterPlatforms[] = {
      ivytown::RegisterPlatformEntry(),
      nehalemex::RegisterPlatformEntry(nehalemex::Variant::kNehalemEx),
      nehalemex::RegisterPlatformEntry(nehalemex::Variant::kWestmereEx),
  };
  return kRegisterPlatforms;
}

std::string RegisterPlatformNames() {
  std::string names;
  for (const RegisterPlatform& r : RegisterPlatforms()) {
    names +=
        names.empty() ? std::string(r.name()) : fmt::format(", {}", r.name());
  }
  return names;
}

const RegisterPlatform* FindRegisterPlatform(std::string_view name) {
  name = common::StripWhitespace(name);
  if (name.empty()) name = platforms::DefaultPlatformRecord().name();
  for (const RegisterPlatform& p : RegisterPlatforms()) {
    if (spec::PlatformAnswersTo(p.identity(), name)) return &p;
  }
  return nullptr;
}

absl::StatusOr<OpenedBackend> OpenBackend(BackendRequest request) {
  OpenedBackend out;
  const std::string& name = request.name;
  if (request.device != nullptr) {
    UNCORE_RETURN_IF_ERROR(request.device->Program(request.program));
    out.backend = std::make_unique<DeviceBackend>(request.device_name,
                                                  std::move(request.device),
                                                  request.device_simulated);
    return out;
  }
  if (request.program.events.empty() && name != "off" &&
      (name == "sim" || name == "direct" || name == "perf" || name == "auto")) {
    // Nothing to count: regions get calls and wall time only.
    out.backend = std::make_unique<DeviceBackend>(name, nullptr, false);
    return out;
  }
  if (name == "off") {
    out.backend = std::make_unique<OffBackend>();
    out.warnings.push_back(
        "backend off: regions were not measured (UNCORE_BACKEND=off)");
    return out;
  }
  if (name == "sim") {
    UNCORE_ASSIGN_OR_RETURN(const RegisterPlatform* platform,
                            RegisterPlatformFor(request));
    return platform->simulate(request);
  }
  if (name == "direct") {
    UNCORE_ASSIGN_OR_RETURN(const RegisterPlatform* platform,
                            RegisterPlatformFor(request));
    UNCORE_ASSIGN_OR_RETURN(out.backend, platform->open_direct(request));
    return out;
  }
  if (name == "perf") {
    UNCORE_ASSIGN_OR_RETURN(out.backend,
                            OpenPerf(request.program, request.sysfs_root));
    out.warnings = out.backend->Warnings();
    return out;
  }
  if (name == "auto") {
    // The policy (backend_policy.h) says what to try and what to pick.
    AutoProbes probes;
    if (!request.direct_refusal.empty()) {
      probes.direct = BackendProbe::Rejected(Rejection::kUnavailable,
                                             request.direct_refusal);
    }
    std::unique_ptr<Backend> opened[2];
    AutoDecision decision = DecideAutoBackend(probes);
    while (decision.probe_next) {
      const BackendKind kind = *decision.probe_next;
      absl::StatusOr<std::unique_ptr<Backend>> b =
          kind == BackendKind::kPerf
              ? OpenPerf(request.program, request.sysfs_root)
              : OpenDirectFor(request);
      probes.For(kind) = BackendProbe::FromStatus(b.status());
      if (b.ok()) opened[kind == BackendKind::kPerf ? 0 : 1] = *std::move(b);
      decision = DecideAutoBackend(probes);
    }
    if (decision.backend != BackendKind::kOff) {
      out.backend =
          std::move(opened[decision.backend == BackendKind::kPerf ? 0 : 1]);
      out.warnings = out.backend->Warnings();
      return out;
    }
    out.backend = std::make_unique<OffBackend>();
    out.warnings.push_back(fmt::format(
        "no backend could count here, so regions were not measured: {} (run "
        "`uncore doctor`; UNCORE_BACKEND=sim tries the SDK on a simulated "
        "socket)",
        decision.RejectedText()));
    return out;
  }
  return absl::InvalidArgumentError(
      fmt::format("unknown backend '{}': use auto, perf, direct, sim or off",
                  common::QuoteForMessage(name)));
}

}  // namespace uncore::runtime
