// NehalemExDevice: the direct engine for the Xeon 7500 (Nehalem-EX) and
// Xeon E7 (Westmere-EX) uncore.  Programs the MSR PMON boxes with the
// guide's sequences over any RegisterSpace (the simulator
// sim::NehalemExUncore, or the Linux MSR space) and takes snapshots.
//
//   auto sim = sim::NehalemExUncore::Create(nehalemex::Variant::kNehalemEx, 2);
//   devices::NehalemExDevice dev(sim.get(), nehalemex::Variant::kNehalemEx,
//                                {{.socket = 0, .cpu = 0},
//                                 {.socket = 1, .cpu = 1}});
//   ProgramRequest req;
//   spec::EventSpec e;
//   e.kind = spec::EventSpec::Kind::kGenericPerf;
//   e.pmu = "uncore_cbox";                         // every C-Box
//   e.perf_terms = {{"event", 0x01}, {"umask", 0x03}};
//   req.events.push_back(e);
//   UNCORE_RETURN_IF_ERROR(dev.Program(req));
//   Snapshot a(dev.read_plan().size()), b(dev.read_plan().size());
//   UNCORE_RETURN_IF_ERROR(dev.TakeSnapshot(&a));
//   ... the measured phase ...
//   UNCORE_RETURN_IF_ERROR(dev.TakeSnapshot(&b));
//   // b.values[i] - a.values[i]: the count of dev.EntryName(i) on
//   // read_plan()[i].socket ("uncore_cbox_3").
//   UNCORE_RETURN_IF_ERROR(dev.Release());        // registers as found
//
// Events: EventSpec::Kind::kGenericPerf with `pmu` a kernel nhmex PMU name
// (uncore_ubox, uncore_cbox[_N], uncore_bbox[_N], uncore_sbox[_N],
// uncore_mbox[_N], uncore_rbox[_N], uncore_wbox; without _N: every
// instance) and `perf_terms` in that PMU's kernel sysfs format names
// (event, umask, edge, inv, thresh, counter, match, mask, inc_sel, fvc,
// iperf_cfg, xbr_match, ...; also config, config1, config2).  The encoding
// is the kernel's: a term's value lands in config/config1/config2 at the
// format's bits, and the engine turns those into register writes as the
// kernel driver does.  wbox event=0xff is the fixed counter (clockticks).
//
// Guarantees (docs/xeon7500.md):
// - Program refuses a box instance that runs out of counters, a B-Box
//   event whose `counter` is taken, two events that need one extra register
//   with different values, unknown PMUs and terms, and (unless `force`)
//   counters whose control already has its enable set.  On failure every
//   register written is restored.  Match/mask registers of the S-Box and
//   M-Box are written only after their MM_CFG[63] was cleared (guide
//   p. 2-49, steps a-d), in Program, rollback and Release alike.
// - A snapshot is, per socket, one window with U_MSR_PMON_GLOBAL_CTL.en_all
//   cleared: every counter of the socket is read while none counts, then
//   en_all is set again (1 write, N reads, 1 write).  Values are 64-bit,
//   exact while snapshots come less than one 48-bit wrap apart (days).
// - TakeSnapshot is safe from many threads at once (one lock per socket);
//   Program and Release are not safe with each other or with snapshots.
//   Release restores every register Program wrote; safe to call twice.
//   The space must outlive the device.  Never prints, exits or throws.
#ifndef UNCORE_SDK_DEVICES_NEHALEMEX_NEHALEMEX_DEVICE_H_
#define UNCORE_SDK_DEVICES_NEHALEMEX_NEHALEMEX_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sdk/devices/device.h"
#include "sdk/platforms/nehalemex/box_descriptors.h"
#include "sdk/registers/register_space.h"

namespace uncore::devices {

class NehalemExDevice : public Device {
 public:
  using Variant = nehalemex::Variant;

  // A socket and the CPU whose MSR file reaches its uncore.
  struct SocketCpu {
    int socket = 0;
    int cpu = 0;
  };

  // One register write Program performed, in order.
  struct Write {
    int socket = 0;
    int cpu = 0;
    uint32_t msr = 0;
    uint64_t value = 0;
    std::string name;  // "S1_MSR_MM_CFG"
    std::string why;   // "step a: clear MM_CFG[63]"
  };

  NehalemExDevice(registers::RegisterSpace* space, Variant variant,
                  std::vector<SocketCpu> sockets);
  ~NehalemExDevice() override;
  NehalemExDevice(const NehalemExDevice&) = delete;
  NehalemExDevice& operator=(const NehalemExDevice&) = delete;

  // Sockets 0..n-1, socket s on CPU s * cpus_per_socket.
  static std::vector<SocketCpu> ConsecutiveSockets(int sockets,
                                                   int cpus_per_socket);

  std::string_view name() const override { return "nehalemex-direct"; }
  absl::Status Program(const ProgramRequest& request) override;
  const std::vector<CounterPlacement>& read_plan() const override {
    return read_plan_;
  }
  absl::Status TakeSnapshot(Snapshot* out) override;
  absl::Status Release() override;
  uint64_t frozen_ns() const override {
    return frozen_ns_.load(std::memory_order_relaxed);
  }

  // The kernel PMU name of read-plan entry `entry`: "uncore_cbox_3".
  std::string EntryName(size_t entry) const;
  nehalemex::BoxType EntryBox(size_t entry) const;
  Variant variant() const { return variant_; }
  bool programmed() const { return programmed_; }
  // The writes the last successful Program performed, in order.
  const std::vector<Write>& program_writes() const { return program_writes_; }

 private:
  struct Saved {
    int socket = 0;
    int cpu = 0;
    uint32_t msr = 0;
    uint64_t original = 0;
    bool written = false;
    bool guard = false;    // an S/M MM_CFG (restored around MATCH/MASK)
    bool global = false;   // U_MSR_PMON_GLOBAL_CTL
    bool trigger = false;  // a value with write-1 triggers masked off
    std::string name;
  };
  struct SocketState {
    int socket = 0;
    int cpu = 0;
    uint64_t enabled = 0;   // U_MSR_PMON_GLOBAL_CTL as Program left it
    uint64_t disabled = 0;  // ... with en_all cleared
    std::mutex mu;
    std::vector<registers::MsrRead> reads;  // guarded by mu
    std::vector<int> entries;               // read-plan index per read
  };
  struct CounterState {
    uint64_t last_raw = 0;  // guarded by the socket's mu
    uint64_t total = 0;
  };
  class Plan;

  absl::Status RestoreSaved();

  registers::RegisterSpace* space_;
  Variant variant_;
  std::vector<SocketCpu> socket_cpus_;

  bool programmed_ = false;
  std::vector<CounterPlacement> read_plan_;
  std::vector<nehalemex::BoxType> entry_box_;
  std::vector<Saved> saved_;
  std::vector<Write> program_writes_;
  std::vector<std::unique_ptr<SocketState>> sockets_;
  std::vector<CounterState> counters_;  // per read-plan entry
  std::atomic<uint64_t> frozen_ns_{0};
};

}  // namespace uncore::devices

#endif  // UNCORE_SDK_DEVICES_NEHALEMEX_NEHALEMEX_DEVICE_H_
