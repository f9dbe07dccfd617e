#include "sdk/platforms/nehalemex/backend/nehalemex_platform.h"

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
#include "sdk/machine/allowlist_guard.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/nehalemex/backend/nehalemex_describe.h"
#include "sdk/platforms/nehalemex/device/nehalemex_allowlist.h"
#include "sdk/platforms/nehalemex/device/nehalemex_device.h"
#include "sdk/platforms/nehalemex/sim/nehalemex_uncore.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/registers/linux_register_space.h"
#include "sdk/runtime/name_resolution.h"
#include "sdk/sim/simulated_activity.h"
#include "sdk/spec/event_spec.h"

namespace uncore::nehalemex {
namespace {

using runtime::Backend;
using runtime::BackendRequest;
using runtime::OpenedBackend;

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

// This machine's MSRs (the msr files under `dev_cpu_root`) behind the
// variant's allow-list, not yet programmed: the CPU must be that variant.
// `platform` names it in the refusal.
absl::StatusOr<std::unique_ptr<NehalemExBackend>> OpenMsrBackend(
    nehalemex::Variant variant, std::string_view platform,
    const std::string& sysfs_root, const std::string& cpuinfo,
    const std::string& dev_cpu_root) {
  UNCORE_ASSIGN_OR_RETURN(machine::CpuIdentity cpu,
                          machine::ReadCpuIdentity(cpuinfo));
  if (cpu.vendor != "GenuineIntel" ||
      nehalemex::VariantFromModel(cpu.family, cpu.model) != variant) {
    return absl::FailedPreconditionError(fmt::format(
        "the direct backend for {} programs that CPU's own registers, and "
        "this CPU is {}: run on a Xeon 7500 (family 6 model 0x2e) or E7 "
        "(model 0x2f), or UNCORE_BACKEND=sim",
        platform, cpu.ToString()));
  }
  UNCORE_ASSIGN_OR_RETURN(machine::Topology topology,
                          machine::DiscoverTopology(sysfs_root, cpuinfo));
  std::vector<devices::NehalemExDevice::SocketCpu> sockets;
  for (const machine::SocketTopology& s : topology.sockets) {
    sockets.push_back({.socket = s.socket, .cpu = s.msr_cpu});
  }
  if (sockets.empty()) {
    return absl::FailedPreconditionError(fmt::format(
        "no online CPU found under {}/devices/system/cpu", sysfs_root));
  }
  // Only the variant's PMON MSRs, within their writable bits, on the CPUs
  // of each socket: nothing else of the machine's MSRs is touched.
  auto space = std::make_unique<machine::AllowListGuard>(
      std::make_unique<registers::LinuxRegisterSpace>(
          dev_cpu_root, fmt::format("{}/bus/pci/devices", sysfs_root)),
      RegisterAllowList(variant, topology));
  return std::make_unique<NehalemExBackend>(variant, std::move(space),
                                            std::move(sockets));
}

// The direct backend on a Xeon 7500 / E7, programmed.
absl::StatusOr<std::unique_ptr<Backend>> OpenNehalemExDirect(
    nehalemex::Variant variant, const BackendRequest& request) {
  UNCORE_ASSIGN_OR_RETURN(
      std::unique_ptr<NehalemExBackend> backend,
      OpenMsrBackend(variant, request.platform, request.sysfs_root,
                     request.cpuinfo, "/dev/cpu"));
  UNCORE_RETURN_IF_ERROR(backend->device()->Program(request.program));
  return std::unique_ptr<Backend>(std::move(backend));
}

// `uncore doctor` on a Xeon 7500 / E7: the direct backend programs MSRs
// only (no PCI), so it needs the msr driver and MSR access, the sockets
// and a CPU of each (the allow-list's), and then a trial of the W-box's
// fixed counter (wbox/UNCORE_CLOCK) through the backend's own stack.
runtime::DirectProbe ProbeNehalemExDirect(
    nehalemex::Variant variant, const runtime::DirectProbeRequest& request) {
  using runtime::ProbeState;
  using runtime::Rejection;
  runtime::DirectProbe probe;
  runtime::ProbeMsrChecks(request, &probe);

  const std::optional<machine::Topology> topology = runtime::ProbeTopology(
      request, "sockets",
      fmt::format("{}/devices/system/cpu", request.sysfs_root),
      "socket discovery failed", &probe);
  if (!topology) {
    // ProbeTopology said why.
  } else if (topology->sockets.empty()) {
    probe.Fail("sockets",
               fmt::format("no online CPU found under "
                           "{}/devices/system/cpu",
                           request.sysfs_root),
               fmt::format("make {}/devices/system/cpu readable (mount "
                           "sysfs)",
                           request.sysfs_root),
               "no sockets found", "no_sockets", Rejection::kUnavailable);
  } else {
    std::vector<std::string> per_socket;
    for (const machine::SocketTopology& s : topology->sockets) {
      per_socket.push_back(
          fmt::format("socket {} through CPU {}", s.socket, s.msr_cpu));
    }
    const machine::AllowList allowed = RegisterAllowList(variant, *topology);
    probe.Ok(
        "sockets",
        fmt::format("{} socket{}: {}; the allow-list: {} PMON MSRs across "
                    "them, within their writable bits, no PCI",
                    topology->sockets.size(),
                    topology->sockets.size() == 1 ? "" : "s",
                    common::Join(per_socket, ", "), allowed.registers.size()));
  }

  // The trial: open, program (the in-use check), count, release.
  const std::string_view name = "wbox/UNCORE_CLOCK";
  if (!probe.Ready()) {
    runtime::ProbeTrialSkipped(name, &probe);
    return probe;
  }
  const perfmon::Platform& tables = variant == Variant::kNehalemEx
                                        ? perfmon::NehalemexPlatform()
                                        : perfmon::WestmereexPlatform();
  absl::StatusOr<std::unique_ptr<NehalemExBackend>> backend =
      OpenMsrBackend(variant, PlatformName(variant), request.sysfs_root,
                     request.cpuinfo, request.dev_cpu_root);
  runtime::ProbeTrial(
      request, name,
      backend.ok() ? absl::StatusOr<devices::Device*>((*backend)->device())
                   : absl::StatusOr<devices::Device*>(backend.status()),
      runtime::EventsOfName(tables, name), "/dev/cpu/*/msr",
      fmt::format("`uncore describe --platform {} --registers {}`",
                  PlatformName(variant), name),
      &probe);
  if (probe.usable) {
    probe.summary =
        fmt::format("usable: programs the {} registers itself (MSRs only)",
                    VariantDisplayName(variant));
  }
  return probe;
}

template <nehalemex::Variant kVariant>
runtime::DirectProbe ProbeXeon7500Direct(
    const runtime::DirectProbeRequest& request) {
  return ProbeNehalemExDirect(kVariant, request);
}

template <nehalemex::Variant kVariant>
absl::StatusOr<OpenedBackend> SimulateXeon7500(const BackendRequest& request) {
  auto sim = std::make_unique<NehalemExBackend>(
      kVariant, runtime::SimSockets(request), request.sim_demo_traffic);
  UNCORE_RETURN_IF_ERROR(sim->device()->Program(request.program));
  OpenedBackend out;
  out.backend = std::move(sim);
  out.warnings.push_back(runtime::SimulatedWarning(PlatformName(kVariant)));
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

template <Variant kVariant>
absl::StatusOr<runtime::DescribedWrites> DescribeWritesOf(
    std::string_view spec) {
  return DescribeWrites(kVariant, spec);
}

template <Variant kVariant>
std::string ModelTextOf() {
  return RegisterModelText(kVariant);
}

}  // namespace

runtime::RegisterPlatform RegisterPlatformEntry(Variant variant) {
  if (variant == Variant::kNehalemEx) {
    return {.identity = perfmon::NehalemexPlatform,
            .snapshot_window = kEnAllWindow,
            .simulate = SimulateXeon7500<Variant::kNehalemEx>,
            .open_direct = OpenXeon7500Direct<Variant::kNehalemEx>,
            .describe_writes = DescribeWritesOf<Variant::kNehalemEx>,
            .describe_model = ModelTextOf<Variant::kNehalemEx>,
            .probe_direct = ProbeXeon7500Direct<Variant::kNehalemEx>};
  }
  return {.identity = perfmon::WestmereexPlatform,
          .snapshot_window = kEnAllWindow,
          .simulate = SimulateXeon7500<Variant::kWestmereEx>,
          .open_direct = OpenXeon7500Direct<Variant::kWestmereEx>,
          .describe_writes = DescribeWritesOf<Variant::kWestmereEx>,
          .describe_model = ModelTextOf<Variant::kWestmereEx>,
          .probe_direct = ProbeXeon7500Direct<Variant::kWestmereEx>};
}

}  // namespace uncore::nehalemex
