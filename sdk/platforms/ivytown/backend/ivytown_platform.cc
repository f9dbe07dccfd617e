#include "sdk/platforms/ivytown/backend/ivytown_platform.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/device/ivytown_device.h"
#include "sdk/platforms/ivytown/device/open_direct_device.h"
#include "sdk/platforms/ivytown/device/program_plan.h"
#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/platforms/ivytown/sim/demo_traffic.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/sim/simulated_activity.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"

namespace uncore::ivytown {
namespace {

using runtime::Backend;
using runtime::BackendRequest;
using runtime::OpenedBackend;

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
  sim::IvyTownUncore* simulator() const { return sim_.get(); }
  sim::SimulatedActivity* simulated_activity() const override {
    return demo_.get();
  }

 private:
  std::unique_ptr<sim::IvyTownUncore> sim_;
  std::unique_ptr<sim::DemoTrafficModel> demo_;
  std::unique_ptr<devices::IvyTownDevice> device_;
  std::unique_ptr<DemoAdvancingDevice> advancing_;
};

absl::StatusOr<std::unique_ptr<Backend>> OpenIvyTownDirect(
    const BackendRequest& request) {
  UNCORE_ASSIGN_OR_RETURN(std::unique_ptr<devices::IvyTownDevice> device,
                          devices::OpenDirectDevice());
  UNCORE_RETURN_IF_ERROR(device->Program(request.program));
  return runtime::MakeDeviceBackend("direct", std::move(device), false);
}

absl::StatusOr<OpenedBackend> SimulateIvyTown(const BackendRequest& request) {
  auto sim = std::make_unique<SimBackend>(runtime::SimSockets(request),
                                          request.sim_demo_traffic);
  UNCORE_RETURN_IF_ERROR(sim->Program(request.program));
  OpenedBackend out;
  out.backend = std::move(sim);
  out.warnings.push_back(runtime::SimulatedWarning("IvyTown"));
  return out;
}

// The direct backend's writes on a simulated one-socket machine (PCI bus
// 0x7f).
absl::StatusOr<runtime::DescribedWrites> DescribeWrites(std::string_view text) {
  UNCORE_ASSIGN_OR_RETURN(spec::Spec parsed, spec::ParseSpec(text));
  devices::ProgramRequest request;
  if (parsed.is_metric()) {
    UNCORE_ASSIGN_OR_RETURN(
        spec::CompiledMetric compiled,
        spec::CompileMetric(std::get<spec::MetricSpec>(parsed.value)));
    request.events = compiled.events;
  } else {
    request.events.push_back(std::get<spec::EventSpec>(parsed.value));
  }
  runtime::DescribedWrites out;
  UNCORE_ASSIGN_OR_RETURN(out.writes, devices::direct::PlanWrites(
                                          request, machine::SimulatedTopology(
                                                       ivytown::Record(), 1)));
  out.header = fmt::format(
      "register writes that program {} with the direct backend, in order\n"
      "(a simulated 1-socket IvyTown, PCI bus 7f; Program first reads every\n"
      "register it changes, refuses if another agent uses them, and Release\n"
      "writes them all back; pmi_core_sel/wk_on_pmi are kept as found)\n",
      text);
  return out;
}

// `uncore doctor`: the msr driver and MSR access, the uncore PCI
// functions of every socket, then a trial of ubox/UCLK + imc/DCLK through
// OpenDirectDevice (the direct backend's own stack).
runtime::DirectProbe ProbeIvyTownDirect(
    const runtime::DirectProbeRequest& request) {
  using runtime::ProbeState;
  using runtime::Rejection;
  runtime::DirectProbe probe;
  runtime::ProbeMsrChecks(request, &probe);

  // Uncore PCI functions: machine::DiscoverTopology.
  const std::optional<machine::Topology> topology = runtime::ProbeTopology(
      request, "uncore PCI functions",
      fmt::format("{}/bus/pci/devices and {}/devices/system/cpu",
                  request.sysfs_root, request.sysfs_root),
      "PCI discovery failed", &probe);
  if (topology) {
    int total = 0;
    std::vector<std::string> per_socket;
    for (const machine::SocketTopology& s : topology->sockets) {
      int n = 0;
      for (const auto& p : s.pci) n += p.pmon ? 1 : 0;
      probe.pci_per_socket.push_back(n);
      total += n;
      per_socket.push_back(fmt::format("socket {}: {}", s.socket, n));
    }
    if (total > 0) {
      probe.Ok("uncore PCI functions",
               fmt::format("{} PMON functions ({})", total,
                           common::Join(per_socket, ", ")));
    } else {
      probe.Fail("uncore PCI functions",
                 fmt::format("no IvyTown uncore PCI function (8086:0e..) under "
                             "{}/bus/pci/devices ({} socket{})",
                             request.sysfs_root, topology->sockets.size(),
                             topology->sockets.size() == 1 ? "" : "s"),
                 "the BIOS hides the uncore devices: check `lspci -d 8086:` "
                 "for devices 0x0e.. and enable them in the BIOS setup, or "
                 "use the perf backend (UNCORE_BACKEND=perf)",
                 "no uncore PCI functions", "no_pci_functions",
                 Rejection::kUnavailable);
    }
  }

  // The trial: open, program (the in-use check), count, release.
  const std::vector<std::string> specs = {"ubox/UCLK", "imc/DCLK"};
  const std::string name = common::Join(specs, " + ");
  if (!probe.Ready()) {
    runtime::ProbeTrialSkipped(name, &probe);
    return probe;
  }
  devices::DirectDeviceConfig config;
  config.sysfs_root = request.sysfs_root;
  config.cpuinfo_path = request.cpuinfo;
  config.dev_cpu_root = request.dev_cpu_root;
  absl::StatusOr<std::unique_ptr<devices::IvyTownDevice>> device =
      devices::OpenDirectDevice(config);
  absl::StatusOr<std::vector<spec::EventSpec>> events =
      std::vector<spec::EventSpec>();
  for (const std::string& text : specs) {
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(text);
    if (!e.ok()) {
      events = e.status();
      break;
    }
    events->push_back(*std::move(e));
  }
  runtime::ProbeTrial(
      request, name,
      device.ok() ? absl::StatusOr<devices::Device*>(device->get())
                  : absl::StatusOr<devices::Device*>(device.status()),
      std::move(events), "/dev/cpu/*/msr and the uncore PCI config files",
      "`uncore describe --registers ubox/UCLK`", &probe);
  if (probe.usable) {
    probe.summary = "usable: programs the IvyTown registers itself";
  }
  return probe;
}

}  // namespace

runtime::RegisterPlatform RegisterPlatformEntry() {
  return {.identity = Identity,
          .snapshot_window =
              "U_MSR_PMON_GLOBAL_CTL.frz_all freezes every box of the socket, "
              "the counters are read, unfrz_all resumes them",
          .simulate = SimulateIvyTown,
          .open_direct = OpenIvyTownDirect,
          .describe_writes = DescribeWrites,
          .describe_model = nullptr,
          .probe_direct = ProbeIvyTownDirect};
}

sim::IvyTownUncore* SimulatorOf(const runtime::Backend& backend) {
  const Backend* b = &backend;
  while (b->wrapped() != nullptr) b = b->wrapped();
  const auto* sim = dynamic_cast<const SimBackend*>(b);
  return sim == nullptr ? nullptr : sim->simulator();
}

}  // namespace uncore::ivytown
