// The harness of the "ratio over two bare reads" benchmarks (region_bench,
// shared_library_bench): a perf `msr/tsc/` group opened the way the perf
// backend opens it, and blocks of bare read pairs of it alternating with
// blocks of a region pair (or a floor of one), in one run, pinned to the
// event's CPU or to another one.  Public API only: the shared library's
// benchmark uses it too.
//
//   OverTwoReads(state, "floor_ns", /*cross_cpu=*/false, [](int fd) {
//     ...  // one pair of whatever is measured
//   });  // counters: ratio, bare_ns, floor_ns
//   RegionPairOverTwoReads(state, /*cross_cpu=*/false);  // UNCORE_REGION
#ifndef UNCORE_TESTS_BENCH_OVER_TWO_READS_H_
#define UNCORE_TESTS_BENCH_OVER_TWO_READS_H_

#include <linux/perf_event.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "benchmark/benchmark.h"
#include "uncore/region.h"
#include "uncore/session.h"

namespace uncore::bench_support {

// A one-event msr/tsc group opened the way the perf backend opens it
// (PERF_FORMAT_GROUP with the times) on the CPU the backend counts socket 0
// on (the first of the PMU's cpumask; the msr PMU has none: CPU 0) into
// `cpu`; -1 when it cannot be (no msr PMU, not root).
inline int OpenMsrTsc(int* cpu) {
  const std::string pmu = "/sys/bus/event_source/devices/msr/";
  std::ifstream type_file(pmu + "type");
  uint32_t type = 0;
  if (!(type_file >> type)) return -1;
  *cpu = 0;
  std::ifstream mask_file(pmu + "cpumask");
  int first = 0;
  if (mask_file >> first) *cpu = first;
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = type;
  attr.config = 0;  // tsc
  attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                     PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(
      syscall(SYS_perf_event_open, &attr, -1, *cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

// Runs the benchmark's thread on `cpu` until destroyed.
class PinnedTo {
 public:
  explicit PinnedTo(int cpu) {
    CPU_ZERO(&old_set_);
    sched_getaffinity(0, sizeof(old_set_), &old_set_);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
  }
  ~PinnedTo() { sched_setaffinity(0, sizeof(old_set_), &old_set_); }
  PinnedTo(const PinnedTo&) = delete;
  PinnedTo& operator=(const PinnedTo&) = delete;

 private:
  cpu_set_t old_set_;
};

// Blocks of 1,000 bare read pairs of `fd` and 1,000 calls of `pair`
// alternate; counters: `ratio` (pairs' time / bare time), `bare_ns` and
// `pair_counter` (ns per pair of each).
template <typename Pair>
void AlternateWithTwoReads(benchmark::State& state, int fd,
                           const char* pair_counter, Pair pair) {
  using Clock = std::chrono::steady_clock;
  constexpr int kBlock = 1000;
  Clock::duration bare{};
  Clock::duration pairs_time{};
  uint64_t buffer[4];
  for (auto _ : state) {
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < kBlock; ++i) {
      benchmark::DoNotOptimize(read(fd, buffer, sizeof(buffer)));
      benchmark::DoNotOptimize(read(fd, buffer, sizeof(buffer)));
      benchmark::ClobberMemory();
    }
    const Clock::time_point t1 = Clock::now();
    for (int i = 0; i < kBlock; ++i) pair();
    const Clock::time_point t2 = Clock::now();
    bare += t1 - t0;
    pairs_time += t2 - t1;
  }
  const double pairs = static_cast<double>(state.iterations()) * kBlock;
  state.counters["ratio"] = std::chrono::duration<double>(pairs_time).count() /
                            std::chrono::duration<double>(bare).count();
  state.counters["bare_ns"] =
      std::chrono::duration<double, std::nano>(bare).count() / pairs;
  state.counters[pair_counter] =
      std::chrono::duration<double, std::nano>(pairs_time).count() / pairs;
}

// `pair(fd)` against two bare reads of msr/tsc/ (AlternateWithTwoReads),
// on the event's CPU or, with `cross_cpu`, on another one; `counter` names
// its time per pair.
template <typename Pair>
void OverTwoReads(benchmark::State& state, const char* counter, bool cross_cpu,
                  Pair pair) {
  int cpu = 0;
  const int fd = OpenMsrTsc(&cpu);
  if (fd < 0) {
    state.SkipWithError("perf_event_open(msr/tsc/) failed");
    return;
  }
  const int ncpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (cross_cpu && ncpus < 2) {
    close(fd);
    state.SkipWithError("one CPU: no other CPU to read from");
    return;
  }
  {
    const PinnedTo pinned(cross_cpu ? (cpu + 1) % ncpus : cpu);
    AlternateWithTwoReads(state, fd, counter, [fd, &pair] { pair(fd); });
  }
  close(fd);
}

// A region pair counting msr/tsc/ with the perf backend on socket 0, over
// two bare reads of the same event (OverTwoReads): the ratio is what a
// region adds to its reads.
inline void RegionPairOverTwoReads(benchmark::State& state, bool cross_cpu) {
  SessionOptions o;
  o.events = {"msr/tsc/"};
  o.backend = "perf";
  o.sockets = {0};
  auto session = Session::Start(std::move(o));
  if (!session.ok()) {
    state.SkipWithError("a perf session counting msr/tsc/ could not start");
    return;
  }
  int x = 0;
  OverTwoReads(state, "region_ns", cross_cpu, [&x](int /*fd*/) {
    UNCORE_REGION("bench");
    benchmark::DoNotOptimize(x);
    benchmark::ClobberMemory();
  });
  (*session)->Stop().IgnoreError();
}

}  // namespace uncore::bench_support

#endif  // UNCORE_TESTS_BENCH_OVER_TWO_READS_H_
