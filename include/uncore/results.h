// uncore/results.h: what a session measured, as plain data, to inspect in
// code (a session writes it as a table, JSON or CSV: docs/report-format.md).
//
//   uncore::Results r = session->Collect();
//   for (const uncore::RegionResult& region : r.regions) {
//     const uncore::EventCounts& reads = region.inclusive[0];  // events[0]
//     std::printf("%s: %llu calls, %llu reads\n", region.path.c_str(),
//                 (unsigned long long)region.calls,
//                 (unsigned long long)reads.total);
//   }
//
// Counts are socket-exact: an event counts everything its box saw while at
// least one thread was inside the region (the union of the threads'
// calls), each socket once, whichever thread did the work: a team of 64
// threads that each open the region reports what the socket did, not 64
// times it.  Exclusive counts are what the boxes saw while the region was
// open and no thread was inside any of its child regions.  docs/regions.md
// ("Each socket once, however many threads") and docs/concurrency.md ("Teams of threads") have a
// worked example.
//
// The MPI integration's merged report is a Results too (of the job's ranks,
// with `mpi` set: docs/mpi.md), written by the same report formats:
//
//   if (r.mpi) std::printf("%d ranks on %zu nodes\n", r.mpi->ranks,
//                          r.mpi->nodes.size());
//
// Guarantees: plain values; no references into the session.
#ifndef UNCORE_RESULTS_H_
#define UNCORE_RESULTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace uncore {

// One event of the session, as programmed.
struct EventInfo {
  std::string spec;          // as the user wrote it (or a metric needed it)
  std::string canonical;     // the normalised spelling
  std::string encoding;      // "ctl=0x00400304" / "config=0x304,config1=0x0"
  std::string unit;          // "" (a count), "cycles", "bytes", "Joules", ...
  double scale = 1.0;        // multiply counts by this to get `unit`
  bool from_metric = false;  // requested only because a metric needs it
};

// A count on one box instance of one socket.
struct InstanceCount {
  int socket = 0;
  std::string instance;  // "CBo3", "iMC0 channel 1", "uncore_imc_2"
  uint64_t value = 0;
};

// One event's counts in one region.
struct EventCounts {
  uint64_t total = 0;                // summed over sockets and instances
  std::vector<uint64_t> per_socket;  // indexed like RunInfo::sockets
  std::vector<InstanceCount> per_instance;
  // Scaled up from a partial count: multiplexed by the kernel (perf), or
  // sampled (RegionResult::sampled_calls < calls).
  bool estimated = false;
};

struct MetricInfo {
  std::string name;        // "MEM_BW_READS"
  std::string expression;  // as compiled
  std::string unit;        // "bytes/s"
  // The value is per second of the region's wall time (a bandwidth), not a
  // ratio or a unit that merely ends in "/s" (QPI_SPEED's "GT/s").
  bool per_second = false;
};

struct MetricValue {
  double value = 0;
  bool valid = false;  // false: a division by zero or missing event
};

struct RegionResult {
  std::string name;      // the name given to the region
  std::string path;      // enclosing regions and the name: "solve/assemble"
  int depth = 0;         // 0 for an outermost region
  uint64_t calls = 0;    // over every thread
  uint64_t threads = 0;  // distinct threads that entered the region
  // Time at least one thread was inside (the union of the calls): what
  // the counts cover, and what metrics per second divide by.
  uint64_t wall_ns = 0;
  // The counters' own window: the time from the snapshot that opened each
  // of the region's intervals to the one that closed it, as the device
  // timed the reads (perf: the kernel's enabled time at the read; direct,
  // sim: the clock at the freeze).  Exactly what the counts cover, however
  // long a read takes: metrics per second divide by it.  0 when nothing
  // is counted; scaled like the counts when they are estimated.
  uint64_t counted_ns = 0;
  // What rates divide by: counted_ns, or wall_ns where nothing was counted.
  uint64_t rate_window_ns() const {
    return counted_ns > 0 ? counted_ns : wall_ns;
  }
  // Time the region ran beside another region on another thread: while
  // it was open with none of its child regions open (its exclusive
  // counts), another thread was inside a region that is neither its
  // ancestor nor its descendant.  The socket's counts of that time are in
  // both regions' exclusive counts (docs/report-format.md, "Summing").
  uint64_t overlap_ns = 0;
  uint64_t thread_ns = 0;  // every call's own wall time, summed
  uint64_t min_ns = 0;     // the shortest and longest single call
  uint64_t max_ns = 0;
  // Time the region's boundaries spent taking snapshots, summed over
  // calls: what the measurement itself cost (one snapshot in 16 is timed,
  // the others are credited their thread's mean).  Not part of wall_ns,
  // which runs from the end of the begin boundary to the start of the end
  // boundary.  A boundary that neither opens nor closes the region (other
  // threads stay inside) takes no snapshot and adds nothing.
  uint64_t overhead_ns = 0;
  // Calls made while the region's counts were read: all of them unless the
  // session samples (SessionOptions::sample_every, UNCORE_SAMPLE: the 1st,
  // N+1th, ... interval with a thread inside is read); then the counts are
  // scaled by intervals / measured intervals and marked estimated.
  uint64_t sampled_calls = 0;
  // Calls still open when the session stopped (a program interrupted by
  // SIGINT or SIGTERM, or a region another thread had not closed): included
  // in `calls`, with their wall time and counts up to the stop.
  uint64_t open_calls = 0;
  std::vector<EventCounts> inclusive;  // indexed like Results::events
  std::vector<EventCounts> exclusive;
  std::vector<MetricValue> metrics;  // indexed like Results::metrics, from
                                     // the inclusive counts and wall time
  // Node sharing only (SessionOptions::share_counters_as or
  // read_counters_from, which the MPI integration sets): this process's
  // share of the counts while at least one process of the node was inside
  // the region, each socket once.  What the MPI merged report sums over a
  // node's processes; alone it means nothing (the process that opens a
  // node interval subtracts its snapshot, the one that closes it adds its
  // own, modulo 2^64).  Not in the report formats.
  struct NodeShare {
    bool valid = false;  // every node step of the region was counted
    std::vector<EventCounts> counts;  // like `inclusive`, no per_instance
    // Per socket (like RunInfo::sockets): the node intervals this process
    // opened and closed, and its share of their time (CLOCK_MONOTONIC ns,
    // modulo 2^64).
    std::vector<uint64_t> opens;
    std::vector<uint64_t> closes;
    std::vector<uint64_t> wall_ns;
  };
  // Empty (valid false) without node sharing, and in a calling thread's
  // results (Session::CollectCallingThread: a thread's part means nothing).
  NodeShare node_share;
};

struct RunInfo {
  std::string backend;  // "direct", "perf", "sim", "off"
  // Whose events the session named: "ivytown" (the hand-made model), or a
  // platform generated from vendor data ("sapphirerapids", "amdzen4", ...);
  // "none" on hardware whose uncore no platform counts (a virtual machine,
  // an unknown CPU): only generic perf PMUs (msr/tsc/, ...) counted.
  std::string platform;
  bool simulated = false;  // every count is made up by the simulator
  std::string host;
  std::string cpu;  // "GenuineIntel family 6 model 0x3e"
  // The last `uncore check --save` of this machine (docs/check.md): "<UTC
  // date> <verdict> <platform> ...", "" when none was saved.
  std::string last_check;
  std::vector<int> sockets;
  uint64_t start_unix_ns = 0;
  uint64_t duration_ns = 0;
  uint64_t frozen_ns = 0;  // time the counters were held frozen (direct)
  // What one snapshot costs: read() calls of perf counter groups (one per
  // PMU instance that carries an event, per socket), or counter registers
  // read (direct, sim).  0 when nothing is counted.
  int reads_per_snapshot = 0;
  // Time at least one region was open on some thread, and the time that
  // summing every region's exclusive counts counts more than once (the
  // regions' overlap_ns, each shared stretch once per extra region): the
  // exclusive counts of every region sum to the counts of
  // regions_open_ns + exclusive_overcount_ns.
  uint64_t regions_open_ns = 0;
  uint64_t exclusive_overcount_ns = 0;
  std::vector<std::string> errors;    // misuse, failed snapshots, ...
  std::vector<std::string> warnings;  // e.g. "no session: regions not measured"
};

// What only the MPI merged report has (docs/mpi.md, "The merged report"):
// its ranks, nodes and spreads.  Set in the Results that the MPI
// integration makes of a job's ranks (uncore::mpi::MergedResults), where
// it makes the JSON (schema kSchemaVersion, "kind": "mpi") and the table
// the merged report's; the CSV, the page and the Hatchet tree read the
// Results alone.  Its vectors are indexed like the Results' own (regions,
// events, metrics) and like `nodes`.
struct MpiResults {
  // 4: a region's wall_ns is the node union's time, with the ranks' own
  // time beside it; metrics of the merged counts beside the ranks' own.
  static constexpr int kSchemaVersion = 4;

  struct Socket {
    int socket = 0;
    int leader = -1;         // the rank that programmed it
    std::vector<int> ranks;  // the ranks that read it (leader included)
  };
  struct Node {
    std::string host;
    std::vector<int> ranks;
    std::vector<Socket> sockets;
  };
  // One socket of one node's count of an event in a region.
  struct SocketCount {
    int node = 0;  // index into `nodes`
    int socket = 0;
    uint64_t value = 0;       // the count: the node union, or one rank's view
    bool node_union = false;  // value is the node union (from_rank -1)
    uint64_t wall_ns = 0;     // node union: the time a rank was inside
    int from_rank = -1;       // else the rank whose view it is
    int ranks = 0;            // ranks of the node that entered it and read it
    uint64_t min = 0;         // their spread
    uint64_t max = 0;
    // The count is scaled (multiplexed, sampled) or, with sampling, one
    // rank's view where several ranks of the node entered the region (it
    // can fall short of the node union).
    bool estimated = false;
  };
  struct Event {
    std::vector<uint64_t> per_node;  // the total per node
    std::vector<SocketCount> per_socket;
  };
  // The ranks' own values of a metric (each from its own view and wall
  // time): their mean and spread over the `ranks` that had one.
  struct Metric {
    double rank_mean = 0, rank_min = 0, rank_max = 0;
    int ranks = 0;
  };
  struct Rank {
    int rank = 0;
    uint64_t calls = 0;
    uint64_t wall_ns = 0;
    std::vector<uint64_t> totals;  // per event, the rank's own view
  };
  struct Region {
    int ranks = 0;                           // ranks that entered it
    std::vector<uint64_t> per_node_wall_ns;  // the node union's time per node
    bool wall_node_union = false;  // every node's time is its node union
    // Each rank's own time in the region: mean and spread.
    uint64_t rank_mean_wall_ns = 0;
    uint64_t rank_wall_min_ns = 0;
    uint64_t rank_wall_max_ns = 0;
    std::vector<Event> events;    // indexed like Results::events
    std::vector<Metric> metrics;  // indexed like Results::metrics
    std::vector<Rank> per_rank;
  };

  int ranks = 0;  // in the job
  std::vector<Node> nodes;
  std::vector<Region> regions;  // indexed like Results::regions
};

struct Results {
  // 2: regions count each socket once while any thread is inside (wall_ns
  // is the union of the calls; threads and thread_ns were added).
  static constexpr int kSchemaVersion = 2;
  RunInfo run;
  std::vector<EventInfo> events;
  std::vector<MetricInfo> metrics;
  std::vector<RegionResult> regions;  // in order of first entry
  // The MPI merged report's own facts; empty in a session's results.
  std::optional<MpiResults> mpi;
};

}  // namespace uncore

#endif  // UNCORE_RESULTS_H_
