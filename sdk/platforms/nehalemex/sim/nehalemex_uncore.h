// NehalemExUncore: a register-accurate simulation of the Xeon 7500
// (Nehalem-EX) / Xeon E7 (Westmere-EX) uncore PMON MSRs, for N sockets,
// as a RegisterSpace.
//
//   auto sim = sim::NehalemExUncore::Create(nehalemex::Variant::kNehalemEx,
//                                           /*sockets=*/2);
//   UNCORE_RETURN_IF_ERROR(sim->WriteMsr(0, 0xD10, 0x400101));  // C0 CTL0
//   UNCORE_RETURN_IF_ERROR(sim->WriteMsr(0, 0xD00, 0x1));       // ctr_en
//   UNCORE_RETURN_IF_ERROR(sim->WriteMsr(0, 0xC00, 1ull << 28)); // en_all
//   sim->AddEvents(/*socket=*/0, nehalemex::BoxType::kC, /*instance=*/0,
//                  /*event_key=*/0x0101, /*count=*/1000);
//   uint64_t v = 0;
//   UNCORE_RETURN_IF_ERROR(sim->ReadMsr(0, 0xD11, &v));          // 1000
//
// What it models (docs/xeon7500.md, notes/decisions-xeon7500.md):
// - A counter counts only while U_MSR_PMON_GLOBAL_CTL.en_all, its box's
//   GLOBAL_CTL ctr_en bit and its control's en bit are all 1.
// - Counters are 48 bits; a carry out of bit 47 wraps the counter and sets
//   its bit in the box's GLOBAL_STATUS; writing 1s to GLOBAL_OVF_CTL clears
//   them.  rst_all (0xC00 bit 29) zeroes every counter and status.
// - frz_all (0xC00 bit 31) is freeze-on-PMI: an overflow of a counter whose
//   control has pmi_en clears en_all.
// - Writing MATCH or MASK of an S-Box or M-Box while its MM_CFG[63] is 1 is
//   a general-protection fault: the write fails and changes nothing.  So is
//   a write that sets a reserved bit, any write to a GLOBAL_STATUS, and any
//   access to an MSR the model does not have.  IsGeneralProtectionFault()
//   recognises those statuses.
// - Traffic: AddEvents adds counts to every counting counter of a box
//   instance whose control selects `event_key` (the event-select bits as
//   they sit in the control register: EventKey()).  Threshold, edge,
//   invert and match/mask filters do not change the count.
// - Demo mode (no threads): every read of a counter first advances every
//   counting counter of the socket by the time elapsed since the last
//   advance, at the per-event rates of DemoRates.  As the 7500's
//   SimulatedActivity (simulated_activity.h), SetMemoryActivity sets the
//   memory rates a program reports for its phases.
// CPUs: socket s owns CPUs [s * cpus_per_socket, (s + 1) * cpus_per_socket).
//
// Guarantees: thread-safe (one mutex); never prints; PCI accesses fail
// (this generation has no PCI PMON boxes).
#ifndef UNCORE_SDK_PLATFORMS_NEHALEMEX_SIM_NEHALEMEX_UNCORE_H_
#define UNCORE_SDK_PLATFORMS_NEHALEMEX_SIM_NEHALEMEX_UNCORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/platforms/nehalemex/model/box_descriptors.h"
#include "sdk/registers/register_space.h"
#include "sdk/sim/simulated_activity.h"

namespace uncore::sim {

class NehalemExUncore : public registers::RegisterSpace,
                        public SimulatedActivity {
 public:
  using Variant = nehalemex::Variant;
  using BoxType = nehalemex::BoxType;

  // Demo-mode rates.
  struct DemoRates {
    // The kernel's bbox_cmds_read / bbox_cmds_write M-Box events count one
    // per 64-byte line of this bandwidth, split over the two M-Boxes.
    double read_bytes_per_s = 4e9;
    double write_bytes_per_s = 2e9;
    // The W-Box fixed counter (the uncore clock).
    double uncore_clock_hz = 2e9;
    // Every other enabled counter.
    double other_events_per_s = 1e6;
  };

  struct Options {
    int cpus_per_socket = 1;
    bool demo = false;
    DemoRates rates;
    // Monotonic nanoseconds for demo mode; empty: CLOCK_MONOTONIC.
    std::function<uint64_t()> clock;
  };

  static std::unique_ptr<NehalemExUncore> Create(Variant variant, int sockets);
  static std::unique_ptr<NehalemExUncore> Create(Variant variant, int sockets,
                                                 Options options);
  NehalemExUncore(Variant variant, int sockets, Options options);
  NehalemExUncore(const NehalemExUncore&) = delete;
  NehalemExUncore& operator=(const NehalemExUncore&) = delete;

  absl::Status ReadMsr(int cpu, uint32_t msr, uint64_t* value) override;
  absl::Status WriteMsr(int cpu, uint32_t msr, uint64_t value) override;
  absl::Status ReadPci(const registers::PciAddress& fn, uint32_t offset,
                       uint32_t* value) override;
  absl::Status WritePci(const registers::PciAddress& fn, uint32_t offset,
                        uint32_t value) override;

  // The event-select bits of a control value for `box`: U 7:0; C, S, W
  // 15:0 (ev_sel and umask); B, R 5:1; M inc_sel, flag_mode, set_flag_sel.
  static uint64_t EventKey(BoxType box, uint64_t control);
  // Whether `s` is a general-protection fault of this simulator.
  static bool IsGeneralProtectionFault(const absl::Status& s);

  // Adds `count` occurrences of the event `event_key` in box instance
  // (`box`, `instance`) of `socket`.
  absl::Status AddEvents(int socket, BoxType box, int instance,
                         uint64_t event_key, uint64_t count);
  // Adds `count` uncore clocks to the W-Box fixed counter.
  absl::Status AddFixedCounts(int socket, uint64_t count);

  // Demo mode on or off (off: counters move only with AddEvents).
  void SetDemo(bool on, DemoRates rates);
  DemoRates demo_rates() const;

  // SimulatedActivity: demo mode on, the counts so far at the previous
  // rates, then the memory rates of DemoRates from `bytes_per_second` (2/3
  // read_bytes_per_s, 1/3 write_bytes_per_s; the uncore clock and
  // other_events_per_s as they were).
  absl::Status SetMemoryActivity(double bytes_per_second) override;
  // Every socket's counts up to now (demo mode; a no-op otherwise).
  absl::Status AdvanceToNow() override;

  Variant variant() const { return variant_; }
  int sockets() const { return static_cast<int>(sockets_.size()); }
  int cpus_per_socket() const { return options_.cpus_per_socket; }
  // A register's value without side effects (0 for one never written).
  uint64_t Peek(int socket, uint32_t msr) const;
  // Sets a register without the write checks (test setup).
  void Poke(int socket, uint32_t msr, uint64_t value);
  // General-protection faults raised so far.
  int gp_faults() const;

 private:
  struct Socket {
    absl::flat_hash_map<uint32_t, uint64_t> regs;
    // Demo mode: fractional counts carried per counter address.
    absl::flat_hash_map<uint32_t, double> carry;
    uint64_t last_advance_ns = 0;
  };

  absl::Status SocketOf(int cpu, int* socket) const;
  absl::Status Fault(std::string what);  // mu_ held
  // The model's register `msr` (a fault when the variant has none); mu_
  // held.  `op`: "rdmsr" or "wrmsr", for the message.
  absl::StatusOr<const nehalemex::RegisterInfo*> Lookup(std::string_view op,
                                                        int cpu, uint32_t msr);
  uint64_t Get(const Socket& s, uint32_t msr) const;
  bool Counting(const Socket& s, const nehalemex::BoxDescriptor& box,
                int instance, int counter) const;
  bool FixedCounting(const Socket& s) const;
  // Adds to a counter register; overflow handling.  `control` is the
  // counter's control address (0 for the fixed counter).
  void Increment(Socket& s, const nehalemex::BoxDescriptor& box, int instance,
                 int counter, uint64_t count);
  void Advance(Socket& s);  // demo mode
  double DemoRate(const Socket& s, const nehalemex::BoxDescriptor& box,
                  int instance, int counter) const;
  uint64_t Now() const;

  const Variant variant_;
  Options options_;
  mutable std::mutex mu_;
  std::vector<Socket> sockets_;  // guarded by mu_
  int gp_faults_ = 0;            // guarded by mu_
};

}  // namespace uncore::sim

#endif  // UNCORE_SDK_PLATFORMS_NEHALEMEX_SIM_NEHALEMEX_UNCORE_H_
