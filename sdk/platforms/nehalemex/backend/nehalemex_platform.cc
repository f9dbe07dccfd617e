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
#include "sdk/machine/allowlist_guard.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/nehalemex/backend/nehalemex_describe.h"
#include "sdk/platforms/nehalemex/device/nehalemex_allowlist.h"
#include "sdk/platforms/nehalemex/device/nehalemex_device.h"
#include "sdk/platforms/nehalemex/sim/nehalemex_uncore.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/registers/linux_register_space.h"
#include "sdk/sim/simulated_activity.h"

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
      RegisterAllowList(variant, topology));
  auto backend = std::make_unique<NehalemExBackend>(variant, std::move(space),
                                                    std::move(sockets));
  UNCORE_RETURN_IF_ERROR(backend->device()->Program(request.program));
  return std::unique_ptr<Backend>(std::move(backend));
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
            .describe_model = ModelTextOf<Variant::kNehalemEx>};
  }
  return {.identity = perfmon::WestmereexPlatform,
          .snapshot_window = kEnAllWindow,
          .simulate = SimulateXeon7500<Variant::kWestmereEx>,
          .open_direct = OpenXeon7500Direct<Variant::kWestmereEx>,
          .describe_writes = DescribeWritesOf<Variant::kWestmereEx>,
          .describe_model = ModelTextOf<Variant::kWestmereEx>};
}

}  // namespace uncore::nehalemex
