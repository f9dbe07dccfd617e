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

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/engine/register_program.h"
#include "sdk/devices/node_union.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"

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
