// DirectDevice: the direct backend.  Programs the IvyTown uncore PMON boxes
// with the manual's own register sequences over a RegisterSpace, and takes
// snapshots by freezing every box of a socket at once.
//
//   machine::Topology topo = ...;                 // or SimulatedTopology(1)
//   machine::AllowListGuard guard(&linux_space);  // production
//   devices::DirectDevice dev(&guard, topo);        // the space is not owned
//   ProgramRequest req;
//   req.events.push_back(*spec::ParseEventSpec("imc/CAS_COUNT.RD"));
//   UNCORE_RETURN_IF_ERROR(dev.Program(req));
//   Snapshot a(dev.read_plan().size()), b(dev.read_plan().size());
//   UNCORE_RETURN_IF_ERROR(dev.TakeSnapshot(&a));
//   ... the measured phase ...
//   UNCORE_RETURN_IF_ERROR(dev.TakeSnapshot(&b));
//   uint64_t reads = b.values[0] - a.values[0];   // 64-bit, never wraps
//   UNCORE_RETURN_IF_ERROR(dev.Release());        // registers as found
//
// Program (see program_plan.h for the exact write order): validates and
// resolves the request (bipartite counter matching, shared filters), then
// READS every register it will change on each used box instance: the box
// control, every counter control (all of the box's counters, since the box
// reset clears them all), the fixed counter control, the filter registers,
// every counter's data register, and U_MSR_PMON_GLOBAL_CTL.
//   "In use" test: a box instance is in use by another agent when any of
//   its counter controls or its fixed counter control has the enable bit
//   (en) set, or its box control reads with frz set (someone froze it to
//   read it).  Filter and data registers are not looked at: agents leave
//   them behind when they stop, and they count nothing without en.  The
//   global control is not looked at either (perf's uncore driver never
//   writes it); its pmi_core_sel and wk_on_pmi bits are kept.
// In use → FailedPrecondition naming the box, instance, register and value,
// unless request.force.  Then the setup writes, and on any failure every
// register of every box instance touched so far (and of the global control)
// is written back with its saved value, in reverse order, and the error is
// returned.  Release restores the same saved values.  Data registers are
// restored too, so the machine is left as found (the counts an agent had
// at Program time).  U_MSR_PMON_GLOBAL_CTL's freeze state cannot be read
// (frz_all and unfrz_all are write-only triggers), so restoring it writes
// the kept bits with unfrz_all: the state after reset, and the one every
// other agent expects.
//
// Snapshots: per socket, one window of U_MSR_PMON_GLOBAL_CTL.frz_all, the
// counter reads (MSR: one read each, through ReadMsrBatch when there are
// several; PCI: the low and then the high dword), and unfrz_all: exactly 2
// writes per socket, 1 read per MSR counter and 2 per PCI counter.
//   Concurrency: the window is serialised per socket by a std::mutex.  The
//   freeze is one global state per socket, not a nesting count: with two
//   windows overlapping, the first unfrz_all restarts the counters while the
//   second is still reading (and a PCI counter read as two dwords can then
//   tear).  A lock-free reference count cannot fix that: the thread that
//   takes the count from 0 to 1 has not yet written frz_all when a second
//   thread sees the count at 1 and starts reading, and the last one out
//   cannot unfreeze atomically with a newcomer's increment.  Every scheme
//   that is correct makes a reader wait for the freeze to be in force, which
//   is a lock.  The window is a few register accesses, so contention is
//   short.
//   Width extension: the hardware counters are 44 or 48 bits.  Per counter
//   the device keeps the last raw value and a 64-bit total, updated under
//   the same per-socket lock with WidthAwareDelta, so snapshot values are
//   monotonic 64-bit counts.  They are exact while some read of the counter
//   happens at least once per wrap period.  We chose a background extender
//   over overflow status: CBo and IRP counters have no ov_en and the CBo no
//   box status (notes/decisions.md #1, #7), and ov_en would also freeze the
//   whole socket on every wrap.  The extender thread (started by Program,
//   stopped by Release) runs ExtendNow every `extender_period()`: a fraction
//   (Options::wrap_fraction, 1/4) of the shortest wrap time of the used
//   counters at their box's (or event's) maximum increment per cycle and an
//   assumed maximum clock (Options::assumed_max_clock_hz, 5 GHz, above any
//   IvyTown uncore clock).  E.g. an IRP or R3QPI counter (44 bits, 255 per
//   cycle) wraps after at least 13.8 s, so the extender runs every 3.4 s.
//   Time frozen: CLOCK_MONOTONIC around each window, summed in frozen_ns().
//   A failed access → Snapshot::valid = false, every value zeroed, and the
//   error returned; the unfreeze is still written when the freeze was.
//   TakeSnapshot allocates nothing when out->values already has
//   read_plan().size() entries (the space's own ReadMsrBatch aside).
//
// Sampling (ProgramOptions::samples, manual §2.1.2 e): the counter is
// preloaded with 2^width - interval and ov_en set, so the socket freezes
// when it overflows.  Note that a later TakeSnapshot unfreezes the socket.
//
// Guarantees: TakeSnapshot and ExtendNow are safe from many threads at once;
// Program and Release are not safe with each other or with snapshots.  The
// space must outlive the device; the destructor calls Release.  Never
// prints, exits or throws.
#ifndef UNCORE_SDK_DEVICES_DIRECT_DIRECT_DEVICE_H_
#define UNCORE_SDK_DEVICES_DIRECT_DIRECT_DEVICE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/direct/program_plan.h"
#include "sdk/registers/register_space.h"
#include "sdk/machine/topology.h"

namespace uncore::devices {

using direct::ProgramOptions;
using direct::RegisterWrite;
using direct::SampleInterval;

class DirectDevice : public Device {
 public:
  struct Options {
    // Run ExtendNow on a thread every extender_period() while programmed.
    bool background_extender = true;
    double assumed_max_clock_hz = 5e9;
    double wrap_fraction = 0.25;
  };

  DirectDevice(registers::RegisterSpace* space, machine::Topology topology);
  DirectDevice(registers::RegisterSpace* space, machine::Topology topology,
               Options options);
  ~DirectDevice() override;
  DirectDevice(const DirectDevice&) = delete;
  DirectDevice& operator=(const DirectDevice&) = delete;

  std::string_view name() const override { return "direct"; }
  absl::Status Program(const ProgramRequest& request) override;
  absl::Status Program(const ProgramRequest& request,
                       const ProgramOptions& options);
  const std::vector<CounterPlacement>& read_plan() const override {
    return plan_.read_plan;
  }
  absl::Status TakeSnapshot(Snapshot* out) override;
  absl::Status Release() override;
  uint64_t frozen_ns() const override {
    return frozen_ns_.load(std::memory_order_relaxed);
  }

  // The exact ordered writes Program would perform for `request` (with the
  // global control's kept bits taken as 0), without touching a register.
  absl::StatusOr<std::vector<RegisterWrite>> PlanWrites(
      const ProgramRequest& request, const ProgramOptions& options = {}) const;

  // Reads every counter once (a snapshot window that only folds the raw
  // values into the 64-bit totals).  What the background extender runs.
  absl::Status ExtendNow();

  bool programmed() const { return programmed_; }
  // The writes the last successful Program performed, in order.
  const std::vector<RegisterWrite>& program_writes() const {
    return program_writes_;
  }
  // How often the extender runs for the programmed counters (0 when not
  // programmed).
  std::chrono::nanoseconds extender_period() const { return period_; }
  // The first error the background extender met since Program, or OK.
  absl::Status extender_status() const;

 private:
  // Per read-plan entry: 64-bit extension state, guarded by its socket's mu.
  struct CounterState {
    uint64_t last_raw = 0;
    uint64_t total = 0;
    uint8_t width = 48;
  };
  struct PciCounter {
    registers::PciAddress fn;
    uint32_t offset = 0;  // low dword; high at +4
    int entry = 0;        // read-plan index
    uint64_t raw = 0;     // last read, guarded by the socket's mu
    bool ok = false;
  };
  struct SocketState {
    int socket = 0;
    int cpu = 0;
    uint64_t freeze = 0;    // global control value with frz_all
    uint64_t unfreeze = 0;  // ... with unfrz_all
    std::mutex mu;
    std::vector<registers::MsrRead> msr_reads;  // guarded by mu
    std::vector<int> msr_entries;               // read-plan index per read
    std::vector<PciCounter> pci;
    std::vector<int> entries;  // every read-plan index on this socket
  };
  struct SavedRegister {
    direct::RegisterRef ref;
    uint64_t value = 0;
    std::string name;
  };
  struct SavedInstance {
    std::vector<SavedRegister> regs;  // in restore order
  };

  absl::Status Read(const direct::RegisterRef& ref, uint64_t* value);
  absl::Status Write(const direct::RegisterRef& ref, uint64_t value);
  absl::Status WriteLogged(const RegisterWrite& w);
  // Saves the registers of plan_.instances[g] into saved_[g].
  absl::Status SaveInstance(int g, std::string* in_use);
  // Restores sockets/instances; `groups` true where an instance is to be
  // restored; sockets in `sockets` get freeze ... restore ... unfreeze.
  absl::Status Restore(const std::vector<bool>& sockets,
                       const std::vector<bool>& groups);
  // One freeze-read-unfreeze window; copies totals into `out` if non-null.
  absl::Status SampleSocket(SocketState& s, Snapshot* out);
  void StartExtender();
  void StopExtender();
  void ExtenderLoop();

  registers::RegisterSpace* space_;
  machine::Topology topology_;
  Options options_;

  bool programmed_ = false;
  direct::ProgramPlan plan_;
  std::vector<uint64_t> keep_;  // per plan socket: kept global control bits
  std::vector<uint64_t> saved_global_;  // per plan socket, as read
  std::vector<SavedInstance> saved_;    // per plan instance
  std::vector<RegisterWrite> program_writes_;
  std::vector<std::unique_ptr<SocketState>> sockets_;
  std::vector<CounterState> counters_;  // per read-plan entry
  std::atomic<uint64_t> frozen_ns_{0};

  std::chrono::nanoseconds period_{0};
  std::thread extender_;
  mutable std::mutex extender_mu_;
  std::condition_variable extender_cv_;
  bool extender_stop_ = false;    // guarded by extender_mu_
  absl::Status extender_status_;  // guarded by extender_mu_
};

}  // namespace uncore::devices

#endif  // UNCORE_SDK_DEVICES_DIRECT_DIRECT_DEVICE_H_
