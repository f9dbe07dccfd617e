// MonotonicNowNs: CLOCK_MONOTONIC in nanoseconds, the one clock of the SDK.
// Snapshots, regions, sessions and the CLI all read it, so their times can
// be subtracted from one another.
//
//   const uint64_t t0 = uncore::MonotonicNowNs();
//
// TickClock: the region hot path's clock.  The time-stamp counter where it
// runs at a constant rate in every power state (x86 `constant_tsc` and
// `nonstop_tsc`) and the kernel keeps it as its clock source (it found the
// CPUs' counters synchronised), else CLOCK_MONOTONIC; ticks become
// nanoseconds through the rate measured against CLOCK_MONOTONIC over the
// clock's whole life, so durations agree with MonotonicNowNs's to a few
// parts per million.
//
//   common::TickClock clock;              // at a session's start
//   const uint64_t a = clock.Now();       // ~10 ns (rdtsc) on x86
//   ...
//   const uint64_t ns = clock.ToNs(clock.Now() - a, clock.NsPerTick());
//
// Guarantees: no allocation, no lock (a vDSO call or one instruction).
#ifndef UNCORE_SDK_COMMON_CLOCK_H_
#define UNCORE_SDK_COMMON_CLOCK_H_

#include <time.h>

#include <cmath>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace uncore::common {

inline uint64_t MonotonicNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

// Whether TickClock may count the time-stamp counter here: it runs at one
// constant rate in every power state (/proc/cpuinfo's flags) and is the
// kernel's clock source (read once).
bool TscIsUsableClock();

class TickClock {
 public:
  // `use_tsc`: false forces CLOCK_MONOTONIC (ticks are then nanoseconds).
  explicit TickClock(bool use_tsc = TscIsUsableClock());

  bool counts_tsc() const { return tsc_; }
  // Ordered after the instructions before it (lfence: rdtsc alone may
  // run ahead of earlier loads, stores and locked instructions), as the
  // vDSO's own TSC read is.
  uint64_t Now() const {
#if defined(__x86_64__) || defined(__i386__)
    if (tsc_) {
      _mm_lfence();
      return __rdtsc();
    }
#endif
    return MonotonicNowNs();
  }
  // Nanoseconds per tick now: the rate over the clock's life (at least a
  // millisecond of it: a younger clock sleeps until it is that old), each
  // end a CLOCK_MONOTONIC read paired with the ticks around it.  1 without
  // a TSC.
  double NsPerTick() const;
  static uint64_t ToNs(uint64_t ticks, double ns_per_tick) {
    return static_cast<uint64_t>(
        std::llround(static_cast<double>(ticks) * ns_per_tick));
  }

 private:
  // CLOCK_MONOTONIC and the ticks at the same moment.
  void Pair(uint64_t* ns, uint64_t* ticks) const;

  bool tsc_;
  uint64_t start_ticks_ = 0;
  uint64_t start_ns_ = 0;
};

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_CLOCK_H_
