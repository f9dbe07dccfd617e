// IvyTownUncore: an in-memory IvyTown uncore that answers the same MSR and
// PCI-config accesses as the hardware, and counts injected traffic the way
// the manual (Intel 329468-002) says the PMON counters do.
//
//   uncore::sim::IvyTownUncore sim(/*sockets=*/1);
//   registers::RegisterSpace& space = sim;      // what the SDK programs
//   // ... program iMC0 channel 0 CTR0 with CAS_COUNT.RD (0x04, umask 0x03)
//   IvyTownUncore::Traffic t{.box = ivytown::BoxType::kImc, .instance = 0,
//                              .code = 0x04, .umask = 0x01};
//   UNCORE_RETURN_IF_ERROR(sim.Inject(/*socket=*/0, t, /*per_cycle=*/2,
//                                     /*cycles=*/100));   // counts 200
//   sim.Tick(/*socket=*/0, 1000);                // UCLK/DCLK, CLOCKTICKS
//
// Every address is computed from the box descriptors (sdk/platforms/ivytown) and the
// topology (machine::SimulatedTopology): there is no per-box register
// table here.  The modelling rules, each with its manual line, are in
// simulated_uncore.cc; the decisions where the manual is silent are listed
// in the comment block "Simulator decisions" there.
//
// Guarantees: never prints, exits or throws.  Unknown registers answer
// NotFound on read and write.  Thread-safe: every socket has its own mutex;
// every public method locks the socket(s) it touches, so any number of
// threads may read, write, inject and tick at once.  The PCI read hook (see
// SetPciReadHook) runs with no lock held.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_SIM_IVYTOWN_UNCORE_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_SIM_IVYTOWN_UNCORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/registers/register_space.h"

namespace uncore::sim {

class IvyTownUncore : public registers::RegisterSpace {
 public:
  // One stream of event occurrences.  A counter counts a stream when the
  // stream's (code, extended) equal its (event, ext), the umasks intersect
  // (or both are 0), and every filter the event depends on matches.
  struct Traffic {
    ivytown::BoxType box = ivytown::BoxType::kUbox;
    int instance = 0;
    uint8_t code = 0;
    bool extended = false;
    uint8_t umask = 0;  // the sub-event bits this traffic belongs to
    // Attributes the box filters look at; unset matches nothing that
    // filters on it (a QPI packet word whose mask is 0 is not looked at).
    //   opcode:         CBo FILTER1.opc, HA OPCODEMATCH.opc (equality)
    //   nid_mask:       CBo FILTER1.nid (bits in common)
    //   state_mask:     CBo FILTER0.state (bits in common; 0=I 1=S 2=E ...)
    //   tid:            CBo FILTER0.tid, when the counter has tid_en=1
    //   band_frequency: PCU FREQ_BANDn (>= filter_bandn), 100 MHz units
    //   address:        HA ADDRMATCH0/1 (bits 45:6 compared)
    //   qpi_packet0/1:  QPI ((packet ^ PKT_MATCHn) & PKT_MASKn) == 0
    std::optional<uint32_t> opcode = std::nullopt;
    std::optional<uint32_t> nid_mask = std::nullopt;
    std::optional<uint32_t> state_mask = std::nullopt;
    std::optional<uint32_t> tid = std::nullopt;
    std::optional<uint32_t> band_frequency = std::nullopt;
    std::optional<uint64_t> address = std::nullopt;
    std::optional<uint64_t> qpi_packet0 = std::nullopt;
    std::optional<uint64_t> qpi_packet1 = std::nullopt;
  };

  // Called at the start of every ReadPci of a counter's high dword (the
  // offset + 4 of a general or fixed counter), after the low dword was
  // read by a previous call; tests use it to advance time between the two
  // halves and show a torn read.  Runs without any lock held.
  using PciReadHook = std::function<void(
      int socket, const registers::PciAddress& fn, uint32_t offset)>;

  explicit IvyTownUncore(int sockets = 1, int cpus_per_socket = 2);
  ~IvyTownUncore() override;
  IvyTownUncore(const IvyTownUncore&) = delete;
  IvyTownUncore& operator=(const IvyTownUncore&) = delete;

  // == machine::SimulatedTopology(ivytown::Record(), sockets,
  //                               cpus_per_socket).
  const machine::Topology& topology() const { return topology_; }
  int num_sockets() const { return static_cast<int>(sockets_.size()); }
  int cpus_per_socket() const { return cpus_per_socket_; }

  // ---- RegisterSpace ----
  // MSRs are addressed by any CPU of a socket (socket = cpu /
  // cpus_per_socket); PCI registers by the topology's addresses.
  absl::Status ReadMsr(int cpu, uint32_t msr, uint64_t* value) override;
  absl::Status WriteMsr(int cpu, uint32_t msr, uint64_t value) override;
  absl::Status ReadPci(const registers::PciAddress& fn, uint32_t offset,
                       uint32_t* value) override;
  absl::Status WritePci(const registers::PciAddress& fn, uint32_t offset,
                        uint32_t value) override;

  // ---- traffic and time ----
  // Time is counted per box instance: an injection advances the clock of
  // the instance(s) it names by one cycle per injected cycle (their
  // CLOCKTICKS counters and, for the U-Box and iMC channels, the fixed
  // counter count it); other instances do not move.  Tick/TickBox advance
  // clocks with no traffic.
  //
  // `per_cycle[i]` occurrences in cycle i, the whole sequence `repeat`
  // times.  InvalidArgument for a bad socket, box instance or an empty
  // sequence.
  absl::Status Inject(int socket, const Traffic& traffic,
                      std::span<const uint64_t> per_cycle, uint64_t repeat = 1);
  // A constant `per_cycle` for `cycles` cycles.
  absl::Status Inject(int socket, const Traffic& traffic, uint64_t per_cycle,
                      uint64_t cycles);
  // Several streams at once: cycle i carries every stream's per_cycle[i]
  // (a sequence shorter than the longest counts 0 in the missing cycles);
  // every instance named by a stream advances by the longest length times
  // `repeat`.
  struct Stream {
    Traffic traffic;
    std::vector<uint64_t> per_cycle;
  };
  absl::Status InjectTogether(int socket, std::span<const Stream> streams,
                              uint64_t repeat = 1);
  // `total` occurrences spread as evenly as integers allow over `cycles`
  // cycles (the first total % cycles cycles carry one more).
  struct SpreadStream {
    Traffic traffic;
    uint64_t total = 0;
  };
  // Advances every instance of `box` by `cycles`, carrying `streams` (all of
  // which must name `box`).  What DemoTrafficModel uses.
  absl::Status InjectSpread(int socket, ivytown::BoxType box,
                            std::span<const SpreadStream> streams,
                            uint64_t cycles);
  // Advances every box's clock by `cycles`: UCLK and DCLK fixed counters,
  // and each box's CLOCKTICKS event on counters programmed with it.  No
  // other event counts (an event whose output is 1 at zero traffic, such as
  // an inverted threshold, counts too).  Unknown sockets are ignored.
  void Tick(int socket, uint64_t cycles);
  // The same for every instance of one box type (its own clock domain).
  void TickBox(int socket, ivytown::BoxType box, uint64_t cycles);

  // ---- test introspection (no side effects, no access counted) ----
  // Raw register contents; 0 for a register that does not exist.
  uint64_t PeekMsr(int socket, uint32_t msr) const;
  uint32_t PeekPci(int socket, const registers::PciAddress& fn,
                   uint32_t offset) const;
  // Full counter values (all 44/48 bits), by box descriptor coordinates.
  uint64_t PeekCounter(int socket, ivytown::BoxType box, int instance,
                       int counter) const;
  uint64_t PeekFixedCounter(int socket, ivytown::BoxType box,
                            int instance) const;
  // Whether the socket's global freeze is asserted (frz_all, or an ov_en
  // counter wrapped).
  bool GlobalFrozen(int socket) const;
  // Whether any counter of any instance of `box` on `socket` is enabled
  // (en=1, the fixed counter's too): traffic to a box that counts nothing
  // changes nothing a read would see but the edge detectors' memory of the
  // last cycle (what the demo traffic model skips).
  bool AnyCounterEnabled(int socket, ivytown::BoxType box) const;
  // Register accesses (reads + writes, MSR and PCI) so far.
  uint64_t access_count() const;

  // ---- test presets ----
  // Stores `value` into the register exactly as given (reserved bits too,
  // no side effects: no reset, no freeze, no W1C), e.g. to mark a counter
  // "in use by another agent" (en=1).  NotFound for an unknown register.
  absl::Status PresetMsr(int socket, uint32_t msr, uint64_t value);
  absl::Status PresetPci(int socket, const registers::PciAddress& fn,
                         uint32_t offset, uint32_t value);

  // Installs (or, with nullptr, removes) the PCI high-dword read hook.
  void SetPciReadHook(PciReadHook hook);

 private:
  struct Socket;   // registers and counting state of one socket
  struct Index;    // PCI function -> (socket, box, instance, aux)
  struct Plan;     // one counter's decoded programming, for an injection
  struct Segment;  // a run of cycles with constant per-stream values
  struct Scratch;  // per thread: what an injection builds, reused
  static Scratch& ThreadScratch();
  struct Target {
    ivytown::BoxType box;
    int instance;
  };

  Socket* SocketAt(int socket);
  const Socket* SocketAt(int socket) const;
  // Runs `segments` (`repeat` times) over the instances in `targets` of
  // `socket`, with `streams` as the traffic.  Locks the socket.
  void Run(Socket& socket, std::span<const Target> targets,
           std::span<const Traffic> streams, std::span<const Segment> segments,
           uint64_t repeat);
  std::shared_ptr<const PciReadHook> hook() const;

  machine::Topology topology_;
  int cpus_per_socket_ = 2;
  std::vector<std::unique_ptr<Socket>> sockets_;
  std::unique_ptr<const Index> index_;
  mutable std::mutex hook_mu_;
  std::shared_ptr<const PciReadHook> pci_read_hook_;  // guarded by hook_mu_
  std::atomic<uint64_t> accesses_{0};
};

}  // namespace uncore::sim

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_SIM_IVYTOWN_UNCORE_H_
