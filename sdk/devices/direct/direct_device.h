// DirectDevice: the direct backend.  Programs the IvyTown uncore PMON boxes
// with the manual's own register sequences over a RegisterSpace, and takes
// snapshots by freezing every box of a socket at once.
//
//   machine::Topology topo = ...;                 // or SimulatedTopology(1)
//   machine::AllowListGuard guard(&linux_space);  // production
//   devices::DirectDevice dev(&guard, topo);      // the space is not owned
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
// Guarantees: Program refuses boxes another agent uses (unless forced) and
// rolls back every write on failure; Release restores every register it
// saved.  A snapshot is one freeze window per socket (2 writes, 1 read per
// MSR counter, 2 per PCI counter); values are 64-bit and exact while the
// background extender reads each counter within its wrap period.
// TakeSnapshot and ExtendNow are safe from many threads at once; Program and
// Release are not safe with each other or with snapshots.  The space must
// outlive the device.  Never prints, exits or throws.  The whole protocol
// (in-use test, rollback, freeze windows, width extension, sampling):
// docs/direct-backend.md.
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
#include "sdk/machine/topology.h"
#include "sdk/registers/register_space.h"

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
