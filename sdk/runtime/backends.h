// Backends: what a Session counts on.  Opens the device the backend name
// asks for (auto, perf, direct, sim, off, or a device given in code),
// programs it, and answers the per-backend questions a report needs
// (instance names, scale and unit, whether a count is an estimate).
//
//   runtime::BackendRequest request;
//   request.name = "sim";
//   request.program.events = {...};
//   absl::StatusOr<runtime::OpenedBackend> b = runtime::OpenBackend(
//       std::move(request));
//   devices::Device* device = b->backend->device();   // programmed
//
// `auto` follows DecideAutoBackend (backend_policy.h): it tries perf, then
// direct; when neither opens it gives the `off` backend and a warning naming
// every reason.  It never picks `sim`.
//
// Guarantees: OpenBackend returns a programmed backend or an error with
// nothing left programmed.
#ifndef UNCORE_SDK_RUNTIME_BACKENDS_H_
#define UNCORE_SDK_RUNTIME_BACKENDS_H_

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/engine/register_program.h"
#include "sdk/devices/node_union.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/registers/msr_access_probe.h"
#include "sdk/runtime/backend_policy.h"
#include "sdk/spec/event_spec.h"

namespace uncore::sim {
class SimulatedActivity;
}  // namespace uncore::sim

namespace uncore::runtime {

struct EventScale {
  double scale = 1.0;
  std::string unit;      // "" for a plain count
  std::string encoding;  // backend-specific encoding text, or "" to keep
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Every count is made up by the simulator.
  virtual bool simulated() const { return false; }
  // The programmed device, or nullptr (`off`).
  virtual devices::Device* device() const = 0;
  // "CBo3", "iMC0 channel 1": the box instance of a read-plan entry.
  virtual std::string InstanceName(size_t entry,
                                   const devices::CounterPlacement& p) const;
  virtual EventScale ScaleOf(int event) const;
  // Whether read-plan entry `entry` was ever scaled from a partial count.
  virtual bool Estimated(int entry) const;
  // What the report should warn about the programmed events (the perf
  // backend: counter restrictions the kernel's driver does not know).
  virtual std::vector<std::string> Warnings() const { return {}; }
  // Releases the device (registers restored).  Safe to call twice.
  virtual absl::Status Stop() = 0;
  // The backend this one stands in front of (node sharing: the one it
  // serves), else nullptr: what a platform's test hook looks behind
  // (ivytown::SimulatorOf).
  virtual const Backend* wrapped() const { return nullptr; }
  // The simulator a program tells its activity (sim/simulated_activity.h):
  // every `sim` platform's with its demo traffic on, else nullptr.
  virtual sim::SimulatedActivity* simulated_activity() const { return nullptr; }
  // Node sharing (node_sharing.h): the shared counters segments whose node
  // union tables the recorder steps (devices/node_union.h); none otherwise.
  virtual std::vector<devices::NodeUnionGroup> node_union_groups() const {
    return {};
  }
};

struct BackendRequest {
  std::string name = "auto";
  devices::ProgramRequest program;
  int sim_sockets = 0;
  bool sim_demo_traffic = true;
  // Where perf finds its PMUs (tests: a recorded tree).
  std::string sysfs_root = "/sys";
  // Not empty: `auto` must not try direct, for this reason.
  std::string direct_refusal;
  // The session's platform: sim and direct open its RegisterPlatform
  // ("" and "ivytown": IvyTown).
  std::string platform;
  std::string cpuinfo = "/proc/cpuinfo";
  // A device given in code (tests, integrations); programmed here.
  std::unique_ptr<devices::Device> device;
  std::string device_name = "custom";
  bool device_simulated = false;
};

struct OpenedBackend {
  std::unique_ptr<Backend> backend;
  std::vector<std::string> warnings;
};

absl::StatusOr<OpenedBackend> OpenBackend(BackendRequest request);

// For the platforms' entries (sdk/platforms/<platform>/backend/):
// a backend that owns a programmed `device` and releases it at Stop;
std::unique_ptr<Backend> MakeDeviceBackend(
    std::string name, std::unique_ptr<devices::Device> device, bool simulated);
// how many sockets a simulator of `request` has (sim_sockets, at least one,
// and every socket the program names);
int SimSockets(const BackendRequest& request);
// the warning every simulated report carries.
std::string SimulatedWarning(std::string_view platform);

// ---- The platforms the register engine serves (sim and direct) ----
struct DescribedWrites {
  std::string header;  // what the writes are, for the text listing
  std::vector<devices::engine::RegisterWrite> writes;
};

// `uncore doctor`'s probe of a platform's direct backend on this machine:
// named checks (ok / fail / skip) with a fix for every failure, in the
// order the backend needs them, the last a trial that programs, counts and
// releases.  The CPU is the platform's (the doctor checked it first).
enum class ProbeState { kOk, kFail, kSkip };

struct ProbeCheck {
  std::string name;
  ProbeState state = ProbeState::kSkip;
  std::string detail;
  std::string fix;   // set for every failure
  std::string why;   // a few words for the verdict on a failure ("": name)
  std::string code;  // the reason code, "" when none
  Rejection rejection = Rejection::kFailed;  // a failure's, for the policy
};

struct DirectProbeRequest {
  std::string sysfs_root = "/sys";
  std::string cpuinfo = "/proc/cpuinfo";
  std::string dev_cpu_root = "/dev/cpu";
  bool cap_sys_rawio = false;  // this process's, for the fixes
  std::chrono::nanoseconds trial_time = std::chrono::milliseconds(2);
};

struct DirectProbe {
  std::vector<ProbeCheck> checks;
  bool usable = false;              // the trial counted
  std::string summary;              // "usable: ...", or "" (not usable)
  registers::MsrAccessProbe msr;    // registers::ProbeMsrAccess
  std::vector<int> pci_per_socket;  // PMON PCI functions; none: MSRs only
  std::string trial_stage;          // devices::TrialStageName, "" untried

  void Ok(std::string name, std::string detail, std::string code = "ok") {
    checks.push_back({std::move(name), ProbeState::kOk, std::move(detail), "",
                      "", std::move(code), Rejection::kNone});
  }
  void Skip(std::string name, std::string detail, std::string code) {
    checks.push_back({std::move(name), ProbeState::kSkip, std::move(detail), "",
                      "", std::move(code), Rejection::kNone});
  }
  void Fail(std::string name, std::string detail, std::string fix,
            std::string why, std::string code, Rejection rejection) {
    checks.push_back({std::move(name), ProbeState::kFail, std::move(detail),
                      std::move(fix), std::move(why), std::move(code),
                      rejection});
  }
  // Every check so far passed.
  bool Ready() const;
};

// For the platforms' probes: the rows every MSR-programmed platform needs,
// "msr driver" and "MSR access" (registers::ProbeMsrAccess into
// probe->msr);
void ProbeMsrChecks(const DirectProbeRequest& request, DirectProbe* probe);
// The machine's sockets and units (machine::DiscoverTopology); when that
// fails, row `name` fails ("make `unreadable` readable (mount sysfs)",
// reason `why`, code "discovery_failed") and nullopt is returned.
std::optional<machine::Topology> ProbeTopology(
    const DirectProbeRequest& request, std::string_view name,
    std::string_view unreadable, std::string_view why, DirectProbe* probe);
// the trial row "trial <name>": `events` (or why they did not resolve:
// stage "parse") programmed on `device` (opened, or why not: stage "open"),
// two snapshots request.trial_time apart, released, as
// devices::RunDeviceTrial does with IvyTown's spec syntax; ok with the
// count, or classified (no_permission, in_use, failed) with a fix.  `files`
// are what a process needs write access to ("/dev/cpu/*/msr"), `explain`
// what the failed fix points to ("`uncore describe --registers
// ubox/UCLK`").  When a check above failed, callers add the row skipped
// ("not_tried") instead: ProbeTrialSkipped.
void ProbeTrial(const DirectProbeRequest& request, std::string_view name,
                absl::StatusOr<devices::Device*> device,
                absl::StatusOr<std::vector<spec::EventSpec>> events,
                std::string_view files, std::string_view explain,
                DirectProbe* probe);
void ProbeTrialSkipped(std::string_view name, DirectProbe* probe);

// Every platform with a register model is one entry: its names, the CPUs it
// runs on, the global-control semantics its snapshots rely on, and how to
// open it on its simulator or on this machine's registers.  Both open the
// one generic engine (devices/engine/register_engine.h) with the
// platform's planner; OpenBackend chooses by name, never by a branch per
// platform.
struct RegisterPlatform {
  // Who the platform is (name, aliases, title, CPUs), once: the record its
  // perf tables have (perfmon::NehalemexPlatform()), or IvyTown's
  // ivytown::Identity().  Names match through spec::PlatformAnswersTo.
  const perfmon::Platform& (*identity)();
  std::string_view name() const { return identity().name; }
  // What a snapshot does with the socket's global control.
  std::string_view snapshot_window;
  // The simulated machine (SimSockets of the request), programmed.
  absl::StatusOr<OpenedBackend> (*simulate)(const BackendRequest& request);
  // This machine's registers, behind the platform's allow-list, programmed;
  // refuses a CPU that is not one of `cpus`.
  absl::StatusOr<std::unique_ptr<Backend>> (*open_direct)(
      const BackendRequest& request);
  // `uncore describe --registers SPEC`: the writes that program `spec` (a
  // name of the platform with its terms, a metric, or kernel syntax) on one
  // simulated socket, in order, with the listing's header; no hardware is
  // touched.
  absl::StatusOr<DescribedWrites> (*describe_writes)(std::string_view spec);
  // `uncore describe --platform P --registers`: the register model as text,
  // or nullptr when the platform has no such page.
  std::string (*describe_model)();
  // `uncore doctor`: what this machine lacks for open_direct (the checks
  // after the CPU's, which is the platform's), ending with a trial.
  DirectProbe (*probe_direct)(const DirectProbeRequest& request);
};

// ivytown, nehalemex, westmereex.
std::span<const RegisterPlatform> RegisterPlatforms();
// "ivytown, nehalemex, westmereex": for messages.
std::string RegisterPlatformNames();
// By name or alias, case-insensitive; "" is ivytown.  nullptr: a platform
// only perf counts (or no platform).
const RegisterPlatform* FindRegisterPlatform(std::string_view name);

// The backend names OpenBackend accepts.
inline constexpr std::string_view kBackendNames[] = {"auto", "perf", "direct",
                                                     "sim", "off"};

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_BACKENDS_H_
