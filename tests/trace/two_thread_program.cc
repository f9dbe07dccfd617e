// A two-thread program for the trace's end-to-end test (trace_e2e_test.py):
// the main thread holds "phase" while two threads each hold "work" (with a
// nested "step") for ~150 ms, then the main thread runs "serial" for ~100
// ms.  Counted by the environment session (UNCORE_EVENTS, UNCORE_TRACE,
// UNCORE_OUTPUT).  Prints the TSC's rate, measured with rdtsc against
// CLOCK_MONOTONIC over the whole run, for the test to compare the trace's
// msr/tsc/ counter track with.
#include <time.h>
#include <x86intrin.h>

#include <cstdint>
#include <cstdio>
#include <thread>

#include "uncore/uncore.h"

namespace {

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

void Spin(uint64_t ns) {
  const uint64_t until = NowNs() + ns;
  volatile uint64_t sink = 0;
  while (NowNs() < until) sink = sink + 1;
}

void Work() {
  UNCORE_REGION("work");
  for (int i = 0; i < 3; ++i) {
    UNCORE_REGION("step");
    Spin(50'000'000);
  }
}

}  // namespace

int main() {
  const uint64_t t0 = NowNs();
  const uint64_t c0 = __rdtsc();
  {
    UNCORE_REGION("phase");
    std::thread a(Work);
    std::thread b(Work);
    a.join();
    b.join();
  }
  {
    UNCORE_REGION("serial");
    Spin(100'000'000);
  }
  const uint64_t c1 = __rdtsc();
  const uint64_t t1 = NowNs();
  std::printf("tsc_hz %.1f\n", static_cast<double>(c1 - c0) * 1e9 /
                                   static_cast<double>(t1 - t0));
  return 0;
}
