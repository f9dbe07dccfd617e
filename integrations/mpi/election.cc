#include "integrations/mpi/election.h"

#include <algorithm>
#include <vector>

namespace uncore::mpi {

Election ElectLeaders(std::vector<int> counted_sockets,
                      const std::vector<std::vector<int>>& rank_packages) {
  std::sort(counted_sockets.begin(), counted_sockets.end());
  counted_sockets.erase(
      std::unique(counted_sockets.begin(), counted_sockets.end()),
      counted_sockets.end());
  const size_t ranks = rank_packages.size();
  Election e;
  e.sockets = counted_sockets;
  e.leader_of.assign(e.sockets.size(), -1);
  e.leads.assign(ranks, {});
  e.sources.assign(ranks, {});
  if (ranks == 0 || e.sockets.empty()) return e;

  auto index_of = [&](int socket) -> int {
    auto it = std::lower_bound(e.sockets.begin(), e.sockets.end(), socket);
    if (it == e.sockets.end() || *it != socket) return -1;
    return static_cast<int>(it - e.sockets.begin());
  };
  // The counted sockets each rank may run on (indices into e.sockets).
  std::vector<std::vector<int>> allowed(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    for (int package : rank_packages[r]) {
      const int i = index_of(package);
      if (i >= 0) allowed[r].push_back(i);
    }
    std::sort(allowed[r].begin(), allowed[r].end());
    allowed[r].erase(std::unique(allowed[r].begin(), allowed[r].end()),
                     allowed[r].end());
  }
  // Bound ranks lead their socket, lowest rank first.
  for (size_t r = 0; r < ranks; ++r) {
    if (allowed[r].size() == 1 && e.leader_of[allowed[r][0]] < 0) {
      e.leader_of[allowed[r][0]] = static_cast<int>(r);
    }
  }
  // Node rank 0 leads the rest.
  for (int& leader : e.leader_of) {
    if (leader < 0) leader = 0;
  }
  for (size_t i = 0; i < e.sockets.size(); ++i) {
    e.leads[e.leader_of[i]].push_back(e.sockets[i]);
  }
  for (size_t r = 0; r < ranks; ++r) {
    if (!e.leads[r].empty()) continue;
    std::vector<int> sockets = allowed[r];
    if (sockets.empty()) {
      for (size_t i = 0; i < e.sockets.size(); ++i) {
        sockets.push_back(static_cast<int>(i));
      }
    }
    for (int i : sockets) {
      const int leader = e.leader_of[i];
      if (std::find(e.sources[r].begin(), e.sources[r].end(), leader) ==
          e.sources[r].end()) {
        e.sources[r].push_back(leader);
      }
    }
  }
  return e;
}

}  // namespace uncore::mpi
