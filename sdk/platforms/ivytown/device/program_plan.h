// Program plan: IvyTown's planner for the generic register engine
// (engine/register_engine.h).  Turns a ProgramRequest and a Topology into
// the resolved plan (every event on a socket, box instance and counter; the
// filter values of each instance; the flat read plan), into the exact
// ordered register writes that program it, and into the engine's
// RegisterProgram (ToRegisterProgram).  Nothing here touches a register:
// the engine reads, writes and restores.
//
//   ProgramRequest request;
//   request.events.push_back(
//       *spec::ParseEventSpec("cbo[3]/LLC_VICTIMS.M_STATE"));
//   absl::StatusOr<ProgramPlan> plan =
//       BuildProgramPlan(request, {},
//                        machine::SimulatedTopology(ivytown::Record(), 1));
//   std::vector<RegisterWrite> writes = ProgramWrites(*plan, {});
//   // writes[0]: U_MSR_PMON_GLOBAL_CTL <- 0x80000000 (freeze all)
//   // writes[1]: Cn_MSR_PMON_BOX_CTL (CBo3) MSR 0xd64 <- 0x00030003 (reset)
//   // ... Cn_MSR_PMON_CTL0 (CBo3) MSR 0xd70 <- 0x00400137 ...
//   // last:      U_MSR_PMON_GLOBAL_CTL <- 0x20000000 (unfreeze all)
//
// Setup order (manual §2.1.2, with the box reset first: rst_ctrl zeroes the
// control registers, so the manual's order b, c, d would erase b and c; see
// the digest's §8 item 9), per socket:
//   a  U_MSR_PMON_GLOBAL_CTL.frz_all
//   d  every used box: BOX_CTL = rst_ctrl | rst_ctrs | must-write-one bits
//      (the U-Box has no box control: its counters are reset in step e)
//   c  every filter register of every used box instance (0 where no event
//      sets a bit, so no stale filter from an earlier user applies)
//   b/c every used counter control (EncodeEvent's value, en set; ov_en too
//      for a sampled event), every used fixed counter control
//   e  every used counter's data register: 0, or 2^width - interval for a
//      sampled event (PCI counters: low dword, then high dword); for a
//      sampled event also clear its stale overflow bits (BOX_STATUS and
//      GLOBAL_STATUS, write-one-to-clear, §2.1.4 b)
//   f  U_MSR_PMON_GLOBAL_CTL.unfrz_all
// The global control's pmi_core_sel and wk_on_pmi bits are kept as read
// (`GlobalKeepBits`); ProgramWrites is given them per socket.
//
// Guarantees: pure functions; allocation only in the results.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_PROGRAM_PLAN_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_PROGRAM_PLAN_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/engine/register_program.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/registers/register_space.h"

namespace uncore::devices::direct {

// Registers and writes are the generic engine's (register_program.h).
using engine::RegisterRef;
using engine::RegisterWrite;

// Sampling (manual §2.1.2 e): preload the event's counters with
// 2^width - interval and set ov_en, so the counter overflows after
// `interval` events and the U-Box freezes every box of the socket (§2.1.1).
// Boxes without ov_en (CBo, IRP) cannot be sampled.
struct SampleInterval {
  int event = 0;          // index into ProgramRequest::events
  uint64_t interval = 0;  // 1 .. 2^width
};

// Options of the direct backend beyond the backend-neutral ProgramRequest.
struct ProgramOptions {
  std::vector<SampleInterval> samples;
};

// One used counter of a box instance.
struct PlannedCounter {
  int event = 0;         // index into ProgramRequest::events
  int counter = 0;       // general counter index, or kFixedCounter
  uint64_t control = 0;  // counter (or fixed) control value, en set
  uint64_t initial = 0;  // data register value at start: 0 or the preload
  uint8_t width = 48;
  bool sampled = false;
  // The most the event adds per clock (the box's and the event's own
  // statement): with the width, the counter's wrap period.
  double max_increment_per_cycle = 1;
};

// A box instance on a socket, with the registers the engine may touch.
struct PlannedInstance {
  int socket = 0;
  int cpu = 0;  // MSR boxes: the CPU addressing the socket
  const ivytown::BoxDescriptor* box = nullptr;
  int instance = 0;
  std::optional<registers::PciAddress> pmon;  // PCI boxes
  std::optional<registers::PciAddress> aux;   // QPI mask/match, if found
  // General counters in counter order, then the fixed counter (if used).
  std::vector<PlannedCounter> counters;
  // Every filter register the engine can reach (MSR, the PMON function, or
  // an auxiliary function the topology found), with its programmed value.
  struct Filter {
    int filter = 0;  // index into BoxDescriptor::filters
    uint64_t value = 0;
  };
  std::vector<Filter> filters;

  std::string InstanceName() const;  // "CBo3", "iMC0 channel 1"

  // ---- register addresses, from the descriptor ----
  std::optional<RegisterRef> BoxControl() const;
  std::optional<RegisterRef> BoxStatus() const;
  RegisterRef CounterControl(int counter) const;  // or kFixedCounter
  // The data register: one ref (MSR) or low and high dword (PCI).
  std::vector<RegisterRef> CounterData(int counter) const;
  RegisterRef FilterRegister(int filter) const;
  std::string RegisterName(std::string_view what) const;  // "CTL0", ...
};

// The manual-style name prefix of each box type's registers ("Cn_MSR_PMON_"),
// BoxDescriptor::register_prefix.
std::string_view RegisterPrefix(ivytown::BoxType box);

struct ProgramPlan {
  struct Socket {
    int socket = 0;
    int cpu = 0;
  };
  std::vector<Socket> sockets;
  // Socket-major, then box type, then instance.
  std::vector<PlannedInstance> instances;
  // Event-major: for each event, each socket, each instance.
  std::vector<CounterPlacement> read_plan;
  // read_plan[i] is instances[read_source[i].first].counters[.second].
  std::vector<std::pair<int, int>> read_source;
};

// Validates the request and resolves it.  InvalidArgument for a generic perf
// event (use the perf backend), an unknown socket or instance, too many
// events for a box instance (naming the box, the events and the counters
// each may use), two events needing one filter register set differently, or
// a bad sample interval.
absl::StatusOr<ProgramPlan> BuildProgramPlan(const ProgramRequest& request,
                                             const ProgramOptions& options,
                                             const machine::Topology& topology);

// The bits of U_MSR_PMON_GLOBAL_CTL that setup keeps as found (pmi_core_sel,
// wk_on_pmi); frz_all and unfrz_all are write-only triggers.
uint64_t GlobalKeepBits(uint64_t global_control);

// The global control register of `socket` on `cpu`.
RegisterRef GlobalControl(int socket, int cpu);
RegisterRef GlobalStatus(int socket, int cpu);

// The exact ordered setup writes (see the order above).  `keep[i]` is
// GlobalKeepBits of sockets[i]'s global control as read (empty: all 0).
std::vector<RegisterWrite> ProgramWrites(const ProgramPlan& plan,
                                         std::span<const uint64_t> keep);

// The plan as the generic engine's program (register_program.h): the
// registers to save (each instance one restore group), ProgramWrites' setup
// with the global control's kept bits as `keep`, the freeze window, the
// reads and the release sequence (freeze, every instance back, unfreeze).
engine::RegisterProgram ToRegisterProgram(const ProgramPlan& plan);

// BuildProgramPlan, then ToRegisterProgram: the IvyTown planner of
// IvyTownDevice.
absl::StatusOr<engine::RegisterProgram> BuildRegisterProgram(
    const ProgramRequest& request, const ProgramOptions& options,
    const machine::Topology& topology);

// What ProgramWrites gives for `request` on `topology`, with the global
// control assumed 0: what `uncore describe --registers` shows.
absl::StatusOr<std::vector<RegisterWrite>> PlanWrites(
    const ProgramRequest& request, const machine::Topology& topology,
    const ProgramOptions& options = {});

}  // namespace uncore::devices::direct

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_PROGRAM_PLAN_H_
