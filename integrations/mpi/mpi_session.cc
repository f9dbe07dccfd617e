// uncore_mpi_init / uncore_mpi_finalize and the PMPI wrappers around
// MPI_Init, MPI_Init_thread and MPI_Finalize (docs/mpi.md).  Only the
// SDK's public API: sessions with SessionOptions::share_counters_as (the
// socket leaders) or read_counters_from (the other ranks).
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "integrations/mpi/election.h"
#include "integrations/mpi/merge.h"
#include "integrations/mpi/trace_merge.h"
#include "sdk/common/host_name.h"
#include "uncore/mpi.h"
#include "uncore/report_file.h"
#include "uncore/session.h"

// The UNCORE_EVENTS session waits for MPI_Init (sdk/runtime/
// environment_session.cc looks for this symbol when the SDK loads).
extern "C" int uncore_environment_session_deferred(void) { return 1; }

// A program that calls uncore_mpi_init itself defines it returning 0.
extern "C" __attribute__((weak)) int uncore_mpi_auto_init(void) { return 1; }

namespace uncore::mpi {
namespace {

// What the program did with MPI, for the line at exit when the UNCORE_*
// session it asked for never started (NothingMeasuredAtExit).
std::atomic<bool> g_mpi_init_called{false};
std::atomic<bool> g_uncore_init_called{false};
// The process that loaded the library (a forked child says nothing).
const pid_t g_loaded_by = getpid();

bool Set(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  for (const char* c = v; *c != '\0'; ++c) {
    if (*c != ' ' && *c != '\t' && *c != '\n') return true;
  }
  return false;
}

// The library defers the UNCORE_EVENTS session to MPI_Init: a program that
// never calls it (not an MPI program, the library preloaded into every
// process of a job) would measure nothing without a word.  One line says
// so at exit.
__attribute__((destructor)) void NothingMeasuredAtExit() {
  if (g_uncore_init_called.load() || getpid() != g_loaded_by) return;
  if (!Set("UNCORE_EVENTS") && !Set("UNCORE_METRICS")) return;
  char name[64] = {};
  std::ifstream comm("/proc/self/comm");
  comm.getline(name, sizeof(name));
  const std::string why =
      g_mpi_init_called.load()
          ? "it called MPI_Init but defines uncore_mpi_auto_init() returning "
            "0 and never called uncore_mpi_init()"
          : "libuncore_sdk_mpi starts the UNCORE_EVENTS session in MPI_Init, "
            "which it never called (not an MPI program? preload or link "
            "libuncore_sdk.so instead)";
  std::fprintf(stderr, "uncore: %s (pid %d): nothing was measured: %s\n",
               name[0] != '\0' ? name : "this program",
               static_cast<int>(getpid()), why.c_str());
}

std::string Message(const absl::Status& s) {
  return std::string(s.message().data(), s.message().size());
}

struct State {
  bool started = false;
  MPI_Comm comm = MPI_COMM_NULL;       // our duplicate of the user's
  MPI_Comm node_comm = MPI_COMM_NULL;  // the ranks of this node
  std::unique_ptr<Session> session;
  RankRecord record;
  // The merged report's paths at rank 0 (UNCORE_OUTPUT's list, prepared;
  // "-" is stderr), none elsewhere or when nothing is measured.
  std::vector<std::string> outputs;
  std::string served;  // the segment a leader serves ("" none)
  bool exit_handler = false;
  // UNCORE_TRACE (trace_merge.h): this rank's trace file (a temporary one
  // when the name has no %r) and, at rank 0, the merged trace's.
  std::string trace_own;
  bool trace_own_temporary = false;
  std::string trace_merged;
};

State& GetState() {
  static auto* state = new State();
  return *state;
}

std::string& LastError() {
  static auto* error = new std::string();
  return *error;
}

int Fail(std::string message) {
  LastError() = std::move(message);
  return -1;
}

// The package of CPU `cpu` (-1 when sysfs does not say).
int PackageOf(int cpu) {
  std::ifstream in(fmt::format(
      "/sys/devices/system/cpu/cpu{}/topology/physical_package_id", cpu));
  int package = -1;
  if (!(in >> package)) return -1;
  return package;
}

// The packages of the CPUs this process may run on.
std::vector<int> AllowedPackages() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> packages;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return packages;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const int p = PackageOf(cpu);
    if (p >= 0) packages.push_back(p);
  }
  std::sort(packages.begin(), packages.end());
  packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  return packages;
}

// The packages of every online CPU of the node.
std::vector<int> NodePackages() {
  std::vector<int> packages;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    const int p = PackageOf(cpu);
    if (p >= 0) packages.push_back(p);
  }
  std::sort(packages.begin(), packages.end());
  packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  if (packages.empty()) packages.push_back(0);
  return packages;
}

// Whether every rank of `comm` says yes.
bool AllAgree(bool yes, MPI_Comm comm) {
  int mine = yes ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all == 1;
}

// Rank 0's text, at every rank.
std::string Broadcast(std::string text, MPI_Comm comm) {
  int size = static_cast<int>(text.size());
  MPI_Bcast(&size, 1, MPI_INT, 0, comm);
  text.resize(static_cast<size_t>(size));
  MPI_Bcast(text.data(), size, MPI_CHAR, 0, comm);
  return text;
}

// At exit without uncore_mpi_finalize (MPI_Finalize): the job's sessions
// still run.  A leader's segment goes first (nothing is left in /dev/shm
// even if the process is killed while it waits for readers), then the
// session stops (counters released, registers restored).  No merged report:
// that needs MPI; rank 0 says so.
void StopAtExit() {
  State& st = GetState();
  if (!st.started) return;
  st.started = false;
  if (!st.served.empty()) {
    shm_unlink(fmt::format("/uncore-{}", st.served).c_str());
  }
  if (st.session != nullptr) (void)st.session->Stop();
  if (st.record.rank == 0) {
    std::fprintf(stderr,
                 "uncore: the program ended without MPI_Finalize (or "
                 "uncore_mpi_finalize): no merged report is written\n");
  }
}

// UNCORE_TRACE under MPI: with %r, every rank writes its own trace and
// rank 0 also the merged one (%r read as "all"); without, each rank's goes
// to a temporary file and only the merged trace has the name.
void ConfigureTraces(SessionOptions& o, int rank, const std::string& token) {
  State& st = GetState();
  st.trace_own.clear();
  st.trace_merged.clear();
  st.trace_own_temporary = false;
  if (o.trace.empty()) return;
  const bool per_rank = o.trace.find("%r") != std::string::npos;
  if (rank == 0) {
    std::string merged = o.trace;
    for (size_t at = merged.find("%r"); at != std::string::npos;
         at = merged.find("%r", at + 3)) {
      merged.replace(at, 2, "all");
    }
    absl::StatusOr<std::string> path = uncore::PrepareReportOutput(merged, 0);
    if (path.ok()) {
      st.trace_merged = *path;
    } else {
      std::fprintf(stderr, "uncore: no merged trace: %s\n",
                   Message(path.status()).c_str());
    }
  }
  std::string own;
  if (per_rank) {
    absl::StatusOr<std::string> path =
        uncore::PrepareReportOutput(o.trace, rank);
    if (!path.ok()) return;  // the session says why at its start
    own = *path;
  } else {
    const char* tmp = std::getenv("TMPDIR");
    own =
        fmt::format("{}/.uncore-trace-{}-{}.json",
                    tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", token, rank);
    st.trace_own_temporary = true;
  }
  st.trace_own = own;
  // Already expanded: a '%' in it is literal.
  std::string escaped;
  for (char c : own) {
    escaped += c;
    if (c == '%') escaped += '%';
  }
  o.trace = escaped;
}

int Start(MPI_Comm user_comm) {
  State& st = GetState();
  if (st.started) return 0;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) {
    return Fail(
        "uncore_mpi_init: MPI is not initialized: call it after "
        "MPI_Init");
  }
  MPI_Comm_dup(user_comm, &st.comm);
  st.started = true;
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(st.comm, &rank);
  MPI_Comm_size(st.comm, &size);
  MPI_Comm_split_type(st.comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                      &st.node_comm);
  int node_rank = 0;
  int node_size = 0;
  MPI_Comm_rank(st.node_comm, &node_rank);
  MPI_Comm_size(st.node_comm, &node_size);
  int node = rank;  // the communicator rank of the node's rank 0
  MPI_Bcast(&node, 1, MPI_INT, 0, st.node_comm);

  RankRecord& rec = st.record;
  rec.rank = rank;
  rec.node = node;
  rec.node_rank = node_rank;
  rec.pid = static_cast<int>(getpid());
  rec.host = common::HostName();

  // What to count, the same at every rank (mpirun passes the environment
  // locally; across nodes it takes -x).  Every rank's state, so that rank 0
  // says once which ranks differ.
  absl::StatusOr<SessionOptions> options = Session::OptionsFromEnvironment();
  const bool configured = options.ok();
  enum : int { kConfigured = 0, kNotSet = 1, kWrong = 2 };
  const int mine_state =
      configured                                               ? kConfigured
      : options.status().code() == absl::StatusCode::kNotFound ? kNotSet
                                                               : kWrong;
  std::vector<int> states(static_cast<size_t>(size));
  MPI_Allgather(&mine_state, 1, MPI_INT, states.data(), 1, MPI_INT, st.comm);
  std::vector<int> not_set;
  std::vector<int> wrong;
  for (int r = 0; r < size; ++r) {
    if (states[r] == kNotSet) not_set.push_back(r);
    if (states[r] == kWrong) wrong.push_back(r);
  }
  if (!wrong.empty()) {
    // A rank's UNCORE_* is wrong: nobody measures.  The first such rank's
    // reason, said once by rank 0.
    std::string reason = rank == wrong.front() ? Message(options.status()) : "";
    int length = static_cast<int>(reason.size());
    MPI_Bcast(&length, 1, MPI_INT, wrong.front(), st.comm);
    reason.resize(static_cast<size_t>(length));
    MPI_Bcast(reason.data(), length, MPI_CHAR, wrong.front(), st.comm);
    const std::string message = fmt::format(
        "regions will not be measured: UNCORE_* variables are wrong on {} "
        "{}: {}",
        wrong.size() == 1 ? "rank" : "ranks", fmt::join(wrong, ", "), reason);
    if (rank == 0) std::fprintf(stderr, "uncore: %s\n", message.c_str());
    rec.error = message;
    st.outputs.clear();
    return Fail(rec.error);
  }
  if (!not_set.empty()) {
    // Nothing to measure anywhere, or (a forgotten -x on a multi-node run)
    // not everywhere: no session anywhere, and in the second case rank 0
    // says which ranks lack the variables.
    if (not_set.size() < static_cast<size_t>(size)) {
      rec.error = fmt::format(
          "regions will not be measured: UNCORE_EVENTS / UNCORE_METRICS are "
          "set on some ranks but not on {} {} (across nodes, pass them to "
          "every rank: mpirun -x UNCORE_EVENTS -x UNCORE_METRICS -x "
          "UNCORE_BACKEND -x UNCORE_OUTPUT)",
          not_set.size() == 1 ? "rank" : "ranks", fmt::join(not_set, ", "));
      if (rank == 0) std::fprintf(stderr, "uncore: %s\n", rec.error.c_str());
    }
    st.outputs.clear();
    return 0;
  }
  // The merged report's name, checked now rather than lost at the end.
  std::string output_error;
  if (rank == 0) {
    // UNCORE_OUTPUT as a session reads it (a list, each name with its
    // placeholders, %r: rank 0), checked now: a directory or an unwritable
    // name is said at start, not lost at the end.
    absl::StatusOr<std::vector<std::string>> out =
        uncore::PrepareReportOutputs(options->output, 0);
    if (out.ok()) {
      st.outputs = *std::move(out);
    } else {
      output_error = Message(out.status());
    }
    // As a session refuses it at its start (rather than a merged trace
    // lost at the end).
    if (output_error.empty() && options->trace == "-") {
      output_error =
          "trace output \"-\": a trace is a file "
          "(UNCORE_TRACE=trace-%r.json), not a table on stderr";
    }
  }
  output_error = Broadcast(output_error, st.comm);
  if (!output_error.empty()) {
    if (rank == 0) {
      std::fprintf(stderr, "uncore: regions will not be measured: %s\n",
                   output_error.c_str());
    }
    rec.error = output_error;
    st.outputs.clear();
    return Fail(output_error);
  }

  // Leaders: one per socket of the node (election.h).
  const std::vector<int> counted =
      options->sockets.empty() ? NodePackages() : options->sockets;
  const std::vector<int> mine = AllowedPackages();
  // Every rank's packages, as a bit mask (sockets below 1024), gathered on
  // the node.
  constexpr int kWords = 16;
  uint64_t bits[kWords] = {};
  for (int p : mine) {
    if (p >= 0 && p < 64 * kWords) bits[p / 64] |= uint64_t{1} << (p % 64);
  }
  std::vector<uint64_t> all_bits(static_cast<size_t>(node_size) * kWords);
  MPI_Allgather(bits, kWords, MPI_UINT64_T, all_bits.data(), kWords,
                MPI_UINT64_T, st.node_comm);
  std::vector<int> comm_ranks(static_cast<size_t>(node_size));
  MPI_Allgather(&rank, 1, MPI_INT, comm_ranks.data(), 1, MPI_INT, st.node_comm);
  std::vector<std::vector<int>> packages(static_cast<size_t>(node_size));
  for (int r = 0; r < node_size; ++r) {
    for (int p = 0; p < 64 * kWords; ++p) {
      if ((all_bits[static_cast<size_t>(r) * kWords + p / 64] >> (p % 64)) &
          1) {
        packages[r].push_back(p);
      }
    }
  }
  const Election election = ElectLeaders(counted, packages);
  // One name per job: rank 0's pid and clock.
  const std::string token = Broadcast(
      rank == 0
          ? fmt::format(
                "{:x}.{:x}", getpid(),
                std::chrono::steady_clock::now().time_since_epoch().count() &
                    0xffffffffff)
          : std::string(),
      st.comm);
  auto segment = [&](int node_rank_of_leader) {
    return fmt::format("mpi.{}.{}", token, comm_ranks[node_rank_of_leader]);
  };
  // Segments of earlier jobs whose leader was killed (or ended without
  // MPI_Finalize and could not clean up): the node's rank 0 removes those
  // whose process is dead.  Live jobs' segments stay.
  if (node_rank == 0) (void)uncore::RemoveStaleSharedCounters("mpi.");
  rec.sample_every = options->sample_every;
  rec.leads = election.leads[node_rank];
  const bool leader = !rec.leads.empty();
  SessionOptions o = *options;
  o.output.clear();  // only the merged report is written
  ConfigureTraces(o, rank, token);
  if (leader) {
    o.sockets = rec.leads;
    o.share_counters_as = segment(node_rank);
    st.served = o.share_counters_as;
  } else {
    for (int source : election.sources[node_rank]) {
      o.read_counters_from.push_back(segment(source));
      rec.reads.push_back(comm_ranks[source]);
    }
  }
  // Leaders first: their segments must exist before the others attach.
  absl::Status started = absl::OkStatus();
  if (leader) {
    absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
    if (s.ok()) {
      st.session = *std::move(s);
    } else {
      started = s.status();
    }
  }
  // The node's ranks learn which leaders could not start (this is also
  // the barrier the others wait at).  A rank whose leader did not start
  // starts nothing and says nothing: the leader says why (each rank would
  // say its reason again, or that its segment does not exist).
  const int leader_failed = leader && !started.ok() ? 1 : 0;
  std::vector<int> failed(static_cast<size_t>(node_size));
  MPI_Allgather(&leader_failed, 1, MPI_INT, failed.data(), 1, MPI_INT,
                st.node_comm);
  bool own_failure = true;
  if (!leader) {
    int lost = -1;
    for (int source : election.sources[node_rank]) {
      if (failed[source] != 0) {
        lost = comm_ranks[source];
        break;
      }
    }
    if (lost >= 0) {
      started = absl::FailedPreconditionError(fmt::format(
          "rank {}, which counts its sockets, could not start its session "
          "(its error says why)",
          lost));
      own_failure = false;
    } else {
      absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
      if (s.ok()) {
        st.session = *std::move(s);
      } else {
        started = s.status();
      }
    }
  }
  rec.measured = st.session != nullptr;
  if (!st.exit_handler) {
    st.exit_handler = std::atexit(&StopAtExit) == 0;
  }
  const bool all_started = AllAgree(started.ok(), st.comm);
  if (!started.ok()) {
    rec.error = fmt::format("regions not measured: {}", Message(started));
    if (own_failure) {
      std::fprintf(stderr,
                   "uncore: rank %d: regions will not be measured: %s\n", rank,
                   Message(started).c_str());
    }
    return Fail(rec.error);
  }
  if (!all_started) {
    return Fail(
        "another rank could not start its session (its error is in "
        "the merged report)");
  }
  return 0;
}

int Finish() {
  State& st = GetState();
  if (!st.started) return 0;
  st.started = false;
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(st.comm, &rank);
  MPI_Comm_size(st.comm, &size);
  RankRecord& rec = st.record;
  // Readers stop first; the leaders keep serving until they have.
  absl::Status stopped = absl::OkStatus();
  const bool leader = !rec.leads.empty();
  if (st.session != nullptr && !leader) stopped = st.session->Stop();
  MPI_Barrier(st.node_comm);
  if (st.session != nullptr && leader) stopped = st.session->Stop();
  if (st.session != nullptr) rec.results = st.session->Collect();
  if (!stopped.ok()) rec.results.run.errors.push_back(Message(stopped));
  // Rank 0 keeps its stopped session: it computes the merged metrics
  // (Session::EvaluateMetrics), which only the SDK can evaluate.
  std::unique_ptr<Session> evaluator;
  if (rank == 0 && st.session != nullptr) evaluator = std::move(st.session);
  st.session.reset();
  // The traces, merged at rank 0 (every rank's is on disk now).
  const absl::Status traced = MergeTraces(
      st.comm, st.trace_own, st.trace_own_temporary, st.trace_merged);
  if (!traced.ok()) {
    std::fprintf(stderr, "uncore: the merged trace is lost: %s\n",
                 Message(traced).c_str());
  }

  // Every rank's record to rank 0.
  const std::string bytes = EncodeRank(rec);
  int length = static_cast<int>(bytes.size());
  std::vector<int> lengths(rank == 0 ? static_cast<size_t>(size) : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, st.comm);
  std::vector<int> offsets(lengths.size());
  std::string all;
  if (rank == 0) {
    int64_t total = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      offsets[i] = static_cast<int>(total);
      total += lengths[i];
    }
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(),
              offsets.data(), MPI_CHAR, 0, st.comm);
  int result = 0;
  if (rank == 0 && !st.outputs.empty()) {
    std::vector<RankRecord> ranks;
    const std::string_view view = all;
    for (size_t i = 0; i < lengths.size(); ++i) {
      absl::StatusOr<RankRecord> r =
          DecodeRank(view.substr(offsets[i], lengths[i]));
      if (r.ok()) {
        ranks.push_back(*std::move(r));
      } else {
        RankRecord missing;
        missing.rank = static_cast<int>(i);
        missing.error = Message(r.status());
        ranks.push_back(std::move(missing));
      }
    }
    MetricEvaluator evaluate;
    if (evaluator != nullptr) {
      evaluate = [&evaluator](const std::vector<uint64_t>& totals,
                              uint64_t wall_ns) {
        return evaluator->EvaluateMetrics(totals, wall_ns);
      };
    }
    const MergedReport merged = Merge(ranks, evaluate);
    // Sampling leaves the merged counts one rank's view: said on stderr
    // too, once (a table on stderr says it already).
    if (!merged.sampling_warning.empty() &&
        std::find(st.outputs.begin(), st.outputs.end(), "-") ==
            st.outputs.end()) {
      std::fprintf(stderr, "uncore: warning: %s\n",
                   merged.sampling_warning.c_str());
    }
    // Each name in its own format (the SDK's report layer's, as for a
    // session's report); one that fails does not keep the others from
    // being written.
    const Results merged_results = MergedResults(merged);
    for (const std::string& output : st.outputs) {
      absl::Status written = uncore::WriteReportText(
          output, uncore::FormatReportText(merged_results, output));
      if (!written.ok()) {
        std::fprintf(stderr, "uncore: %s\n", Message(written).c_str());
        result = Fail(Message(written));
      }
    }
  }
  MPI_Comm_free(&st.node_comm);
  MPI_Comm_free(&st.comm);
  st.record = RankRecord();
  st.outputs.clear();
  st.served.clear();
  return result;
}

}  // namespace
}  // namespace uncore::mpi

extern "C" {

int uncore_mpi_init(MPI_Comm comm) {
  uncore::mpi::g_uncore_init_called.store(true);
  uncore::mpi::LastError().clear();
  return uncore::mpi::Start(comm);
}

int uncore_mpi_finalize(void) {
  uncore::mpi::LastError().clear();
  return uncore::mpi::Finish();
}

const char* uncore_mpi_last_error(void) {
  return uncore::mpi::LastError().c_str();
}

// The PMPI wrappers: MPI's profiling interface lets a library define the
// MPI_ functions and call the implementation's PMPI_ ones.
int MPI_Init(int* argc, char*** argv) {
  uncore::mpi::g_mpi_init_called.store(true);
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS && uncore_mpi_auto_init() != 0) {
    (void)uncore_mpi_init(MPI_COMM_WORLD);
  }
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  uncore::mpi::g_mpi_init_called.store(true);
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS && uncore_mpi_auto_init() != 0) {
    (void)uncore_mpi_init(MPI_COMM_WORLD);
  }
  return rc;
}

int MPI_Finalize(void) {
  (void)uncore_mpi_finalize();
  return PMPI_Finalize();
}

}  // extern "C"
