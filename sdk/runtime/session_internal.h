// Internal hooks on uncore::Session for the SDK's own tools and
// integrations (`uncore stat`, the environment session, the Google
// Benchmark integration): what they need of a session beyond the public
// API.  Not installed; not part of the public API.  Tests use
// session_testing.h, which adds the hooks only tests need.
//
//   std::vector<runtime::SessionMetric> metrics = runtime::MetricsOf(*s);
//   // ... evaluate them over an interval (uncore stat -I) ...
//   runtime::DiscardSessionOutputs(*s);  // the command could not run
//   s->Stop();                           // no report, no trace
//
// Guarantees: each call is as thread-safe as the Session call it stands
// beside (MetricsOf and DiscardSessionOutputs: any thread; the rest: the
// thread that owns the session, not while it stops).
#ifndef UNCORE_SDK_RUNTIME_SESSION_INTERNAL_H_
#define UNCORE_SDK_RUNTIME_SESSION_INTERNAL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/report/timeline.h"
#include "sdk/runtime/backends.h"
#include "sdk/runtime/name_resolution.h"
#include "sdk/spec/metric_expression.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore::sim {
class SimulatedActivity;
}  // namespace uncore::sim

namespace uncore::runtime {

// A metric of the session as compiled, and the session event (index into
// Results::events) behind each of its events.
struct SessionMetric {
  spec::CompiledMetric compiled;
  std::vector<int> event_index;
};
// The session's metrics, in Results::metrics order (`uncore stat -I`
// evaluates them over each interval).
std::vector<SessionMetric> MetricsOf(const Session& session);

// Stop writes no report and no trace (`uncore stat` whose command could
// not run); call before Stop.
void DiscardSessionOutputs(Session& session);

// Whether Session::Stop's error is the trace's, not a report's: the
// message then reads "the trace is lost: ..." and says why, and callers
// print it as it is rather than as a lost report (issue 36).
bool IsTraceLoss(const absl::Status& status);

// Adds a warning to the session's results (the environment session says
// that a signal stopped it).  Not safe while another thread collects.
void AddSessionWarning(Session& session, std::string warning);

// The simulator behind the session that Session::SetSimulatedActivity
// drives (every `sim` platform's, with its demo traffic), else nullptr.
sim::SimulatedActivity* SimulatedActivityOf(const Session& session);

struct InjectedDevice;  // session_testing.h

// What the functions above and session_testing.h's reach through: the
// one friend of Session.
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
  // The session's backend (nullptr before Start has opened one).
  static const Backend* BackendOf(const Session& session);
  static sim::SimulatedActivity* Activity(const Session& session);
  static void AddWarning(Session& session, std::string warning);
  static void DiscardOutputs(Session& session);

  // Session::Start's steps, in order (session.cc).
  // The machine, the platform and the names: a new session's state.
  static absl::StatusOr<std::unique_ptr<Session::Impl>> Resolve(
      const SessionOptions& options, bool injected, const MachineFiles& files,
      SessionMachine* machine);
  // Where the report and the trace go, checked before anything is opened.
  static absl::Status PrepareOutputs(Session::Impl& s,
                                     const SessionOptions& options);
  // The backend, programmed with the session's events.
  static absl::StatusOr<OpenedBackend> OpenSessionBackend(
      const Session::Impl& s, const SessionOptions& options,
      const SessionMachine& machine, InjectedDevice injected,
      const MachineFiles& files);
  // The session around its programmed backend: the read plan, the metrics
  // compiled for it, the recorder and the trace.
  static absl::StatusOr<std::unique_ptr<Session>> Assemble(
      std::unique_ptr<Session::Impl> impl, OpenedBackend opened,
      SessionOptions options);
};

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_SESSION_INTERNAL_H_
