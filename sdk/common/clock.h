// MonotonicNowNs: CLOCK_MONOTONIC in nanoseconds, the one clock of the SDK.
// Snapshots, regions, sessions and the CLI all read it, so their times can
// be subtracted from one another.
//
//   const uint64_t t0 = uncore::MonotonicNowNs();
//
// Guarantees: no allocation, no lock (a vDSO call on Linux).
#ifndef UNCORE_SDK_COMMON_CLOCK_H_
#define UNCORE_SDK_COMMON_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace uncore::common {

inline uint64_t MonotonicNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_CLOCK_H_
