// Who programs which socket of a node (docs/mpi.md, "Leaders").
//
//   // Per node rank, the packages its CPUs belong to (sched_getaffinity).
//   Election e = ElectLeaders(/*counted_sockets=*/{0, 1},
//                             {{0}, {0}, {1}, {0, 1}});
//   e.leads[0] == {0}; e.leads[2] == {1}; e.sources[1] == {0};
//   e.sources[3] == {0, 2};
//
// Rules: a rank whose allowed CPUs lie in one counted socket is bound to
// it; the lowest node rank bound to a socket leads it; every counted socket
// no bound rank leads is led by node rank 0.  A rank that leads nothing
// reads the leaders of the counted sockets it may run on (of every counted
// socket when its CPUs lie in none).  A leader reads only the sockets it
// leads.
//
// Guarantees: every counted socket has exactly one leader, so no counter is
// programmed twice on the node; pure (no MPI, no sysfs): unit-tested with
// made-up layouts.
#ifndef UNCORE_INTEGRATIONS_MPI_ELECTION_H_
#define UNCORE_INTEGRATIONS_MPI_ELECTION_H_

#include <vector>

namespace uncore::mpi {

struct Election {
  // Per counted socket (sorted), its leader's node rank.
  std::vector<int> sockets;
  std::vector<int> leader_of;
  // Per node rank: the sockets it programs (empty: it reads others').
  std::vector<std::vector<int>> leads;
  // Per node rank that leads nothing: the node ranks of the leaders it
  // reads, in socket order, no repeats.
  std::vector<std::vector<int>> sources;
};

// `counted_sockets`: the sockets to count (any order, repeats ignored);
// `rank_packages[r]`: the packages node rank r may run on.  An empty
// `counted_sockets` gives an election where nobody leads.
Election ElectLeaders(std::vector<int> counted_sockets,
                      const std::vector<std::vector<int>>& rank_packages);

}  // namespace uncore::mpi

#endif  // UNCORE_INTEGRATIONS_MPI_ELECTION_H_
