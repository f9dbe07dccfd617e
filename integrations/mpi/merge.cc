#include "integrations/mpi/merge.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/wire.h"
#include "uncore/region.h"

namespace uncore::mpi {
namespace {

// ---- bytes: sdk/common/wire.h (little-endian, length-prefixed)

constexpr uint64_t kRecordMagic = 0x33434d504d434e55ULL;  // "UNCMPMC3"

// ---- merging

// Where socket `socket` sits in a rank's per_socket arrays, or -1.
int SocketIndex(const Results& r, int socket) {
  auto it = std::find(r.run.sockets.begin(), r.run.sockets.end(), socket);
  return it == r.run.sockets.end()
             ? -1
             : static_cast<int>(it - r.run.sockets.begin());
}

const RegionResult* FindRegion(const Results& r, const std::string& path) {
  for (const RegionResult& region : r.regions) {
    if (region.path == path) return &region;
  }
  return nullptr;
}

}  // namespace

std::string EncodeRank(const RankRecord& record) {
  common::WireWriter w;
  w.U64(kRecordMagic);
  w.I64(record.rank);
  w.I64(record.node);
  w.I64(record.node_rank);
  w.I64(record.pid);
  w.Str(record.host);
  w.Ints(record.leads);
  w.Ints(record.reads);
  w.Str(record.error);
  w.Bool(record.measured);
  w.I64(record.sample_every);
  const Results& r = record.results;
  w.Str(r.run.backend);
  w.Str(r.run.platform);
  w.Bool(r.run.simulated);
  w.Str(r.run.host);
  w.Str(r.run.cpu);
  w.Ints(r.run.sockets);
  w.U64(r.run.start_unix_ns);
  w.U64(r.run.duration_ns);
  w.U64(r.run.frozen_ns);
  w.Strs(r.run.errors);
  w.Strs(r.run.warnings);
  w.U64(r.events.size());
  for (const EventInfo& e : r.events) {
    w.Str(e.spec);
    w.Str(e.canonical);
    w.Str(e.encoding);
    w.Str(e.unit);
    w.F64(e.scale);
    w.Bool(e.from_metric);
  }
  w.U64(r.metrics.size());
  for (const MetricInfo& m : r.metrics) {
    w.Str(m.name);
    w.Str(m.expression);
    w.Str(m.unit);
    w.Bool(m.per_second);
  }
  w.U64(r.regions.size());
  for (const RegionResult& region : r.regions) {
    w.Str(region.name);
    w.Str(region.path);
    w.I64(region.depth);
    w.U64(region.calls);
    w.U64(region.threads);
    w.U64(region.wall_ns);
    w.U64(region.thread_ns);
    w.U64(region.min_ns);
    w.U64(region.max_ns);
    w.U64(region.overhead_ns);
    w.U64(region.sampled_calls);
    w.U64(region.inclusive.size());
    for (const EventCounts& c : region.inclusive) {
      w.U64(c.total);
      w.U64s(c.per_socket);
      w.Bool(c.estimated);
    }
    w.U64(region.metrics.size());
    for (const MetricValue& m : region.metrics) {
      w.F64(m.value);
      w.Bool(m.valid);
    }
    const RegionResult::NodeShare& share = region.node_share;
    w.Bool(share.valid);
    w.U64(share.counts.size());
    for (const EventCounts& c : share.counts) {
      w.U64s(c.per_socket);
      w.Bool(c.estimated);
    }
    w.U64s(share.opens);
    w.U64s(share.closes);
    w.U64s(share.wall_ns);
  }
  return w.Take();
}

absl::StatusOr<RankRecord> DecodeRank(std::string_view bytes) {
  common::WireReader r(bytes);
  RankRecord record;
  if (r.U64() != kRecordMagic) {
    return absl::DataLossError("an MPI rank's results are not readable");
  }
  record.rank = r.Int();
  record.node = r.Int();
  record.node_rank = r.Int();
  record.pid = r.Int();
  record.host = r.Str();
  record.leads = r.Ints();
  record.reads = r.Ints();
  record.error = r.Str();
  record.measured = r.Bool();
  record.sample_every = r.Int();
  Results& res = record.results;
  res.run.backend = r.Str();
  res.run.platform = r.Str();
  res.run.simulated = r.Bool();
  res.run.host = r.Str();
  res.run.cpu = r.Str();
  res.run.sockets = r.Ints();
  res.run.start_unix_ns = r.U64();
  res.run.duration_ns = r.U64();
  res.run.frozen_ns = r.U64();
  res.run.errors = r.Strs();
  res.run.warnings = r.Strs();
  // Each count is checked against its items' least encoded size (strings
  // and vectors 8, numbers 8), so corrupt input cannot allocate beyond a
  // small multiple of its own size.
  res.events.resize(r.Count(4 * 8 + 8 + 8));
  for (EventInfo& e : res.events) {
    e.spec = r.Str();
    e.canonical = r.Str();
    e.encoding = r.Str();
    e.unit = r.Str();
    e.scale = r.F64();
    e.from_metric = r.Bool();
  }
  res.metrics.resize(r.Count(3 * 8 + 8));
  for (MetricInfo& m : res.metrics) {
    m.name = r.Str();
    m.expression = r.Str();
    m.unit = r.Str();
    m.per_second = r.Bool();
  }
  res.regions.resize(r.Count(2 * 8 + 8 + 8 * 8 + 2 * 8));
  for (RegionResult& region : res.regions) {
    region.name = r.Str();
    region.path = r.Str();
    region.depth = r.Int();
    // Reports indent by the depth: one no region can have is corrupt.
    if (region.depth < 0 || region.depth > kMaxRegionDepth) {
      return absl::DataLossError(
          "an MPI rank's results are not readable (a region's depth)");
    }
    region.calls = r.U64();
    region.threads = r.U64();
    region.wall_ns = r.U64();
    region.thread_ns = r.U64();
    region.min_ns = r.U64();
    region.max_ns = r.U64();
    region.overhead_ns = r.U64();
    region.sampled_calls = r.U64();
    region.inclusive.resize(r.Count(uint64_t{3} * 8));
    for (EventCounts& c : region.inclusive) {
      c.total = r.U64();
      c.per_socket = r.U64s();
      c.estimated = r.Bool();
    }
    region.metrics.resize(r.Count(uint64_t{2} * 8));
    for (MetricValue& m : region.metrics) {
      m.value = r.F64();
      m.valid = r.Bool();
    }
    RegionResult::NodeShare& share = region.node_share;
    share.valid = r.Bool();
    share.counts.resize(r.Count(uint64_t{2} * 8));
    for (EventCounts& c : share.counts) {
      c.per_socket = r.U64s();
      for (const uint64_t v : c.per_socket) c.total += v;
      c.estimated = r.Bool();
    }
    share.opens = r.U64s();
    share.closes = r.U64s();
    share.wall_ns = r.U64s();
  }
  if (!r.done()) {
    return absl::DataLossError("an MPI rank's results are truncated");
  }
  return record;
}

namespace {

void Warn(std::vector<std::string>& warnings, std::string warning) {
  if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end()) {
    warnings.push_back(std::move(warning));
  }
}

// A socket's counts while at least one of its node's ranks was inside a
// region: the ranks' node shares (RegionResult::NodeShare) summed, usable
// when every rank of the node that entered the region and reads the socket
// counted its node steps, and the node intervals they opened all closed.
struct NodeUnion {
  bool usable = false;
  std::string why;               // not usable, and a rank had shares: why
  std::vector<uint64_t> values;  // per event
  std::vector<bool> estimated;   // per event: a rank's backend scaled it
  uint64_t wall_ns = 0;
};

NodeUnion UnionOf(const std::vector<RankRecord>& ranks,
                  const std::vector<const RegionResult*>& of_rank,
                  const std::vector<int>& node_of, const std::string& path,
                  int node, int socket, size_t num_events) {
  NodeUnion u;
  u.values.assign(num_events, 0);
  u.estimated.assign(num_events, false);
  // The ranks of the node that read the socket and entered the region.
  std::vector<size_t> entered;
  bool any_share = false;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (node_of[i] != node || SocketIndex(ranks[i].results, socket) < 0) {
      continue;
    }
    const RegionResult* region = FindRegion(ranks[i].results, path);
    if (region == nullptr) continue;  // no node step, no share
    entered.push_back(i);
    any_share |= !region->node_share.opens.empty();
  }
  // No rank counted node unions (no node sharing, or every rank sampled):
  // nothing to sum and nothing to say.
  if (entered.empty() || !any_share) return u;
  uint64_t opens = 0;
  uint64_t closes = 0;
  for (const size_t i : entered) {
    const RegionResult* region = of_rank[i];
    if (region == nullptr) {
      // Entered with counts the merge leaves out, and its share with them.
      u.why = fmt::format("rank {}'s counts are left out", ranks[i].rank);
      return u;
    }
    const RegionResult::NodeShare& share = region->node_share;
    const auto at = static_cast<size_t>(SocketIndex(ranks[i].results, socket));
    if (!share.valid || share.counts.size() != num_events ||
        at >= share.opens.size() || at >= share.closes.size() ||
        at >= share.wall_ns.size()) {
      u.why =
          fmt::format("rank {} has no node share of it ({})", ranks[i].rank,
                      share.opens.empty()
                          ? "it sampled, or did not share the node's counters"
                          : "a snapshot or a node step failed: see its errors");
      return u;
    }
    for (size_t e = 0; e < num_events; ++e) {
      if (at >= share.counts[e].per_socket.size()) {
        u.why = fmt::format("rank {}'s node share is cut short", ranks[i].rank);
        return u;
      }
      u.values[e] += share.counts[e].per_socket[at];
      u.estimated[e] = u.estimated[e] || share.counts[e].estimated;
    }
    opens += share.opens[at];
    closes += share.closes[at];
    u.wall_ns += share.wall_ns[at];
  }
  if (opens != closes || opens == 0) {
    u.why = fmt::format(
        "its ranks opened {} node intervals and closed {} (a rank stopped "
        "counting node unions, or ended inside it)",
        opens, closes);
    return u;
  }
  // A sum below zero (counts that went down: perf's multiplexing scales
  // them) wraps round past 2^63, which no count reaches (29 years at 10^10
  // a second).
  for (size_t e = 0; e < num_events; ++e) {
    if (u.values[e] >= uint64_t{1} << 63) {
      u.why = fmt::format(
          "its node union of event {} came out below zero ({}): counts that "
          "went down (multiplexed?)",
          e, static_cast<int64_t>(u.values[e]));
      return u;
    }
  }
  u.usable = true;
  return u;
}

}  // namespace

MergedReport Merge(const std::vector<RankRecord>& ranks,
                   const MetricEvaluator& evaluate) {
  MergedReport m;
  m.ranks = static_cast<int>(ranks.size());
  // The first rank that measured says what was counted.
  const RankRecord* first = nullptr;
  for (const RankRecord& r : ranks) {
    if (r.measured) {
      first = &r;
      break;
    }
  }
  if (first != nullptr) {
    m.backend = first->results.run.backend;
    m.platform = first->results.run.platform;
    m.simulated = first->results.run.simulated;
    m.cpu = first->results.run.cpu;
    m.events = first->results.events;
    m.metrics = first->results.metrics;
  } else {
    m.backend = "off";
  }
  // Nodes, in order of their first rank; the sockets each one counted.
  std::map<int, size_t> node_index;  // node id -> index
  std::vector<int> node_of(ranks.size(), 0);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankRecord& r = ranks[i];
    auto [it, added] = node_index.emplace(r.node, m.nodes.size());
    if (added) {
      MergedNode node;
      node.host = r.host;
      node.first_rank = r.rank;
      m.nodes.push_back(node);
    }
    node_of[i] = static_cast<int>(it->second);
    m.nodes[it->second].ranks.push_back(r.rank);
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    MergedNode& node = m.nodes[node_of[i]];
    for (int socket : ranks[i].leads) {
      MergedNode::Socket s;
      s.socket = socket;
      s.leader = ranks[i].rank;
      node.sockets.push_back(s);
    }
  }
  for (MergedNode& node : m.nodes) {
    std::sort(node.sockets.begin(), node.sockets.end(),
              [](const MergedNode::Socket& a, const MergedNode::Socket& b) {
                return a.socket < b.socket;
              });
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (!ranks[i].measured) continue;
    for (MergedNode::Socket& s : m.nodes[node_of[i]].sockets) {
      if (SocketIndex(ranks[i].results, s.socket) >= 0) {
        s.ranks.push_back(ranks[i].rank);
      }
    }
  }
  // Run facts, errors and warnings.
  for (const RankRecord& r : ranks) {
    if (m.start_unix_ns == 0 ||
        (r.results.run.start_unix_ns != 0 &&
         r.results.run.start_unix_ns < m.start_unix_ns)) {
      m.start_unix_ns = r.results.run.start_unix_ns;
    }
    m.duration_ns = std::max(m.duration_ns, r.results.run.duration_ns);
    if (!r.error.empty()) {
      m.errors.push_back(fmt::format("rank {}: {}", r.rank, r.error));
    }
    for (const std::string& e : r.results.run.errors) {
      m.errors.push_back(fmt::format("rank {}: {}", r.rank, e));
    }
    for (const std::string& w : r.results.run.warnings) Warn(m.warnings, w);
    if (r.measured && first != nullptr &&
        r.results.events.size() != first->results.events.size()) {
      m.errors.push_back(fmt::format(
          "rank {}: counted {} events, rank {} {}: its counts are left out",
          r.rank, r.results.events.size(), first->rank,
          first->results.events.size()));
    }
  }
  // Sampling: the ranks counted no node unions (UnionOf finds no shares
  // and says nothing), so every count below is one rank's view.  Said once,
  // and the views that stand for several ranks are marked estimated.
  for (const RankRecord& r : ranks) {
    if (r.measured) m.sample_every = std::max(m.sample_every, r.sample_every);
  }
  if (m.sample_every > 1) {
    m.sampling_warning = fmt::format(
        "UNCORE_SAMPLE={}: node unions are not counted with sampling, so each "
        "socket's count is one rank's view (the socket's leader's, or the "
        "lowest rank's that entered the region), not what the socket counted "
        "while any rank of its node was inside; where several ranks of a "
        "node entered a region the count can be low and is marked estimated "
        "(~). Unset UNCORE_SAMPLE for the node union",
        m.sample_every);
    Warn(m.warnings, m.sampling_warning);
  }
  // Regions, by path, in order of first entry (rank order).
  std::vector<std::string> paths;
  for (const RankRecord& r : ranks) {
    for (const RegionResult& region : r.results.regions) {
      if (std::find(paths.begin(), paths.end(), region.path) == paths.end()) {
        paths.push_back(region.path);
      }
    }
  }
  const size_t num_events = m.events.size();
  for (const std::string& path : paths) {
    MergedRegion out;
    out.path = path;
    out.events.resize(num_events);
    for (MergedEvent& e : out.events) e.per_node.assign(m.nodes.size(), 0);
    out.metrics.resize(m.metrics.size());
    uint64_t wall_sum = 0;
    std::vector<uint64_t> rank_wall_of_node(m.nodes.size(), 0);
    // Per node, the longest of its sockets' node union times (0: none).
    std::vector<uint64_t> union_wall_of_node(m.nodes.size(), 0);
    std::vector<const RegionResult*> of_rank(ranks.size(), nullptr);
    for (size_t i = 0; i < ranks.size(); ++i) {
      const RegionResult* region = FindRegion(ranks[i].results, path);
      if (region == nullptr) continue;
      const bool usable =
          ranks[i].measured && ranks[i].results.events.size() == num_events;
      if (out.ranks == 0) {
        out.name = region->name;
        out.depth = region->depth;
        out.call_min_ns = region->min_ns;
        out.rank_wall_min_ns = region->wall_ns;
      }
      ++out.ranks;
      out.calls += region->calls;
      out.threads += region->threads;
      out.thread_ns += region->thread_ns;
      out.sampled_calls += region->sampled_calls;
      out.overhead_ns += region->overhead_ns;
      wall_sum += region->wall_ns;
      out.rank_wall_min_ns = std::min(out.rank_wall_min_ns, region->wall_ns);
      out.rank_wall_max_ns = std::max(out.rank_wall_max_ns, region->wall_ns);
      // Until a node union says otherwise: the node's longest rank's time.
      uint64_t& node_wall = rank_wall_of_node[node_of[i]];
      node_wall = std::max(node_wall, region->wall_ns);
      out.call_min_ns = std::min(out.call_min_ns, region->min_ns);
      out.call_max_ns = std::max(out.call_max_ns, region->max_ns);
      RankRegion per_rank;
      per_rank.rank = ranks[i].rank;
      per_rank.calls = region->calls;
      per_rank.wall_ns = region->wall_ns;
      if (usable) {
        of_rank[i] = region;
        for (const EventCounts& c : region->inclusive) {
          per_rank.totals.push_back(c.total);
        }
        per_rank.metrics = region->metrics;
      }
      out.per_rank.push_back(std::move(per_rank));
    }
    out.rank_mean_wall_ns = out.ranks == 0 ? 0 : wall_sum / out.ranks;
    // Each socket of each node once.
    for (size_t n = 0; n < m.nodes.size(); ++n) {
      for (const MergedNode::Socket& socket : m.nodes[n].sockets) {
        const NodeUnion node_union =
            UnionOf(ranks, of_rank, node_of, path, static_cast<int>(n),
                    socket.socket, num_events);
        if (!node_union.usable && !node_union.why.empty()) {
          Warn(m.warnings,
               fmt::format("region {} on node {} socket {}: {}; its counts "
                           "there are one rank's view (the socket's "
                           "leader's, or the lowest rank's that entered it)",
                           path, n, socket.socket, node_union.why));
        }
        if (node_union.usable) {
          union_wall_of_node[n] =
              std::max(union_wall_of_node[n], node_union.wall_ns);
        }
        for (size_t e = 0; e < num_events; ++e) {
          SocketCount count;
          count.node = static_cast<int>(n);
          count.socket = socket.socket;
          bool estimated = false;
          for (size_t i = 0; i < ranks.size(); ++i) {
            if (of_rank[i] == nullptr || node_of[i] != static_cast<int>(n)) {
              continue;
            }
            // A region with fewer counts than its record has events (a
            // corrupt record) has none for the others.
            if (e >= of_rank[i]->inclusive.size()) continue;
            const int k = SocketIndex(ranks[i].results, socket.socket);
            const EventCounts& c = of_rank[i]->inclusive[e];
            if (k < 0 || static_cast<size_t>(k) >= c.per_socket.size()) {
              continue;
            }
            const uint64_t v = c.per_socket[k];
            count.min = count.ranks == 0 ? v : std::min(count.min, v);
            count.max = count.ranks == 0 ? v : std::max(count.max, v);
            ++count.ranks;
            const bool leader = ranks[i].rank == socket.leader;
            if (count.from_rank < 0 || leader) {
              count.from_rank = ranks[i].rank;
              count.value = v;
              estimated = c.estimated;
            }
          }
          if (count.ranks == 0) continue;
          if (node_union.usable) {
            count.value = node_union.values[e];
            count.from_rank = -1;
            count.node_union = true;
            count.wall_ns = node_union.wall_ns;
            estimated = node_union.estimated[e];
          } else if (m.sample_every > 1 && count.ranks > 1) {
            // One rank's view standing for several: at most their union.
            estimated = true;
          }
          count.estimated = estimated;
          MergedEvent& merged = out.events[e];
          merged.total += count.value;
          merged.per_node[n] += count.value;
          merged.estimated = merged.estimated || estimated;
          merged.per_socket.push_back(count);
        }
      }
    }
    // The region's time: per node its node union's (else its longest
    // rank's), overall the longest node's.
    out.per_node_wall_ns.assign(m.nodes.size(), 0);
    out.wall_node_union = true;
    for (size_t n = 0; n < m.nodes.size(); ++n) {
      if (rank_wall_of_node[n] == 0 && union_wall_of_node[n] == 0) continue;
      if (union_wall_of_node[n] != 0) {
        out.per_node_wall_ns[n] = union_wall_of_node[n];
      } else {
        out.per_node_wall_ns[n] = rank_wall_of_node[n];
        out.wall_node_union = false;
      }
      out.wall_ns = std::max(out.wall_ns, out.per_node_wall_ns[n]);
    }
    if (out.ranks == 0) out.wall_node_union = false;
    // The metrics of the merged counts over that time, and the ranks' own.
    std::vector<MetricValue> values;
    if (evaluate && !m.metrics.empty()) {
      std::vector<uint64_t> totals;
      for (const MergedEvent& e : out.events) totals.push_back(e.total);
      values = evaluate(totals, out.wall_ns);
    }
    for (size_t k = 0; k < m.metrics.size(); ++k) {
      MergedMetric& mm = out.metrics[k];
      if (k < values.size() && values[k].valid) {
        mm.value = values[k].value;
        mm.valid = true;
      }
      double sum = 0;
      for (const RankRegion& rr : out.per_rank) {
        if (k >= rr.metrics.size() || !rr.metrics[k].valid) continue;
        const double v = rr.metrics[k].value;
        mm.rank_min = mm.ranks == 0 ? v : std::min(mm.rank_min, v);
        mm.rank_max = mm.ranks == 0 ? v : std::max(mm.rank_max, v);
        sum += v;
        ++mm.ranks;
      }
      mm.rank_mean = mm.ranks == 0 ? 0 : sum / mm.ranks;
    }
    m.regions.push_back(std::move(out));
  }
  return m;
}

Results MergedResults(const MergedReport& m) {
  Results r;
  RunInfo& run = r.run;
  run.backend = m.backend;
  run.platform = m.platform;
  run.simulated = m.simulated;
  run.cpu = m.cpu;
  run.start_unix_ns = m.start_unix_ns;
  run.duration_ns = m.duration_ns;
  run.errors = m.errors;
  run.warnings = m.warnings;
  // One "socket" per socket of each node, in node order.
  std::map<std::pair<int, int>, size_t> socket_index;  // (node, socket)
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (n > 0) run.host += ", ";
    run.host += m.nodes[n].host;
    for (const MergedNode::Socket& s : m.nodes[n].sockets) {
      socket_index.emplace(std::make_pair(static_cast<int>(n), s.socket),
                           run.sockets.size());
      run.sockets.push_back(s.socket);
    }
  }
  r.events = m.events;
  r.metrics = m.metrics;
  MpiResults& mpi = r.mpi.emplace();
  mpi.ranks = m.ranks;
  for (const MergedNode& node : m.nodes) {
    mpi.nodes.push_back({node.host, node.ranks, node.sockets});
  }
  for (const MergedRegion& region : m.regions) {
    RegionResult& out = r.regions.emplace_back();
    out.name = region.name;
    out.path = region.path;
    out.depth = region.depth;
    out.calls = region.calls;
    out.threads = region.threads;
    out.wall_ns = region.wall_ns;
    // The node union is timed by the snapshots that open and close it:
    // the counters' own window.  Overlap is a process's own (not merged).
    out.counted_ns = region.wall_node_union ? region.wall_ns : 0;
    out.thread_ns = region.thread_ns;
    out.min_ns = region.call_min_ns;
    out.max_ns = region.call_max_ns;
    out.overhead_ns = region.overhead_ns;
    out.sampled_calls = region.sampled_calls;
    for (const MergedEvent& event : region.events) {
      EventCounts& counts = out.inclusive.emplace_back();
      counts.total = event.total;
      counts.per_socket.assign(run.sockets.size(), 0);
      for (const SocketCount& s : event.per_socket) {
        const auto it = socket_index.find({s.node, s.socket});
        if (it != socket_index.end()) counts.per_socket[it->second] = s.value;
      }
      counts.estimated = event.estimated;
    }
    for (const MergedMetric& metric : region.metrics) {
      out.metrics.push_back({metric.value, metric.valid});
    }
    MpiResults::Region& merged = mpi.regions.emplace_back();
    merged.ranks = region.ranks;
    merged.per_node_wall_ns = region.per_node_wall_ns;
    merged.wall_node_union = region.wall_node_union;
    merged.rank_mean_wall_ns = region.rank_mean_wall_ns;
    merged.rank_wall_min_ns = region.rank_wall_min_ns;
    merged.rank_wall_max_ns = region.rank_wall_max_ns;
    for (const MergedEvent& event : region.events) {
      merged.events.push_back({event.per_node, event.per_socket});
    }
    for (const MergedMetric& metric : region.metrics) {
      merged.metrics.push_back(
          {metric.rank_mean, metric.rank_min, metric.rank_max, metric.ranks});
    }
    for (const RankRegion& rank : region.per_rank) {
      merged.per_rank.push_back(
          {rank.rank, rank.calls, rank.wall_ns, rank.totals});
    }
  }
  return r;
}

}  // namespace uncore::mpi
