// uncore/session.h: choose what to count and where, start counting, and get
// the per-region results.
//
//   uncore::SessionOptions options;
//   options.events = {"imc/CAS_COUNT.RD", "imc/CAS_COUNT.WR"};
//   options.metrics = {"MEM_BW_TOTAL"};
//   options.backend = "auto";          // auto | perf | direct | sim | off
//   options.output = "report.json";    // "-": a table on stderr; .csv; ""
//   absl::StatusOr<std::unique_ptr<uncore::Session>> session =
//       uncore::Session::Start(std::move(options));
//   if (!session.ok()) { /* says what is wrong and how to fix it */ }
//   { UNCORE_REGION("solve"); Solve(); }
//   uncore::Results results = (*session)->Collect();
//   (*session)->Stop();                // writes `output`; restores registers
//
// Or set UNCORE_EVENTS (docs/environment.md) and the program starts a
// session when it loads and writes the report when it exits.  Names are
// IvyTown's, or those of the CPU's platform when the SDK knows it from vendor
// data (Skylake-SP to Granite Rapids, AMD Zen 2-5: docs/platforms.md).
// Backends:
// `direct` (IvyTown registers; root), `perf` (the kernel's PMUs), `sim` (a
// simulated socket; every report says SIMULATED), `off`, and `auto` (perf,
// then direct, else off with a warning; never sim).  docs/backends.md says
// what each needs; docs/report-format.md, the reports.
//
// Guarantees: one session is active at a time; Start returns an active
// session or an error, with no register left programmed.  Stop (and the
// destructor) may run while other threads are inside regions: boundaries
// under way finish first, regions still open are listed in the report's
// errors, and later ones cost one pointer test (docs/concurrency.md).  In a
// fork()ed child the parent's session counts nothing and its Stop does
// nothing: the child never writes the parent's report nor touches its
// counters; a child that wants counts starts its own session.  Nothing is
// printed except the
// report asked for (and, for a session started from the environment, one
// message on stderr when its configuration is wrong).  Counts are
// socket-wide (uncore/region.h).
#ifndef UNCORE_SESSION_H_
#define UNCORE_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "uncore/region.h"
#include "uncore/results.h"

namespace uncore {

namespace regions {
class Recorder;
}  // namespace regions
namespace runtime {
struct SessionAccess;
}  // namespace runtime

struct SessionOptions {
  // Event specs (docs/regions.md "Event specs"); a metric spec here is a
  // metric.
  std::vector<std::string> events;
  // Metric names or specs: "MEM_BW_TOTAL", "metric/PCT_...:x=3".
  std::vector<std::string> metrics;
  std::string backend = "auto";
  // Whose event and metric names these are (UNCORE_PLATFORM;
  // docs/platforms.md): "" decides from the CPU (IvyTown on `sim`);
  // "ivytown", or a platform generated from vendor data ("skylakex",
  // "sapphirerapids", "graniterapids", "amdzen4", ... `uncore list
  // --platforms`), counted through perf.  On hardware the CPU decides: a
  // platform other than the CPU's is an error.
  std::string platform;
  // Generated platforms on perf: the SDK's MEM_BW_* metrics count with the
  // kernel's free-running memory counters (uncore_imc_free_running_N) where
  // they exist, and program nothing (UNCORE_FREE_RUNNING=0: CAS events).
  bool use_free_running = true;
  std::vector<int> sockets;  // empty: every socket
  // Where Stop writes the report: "" nowhere, "-" a table on stderr,
  // "FILE.json", "FILE.csv" (tidy: a row per value), "FILE.html" (a page
  // with a timeline), "FILE.hatchet.json" (Hatchet's literal tree), any
  // other FILE a table; several, separated by commas ("r.json,r.html,-"),
  // each written whole.  Placeholders %p (pid), %h (host), %r (MPI rank),
  // %t (start time), %% (docs/environment.md) are expanded and the names
  // made absolute at Start, which fails when a report could not be written
  // there.  A file is replaced only by a complete report.
  std::string output;
  // A Chrome Trace Event file of the run (UNCORE_TRACE; docs/views.md):
  // every region call on its thread's track, and per socket the
  // events' and metrics' rates between snapshots.  The same placeholders
  // and checks as `output`; written whole at Stop, or not at all.
  std::string trace;
  // With a trace or an HTML report: also take a snapshot every this many
  // nanoseconds in the background (UNCORE_TRACE_INTERVAL=10ms), so the
  // rates have points between region boundaries.  0: only at boundaries.
  uint64_t trace_interval_ns = 0;
  // Program registers that another agent appears to use (direct backend).
  bool force = false;
  // perf: more events than a box has counters are rotated by the kernel and
  // their counts scaled (marked estimated) instead of refused.
  bool allow_multiplexing = false;
  // sim backend: sockets to simulate (0: enough for `sockets`, at least 1)
  // and whether the demo traffic model drives it from the wall clock.
  int sim_sockets = 0;
  bool sim_demo_traffic = true;
  // Take counter snapshots on every Nth call of each region path of a
  // thread only (UNCORE_SAMPLE=N): for regions so short and frequent that
  // snapshots would cost more than the work.  Calls and wall times stay
  // exact; counts are scaled by calls / sampled calls and marked estimated.
  // 1: every call.
  int sample_every = 1;
  // Node sharing (docs/node-sharing.md): processes of one node measure
  // regions on counters programmed once.  share_counters_as: this session
  // programs its backend as usual and serves snapshots of the counters to
  // other processes under this name (letters, digits, '.', '_', '-'; a
  // POSIX shared-memory segment /dev/shm/uncore-NAME, removed at Stop,
  // which waits up to 5 s for readers still attached).  read_counters_from:
  // this session programs nothing; each snapshot is requested from the
  // sessions serving these names (their counters concatenated), taken by
  // them after the request.  The serving sessions must count the same
  // events and be started first.  At most one of the two may be set.
  // uncore::mpi (docs/mpi.md) sets them for MPI ranks.
  std::string share_counters_as;
  std::vector<std::string> read_counters_from;
};

class Session {
 public:
  // Validates the options, opens and programs the backend, and makes the
  // session the active one.  FailedPrecondition when one is already active.
  static absl::StatusOr<std::unique_ptr<Session>> Start(SessionOptions options);
  // The options the UNCORE_* environment variables describe; NotFound when
  // neither UNCORE_EVENTS nor UNCORE_METRICS is set.
  static absl::StatusOr<SessionOptions> OptionsFromEnvironment();
  // The active session, or nullptr.
  static Session* Active();

  ~Session();  // Stop()
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The results so far (regions that have ended); safe while counting.
  Results Collect() const;
  // The calling thread's share of them: its own calls and times, and the
  // counts of the intervals it closed (an interval's counts go to the
  // thread whose end closed it, the last to leave), so that summing every
  // thread's shares gives Collect's counts: each socket once.  What LIKWID's
  // GET and uncore_region_get return.
  Results CollectCallingThread() const;
  // The session's metrics (Results::metrics, in that order) of inclusive
  // `totals` (raw counts indexed like Results::events) over `wall_ns`, as
  // Collect computes a region's from its own: what the MPI merged report
  // computes a region's metrics with, from the node unions' counts and
  // time.  A value is not valid where a total is missing or the value is
  // not finite (a division by zero).
  std::vector<MetricValue> EvaluateMetrics(const std::vector<uint64_t>& totals,
                                           uint64_t wall_ns) const;
  // Deactivates, waits for boundaries under way on other threads, writes
  // the report to `output` when set, and releases the device (registers
  // restored).  The results stay readable with Collect.  Safe to call
  // twice.
  absl::Status Stop();
  // Writes the report of Collect() to `output` ("-", FILE.json, ...; its
  // placeholders expanded as for SessionOptions::output).
  absl::Status WriteReport(std::string_view output) const;

  std::string_view backend() const { return backend_; }
  bool measuring() const { return recorder_ != nullptr; }
  // Whether every count is made up by the simulator (backend `sim`).
  bool simulated() const;
  // Backend `sim` with its demo traffic (SessionOptions::
  // sim_demo_traffic), on every simulated platform (ivytown, nehalemex,
  // westmereex): brings the simulated counts up to now at the previous
  // rate, then makes up memory traffic of `memory_bytes_per_second` per
  // socket (2/3 reads, 1/3 writes, in the platform's memory events: the
  // iMC's CAS counts and one LLC lookup per 64 bytes on IvyTown, the M-Box
  // and B-Box events MEM_BW_* read on the Xeon 7500 / E7) from now on.
  // Lets a demo show what hardware would report for its phases.  Does
  // nothing on every other backend.
  void SetSimulatedActivity(double memory_bytes_per_second);
  // Backend `sim` with demo traffic: brings the simulated counts up to now
  // (every snapshot does too, to the nanosecond: a region sees the traffic
  // of its own time, however short).  Does nothing on every other backend.
  void AdvanceSimulation();

 private:
  friend struct runtime::SessionAccess;
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  Results CollectResults(bool calling_thread) const;

  std::unique_ptr<Impl> impl_;
  std::string backend_;
  regions::Recorder* recorder_ = nullptr;
};

// Node sharing's leftovers (docs/node-sharing.md): removes every segment
// /dev/shm/uncore-PREFIX* whose serving process is known dead (killed, or
// ended without stopping its session) and returns how many it removed.
// Segments of live processes, of other users, of other pid namespaces and
// of other SDK versions are left alone.  A serving session removes a dead
// leftover of its own name by itself; uncore::mpi sweeps "mpi." at MPI_Init.
int RemoveStaleSharedCounters(std::string_view prefix);

}  // namespace uncore

#endif  // UNCORE_SESSION_H_
