// Name resolution: the one place where the event and metric names a user
// writes become what a session programs, on every platform a session speaks
// (runtime/session_platform.h).  Session::Start, `uncore stat`, `uncore
// describe` and the Google Benchmark integration all call it, so a name
// means the same thing everywhere.
//
//   absl::StatusOr<runtime::SessionMachine> machine =
//       runtime::ReadSessionMachine("nehalemex", "sim", /*on_hardware=*/true);
//   runtime::NameRequest request;
//   request.events = {"wbox/UNCORE_CLOCK"};
//   request.metrics = {"MEM_BW_TOTAL"};
//   request.backend = "sim";
//   absl::StatusOr<runtime::ResolvedNames> names =
//       runtime::ResolveNames(machine->platform, request, machine->pmus_or());
//   // names->events: the specs to program (metrics' events included, each
//   // canonical spelling once); names->metrics: the compiled metrics.
//
// The rules (docs/platforms.md "Sessions"):
//   - IvyTown (the hand-made model): spec::ParseSpec for events (a metric
//     spec among them is a metric), spec::ParseMetricName for metrics; an
//     event must encode (spec::EncodeEvent) unless it is a generic perf
//     event.
//   - A tabled platform (perfmon::Platform: the Xeon 7500 / E7 and every
//     perf-only platform): spec::ResolveOnPlatform; a name the tables do not
//     know may be another PMU's event in the kernel's syntax (msr/tsc/); a
//     composite or a metric is a metric.  The SDK's MEM_BW_* metrics count
//     with the kernel's free-running memory counters when the machine has
//     them, the request allows it and the backend is not direct.
//   - Events are deduplicated by their canonical spelling (a tabled
//     platform's events by their vendor names), metrics by their names.
//
// Guarantees: pure (ReadSessionMachine reads the machine's files only); an
// error names the list the name came from (NameRequest::events_list).
#ifndef UNCORE_SDK_RUNTIME_NAME_RESOLUTION_H_
#define UNCORE_SDK_RUNTIME_NAME_RESOLUTION_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/machine/topology.h"
#include "sdk/runtime/session_platform.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"
#include "sdk/spec/platform_catalog.h"
#include "uncore/results.h"

namespace uncore::runtime {

// Where a session reads the machine's description: perf's PMUs and the
// CPUs' packages under `sysfs_root`, the CPU's identity (which decides the
// platform) in `cpuinfo`.  Tests point them at recorded trees.
struct MachineFiles {
  std::string sysfs_root = "/sys";
  std::string cpuinfo = "/proc/cpuinfo";
};

// What decides a session's platform on this machine.
struct SessionMachine {
  absl::StatusOr<machine::CpuIdentity> cpu = absl::UnknownError("not read");
  // The kernel's PMUs, read where a backend may count on them (auto, perf,
  // direct, on hardware); nullopt elsewhere or when they cannot be read.
  std::optional<devices::perf::PmuCatalog> pmus;
  SessionPlatform platform;
  const devices::perf::PmuCatalog* pmus_or() const {
    return pmus.has_value() ? &*pmus : nullptr;
  }
};

// Reads the CPU and the PMUs and chooses the platform as a session with
// SessionOptions::platform `platform` and backend `backend` (lower case;
// "" is auto) does.  `on_hardware`: false for a device given in code.
absl::StatusOr<SessionMachine> ReadSessionMachine(
    std::string_view platform, std::string_view backend, bool on_hardware,
    const MachineFiles& files = {});

struct NameRequest {
  std::vector<std::string> events;   // SessionOptions::events
  std::vector<std::string> metrics;  // SessionOptions::metrics
  std::string backend = "auto";      // lower case
  bool use_free_running = true;      // SessionOptions::use_free_running
  // What an error says the name came from.
  std::string events_list = "events (UNCORE_EVENTS)";
  std::string metrics_list = "metrics (UNCORE_METRICS)";
};

// A metric as a session evaluates it.
struct ResolvedMetric {
  spec::CompiledMetric compiled;
  std::vector<int> event_index;  // per compiled.events: ResolvedNames index
  // A tabled platform's composite or metric: compiled again once the
  // counters are planned (#num_packages, source_count).
  std::optional<spec::Resolution> resolution;
};

// What one name of the request became.
struct ResolvedInput {
  std::string text;  // as given
  bool is_metric = false;
  // An event: its EventInfo::canonical.  A metric: its canonical spec
  // (IvyTown: "metric/imc.MEM_BW_TOTAL"; a tabled platform: "metric/" and
  // the vendor's name).
  std::string canonical;
  int index = 0;  // into ResolvedNames::events or ::metrics
};

struct ResolvedNames {
  // Parallel: the specs to program and what the report says of them.
  std::vector<spec::EventSpec> events;
  std::vector<EventInfo> event_infos;
  std::vector<ResolvedMetric> metrics;
  // Every name of the request, events then metrics, in order.
  std::vector<ResolvedInput> inputs;
  // What the report should say (a metric counted by free-running counters).
  std::vector<std::string> warnings;
};

// The request's names on `platform`.  `pmus`: the machine's PMUs (free-
// running counters), nullptr for none.
absl::StatusOr<ResolvedNames> ResolveNames(
    const SessionPlatform& platform, const NameRequest& request,
    const devices::perf::PmuCatalog* pmus);

// The event specs one name stands for on a tabled platform (a vendor name
// with terms, a composite's or metric's events, or another PMU's event in
// the kernel's syntax): what `uncore describe --registers` programs.
absl::StatusOr<std::vector<spec::EventSpec>> EventsOfName(
    const perfmon::Platform& platform, std::string_view text);

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_NAME_RESOLUTION_H_
