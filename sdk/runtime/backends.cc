#include "sdk/runtime/backends.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/device/ivytown_device.h"
#include "sdk/platforms/ivytown/device/open_direct_device.h"
#include "sdk/platforms/nehalemex/device/nehalemex_device.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/machine/allowlist_guard.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/platforms/nehalemex/model/box_descriptors.h"
#include "sdk/registers/linux_register_space.h"
#include "sdk/runtime/backend_policy.h"
#include "sdk/platforms/ivytown/sim/demo_traffic.h"
#include "sdk/platforms/nehalemex/sim/nehalemex_uncore.h"
#include "sdk/sim/simulated_activity.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
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

// The direct engine on the simulator, with the demo traffic brought up to
// the moment of each snapshot: counts grow with the time elapsed to the
// nanosecond, not in the 1 ms steps of a thread, so a region of 100 us sees
// 100 us of traffic and every interval of one rate reads that rate.  The
// snapshot's timestamp is the time its counts stand at.
class DemoAdvancingDevice : public devices::Device {
 public:
  DemoAdvancingDevice(devices::Device* inner, sim::DemoTrafficModel* demo)
      : inner_(inner), demo_(demo) {}
  std::string_view name() const override { return inner_->name(); }
  absl::Status Program(const devices::ProgramRequest& request) override {
    return inner_->Program(request);
  }
  const std::vector<devices::CounterPlacement>& read_plan() const override {
    return inner_->read_plan();
  }
  absl::Status TakeSnapshot(devices::Snapshot* out) override {
    uint64_t now_ns = 0;
    UNCORE_RETURN_IF_ERROR(demo_->Advance(&now_ns));
    UNCORE_RETURN_IF_ERROR(inner_->TakeSnapshot(out));
    out->timestamp_ns = now_ns;
    return absl::OkStatus();
  }
  absl::Status Release() override { return inner_->Release(); }
  uint64_t frozen_ns() const override { return inner_->frozen_ns(); }
  int reads_per_snapshot() const override {
    return inner_->reads_per_snapshot();
  }

 private:
  devices::Device* inner_;
  sim::DemoTrafficModel* demo_;
};

// The simulator, its demo traffic, and the direct engine on top.
class SimBackend : public Backend {
 public:
  SimBackend(int sockets, bool demo_traffic)
      : sim_(std::make_unique<sim::IvyTownUncore>(sockets)) {
    if (demo_traffic) {
      demo_ = std::make_unique<sim::DemoTrafficModel>(sim_.get());
      // A memory-bound phase on every socket: 10 GB/s, 500 M LLC lookups/s.
      demo_->SetActivity(10e9, 500e6);
    }
    devices::IvyTownDevice::Options o;
    device_ = std::make_unique<devices::IvyTownDevice>(sim_.get(),
                                                      sim_->topology(), o);
    if (demo_ != nullptr) {
      advancing_ =
          std::make_unique<DemoAdvancingDevice>(device_.get(), demo_.get());
    }
  }
  ~SimBackend() override {
    Stop().IgnoreError();
    advancing_.reset();
    device_.reset();  // before the simulator it programs
    demo_.reset();
  }

  absl::Status Program(const devices::ProgramRequest& request) {
    // The traffic so far goes nowhere (nothing counts yet); from now on no
    // thread: each snapshot brings the traffic up to itself.
    if (demo_ != nullptr) UNCORE_RETURN_IF_ERROR(demo_->Advance());
    return device_->Program(request);
  }

  std::string_view name() const override { return "sim"; }
  bool simulated() const override { return true; }
  devices::Device* device() const override {
    return advancing_ != nullptr
               ? static_cast<devices::Device*>(advancing_.get())
               : device_.get();
  }
  absl::Status Stop() override {
    if (demo_ != nullptr) demo_->Stop();
    return device_->Release();
  }
  sim::IvyTownUncore* simulator() const override { return sim_.get(); }
  sim::SimulatedActivity* simulated_activity() const override {
    return demo_.get();
  }

 private:
  std::unique_ptr<sim::IvyTownUncore> sim_;
  std::unique_ptr<sim::DemoTrafficModel> demo_;
  std::unique_ptr<devices::IvyTownDevice> device_;
  std::unique_ptr<DemoAdvancingDevice> advancing_;
};

// The Xeon 7500 / E7 engine (devices/nehalemex) on the simulator or on the
// Linux MSR files; instance names are the kernel's PMU names.
class NehalemExBackend : public Backend {
 public:
  // The simulator, with its demo traffic (no thread: counts advance with
  // the clock whenever the engine reads them).
  NehalemExBackend(nehalemex::Variant variant, int sockets, bool demo)
      : name_("sim"), simulated_(true), demo_(demo) {
    sim::NehalemExUncore::Options o;
    o.demo = demo;
    sim_ = sim::NehalemExUncore::Create(variant, sockets, o);
    device_ = std::make_unique<devices::NehalemExDevice>(
        sim_.get(), variant,
        devices::NehalemExDevice::ConsecutiveSockets(sockets, 1));
  }
  // The MSRs of this machine.
  NehalemExBackend(nehalemex::Variant variant,
                   std::unique_ptr<registers::RegisterSpace> space,
                   std::vector<devices::NehalemExDevice::SocketCpu> sockets)
      : name_("direct"), simulated_(false), space_(std::move(space)) {
    device_ = std::make_unique<devices::NehalemExDevice>(space_.get(), variant,
                                                         std::move(sockets));
  }
  ~NehalemExBackend() override {
    Stop().IgnoreError();
    device_.reset();  // before the register space it programs
  }
  std::string_view name() const override { return name_; }
  bool simulated() const override { return simulated_; }
  devices::Device* device() const override { return device_.get(); }
  absl::Status Stop() override { return device_->Release(); }
  sim::SimulatedActivity* simulated_activity() const override {
    return demo_ ? sim_.get() : nullptr;
  }

 private:
  std::string name_;
  bool simulated_;
  bool demo_ = false;  // the simulator's demo traffic
  std::unique_ptr<sim::NehalemExUncore> sim_;
  std::unique_ptr<registers::RegisterSpace> space_;
  std::unique_ptr<devices::NehalemExDevice> device_;
};

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

int SimSockets(const BackendRequest& request) {
  int n = std::max(request.sim_sockets, 1);
  for (int s : request.program.sockets) n = std::max(n, s + 1);
  return n;
}

// The direct backend on a Xeon 7500 / E7: the CPU must be that variant.
absl::StatusOr<std::unique_ptr<Backend>> OpenNehalemExDirect(
    nehalemex::Variant variant, const BackendRequest& request) {
  UNCORE_ASSIGN_OR_RETURN(machine::CpuIdentity cpu,
                          machine::ReadCpuIdentity(request.cpuinfo));
  if (cpu.vendor != "GenuineIntel" ||
      nehalemex::VariantFromModel(cpu.family, cpu.model) != variant) {
    return absl::FailedPreconditionError(fmt::format(
        "the direct backend for {} programs that CPU's own registers, and "
        "this CPU is {}: run on a Xeon 7500 (family 6 model 0x2e) or E7 "
        "(model 0x2f), or UNCORE_BACKEND=sim",
        request.platform, cpu.ToString()));
  }
  UNCORE_ASSIGN_OR_RETURN(
      machine::Topology topology,
      machine::DiscoverTopology(request.sysfs_root, request.cpuinfo));
  std::vector<devices::NehalemExDevice::SocketCpu> sockets;
  for (const machine::SocketTopology& s : topology.sockets) {
    sockets.push_back({.socket = s.socket, .cpu = s.msr_cpu});
  }
  if (sockets.empty()) {
    return absl::FailedPreconditionError(fmt::format(
        "no online CPU found under {}/devices/system/cpu", request.sysfs_root));
  }
  // Only the variant's PMON MSRs, within their writable bits, on the CPUs
  // of each socket: nothing else of the machine's MSRs is touched.
  auto space = std::make_unique<machine::AllowListGuard>(
      std::make_unique<registers::LinuxRegisterSpace>(),
      machine::NehalemExAllowList(variant, topology));
  auto backend = std::make_unique<NehalemExBackend>(variant, std::move(space),
                                                    std::move(sockets));
  UNCORE_RETURN_IF_ERROR(backend->device()->Program(request.program));
  return std::unique_ptr<Backend>(std::move(backend));
}

absl::StatusOr<std::unique_ptr<Backend>> OpenIvyTownDirect(
    const BackendRequest& request) {
  UNCORE_ASSIGN_OR_RETURN(std::unique_ptr<devices::IvyTownDevice> device,
                          devices::OpenDirectDevice());
  UNCORE_RETURN_IF_ERROR(device->Program(request.program));
  return std::unique_ptr<Backend>(
      std::make_unique<DeviceBackend>("direct", std::move(device), false));
}

std::string SimulatedWarning(std::string_view platform) {
  return fmt::format(
      "backend sim: every count is SIMULATED (a made-up traffic model on a "
      "simulated {}), not measured on this machine",
      platform);
}

absl::StatusOr<OpenedBackend> SimulateIvyTown(const BackendRequest& request) {
  auto sim = std::make_unique<SimBackend>(SimSockets(request),
                                          request.sim_demo_traffic);
  UNCORE_RETURN_IF_ERROR(sim->Program(request.program));
  OpenedBackend out;
  out.backend = std::move(sim);
  out.warnings.push_back(SimulatedWarning("IvyTown"));
  return out;
}

template <nehalemex::Variant kVariant>
absl::StatusOr<OpenedBackend> SimulateXeon7500(const BackendRequest& request) {
  auto sim = std::make_unique<NehalemExBackend>(kVariant, SimSockets(request),
                                                request.sim_demo_traffic);
  UNCORE_RETURN_IF_ERROR(sim->device()->Program(request.program));
  OpenedBackend out;
  out.backend = std::move(sim);
  out.warnings.push_back(SimulatedWarning(nehalemex::PlatformName(kVariant)));
  return out;
}

template <nehalemex::Variant kVariant>
absl::StatusOr<std::unique_ptr<Backend>> OpenXeon7500Direct(
    const BackendRequest& request) {
  return OpenNehalemExDirect(kVariant, request);
}

// DECISION: a Xeon 7500 snapshot clears en_all (no box-level freeze on this
// generation); docs/xeon7500.md says what that guarantees.
constexpr std::string_view kEnAllWindow =
    "U_MSR_PMON_GLOBAL_CTL.en_all is cleared (the generation has no box-level "
    "freeze), the counters are read, en_all is set again";

constexpr RegisterPlatform kRegisterPlatforms[] = {
    {.identity = ivytown::Identity,
     .snapshot_window =
         "U_MSR_PMON_GLOBAL_CTL.frz_all freezes every box of the socket, the "
         "counters are read, unfrz_all resumes them",
     .simulate = SimulateIvyTown,
     .open_direct = OpenIvyTownDirect},
    {.identity = perfmon::NehalemexPlatform,
     .snapshot_window = kEnAllWindow,
     .simulate = SimulateXeon7500<nehalemex::Variant::kNehalemEx>,
     .open_direct = OpenXeon7500Direct<nehalemex::Variant::kNehalemEx>},
    {.identity = perfmon::WestmereexPlatform,
     .snapshot_window = kEnAllWindow,
     .simulate = SimulateXeon7500<nehalemex::Variant::kWestmereEx>,
     .open_direct = OpenXeon7500Direct<nehalemex::Variant::kWestmereEx>},
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

std::span<const RegisterPlatform> RegisterPlatforms() {
  return kRegisterPlatforms;
}

std::string RegisterPlatformNames() {
  std::string names;
  for (const RegisterPlatform& r : kRegisterPlatforms) {
    names +=
        names.empty() ? std::string(r.name()) : fmt::format(", {}", r.name());
  }
  return names;
}

const RegisterPlatform* FindRegisterPlatform(std::string_view name) {
  name = common::StripWhitespace(name);
  if (name.empty()) return &kRegisterPlatforms[0];
  for (const RegisterPlatform& p : kRegisterPlatforms) {
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
