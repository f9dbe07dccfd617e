// Internal hooks on uncore::Session for tests, benchmarks and the SDK's own
// integrations: count on a device made in code, and reach the simulator
// behind the `sim` backend.  Not installed; not part of the public API.
//
//   sim::SimulatedUncore* sim = runtime::SimulatorOf(*session);
//   if (sim != nullptr) sim->Inject(...);
#ifndef UNCORE_SDK_RUNTIME_SESSION_TESTING_H_
#define UNCORE_SDK_RUNTIME_SESSION_TESTING_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/report/timeline.h"
#include "sdk/sim/demo_traffic.h"
#include "sdk/sim/simulated_uncore.h"
#include "sdk/spec/metric_expression.h"
#include "uncore/session.h"

namespace uncore::runtime {

// A device given in code instead of a backend; Start programs it.
struct InjectedDevice {
  std::unique_ptr<devices::Device> device;
  std::string name = "custom";  // the report's backend name
  bool simulated = false;       // the report says SIMULATED
};

// Session::Start, counting on `device` (InvalidArgument when it is null).
absl::StatusOr<std::unique_ptr<Session>> StartSessionOnDevice(
    SessionOptions options, InjectedDevice device);

// The simulator behind the `sim` backend, and its demo traffic model
// (nullptr for other backends, and for the model when
// SessionOptions::sim_demo_traffic is false): tests and benchmarks inject
// traffic into it.
sim::SimulatedUncore* SimulatorOf(const Session& session);
sim::DemoTrafficModel* DemoTrafficOf(const Session& session);

// Adds a warning to the session's results (the environment session says
// that a signal stopped it).  Not safe while another thread collects.
void AddSessionWarning(Session& session, std::string warning);

// Where a session reads the machine's description: perf's PMUs and the
// CPUs' packages under `sysfs_root`, the CPU's identity (which decides the
// platform) in `cpuinfo`.  Tests point them at recorded trees.
struct MachineFiles {
  std::string sysfs_root = "/sys";
  std::string cpuinfo = "/proc/cpuinfo";
};

// A metric of the session as compiled, and the session event (index into
// Results::events) behind each of its events.
struct SessionMetric {
  spec::CompiledMetric compiled;
  std::vector<int> event_index;
};
// The session's metrics, in Results::metrics order (`uncore stat -I`
// evaluates them over each interval).
std::vector<SessionMetric> MetricsOf(const Session& session);

// Session::Start on the machine `files` describe.
absl::StatusOr<std::unique_ptr<Session>> StartSessionOnMachine(
    SessionOptions options, const MachineFiles& files);

struct SessionAccess {
  static absl::StatusOr<std::unique_ptr<Session>> Start(
      SessionOptions options, InjectedDevice injected,
      const MachineFiles& files = {});
  static void CompileForPlan(Session::Impl& s);
  // The trace collector a trace file or an HTML report needs (none: OK).
  static absl::Status OpenTrace(Session::Impl& s);
  // The timeline the collector kept, its calls mapped to `results`' regions.
  static report::Timeline TimelineOf(Session::Impl& s, const Results& results);
  static std::vector<SessionMetric> Metrics(const Session& session);
  static sim::SimulatedUncore* Simulator(const Session& session);
  static sim::DemoTrafficModel* DemoTraffic(const Session& session);
  static void AddWarning(Session& session, std::string warning);
  // Stop writes no report and no trace (`uncore stat` whose command could
  // not run); call before Stop.
  static void DiscardOutputs(Session& session);
};

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_SESSION_TESTING_H_
