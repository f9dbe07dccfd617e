// An MPI program with two regions and nothing else of the SDK, for
// mpi_test.py: linked with uncore::mpi (or not, then run with LD_PRELOAD).
//   work   each rank once: --region-ms of sleep
//   step   rank r r+1 times (calls summed over 4 ranks: 10)
//   staggered  rank r enters at r x 30 ms for 100 ms (the ranks overlap)
//   gapped     rank r enters at r x 150 ms for 100 ms (gaps between them)
// Built with UNCORE_TEST_EXPLICIT_INIT, it opts out of the start in MPI_Init
// and calls uncore_mpi_init / uncore_mpi_finalize itself.
// Rank 0 prints one JSON line: the TSC rate it measured (rdtsc over 200 ms
// of CLOCK_MONOTONIC), the perf_event file descriptors open in every
// rank's process while the sessions run (from /proc/PID/fd), its pid, and
// per region the time at least one rank was inside it: "union_ns", the
// union of the ranks' calls timed inside the region, and "outer_union_ns",
// timed around its boundaries (a count taken at the boundaries lies
// between the two).
// --end exit: every rank calls exit(0) instead of MPI_Finalize; --end kill:
// every rank kills itself (SIGKILL) instead.  --region NAME: every rank also
// opens a region named NAME once (2 ms), a name given at run time (UTF-8
// names such as "café ☕" for the merged report's bytes).  --slash-pair 1:
// every rank also opens a region named "a/b", then "b" inside "a" (two
// regions whose names joined unescaped would be one path).
#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "uncore/uncore.h"
#ifdef UNCORE_TEST_EXPLICIT_INIT
#include "uncore/mpi.h"

extern "C" int uncore_mpi_auto_init(void) { return 0; }
#endif

namespace {

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

void SleepMs(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

double TscHz() {
  const uint64_t t0 = NowNs();
  const uint64_t c0 = __rdtsc();
  SleepMs(200);
  const uint64_t c1 = __rdtsc();
  const uint64_t t1 = NowNs();
  return static_cast<double>(c1 - c0) * 1e9 / static_cast<double>(t1 - t0);
}

int PerfFds(int pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    char target[256] = {};
    const std::string link = dir + "/" + e->d_name;
    const ssize_t len = readlink(link.c_str(), target, sizeof(target) - 1);
    if (len > 0 && std::strstr(target, "perf_event") != nullptr) ++n;
  }
  closedir(d);
  return n;
}

// A rank's calls of one region: [begin, end) on CLOCK_MONOTONIC, one
// node's clock, inside the region and around its boundaries.
struct Calls {
  std::vector<uint64_t> inner;  // begin, end, begin, end, ...
  std::vector<uint64_t> outer;
  void Add(uint64_t outer_begin, uint64_t begin, uint64_t end,
           uint64_t outer_end) {
    inner.push_back(begin);
    inner.push_back(end);
    outer.push_back(outer_begin);
    outer.push_back(outer_end);
  }
};

// Gathers every rank's calls at rank 0 and returns the length of their
// union there (0 elsewhere).
uint64_t UnionNs(const std::vector<uint64_t>& mine, int rank, int size) {
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size && rank == 0; ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<uint64_t> all(static_cast<size_t>(total));
  MPI_Gatherv(mine.data(), n, MPI_UINT64_T, all.data(), counts.data(),
              offsets.data(), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank != 0) return 0;
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  for (size_t i = 0; i + 1 < all.size(); i += 2) {
    calls.emplace_back(all[i], all[i + 1]);
  }
  std::sort(calls.begin(), calls.end());
  uint64_t sum = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  for (const auto& [b, e] : calls) {
    if (b > end) {
      sum += end - start;
      start = b;
      end = e;
    } else if (e > end) {
      end = e;
    }
  }
  return sum + (end - start);
}

// Rank r enters `name` at r x `every_ms` after the barrier, for `hold_ms`.
Calls Staggered(const char* name, int rank, int every_ms, int hold_ms) {
  Calls calls;
  MPI_Barrier(MPI_COMM_WORLD);
  SleepMs(rank * every_ms);
  const uint64_t outer_begin = NowNs();
  uncore::RegionBegin(name);
  const uint64_t begin = NowNs();
  SleepMs(hold_ms);
  const uint64_t end = NowNs();
  uncore::RegionEnd(name);
  calls.Add(outer_begin, begin, end, NowNs());
  return calls;
}

}  // namespace

int main(int argc, char** argv) {
  int region_ms = 300;
  std::string end = "finalize";
  std::string extra_region;
  bool slash_pair = false;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--slash-pair") == 0) {
      slash_pair = std::atoi(argv[i + 1]) != 0;
    }
    if (std::strcmp(argv[i], "--region-ms") == 0)
      region_ms = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--end") == 0) end = argv[i + 1];
    if (std::strcmp(argv[i], "--region") == 0) extra_region = argv[i + 1];
  }
  MPI_Init(&argc, &argv);
#ifdef UNCORE_TEST_EXPLICIT_INIT
  if (uncore_mpi_init(MPI_COMM_WORLD) != 0) {
    std::fprintf(stderr, "uncore_mpi_init: %s\n", uncore_mpi_last_error());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
#endif
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double tsc_hz = rank == 0 ? TscHz() : 0;

  // Every session runs now: count the perf events open in the job.
  int pid = static_cast<int>(getpid());
  std::vector<int> pids(static_cast<size_t>(size));
  MPI_Gather(&pid, 1, MPI_INT, pids.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int perf_fds = 0;
  if (rank == 0) {
    for (int p : pids) perf_fds += PerfFds(p);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Calls work;
  {
    const uint64_t outer_begin = NowNs();
    uint64_t begin = 0;
    uint64_t end = 0;
    {
      UNCORE_REGION("work");
      begin = NowNs();
      SleepMs(region_ms);
      end = NowNs();
    }
    work.Add(outer_begin, begin, end, NowNs());
  }
  for (int i = 0; i <= rank; ++i) {
    UNCORE_REGION("step");
    SleepMs(2);
  }
  if (!extra_region.empty()) {
    uncore::RegionBegin(extra_region);
    SleepMs(2);
    uncore::RegionEnd(extra_region);
  }
  if (slash_pair) {
    {
      UNCORE_REGION("a/b");
      SleepMs(2);
    }
    {
      UNCORE_REGION("a");
      UNCORE_REGION("b");
      SleepMs(3);
    }
  }
  const Calls staggered = Staggered("staggered", rank, 30, 100);
  const Calls gapped = Staggered("gapped", rank, 150, 100);
  uint64_t unions[2][3] = {};
  const Calls* regions[3] = {&work, &staggered, &gapped};
  for (int k = 0; k < 3; ++k) {
    unions[0][k] = UnionNs(regions[k]->inner, rank, size);
    unions[1][k] = UnionNs(regions[k]->outer, rank, size);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf(
        "{\"tsc_hz\": %.1f, \"perf_fds\": %d, \"ranks\": %d, \"pid\": %d, "
        "\"union_ns\": {\"work\": %llu, \"staggered\": %llu, "
        "\"gapped\": %llu}, \"outer_union_ns\": {\"work\": %llu, "
        "\"staggered\": %llu, \"gapped\": %llu}}\n",
        tsc_hz, perf_fds, size, pid,
        static_cast<unsigned long long>(unions[0][0]),
        static_cast<unsigned long long>(unions[0][1]),
        static_cast<unsigned long long>(unions[0][2]),
        static_cast<unsigned long long>(unions[1][0]),
        static_cast<unsigned long long>(unions[1][1]),
        static_cast<unsigned long long>(unions[1][2]));
    std::fflush(stdout);
  }
  if (end == "exit") std::exit(0);
  if (end == "kill") raise(SIGKILL);
#ifdef UNCORE_TEST_EXPLICIT_INIT
  if (uncore_mpi_finalize() != 0) {
    std::fprintf(stderr, "uncore_mpi_finalize: %s\n", uncore_mpi_last_error());
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
#endif
  MPI_Finalize();
  return 0;
}
