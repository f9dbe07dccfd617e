// The merged MPI report (docs/mpi.md, "The merged report"): each rank's
// uncore::Results, carried to rank 0 as bytes, merged, and written as a
// table, JSON or CSV.  No MPI here: unit-tested with made-up ranks.
//
//   std::string bytes = EncodeRank(record);          // on every rank
//   ... MPI_Gatherv ...
//   std::vector<RankRecord> ranks = ...DecodeRank(bytes_i)...;  // rank 0
//   MergedReport merged = Merge(ranks);
//   Results results = MergedResults(merged);  // uncore::Results::mpi set
//   std::string json = uncore::FormatReportText(results, "merged.json");
//
// Formatting is the SDK's report layer's (uncore/report_file.h's
// FormatReportText): the same JSON and table writers as a session's report
// write the merged report when Results::mpi is set.
//
// The rule for an event's total: each socket of each node counts once,
// what it counted while at least one rank of the node that reads it was
// inside the region (the node union: the ranks' RegionResult::NodeShare
// summed, docs/mpi.md).  Where that is not available (a rank's node step
// failed; a warning says which), the view of one rank: the socket's leader
// when it entered the region, else the lowest rank of that node that
// entered it and reads the socket.  The spread (min, max) of the ranks' own
// views is reported beside it.  With sampling (UNCORE_SAMPLE) no rank
// counts node unions: every count is such a view, one warning says so, and
// a view that stands for several ranks of its node is marked estimated.
#ifndef UNCORE_INTEGRATIONS_MPI_MERGE_H_
#define UNCORE_INTEGRATIONS_MPI_MERGE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "uncore/results.h"

namespace uncore::mpi {

// One rank's place in the job and its results.
struct RankRecord {
  int rank = 0;       // in the communicator
  int node = 0;       // the communicator rank of its node's rank 0
  int node_rank = 0;  // its rank on the node
  int pid = 0;
  std::string host;
  std::vector<int> leads;  // the sockets it programmed
  std::vector<int> reads;  // the ranks whose counters it read
  std::string error;       // why it did not measure ("" when it did)
  bool measured = false;   // a session ran
  int sample_every = 1;    // SessionOptions::sample_every (UNCORE_SAMPLE)
  Results results;
};

// A record's bytes, in sdk/common/wire.h's format (little-endian,
// length-prefixed).  DecodeRank returns DataLoss for bytes that are not a
// record: cut short, a byte too many, a count that cannot fit, a region
// depth no region can have.
std::string EncodeRank(const RankRecord& record);
absl::StatusOr<RankRecord> DecodeRank(std::string_view bytes);

// One socket of one node's count (the public type, written by the report
// layer).
using SocketCount = MpiResults::SocketCount;

struct MergedEvent {
  uint64_t total = 0;              // over per_socket
  std::vector<uint64_t> per_node;  // indexed like MergedReport::nodes
  std::vector<SocketCount> per_socket;
  bool estimated = false;
};

struct RankRegion {
  int rank = 0;
  uint64_t calls = 0;
  uint64_t wall_ns = 0;
  std::vector<uint64_t> totals;  // per event, the rank's own view
  std::vector<MetricValue> metrics;
};

struct MergedMetric {
  // The region's metric of its merged counts (MergedEvent::total) over its
  // wall_ns, as one process computes a region's from its own counts and
  // time (a rate per second: over the node union's time); not valid
  // without an evaluator (Merge's `evaluate`: rank 0 measured nothing) or
  // where it has no value (a division by zero).
  double value = 0;
  bool valid = false;
  // The ranks' own values (each from its own view and wall time): their
  // mean and spread, over the ranks with a valid value.
  double rank_mean = 0, rank_min = 0, rank_max = 0;
  int ranks = 0;
};

struct MergedRegion {
  std::string name;
  std::string path;
  int depth = 0;
  uint64_t calls = 0;    // summed over ranks
  uint64_t threads = 0;  // summed over ranks
  int ranks = 0;         // ranks that entered it
  // The time at least one rank was inside, as in one process (the union of
  // its threads' calls): per node the node union's time (per_node_wall_ns:
  // the longest of its sockets' SocketCount::wall_ns), and overall the
  // longest node's (nodes' clocks differ, so their unions cannot be joined;
  // the nodes of an MPI job run a region side by side, and a sum would
  // count that time once per node).  Where a node has no node union (no
  // node sharing, sampling, a failed node step) its time is the longest of
  // its ranks' own, and wall_node_union is false.
  uint64_t wall_ns = 0;
  std::vector<uint64_t> per_node_wall_ns;  // indexed like MergedReport::nodes
  bool wall_node_union = false;            // every node's is its node union
  // Each rank's own time in the region (its threads' union): the mean over
  // the ranks that entered it, and the spread.
  uint64_t rank_mean_wall_ns = 0;
  uint64_t rank_wall_min_ns = 0;
  uint64_t rank_wall_max_ns = 0;
  uint64_t call_min_ns = 0;  // shortest and longest single call, any rank
  uint64_t call_max_ns = 0;
  uint64_t thread_ns = 0;             // the calls' own times, summed
  uint64_t overhead_ns = 0;           // the measurement's own time, summed
  uint64_t sampled_calls = 0;         // calls whose counts were read, summed
  std::vector<MergedEvent> events;    // indexed like MergedReport::events
  std::vector<MergedMetric> metrics;  // indexed like MergedReport::metrics
  std::vector<RankRegion> per_rank;
};

struct MergedNode {
  std::string host;
  int first_rank = 0;
  std::vector<int> ranks;
  using Socket = MpiResults::Socket;
  std::vector<Socket> sockets;
};

struct MergedReport {
  int ranks = 0;
  std::string backend;
  std::string platform;  // whose event names (RunInfo::platform)
  bool simulated = false;
  std::string cpu;
  uint64_t start_unix_ns = 0;
  uint64_t duration_ns = 0;  // the longest rank's
  std::vector<EventInfo> events;
  std::vector<MetricInfo> metrics;
  std::vector<MergedNode> nodes;
  std::vector<std::string> errors;    // "rank N: ..."
  std::vector<std::string> warnings;  // each once
  std::vector<MergedRegion> regions;  // in order of first entry, rank 0 first
  // The largest sample_every of the ranks that measured; above 1 the ranks
  // counted no node unions, and sampling_warning (also in `warnings`) says
  // what the counts are instead.
  int sample_every = 1;
  std::string sampling_warning;
};

// A region's metrics (indexed like Results::metrics) of its inclusive
// totals (indexed like Results::events) over `wall_ns`: rank 0's
// uncore::Session::EvaluateMetrics.
using MetricEvaluator = std::function<std::vector<MetricValue>(
    const std::vector<uint64_t>& totals, uint64_t wall_ns)>;

// Without `evaluate` the merged metrics have no value (MergedMetric::valid
// false), only the ranks' own values' mean and spread.
MergedReport Merge(const std::vector<RankRecord>& ranks,
                   const MetricEvaluator& evaluate = {});

// The merge as Results, for the SDK's report formats
// (uncore::FormatReportText: the name picks the format, as for a session's
// report).  Results::mpi holds the merge's own facts (ranks, nodes and
// their sockets' leaders, each region's ranks, per-node times, the ranks'
// own wall times and metric values, the per-(node, socket) views and their
// spread, per-rank totals): with it the JSON is the merged JSON (schema 4,
// docs/mpi.md) and the table the merged table.  The CSV, the page and the
// Hatchet tree are a session's, of the merge seen as one run: one socket
// per socket of each node (RunInfo::sockets holds their ids, node after
// node, so an id repeats across nodes), an event's per-socket counts the
// views the merge chose; calls, threads, thread_ns, overhead_ns and
// sampled_calls summed over ranks, wall_ns the merged region's (the node
// union's time), min_ns and max_ns the shortest and longest call of any
// rank; each metric the merged region's (of the merged counts over
// wall_ns); no exclusive counts and no box instances (the merge keeps
// neither).
Results MergedResults(const MergedReport& report);

}  // namespace uncore::mpi

#endif  // UNCORE_INTEGRATIONS_MPI_MERGE_H_
