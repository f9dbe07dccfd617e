// RegisterProgram: what the generic register engine (register_engine.h)
// executes, for any platform.  A platform's planner turns a ProgramRequest
// into one: per socket, the registers to save (and how to tell that another
// agent uses them), the ordered setup writes, the two writes that open and
// close a snapshot window, the counters to read, and the ordered release
// sequence.  Nothing here knows a box, an event or a platform: IvyTown's
// planner (platforms/ivytown/device/program_plan.h) and the Xeon 7500's
// (NehalemExDevice::Plan, platforms/nehalemex/device/nehalemex_device.h) both speak
// it.
//
//   RegisterProgram program;
//   SocketProgram& s = program.sockets.emplace_back();
//   s.socket = 0;
//   s.cpu = 0;
//   const RegisterRef global = Msr(0, 0, 0xC00);
//   s.saved.push_back({.reg = global, .name = "GLOBAL_CTL", .group = -1});
//   // Derived value: keep bits 14:0 of what the register held, set bit 31.
//   s.setup.push_back({.reg = global, .set = 1ull << 31, .keep = 0x7FFF,
//                      .name = "GLOBAL_CTL", .why = "freeze"});
//   ...
//   s.open_window = {.reg = global, .set = 1ull << 31, .keep = 0x7FFF, ...};
//   s.reads.push_back({.entry = 0, .reg = Msr(0, 0, 0xD16), .width = 44});
//
// Values: every write is `(saved & keep) | set`, where `saved` is what the
// register held before Program (a write with `keep != 0` needs its register
// in `saved`).  That is how a platform keeps bits it does not own (IvyTown's
// pmi_core_sel, the Xeon 7500's other boxes' ctr_en) without the engine
// knowing which they are.
//
// Restore groups: a setup write touches its `group` (or, with -1, only its
// socket).  On failure and on Release the engine runs the socket's release
// steps for every socket touched; a step that restores a saved register, or
// a write with a group, runs only when that group was touched.  A platform
// whose writes reset whole boxes (IvyTown's rst_ctrl) puts a box's registers
// in one group; one that touches registers one by one (the Xeon 7500) gives
// each register its own group.
//
// Guarantees: plain values; `Resolve` and `Location` are pure.
#ifndef UNCORE_SDK_DEVICES_ENGINE_REGISTER_PROGRAM_H_
#define UNCORE_SDK_DEVICES_ENGINE_REGISTER_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sdk/devices/device.h"
#include "sdk/platforms/common/access_space.h"
#include "sdk/registers/register_space.h"

namespace uncore::devices::engine {

// One register the engine reads or writes.  PCI registers are 32 bits
// wide: a 48-bit PCI counter is read as two dwords (low at `address`, high
// at `address + 4`).
struct RegisterRef {
  int socket = 0;
  platforms::AccessSpace space = platforms::AccessSpace::kMsr;
  int cpu = 0;                  // MSR: a CPU of the socket
  registers::PciAddress pci{};  // PCI: the function
  uint32_t address = 0;         // MSR number, or config-space offset

  // "MSR 0x0d70" or "PCI D16:F4 +0x0d8 (0000:7f:10.4)".
  std::string Location() const;
  bool SameRegister(const RegisterRef& other) const;
};

RegisterRef Msr(int socket, int cpu, uint32_t address);
RegisterRef Pci(int socket, const registers::PciAddress& fn, uint32_t offset);

// One write with its value resolved: what Program performed, or what a
// platform's `describe --registers` shows.
struct RegisterWrite {
  RegisterRef reg;
  uint64_t value = 0;
  std::string name;  // the manual's register name and the instance:
                     // "Cn_MSR_PMON_CTL0 (CBo3)", "S1_MSR_MM_CFG"
  std::string why;   // the step of the platform's sequence and its reason
  int group = -1;    // the restore group it touches; -1: socket-wide
};

// One write of a program: value `(saved & keep) | set`.
struct ProgramWrite {
  RegisterRef reg;
  uint64_t set = 0;
  uint64_t keep = 0;
  std::string name;
  std::string why;
  int group = -1;

  // The value, given what the register held before Program.
  uint64_t Resolve(uint64_t saved) const { return (saved & keep) | set; }
};

// A register read (in order) before anything is written, so that it can be
// restored.
struct SavedRegister {
  RegisterRef reg;
  std::string name;
  int group = -1;  // restored when this group was touched
  // Bits written back on restore (write-one triggers are masked off).
  uint64_t restore_mask = ~uint64_t{0};
  // Another agent counts with these registers when any of these bits is set
  // ("en is set"): Program refuses unless forced.
  uint64_t in_use_bits = 0;
  std::string in_use_reason;  // "en is set"
  std::string owner;          // "CBo3 on socket 0", for the message
};

// One counter a snapshot reads.
struct CounterRead {
  int entry = 0;  // read-plan index
  RegisterRef reg;
  uint8_t width = 48;
  uint64_t initial = 0;  // the data register's value when counting starts
  // The most the event may add per clock: with the assumed clock it gives
  // the wrap period, and the background extender reads within it.
  double max_increment_per_cycle = 1;
};

// A step of the release sequence.
struct ReleaseStep {
  enum class Kind : uint8_t {
    kWrite,    // `write` (when its group, or with -1 its socket, was touched)
    kRestore,  // saved[`saved`] back, masked (when its group was touched)
  };
  Kind kind = Kind::kWrite;
  ProgramWrite write;
  int saved = -1;
};

struct SocketProgram {
  int socket = 0;
  int cpu = 0;
  std::vector<SavedRegister> saved;
  std::vector<ProgramWrite> setup;
  // A snapshot: open_window, read every counter of `reads`, close_window.
  ProgramWrite open_window;
  ProgramWrite close_window;
  std::vector<CounterRead> reads;
  std::vector<ReleaseStep> release;

  // Adds `r` unless a register at the same place is already saved; returns
  // its index in `saved`.
  int Save(SavedRegister r);
  // The index of the saved register at `reg`, or -1.
  int FindSaved(const RegisterRef& reg) const;
  ReleaseStep& Restore(int saved_index);
  ReleaseStep& ReleaseWrite(ProgramWrite w);
};

struct RegisterProgram {
  std::vector<SocketProgram> sockets;
  std::vector<CounterPlacement> read_plan;
};

// The setup writes of every socket with their values resolved, as if each
// register held `saved(socket index, saved index)` before Program (a
// register that is not saved resolves against 0).
template <typename SavedValue>
std::vector<RegisterWrite> ResolveSetup(const RegisterProgram& program,
                                        SavedValue&& saved) {
  std::vector<RegisterWrite> out;
  for (size_t si = 0; si < program.sockets.size(); ++si) {
    const SocketProgram& s = program.sockets[si];
    for (const ProgramWrite& w : s.setup) {
      const int k = s.FindSaved(w.reg);
      const uint64_t before = k < 0 ? 0 : saved(si, static_cast<size_t>(k));
      out.push_back({.reg = w.reg,
                     .value = w.Resolve(before),
                     .name = w.name,
                     .why = w.why,
                     .group = w.group});
    }
  }
  return out;
}

}  // namespace uncore::devices::engine

#endif  // UNCORE_SDK_DEVICES_ENGINE_REGISTER_PROGRAM_H_
