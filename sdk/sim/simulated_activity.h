// SimulatedActivity: what a program tells any simulator about its own
// activity, so that the simulated counts follow the program (a demo shows
// what the hardware would report for each of its phases).  Every simulator
// of the `sim` backend implements it, each in its own memory events:
//
//   - IvyTown (DemoTrafficModel over IvyTownUncore): iMC CAS_COUNT.RD /
//     .WR, HA REQUESTS, CBo LLC lookups (one per 64 bytes), QPI data flits.
//   - Xeon 7500 / E7 (NehalemExUncore): the M-Box bbox_cmds_read / _write
//     FVC events and the B-Box IMT_INSERTS_RD / _WR / _ALL, one per 64-byte
//     line, which MEM_BW_READS / _WRITES / _TOTAL read.
//
//   sim::SimulatedActivity* activity = ...;  // runtime: the session's
//   UNCORE_RETURN_IF_ERROR(activity->SetMemoryActivity(12e9));
//   ... the phase runs; each snapshot brings the counts up to itself ...
//   UNCORE_RETURN_IF_ERROR(activity->AdvanceToNow());
//
// Guarantees: both calls are thread-safe and allocate nothing on the
// counting path; the counts before a rate change are made at the rate
// that held then (to the nanosecond of the simulator's clock); a rate of 0
// makes no memory traffic (a compute phase reads ~0 bytes/s), and events
// that are not memory traffic (clocks) keep counting.  Every count is made
// up: reports say SIMULATED.
#ifndef UNCORE_SDK_SIM_SIMULATED_ACTIVITY_H_
#define UNCORE_SDK_SIM_SIMULATED_ACTIVITY_H_

#include "absl/status/status.h"

namespace uncore::sim {

class SimulatedActivity {
 public:
  // Memory traffic is split 2:1 between reads and writes on every
  // simulator.
  static constexpr double kReadShare = 2.0 / 3.0;

  virtual ~SimulatedActivity() = default;
  // Brings the counts up to now at the previous rate, then makes up memory
  // traffic of `bytes_per_second` per socket (negative: 0) from now on.
  virtual absl::Status SetMemoryActivity(double bytes_per_second) = 0;
  // Brings the counts up to now at the current rate.
  virtual absl::Status AdvanceToNow() = 0;
};

}  // namespace uncore::sim

#endif  // UNCORE_SDK_SIM_SIMULATED_ACTIVITY_H_
