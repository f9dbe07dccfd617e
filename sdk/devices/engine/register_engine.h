// RegisterEngine: the one engine that programs and reads uncore registers
// directly, for every platform with a register model.  A platform supplies
// only its planner (ProgramRequest -> RegisterProgram, register_program.h);
// the engine saves, checks for other agents, writes, rolls back, opens and
// closes snapshot windows, extends counters to 64 bits and restores, the
// same way for IvyTown (IvyTownDevice) and the Xeon 7500 / E7
// (NehalemExDevice), over any RegisterSpace (a simulator, the allow-list
// guard over Linux's MSR and PCI files).
//
//   class MyPlatformDevice : public engine::RegisterEngine {
//    public:
//     explicit MyPlatformDevice(registers::RegisterSpace* space)
//         : RegisterEngine(space, {}) {}
//     std::string_view name() const override { return "my-direct"; }
//    protected:
//     absl::StatusOr<engine::RegisterProgram> Plan(
//         const ProgramRequest& request) override { ... }
//   };
//   MyPlatformDevice dev(&space);
//   UNCORE_RETURN_IF_ERROR(dev.Program(request));   // Plan, then Load
//   Snapshot a(dev.read_plan().size());
//   UNCORE_RETURN_IF_ERROR(dev.TakeSnapshot(&a));
//   UNCORE_RETURN_IF_ERROR(dev.Release());          // registers as found
//
// Guarantees (docs/direct-backend.md "The engine"):
// - Load first checks the program against register_program.h's contract
//   (indices in range, every read-plan entry read once, kept bits and
//   window writes only on saved registers): Internal error otherwise,
//   nothing read or written.
// - Load reads every saved register before writing any; a failed read
//   writes nothing.  A saved register with an in-use bit set (another agent
//   counts) refuses the program unless `force`, naming each register.
// - Setup writes run in the program's order.  When one fails, the release
//   steps of every touched socket and group run (a group is touched from
//   the moment a write to it is attempted: a failed write may have landed),
//   and the error names the step ("programming step 7 of 40 failed: ...;
//   every register written so far was restored").
// - A snapshot is, per socket, one window: the open write, every counter
//   read (MSRs in one batch, PCI counters as low then high dword), the
//   close write; the close write is made even when a read failed.  Values
//   are 64-bit: each counter's raw value is folded modulo its width, exact
//   while two reads of a counter come less than one wrap apart, which the
//   background extender (Options) guarantees.
// - TakeSnapshot and ExtendNow are safe from many threads at once (one lock
//   per socket); Program, Load and Release are not safe with each other or
//   with snapshots.  Release runs every socket's release steps; safe to
//   call twice.  The space must outlive the engine.  Never prints, exits or
//   throws.
#ifndef UNCORE_SDK_DEVICES_ENGINE_REGISTER_ENGINE_H_
#define UNCORE_SDK_DEVICES_ENGINE_REGISTER_ENGINE_H_

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
#include "sdk/devices/engine/register_program.h"
#include "sdk/registers/register_space.h"

namespace uncore::devices::engine {

class RegisterEngine : public Device {
 public:
  struct Options {
    // Run ExtendNow on a thread every extender_period() while programmed.
    bool background_extender = true;
    // With each counter's width and largest increment per clock, gives the
    // shortest wrap period; the extender runs `wrap_fraction` of it.
    double assumed_max_clock_hz = 5e9;
    double wrap_fraction = 0.25;
  };

  RegisterEngine(registers::RegisterSpace* space, Options options);
  ~RegisterEngine() override;
  RegisterEngine(const RegisterEngine&) = delete;
  RegisterEngine& operator=(const RegisterEngine&) = delete;

  // Plans the request with the platform's planner and loads the program.
  absl::Status Program(const ProgramRequest& request) override;
  // Executes a planned program (see the guarantees above).  `force`: take
  // registers another agent appears to use.
  absl::Status Load(RegisterProgram program, bool force);

  const std::vector<CounterPlacement>& read_plan() const override {
    return program_.read_plan;
  }
  absl::Status TakeSnapshot(Snapshot* out) override;
  absl::Status Release() override;
  uint64_t frozen_ns() const override {
    return frozen_ns_.load(std::memory_order_relaxed);
  }

  // Reads every counter once (a snapshot window that only folds the raw
  // values into the 64-bit totals).  What the background extender runs.
  absl::Status ExtendNow();

  bool programmed() const { return programmed_; }
  // The writes the last successful Load performed, in order.
  const std::vector<RegisterWrite>& program_writes() const {
    return program_writes_;
  }
  // How often the extender runs for the loaded counters (0 when nothing is
  // loaded).
  std::chrono::nanoseconds extender_period() const { return period_; }
  // The first error the background extender met since Load, or OK.
  absl::Status extender_status() const;

 protected:
  // The platform's planner.  Pure: reads no register.
  virtual absl::StatusOr<RegisterProgram> Plan(
      const ProgramRequest& request) = 0;
  registers::RegisterSpace* space() const { return space_; }

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
    RegisterRef open_reg;
    RegisterRef close_reg;
    uint64_t open = 0;   // resolved open_window value
    uint64_t close = 0;  // resolved close_window value
    std::string open_name;
    std::string close_name;
    std::mutex mu;
    std::vector<registers::MsrRead> msr_reads;  // guarded by mu
    std::vector<int> msr_entries;               // read-plan index per read
    std::vector<PciCounter> pci;
    std::vector<int> entries;  // every read-plan index on this socket
  };

  absl::Status Read(const RegisterRef& ref, uint64_t* value);
  absl::Status Write(const RegisterRef& ref, uint64_t value);
  absl::Status WriteLogged(const RegisterRef& ref, uint64_t value,
                           const std::string& name, std::string_view why);
  // The value `w` resolves to on socket `si`.
  uint64_t Resolved(size_t si, const ProgramWrite& w) const;
  // Runs the release steps of the touched sockets and groups.
  absl::Status RunRelease(const std::vector<bool>& sockets,
                          const std::vector<bool>& groups);
  bool GroupTouched(const std::vector<bool>& groups, int group) const;
  // One window; copies totals into `out` if non-null.
  absl::Status SampleSocket(SocketState& s, Snapshot* out);
  void Clear();
  void StartExtender();
  void StopExtender();
  void ExtenderLoop();

  registers::RegisterSpace* space_;
  Options options_;

  bool programmed_ = false;
  RegisterProgram program_;
  std::vector<std::vector<uint64_t>> saved_values_;  // per socket, per saved
  int num_groups_ = 0;
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

}  // namespace uncore::devices::engine

#endif  // UNCORE_SDK_DEVICES_ENGINE_REGISTER_ENGINE_H_
