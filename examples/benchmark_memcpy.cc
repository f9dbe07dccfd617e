// benchmark_memcpy: Google Benchmark over memcpy sizes from L1 to DRAM,
// with the DRAM traffic the uncore saw next to Google Benchmark's own
// bytes_per_second (uncore/benchmark.h, uncore/benchmark_main.h).
//
//   ./benchmark_memcpy                          # counts on this machine
//   ./benchmark_memcpy --uncore_backend=sim     # SIMULATED counts
//   ./benchmark_memcpy --benchmark_filter='BM_Memcpy/(4096|268435456)$'
//   ./benchmark_memcpy --uncore_backend=sim --benchmark_format=json
//   ./benchmark_memcpy --uncore_backend=sim
//       --uncore_events=cbo/LLC_VICTIMS.M_STATE --uncore_metrics=MEM_BW_READS
//
// The last adds counters the code does not publish, measured on a separate
// run of each benchmark and scaled to one iteration, which the label says
// ("uncore: scaled from a separate run of 9 iterations, 63.2 ms"); a
// separate run under 1 ms is too short to scale, and its row says
// "uncore: withheld: ..." instead (docs/google_benchmark.md).
//
// Each row shows, per iteration (one memcpy of the row's size), the DRAM
// cache lines read and written (imc/CAS_COUNT.RD and .WR, 64 bytes each)
// and the DRAM bandwidth over Google Benchmark's time (MEM_BW_TOTAL):
//
//   BM_Memcpy/4096   ...  bytes_per_second=... uncore.imc.CAS_COUNT.RD=...
//       uncore.imc.CAS_COUNT.WR=... uncore.metric.imc.MEM_BW_TOTAL=...
//
// On an IvyTown server, sizes that fit in the caches move almost no DRAM
// lines per copy; from the LLC size (tens of MiB) on, a copy of N bytes
// reads about N/64 lines and writes about N/64 (plus the reads for the
// destination's write-allocate), and MEM_BW_TOTAL approaches 2 to 3 times
// bytes_per_second.  The counts are socket-wide: other work on the socket
// adds to them.  With --uncore_backend=sim the counts come from a made-up
// traffic model and every row says "uncore: SIMULATED"; on a machine
// where no backend can count, the rows say "uncore: not measured: ...".
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "benchmark/benchmark.h"
#include "uncore/benchmark.h"
#include "uncore/benchmark_main.h"

namespace {

void BM_Memcpy(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  auto src = std::make_unique<char[]>(size);
  auto dst = std::make_unique<char[]>(size);
  // Fault the pages in before measuring: only the copies are counted.
  std::memset(src.get(), 'x', size);
  std::memset(dst.get(), 0, size);

  uncore::bench::ScopedCounters counters(
      state, {"imc/CAS_COUNT.RD", "imc/CAS_COUNT.WR", "metric/MEM_BW_TOTAL"});
  for (auto _ : state) {
    std::memcpy(dst.get(), src.get(), size);
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  counters.Stop();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
}
// 4 KiB, 32 KiB (L1), 256 KiB (L2), 2 MiB, 16 MiB (LLC), 128 MiB,
// 256 MiB (DRAM).
BENCHMARK(BM_Memcpy)->Range(4 << 10, 256 << 20);

}  // namespace

UNCORE_BENCHMARK_MAIN();
