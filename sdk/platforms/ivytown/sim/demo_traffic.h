// DemoTrafficModel: drives a IvyTownUncore from wall-clock time, so that a
// program run without IvyTown hardware still sees moving, plausible counts.
// Everything it produces is made up: every output that uses it must carry
// the label DemoTrafficModel::kLabel ("SIMULATED").
//
//   sim::IvyTownUncore sim(/*sockets=*/1);
//   sim::DemoTrafficModel demo(&sim);
//   demo.SetActivity(/*memory_bytes_per_second=*/10e9,
//                    /*llc_lookups_per_second=*/500e6);
//   demo.Start();                        // a background thread, every 1 ms
//   ... run the phase ...
//   demo.Stop();                         // or call demo.Advance() yourself
//
// The sim backend calls Advance before each snapshot instead (no thread):
// a snapshot's counts stand at its timestamp, so a region of any length
// sees the traffic of its own time.
//
// Clocks (documented rates, adjustable with ClockRates): UCLK 2.0 GHz
// (U-Box, CBo, HA, IRP, R2PCIe, R3QPI), DCLK 800 MHz (iMC; L2150's "dclk"
// runs at half the DDR rate, 800 MHz for DDR3-1600), QPI 1.0 GHz (qfclk at
// 8 GT/s), PCU 800 MHz (the manual's fixed pclk).  For the elapsed time it
// ticks every box and injects, spread evenly over the cycles:
//   iMC   CAS_COUNT RD / WR: bytes / 64 per second, over the 8 channels
//   HA    REQUESTS READS / WRITES: the same lines, over the 2 HAs
//   CBo   LLC_LOOKUP DATA_READ (state E for hits, I for misses, FILTER0
//         state bits 0=I 1=S 2=E 3=M 4=F), TOR_INSERTS / TOR_OCCUPANCY
//         MISS_OPCODE with opcode 0x182 (DRd) and a 100 ns miss latency,
//         over the 15 CBos
//   QPI   TxL/RxL_FLITS_G0 DATA (8 data bytes per flit), RxL IDLE for the
//         rest of the link's cycles, over the 3 ports
//   PCU   FREQ_BAND0..3_CYCLES at the uncore frequency of the activity
// Counts are exact integers: fractional remainders carry to the next call.
//
// It is IvyTown's SimulatedActivity (simulated_activity.h).
//
// Guarantees: never prints, exits or throws.  Thread-safe: Advance, AdvanceBy
// and SetActivity may be called from any thread; Start/Stop from one.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_SIM_DEMO_TRAFFIC_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_SIM_DEMO_TRAFFIC_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/sim/simulated_activity.h"

namespace uncore::sim {

class DemoTrafficModel : public SimulatedActivity {
 public:
  // Every report, table or metric computed from this model says so.
  static constexpr std::string_view kLabel = "SIMULATED";

  struct ClockRates {
    double uclk_hz = 2.0e9;
    double dclk_hz = 800.0e6;
    double qpi_hz = 1.0e9;
    double pcu_hz = 800.0e6;
  };

  // Per socket, per second.
  struct Activity {
    double memory_read_bytes_per_second = 0;
    double memory_write_bytes_per_second = 0;
    double llc_lookups_per_second = 0;
    double llc_miss_ratio = 0.2;           // misses / lookups
    double qpi_data_bytes_per_second = 0;  // per socket, over all ports
    double uncore_frequency_mhz = 2000;    // PCU band residency
  };

  // `sim` must outlive the model.
  explicit DemoTrafficModel(IvyTownUncore* sim);
  DemoTrafficModel(IvyTownUncore* sim, ClockRates rates);
  ~DemoTrafficModel() override;  // stops the background thread
  DemoTrafficModel(const DemoTrafficModel&) = delete;
  DemoTrafficModel& operator=(const DemoTrafficModel&) = delete;

  // Memory traffic split 2:1 between reads and writes, a tenth of it
  // crossing QPI.
  void SetActivity(double memory_bytes_per_second,
                   double llc_lookups_per_second);
  void SetActivity(const Activity& activity);
  Activity activity() const;

  // SimulatedActivity: Advance(), then SetActivity(bytes_per_second,
  // bytes_per_second / 64) (one LLC lookup per 64 bytes).
  absl::Status SetMemoryActivity(double bytes_per_second) override;
  absl::Status AdvanceToNow() override { return Advance(); }
  const ClockRates& rates() const { return rates_; }

  // Advances every socket by the wall-clock time since the previous call
  // (or construction), to the nanosecond.  `now_ns`, when given, gets the
  // CLOCK_MONOTONIC time the counts now stand at.
  absl::Status Advance(uint64_t* now_ns = nullptr);
  // Advances by `elapsed` of simulated time regardless of the wall clock
  // (deterministic; for tests).
  absl::Status AdvanceBy(std::chrono::nanoseconds elapsed);
  // Simulated time so far.
  std::chrono::nanoseconds simulated_time() const;

  // A background thread calling Advance() every `period`.  Start while
  // running is a no-op.  The first error stops the thread; last_error()
  // keeps it.
  void Start(std::chrono::milliseconds period = std::chrono::milliseconds(1));
  void Stop();
  bool running() const;
  absl::Status last_error() const;

 private:
  struct StreamRate {
    IvyTownUncore::Traffic traffic;
    double per_second = 0;
  };
  std::vector<StreamRate> RatesFor(ivytown::BoxType box) const;  // mu_ held
  absl::Status AdvanceLocked(std::chrono::nanoseconds elapsed);

  IvyTownUncore* sim_;
  const ClockRates rates_;

  mutable std::mutex mu_;  // guards everything below
  Activity activity_;
  std::chrono::steady_clock::time_point last_;
  std::chrono::nanoseconds simulated_{0};
  // Occurrences owed (fractional remainders), [socket][box][stream], and
  // cycles issued so far, [socket][box] (clocks follow simulated_ exactly).
  std::vector<std::vector<std::vector<double>>> carry_;
  std::vector<std::vector<uint64_t>> cycles_issued_;
  // The streams of each box type at activity_ (by BoxType; empty: to
  // compute), and room for one injection's: kept so that an advance
  // allocates nothing.
  std::vector<std::vector<StreamRate>> streams_by_box_;
  std::vector<IvyTownUncore::SpreadStream> streams_;
  absl::Status last_error_;

  std::mutex thread_mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace uncore::sim

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_SIM_DEMO_TRAFFIC_H_
