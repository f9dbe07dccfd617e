// NehalemExDevice: the direct backend for the Xeon 7500 (Nehalem-EX) and
// Xeon E7 (Westmere-EX) uncore: the generic register engine
// (engine/register_engine.h) with the 7500's planner, which turns events
// into the guide's sequences for the MSR PMON boxes.  Runs over any
// RegisterSpace (the simulator sim::NehalemExUncore, or the Linux MSR
// space).
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
//   The background extender (RegisterEngine::Options) reads every counter
//   at least once a minute, so no 48-bit wrap is missed.  The space must
//   outlive the device.  Never prints, exits or throws.
#ifndef UNCORE_SDK_PLATFORMS_NEHALEMEX_DEVICE_NEHALEMEX_DEVICE_H_
#define UNCORE_SDK_PLATFORMS_NEHALEMEX_DEVICE_NEHALEMEX_DEVICE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/engine/register_engine.h"
#include "sdk/platforms/nehalemex/model/box_descriptors.h"
#include "sdk/registers/register_space.h"

namespace uncore::devices {

class NehalemExDevice : public engine::RegisterEngine {
 public:
  using Variant = nehalemex::Variant;
  using Options = engine::RegisterEngine::Options;

  // A socket and the CPU whose MSR file reaches its uncore.
  struct SocketCpu {
    int socket = 0;
    int cpu = 0;
  };

  NehalemExDevice(registers::RegisterSpace* space, Variant variant,
                  std::vector<SocketCpu> sockets);
  NehalemExDevice(registers::RegisterSpace* space, Variant variant,
                  std::vector<SocketCpu> sockets, Options options);

  // Sockets 0..n-1, socket s on CPU s * cpus_per_socket.
  static std::vector<SocketCpu> ConsecutiveSockets(int sockets,
                                                   int cpus_per_socket);

  std::string_view name() const override { return "nehalemex-direct"; }

  // The kernel PMU name of read-plan entry `entry`: "uncore_cbox_3".
  std::string EntryName(size_t entry) const;
  nehalemex::BoxType EntryBox(size_t entry) const;
  Variant variant() const { return variant_; }

 protected:
  absl::StatusOr<engine::RegisterProgram> Plan(
      const ProgramRequest& request) override;

 private:
  Variant variant_;
  std::vector<SocketCpu> socket_cpus_;
  std::vector<nehalemex::BoxType> entry_box_;  // per read-plan entry
};

}  // namespace uncore::devices

#endif  // UNCORE_SDK_PLATFORMS_NEHALEMEX_DEVICE_NEHALEMEX_DEVICE_H_
