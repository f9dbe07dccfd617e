// IvyTownUncore: the register model and the counting engine.
//
// Manual = Intel 329468-002 (../shared/spec/ivytown-uncore-manual-329468-
// 002.txt, spaces stripped; `Lnnnn` = its line).  Every address comes from the
// box descriptors (sdk/platforms/ivytown/model/box_descriptors.h) and every field
// from their FieldDescriptors, looked up by the kernel name: no per-box tables.
//
// Simulator decisions (where the manual is silent or the model must choose):
//  S1. Box control frz (bit 8) is stored and read back: the box stays frozen
//      until frz is written 0.  The manual marks it WO (L991 "frz8WO0Freeze.
//      Ifsetto1thecountersinthisboxwillbefrozen"), but a freeze that does
//      not persist could not be undone by "clearing .frz" (§2.1.2 f).  The
//      must-write-one bits 17:16 are stored as written; rst_ctrs/rst_ctrl
//      read 0.
//  S2. rst_ctrl zeroes the box's general counter controls only; the filter
//      registers and the fixed counter's control are kept (L992 "Whensetto1,
//      theCounterControlRegisterswillberesetto0" names only those).
//      rst_ctrs zeroes the general counters only (L990); the iMC fixed
//      counter has its own rst (Table 2-75).
//  S3. A box freeze and the global freeze stop the fixed counters too (L639
//      "eachboxwilldisable(or'freeze')allofitscounters").
//  S4. No box has inv: bit 23 is reserved in every counter control
//      (decisions.md #12) and is dropped on write like any reserved bit.
//      PCU occ_invert/occ_edge act as an invert of the threshold test and an
//      edge detect (L2757 "occ_invert-Changesthe.threshtestcondition"), and
//      only on an occupancy event, i.e. while occ_sel (15:14) is non-zero
//      (decisions.md #36); occ_invert with thresh 0 has no effect.
//  S5. The edge detector sees every cycle (frozen or not, enabled or not);
//      only the increment is gated.  Writing a counter control resets it.
//  S6. A wrap sets the counter's BOX_STATUS.ov bit only when its ov_en is 1
//      (L819, L1575, L2037, L2698, L3094, L3874, L4120: "If an overflow is
//      detected from a ... counter enabled to communicate its overflow
//      (.ov_en is set to 1), the overflow bit is set at the box level"),
//      and the GLOBAL_STATUS bit with it (L631-633).  A box with no ov_en
//      field sets its bits on every wrap: the IRP's BOX_STATUS (L2460) and
//      the CBo's ov_c[14-0] (L795) could not be set otherwise
//      (decisions.md #1, #35).  Only ov_en=1 freezes the socket.  The IRP
//      has no GLOBAL_STATUS bit (decisions.md #7).
//  S7. The freeze after an ov_en wrap takes effect after the cycle whose
//      carry it was: that cycle counts, the next ones do not (the manual's
//      few cycles of delay, L640, are not modelled).
//  S8. Writing frz_all and unfrz_all together freezes.
//  S9. Umask match: traffic counts when (traffic.umask & umask) != 0 or both
//      are 0.  Filters apply when the catalog lists them for the event or for
//      the unit mask whose value equals the counter's umask exactly.  An
//      unset traffic attribute matches nothing that filters on it; a QPI
//      packet word whose mask register is 0 is not looked at.
//  S10. Time is per instance: an injection advances only the instances it
//      names (see the header).  HA q_occ_rst is accepted and reads 0 (no
//      queue state is modelled).
//  S11. PCI counters: the low dword at the counter offset, the high dword at
//      +4 (decisions.md; Table 2-41 "32x2").  Each half reads the live value.
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "fmt/format.h"
#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"
#include "sdk/platforms/ivytown/model/identity.h"

namespace uncore::sim {

using ivytown::AccessSpace;
using ivytown::BitRange;
using ivytown::BoxDescriptor;
using ivytown::BoxType;
using ivytown::FieldDescriptor;
using ivytown::FieldRegister;
using ivytown::FieldRole;
using ivytown::FilterMatch;
using ivytown::kGlobal;
using ivytown::kMaxCounters;
using ivytown::kNumBoxTypes;
using registers::PciAddress;

namespace {

__extension__ typedef unsigned __int128 Wide;

constexpr int kMaxFilters = 4;

// ---------------------------------------------------------------------------
// Register references.

enum class RegKind : uint8_t {
  kGlobalControl,
  kGlobalStatus,
  kGlobalConfig,
  kBoxControl,
  kBoxStatus,
  kControl,
  kCounter,
  kFilter,
  kFixedControl,
  kFixedCounter,
};

struct RegRef {
  RegKind kind = RegKind::kGlobalControl;
  BoxType box = BoxType::kUbox;
  int instance = 0;
  int index = 0;      // counter or filter
  bool high = false;  // PCI: the upper dword of a counter
};

bool IsCounter(RegKind k) {
  return k == RegKind::kCounter || k == RegKind::kFixedCounter;
}

// ---------------------------------------------------------------------------
// Control-field layout of a box type, from its field descriptors.

struct Layout {
  BitRange event, umask, ext, en, edge, occ_sel, occ_edge, inv, thresh, ov_en,
      tid_en, rst, q_occ_rst;
  bool has_ov_en = false;
  uint64_t control_readable = 0;  // writable bits that are not WO
  // The box's CLOCKTICKS event (code, ext), if the catalog has one.
  std::optional<std::pair<uint8_t, bool>> clockticks;
};

BitRange ControlBits(const BoxDescriptor& box, FieldRole role) {
  const FieldDescriptor* f = box.FindRole(role);
  if (f == nullptr || f->reg != FieldRegister::kControl) return BitRange{};
  return f->bits;
}

Layout MakeLayout(const BoxDescriptor& box) {
  Layout l;
  l.event = ControlBits(box, FieldRole::kEventSelect);
  l.umask = ControlBits(box, FieldRole::kUmask);
  l.ext = ControlBits(box, FieldRole::kExtendedSelect);
  l.en = ControlBits(box, FieldRole::kEnable);
  l.edge = ControlBits(box, FieldRole::kEdge);
  l.occ_sel = ControlBits(box, FieldRole::kOccupancySelect);
  l.occ_edge = ControlBits(box, FieldRole::kOccupancyEdge);
  // S4: the PCU's occ_invert is the only invert.
  l.inv = ControlBits(box, FieldRole::kOccupancyInvert);
  l.thresh = ControlBits(box, FieldRole::kThreshold);
  l.ov_en = ControlBits(box, FieldRole::kOverflowEnable);
  l.has_ov_en = !l.ov_en.empty();
  l.tid_en = ControlBits(box, FieldRole::kTidEnable);
  // L878 "rst17WO0Whensetto1,thecorrespondingcounterwillbeclearedto0";
  // L1659 q_occ_rst WO.  WO bits read back 0.
  l.rst = ControlBits(box, FieldRole::kReset);
  l.q_occ_rst = ControlBits(box, FieldRole::kQueueOccupancyReset);
  l.control_readable =
      box.control_writable_mask & ~l.rst.mask() & ~l.q_occ_rst.mask();
  for (const ivytown::EventDescriptor& e : ivytown::EventsOf(box.type)) {
    if (e.name.size() >= 10 &&
        e.name.substr(e.name.size() - 10) == "CLOCKTICKS" && !e.extended &&
        !e.has_umasks()) {
      l.clockticks = std::make_pair(e.code, e.extended);
      break;
    }
  }
  return l;
}

const Layout& LayoutOf(BoxType type) {
  static const std::array<Layout, kNumBoxTypes> layouts = [] {
    std::array<Layout, kNumBoxTypes> a;
    for (const BoxDescriptor& box : ivytown::AllBoxes()) {
      a[static_cast<int>(box.type)] = MakeLayout(box);
    }
    return a;
  }();
  return layouts[static_cast<int>(type)];
}

// ---------------------------------------------------------------------------
// Address maps, computed from the descriptors once.

struct AddressMaps {
  absl::flat_hash_map<uint32_t, RegRef> msr;
  // PCI boxes: config offset -> register (instance filled in at lookup);
  // [0] the PMON function, [1] the auxiliary function.
  std::array<std::array<absl::flat_hash_map<uint32_t, RegRef>, 2>, kNumBoxTypes>
      pci;
};

const AddressMaps& Maps() {
  static const AddressMaps* maps = [] {
    auto* m = new AddressMaps;
    m->msr[kGlobal.global_control] = {.kind = RegKind::kGlobalControl};
    m->msr[kGlobal.global_status] = {.kind = RegKind::kGlobalStatus};
    m->msr[kGlobal.global_config] = {.kind = RegKind::kGlobalConfig};
    for (const BoxDescriptor& box : ivytown::AllBoxes()) {
      const bool pci = box.space == AccessSpace::kPci;
      const int instances = pci ? 1 : box.num_instances();
      for (int n = 0; n < instances; ++n) {
        auto add = [&](uint32_t offset, RegRef ref, bool aux = false) {
          ref.box = box.type;
          ref.instance = n;
          if (pci) {
            m->pci[static_cast<int>(box.type)][aux ? 1 : 0][offset] = ref;
            if (IsCounter(ref.kind)) {
              ref.high = true;
              m->pci[static_cast<int>(box.type)][aux ? 1 : 0][offset + 4] = ref;
            }
          } else {
            m->msr[box.RegisterAddress(n, offset)] = ref;
          }
        };
        for (int c = 0; c < box.num_counters; ++c) {
          add(box.control_offsets[c], {.kind = RegKind::kControl, .index = c});
          add(box.counter_offsets[c], {.kind = RegKind::kCounter, .index = c});
        }
        if (box.box_control_offset) {
          add(*box.box_control_offset, {.kind = RegKind::kBoxControl});
        }
        if (box.box_status_offset) {
          add(*box.box_status_offset, {.kind = RegKind::kBoxStatus});
        }
        for (size_t f = 0; f < box.filters.size(); ++f) {
          add(box.filters[f].offset,
              {.kind = RegKind::kFilter, .index = static_cast<int>(f)},
              box.filters[f].in_aux_function);
        }
        if (box.fixed_counter) {
          add(box.fixed_counter->control_offset,
              {.kind = RegKind::kFixedControl});
          add(box.fixed_counter->counter_offset,
              {.kind = RegKind::kFixedCounter});
        }
      }
    }
    return m;
  }();
  return *maps;
}

uint64_t PciKey(const PciAddress& a) {
  return (uint64_t{a.segment} << 16) | (uint64_t{a.bus} << 8) |
         (uint64_t{a.device} << 3) | a.function;
}

uint64_t WidthMask(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// Bits of the GLOBAL_CTL that read back (frz_all/unfrz_all are WO, L758/763).
constexpr uint64_t kGlobalControlReadable =
    kGlobal.wk_on_pmi.mask() | kGlobal.pmi_core_sel.mask();
// GLOBAL_CONFIG: "num_c3:0RW" (Table 2-4), reset 8.
constexpr uint64_t kGlobalConfigMask = 0xF;

}  // namespace

// ---------------------------------------------------------------------------
// State.

namespace {

struct CounterState {
  uint64_t control = 0;
  uint64_t value = 0;
  bool previous_active = false;  // edge detector (S5)
};

struct InstanceState {
  uint64_t box_control = 0;
  uint64_t box_status = 0;
  std::array<CounterState, kMaxCounters> counters{};
  uint64_t fixed_control = 0;
  uint64_t fixed_value = 0;
  std::array<uint64_t, kMaxFilters> filters{};
};

}  // namespace

struct IvyTownUncore::Socket {
  mutable std::mutex mu;
  uint64_t global_control = 0;
  uint64_t global_status = 0;
  uint64_t global_config = 8;  // Table 2-4: num_c reset 8
  bool frozen = false;         // the global freeze signal
  std::array<std::vector<InstanceState>, kNumBoxTypes> boxes;

  Socket() {
    for (const BoxDescriptor& box : ivytown::AllBoxes()) {
      boxes[static_cast<int>(box.type)].resize(box.num_instances());
    }
  }
  InstanceState& At(BoxType b, int n) { return boxes[static_cast<int>(b)][n]; }
  const InstanceState& At(BoxType b, int n) const {
    return boxes[static_cast<int>(b)][n];
  }
};

struct IvyTownUncore::Index {
  struct Function {
    int socket = 0;
    BoxType box = BoxType::kUbox;
    int instance = 0;
    bool aux = false;
  };
  absl::flat_hash_map<uint64_t, Function> pci;
};

struct IvyTownUncore::Segment {
  uint64_t cycles = 0;
  std::vector<uint64_t> values;  // one per stream
};

// One counter (or a fixed counter, counter == -1) of an advancing instance,
// decoded once per injection.
struct IvyTownUncore::Plan {
  InstanceState* state = nullptr;
  const BoxDescriptor* box = nullptr;
  int instance = 0;
  int counter = 0;
  std::vector<int> streams;  // indices of the streams it counts
  bool clockticks = false;
  bool enabled = false;
  bool edge = false;
  bool inv = false;
  bool ov_en = false;
  uint64_t thresh = 0;
  uint64_t mask = 0;
};

// What InjectSpread and Run build per call, kept per thread and reused: the
// demo traffic model injects at every snapshot, and a snapshot allocates
// nothing (sdk/devices/device.h) once its thread has taken one.
struct IvyTownUncore::Scratch {
  // InjectSpread
  std::vector<Traffic> traffic;
  std::vector<uint64_t> cuts;
  std::vector<Segment> segments;  // [0, used_segments); values reused
  std::vector<Target> targets;
  // Run
  std::vector<Plan> plans;  // [0, used_plans); streams reused
  struct Step {
    uint64_t out = 0;
    uint64_t first = 0;  // increment in the first cycle of the run
    uint64_t rest = 0;   // increment in each later cycle
    bool counting = false;
  };
  std::vector<Step> steps;
};

namespace {
// Set (a trivially destructible thread_local stays readable) once the
// thread's scratch has been destroyed.
thread_local bool t_scratch_destroyed = false;
}  // namespace

IvyTownUncore::Scratch& IvyTownUncore::ThreadScratch() {
  // A thread's thread_local objects are destroyed before the exit-time
  // destructors run, and those may still take snapshots (a static object's
  // destructor that opens a region): such late calls get a scratch of
  // their own, made once per thread and never freed.
  if (t_scratch_destroyed) {
    thread_local Scratch* late = nullptr;
    if (late == nullptr) late = new Scratch();
    return *late;
  }
  struct Holder {
    Scratch scratch;
    Holder() = default;
    Holder(const Holder&) = delete;
    Holder& operator=(const Holder&) = delete;
    ~Holder() { t_scratch_destroyed = true; }
  };
  thread_local Holder holder;
  return holder.scratch;
}

namespace {

// ---------------------------------------------------------------------------
// Register semantics.

uint64_t& Storage(InstanceState& s, const RegRef& r) {
  switch (r.kind) {
    case RegKind::kBoxControl:
      return s.box_control;
    case RegKind::kBoxStatus:
      return s.box_status;
    case RegKind::kControl:
      return s.counters[r.index].control;
    case RegKind::kCounter:
      return s.counters[r.index].value;
    case RegKind::kFilter:
      return s.filters[r.index];
    case RegKind::kFixedControl:
      return s.fixed_control;
    case RegKind::kFixedCounter:
      return s.fixed_value;
    default:
      break;
  }
  return s.box_control;  // unreachable: globals are handled by the caller
}

// Bits that read back; reserved and WO bits read 0.
uint64_t ReadableMask(const RegRef& r) {
  const BoxDescriptor& box = ivytown::Box(r.box);
  switch (r.kind) {
    case RegKind::kGlobalControl:
      return kGlobalControlReadable;
    case RegKind::kGlobalStatus:
      return kGlobal.global_status_writable_mask;
    case RegKind::kGlobalConfig:
      return kGlobalConfigMask;
    case RegKind::kBoxControl:  // S1
      return box.box_control.frz.mask() | box.box_control.must_write_one;
    case RegKind::kBoxStatus:
      return box.box_status_writable_mask;
    case RegKind::kControl:
      return LayoutOf(r.box).control_readable;
    case RegKind::kCounter:
      return box.counter_mask();
    case RegKind::kFilter:
      return box.filters[r.index].writable_mask;
    case RegKind::kFixedControl:
      return box.fixed_counter->control_writable_mask &
             ~box.fixed_counter->rst.mask();
    case RegKind::kFixedCounter:
      return WidthMask(box.fixed_counter->width);
  }
  return 0;
}

}  // namespace

// Helpers over IvyTownUncore::Socket (a private type, reached through
// template deduction).
namespace {

template <typename SocketT>
uint64_t* RawRegister(SocketT& s, const RegRef& r) {
  switch (r.kind) {
    case RegKind::kGlobalControl:
      return &s.global_control;
    case RegKind::kGlobalStatus:
      return &s.global_status;
    case RegKind::kGlobalConfig:
      return &s.global_config;
    default:
      return &Storage(s.At(r.box, r.instance), r);
  }
}

// The value a read returns (64-bit view; PCI picks a dword).
template <typename SocketT>
uint64_t ReadRegister(SocketT& s, const RegRef& r) {
  return *RawRegister(s, r) & ReadableMask(r);
}

template <typename SocketT>
void WriteRegister(SocketT& s, const RegRef& r, uint64_t value) {
  const BoxDescriptor& box = ivytown::Box(r.box);
  const Layout& layout = LayoutOf(r.box);
  switch (r.kind) {
    case RegKind::kGlobalControl:
      // L763 "unfrz_all29WO0Unfreezealluncoreperformancemonitors";
      // L758 "frz_all31WO0Freezealluncoreperformancemonitors".  S8: freeze
      // wins when both are written.
      if (kGlobal.unfrz_all.Extract(value) != 0) s.frozen = false;
      if (kGlobal.frz_all.Extract(value) != 0) s.frozen = true;
      // wk_on_pmi 30 and pmi_core_sel 14:0 are RW (Table 2-2).
      s.global_control = value & kGlobalControlReadable;
      return;
    case RegKind::kGlobalStatus:
      // L777-801 every ov_* bit is RW1C: "ausermustsetthecorresponding
      // bitsinU_MSR_PMON_GLOBAL_STATUSto1,whichwillacttoclearthem" (L754).
      s.global_status &= ~(value & kGlobal.global_status_writable_mask);
      return;
    case RegKind::kGlobalConfig:
      s.global_config = value & kGlobalConfigMask;
      return;
    default:
      break;
  }
  InstanceState& in = s.At(r.box, r.instance);
  switch (r.kind) {
    case RegKind::kBoxControl: {
      const ivytown::BoxControlLayout& c = box.box_control;
      // L990 "rst_ctrs1WO0ResetCounters.Whensetto1,theCounterRegisters
      // willberesetto0" (S2: the general counters).
      if (c.rst_ctrs.Extract(value) != 0) {
        for (CounterState& k : in.counters) {
          k.value = 0;
        }
      }
      // L992 "rst_ctrl0WO0ResetControl.Whensetto1,theCounterControl
      // Registerswillberesetto0" (S2: not the filters).
      if (c.rst_ctrl.Extract(value) != 0) {
        for (CounterState& k : in.counters) {
          k.control = 0;
          k.previous_active = false;
        }
      }
      // L991 frz8 (S1: stored), L987 "rsv17:16 ... SWmustwriteto1" stored.
      in.box_control = value & (c.frz.mask() | c.must_write_one);
      return;
    }
    case RegKind::kBoxStatus:
      // L855/L1627 "ov ... RW1C": writing 1 clears.
      in.box_status &= ~(value & box.box_status_writable_mask);
      return;
    case RegKind::kControl: {
      CounterState& k = in.counters[r.index];
      // L878 "rst17WO0Whensetto1,thecorrespondingcounterwillbecleared
      // to0".
      if (layout.rst.Extract(value) != 0) k.value = 0;
      k.control = value & layout.control_readable;
      k.previous_active = false;  // S5
      return;
    }
    case RegKind::kCounter:
      // L883 "preloadingamonitorwithacountvalue": data registers are
      // writable; bits above the width are reserved.
      in.counters[r.index].value = value & box.counter_mask();
      return;
    case RegKind::kFilter:
      in.filters[r.index] = value & box.filters[r.index].writable_mask;
      return;
    case RegKind::kFixedControl: {
      const ivytown::FixedCounterDescriptor& x = *box.fixed_counter;
      // Table 2-75 "rst19WO" (iMC); the U-Box fixed control has none.
      if (!x.rst.empty() && x.rst.Extract(value) != 0) in.fixed_value = 0;
      in.fixed_control = value & x.control_writable_mask & ~x.rst.mask();
      return;
    }
    case RegKind::kFixedCounter:
      in.fixed_value = value & WidthMask(box.fixed_counter->width);
      return;
    default:
      return;
  }
}

// ---------------------------------------------------------------------------
// Filters (S9).

bool FilterMatches(const BoxDescriptor& box, const InstanceState& in,
                   const FieldDescriptor& f, const IvyTownUncore::Traffic& t) {
  if (f.reg != FieldRegister::kFilter) return true;
  const uint64_t v = f.bits.Extract(in.filters[f.filter]);
  switch (f.match) {
    // CBo FILTER1.opc (L1046 "MatchonOpcode"), HA OPCODEMATCH.opc (L1673
    // "Matchtoincomingopcode"): equality.
    case FilterMatch::kOpcodeEquals:
      return t.opcode && *t.opcode == v;
    // CBo FILTER0.tid (L1039), with tid_en.
    case FilterMatch::kThreadEquals:
      return t.tid && *t.tid == v;
    // CBo FILTER1.nid (L1049 "MatchonTargetNodeID"), a node bit mask.
    case FilterMatch::kNodeAnyBit:
      return t.nid_mask && (*t.nid_mask & v) != 0;
    // CBo FILTER0.state (L1031 "Selectstate"), one bit per state.
    case FilterMatch::kStateAnyBit:
      return t.state_mask && (*t.state_mask & v) != 0;
    // HA ADDRMATCH0.lo_addr = address[31:6], ADDRMATCH1.hi_addr =
    // address[45:32] (Table 2-43).
    case FilterMatch::kAddressLow:
      return t.address && f.bits.Extract(*t.address) == v;
    case FilterMatch::kAddressHigh:
      return t.address && ((*t.address >> 32) & f.bits.max_value()) == v;
    // PCU FREQ_BANDn: L2937 "cyclesthattheuncorewasrunningatafrequency
    // greaterthanorequaltothefrequencythatisconfiguredinthefilter".
    case FilterMatch::kFrequencyAtLeast:
      return t.band_frequency && *t.band_frequency >= v;
    // QPI (§2.8.3.3, L3170-3185): a packet matches when the bits selected by
    // the mask equal the match register's.
    case FilterMatch::kPacketMatch: {
      uint64_t mask = 0;
      for (const FieldDescriptor& m : box.fields) {
        if (m.match == FilterMatch::kPacketMask && m.pair == f.pair) {
          mask = m.bits.Extract(in.filters[m.filter]);
        }
      }
      if (mask == 0) return true;
      const std::optional<uint64_t>& packet =
          f.pair == 0 ? t.qpi_packet0 : t.qpi_packet1;
      return packet && ((*packet ^ v) & mask) == 0;
    }
    // Masks are evaluated with their match register, sub-fields with their
    // whole register; nc/isoc are not modelled.
    case FilterMatch::kPacketMask:
    case FilterMatch::kPartOfRegister:
    case FilterMatch::kNone:
      return true;
  }
  return true;
}

bool FiltersMatch(const BoxDescriptor& box, const InstanceState& in,
                  std::span<const std::string_view> list,
                  const IvyTownUncore::Traffic& t) {
  for (std::string_view name : list) {
    const FieldDescriptor* f = box.FindField(name);
    if (f != nullptr && !FilterMatches(box, in, *f, t)) return false;
  }
  return true;
}

// Whether counter `c` of instance `in` counts traffic `t` (code, ext, umask
// and filters; en and freezes are gated elsewhere).
bool Counts(const BoxDescriptor& box, const InstanceState& in, int c,
            const IvyTownUncore::Traffic& t) {
  const Layout& l = LayoutOf(box.type);
  const uint64_t ctl = in.counters[c].control;
  const uint8_t code = static_cast<uint8_t>(l.event.Extract(ctl));
  const bool ext = l.ext.Extract(ctl) != 0;
  const uint8_t umask = static_cast<uint8_t>(l.umask.Extract(ctl));
  if (t.code != code || t.extended != ext) return false;
  if (!((t.umask & umask) != 0 || (t.umask == 0 && umask == 0))) return false;
  // L998 tid_en: match FILTER0.tid.
  if (!l.tid_en.empty() && l.tid_en.Extract(ctl) != 0) {
    const FieldDescriptor* f = box.FindRole(FieldRole::kThreadFilter);
    if (f != nullptr && !FilterMatches(box, in, *f, t)) return false;
  }
  const ivytown::EventDescriptor* e =
      ivytown::FindEventByCode(box.type, code, ext);
  if (e == nullptr) return true;
  if (!FiltersMatch(box, in, e->filters, t)) return false;
  for (const ivytown::UmaskDescriptor& u : e->umasks) {
    if (u.value == umask) return FiltersMatch(box, in, u.filters, t);
  }
  return true;
}

// The smallest k >= 1 with a + (k-1)*b > room, or 0 when none.
Wide CyclesToExceed(uint64_t room, uint64_t a, uint64_t b) {
  if (a > room) return 1;
  if (b == 0) return 0;
  return static_cast<Wide>((room - a) / b) + 2;
}

}  // namespace

// ---------------------------------------------------------------------------
// IvyTownUncore.

IvyTownUncore::IvyTownUncore(int sockets, int cpus_per_socket)
    : topology_(machine::SimulatedTopology(ivytown::Record(),
                                           std::max(sockets, 0),
                                           std::max(cpus_per_socket, 1))),
      cpus_per_socket_(std::max(cpus_per_socket, 1)) {
  auto index = std::make_unique<Index>();
  for (const machine::SocketTopology& st : topology_.sockets) {
    sockets_.push_back(std::make_unique<Socket>());
    for (const machine::SocketTopology::PciInstance& p : st.pci) {
      if (p.pmon) {
        index->pci[PciKey(*p.pmon)] = {st.socket, static_cast<BoxType>(p.unit),
                                       p.instance, false};
      }
      if (p.aux) {
        index->pci[PciKey(*p.aux)] = {st.socket, static_cast<BoxType>(p.unit),
                                      p.instance, true};
      }
    }
  }
  index_ = std::move(index);
}

IvyTownUncore::~IvyTownUncore() = default;

IvyTownUncore::Socket* IvyTownUncore::SocketAt(int socket) {
  if (socket < 0 || socket >= num_sockets()) return nullptr;
  return sockets_[socket].get();
}

const IvyTownUncore::Socket* IvyTownUncore::SocketAt(int socket) const {
  if (socket < 0 || socket >= num_sockets()) return nullptr;
  return sockets_[socket].get();
}

std::shared_ptr<const IvyTownUncore::PciReadHook> IvyTownUncore::hook() const {
  std::lock_guard<std::mutex> lock(hook_mu_);
  return pci_read_hook_;
}

void IvyTownUncore::SetPciReadHook(PciReadHook hook) {
  std::lock_guard<std::mutex> lock(hook_mu_);
  pci_read_hook_ =
      hook ? std::make_shared<const PciReadHook>(std::move(hook)) : nullptr;
}

uint64_t IvyTownUncore::access_count() const {
  return accesses_.load(std::memory_order_relaxed);
}

namespace {

absl::Status NoMsr(int cpu, uint32_t msr) {
  return absl::NotFoundError(
      fmt::format("simulator: no MSR {:#x} on CPU {}", msr, cpu));
}

absl::Status NoPci(const PciAddress& fn, uint32_t offset) {
  return absl::NotFoundError(fmt::format(
      "simulator: no PCI register {:#x} at {}", offset, fn.ToString()));
}

const RegRef* FindMsr(uint32_t msr) {
  const auto& m = Maps().msr;
  auto it = m.find(msr);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace

absl::Status IvyTownUncore::ReadMsr(int cpu, uint32_t msr, uint64_t* value) {
  accesses_.fetch_add(1, std::memory_order_relaxed);
  Socket* s = cpu < 0 ? nullptr : SocketAt(cpu / cpus_per_socket_);
  const RegRef* r = FindMsr(msr);
  if (s == nullptr || r == nullptr) return NoMsr(cpu, msr);
  std::lock_guard<std::mutex> lock(s->mu);
  *value = ReadRegister(*s, *r);
  return absl::OkStatus();
}

absl::Status IvyTownUncore::WriteMsr(int cpu, uint32_t msr, uint64_t value) {
  accesses_.fetch_add(1, std::memory_order_relaxed);
  Socket* s = cpu < 0 ? nullptr : SocketAt(cpu / cpus_per_socket_);
  const RegRef* r = FindMsr(msr);
  if (s == nullptr || r == nullptr) return NoMsr(cpu, msr);
  std::lock_guard<std::mutex> lock(s->mu);
  WriteRegister(*s, *r, value);
  return absl::OkStatus();
}

namespace {

// The register at `offset` of PCI function `f`, or nullopt.
std::optional<RegRef> FindPciRegister(BoxType box, int instance, bool aux,
                                      uint32_t offset) {
  const auto& m = Maps().pci[static_cast<int>(box)][aux ? 1 : 0];
  auto it = m.find(offset);
  if (it == m.end()) return std::nullopt;
  RegRef r = it->second;
  r.instance = instance;
  return r;
}

}  // namespace

absl::Status IvyTownUncore::ReadPci(const PciAddress& fn, uint32_t offset,
                                    uint32_t* value) {
  accesses_.fetch_add(1, std::memory_order_relaxed);
  auto it = index_->pci.find(PciKey(fn));
  if (it == index_->pci.end()) return NoPci(fn, offset);
  const Index::Function& f = it->second;
  std::optional<RegRef> r = FindPciRegister(f.box, f.instance, f.aux, offset);
  if (!r) return NoPci(fn, offset);
  if (IsCounter(r->kind) && r->high) {
    // S11: the test hook runs between the two halves of a counter read.
    if (std::shared_ptr<const PciReadHook> h = hook()) {
      (*h)(f.socket, fn, offset);
    }
  }
  Socket& s = *sockets_[f.socket];
  std::lock_guard<std::mutex> lock(s.mu);
  const uint64_t v = ReadRegister(s, *r);
  *value = static_cast<uint32_t>(r->high ? v >> 32 : v);
  return absl::OkStatus();
}

absl::Status IvyTownUncore::WritePci(const PciAddress& fn, uint32_t offset,
                                     uint32_t value) {
  accesses_.fetch_add(1, std::memory_order_relaxed);
  auto it = index_->pci.find(PciKey(fn));
  if (it == index_->pci.end()) return NoPci(fn, offset);
  const Index::Function& f = it->second;
  std::optional<RegRef> r = FindPciRegister(f.box, f.instance, f.aux, offset);
  if (!r) return NoPci(fn, offset);
  Socket& s = *sockets_[f.socket];
  std::lock_guard<std::mutex> lock(s.mu);
  uint64_t v = value;
  if (IsCounter(r->kind)) {
    // S11: a dword write replaces its half of the counter.
    const uint64_t old = *RawRegister(s, *r);
    v = r->high ? (old & 0xFFFFFFFFu) | (uint64_t{value} << 32)
                : (old & ~uint64_t{0xFFFFFFFFu}) | value;
  }
  WriteRegister(s, *r, v);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Introspection and presets.

uint64_t IvyTownUncore::PeekMsr(int socket, uint32_t msr) const {
  const Socket* s = SocketAt(socket);
  const RegRef* r = FindMsr(msr);
  if (s == nullptr || r == nullptr) return 0;
  std::lock_guard<std::mutex> lock(s->mu);
  return *RawRegister(const_cast<Socket&>(*s), *r);
}

uint32_t IvyTownUncore::PeekPci(int socket, const PciAddress& fn,
                                uint32_t offset) const {
  auto it = index_->pci.find(PciKey(fn));
  if (it == index_->pci.end() || it->second.socket != socket) return 0;
  const Index::Function& f = it->second;
  std::optional<RegRef> r = FindPciRegister(f.box, f.instance, f.aux, offset);
  if (!r) return 0;
  Socket& s = *sockets_[socket];
  std::lock_guard<std::mutex> lock(s.mu);
  const uint64_t v = *RawRegister(s, *r);
  return static_cast<uint32_t>(r->high ? v >> 32 : v);
}

uint64_t IvyTownUncore::PeekCounter(int socket, BoxType box, int instance,
                                    int counter) const {
  const Socket* s = SocketAt(socket);
  const BoxDescriptor& b = ivytown::Box(box);
  if (s == nullptr || instance < 0 || instance >= b.num_instances() ||
      counter < 0 || counter >= b.num_counters) {
    return 0;
  }
  std::lock_guard<std::mutex> lock(s->mu);
  return s->At(box, instance).counters[counter].value;
}

uint64_t IvyTownUncore::PeekFixedCounter(int socket, BoxType box,
                                         int instance) const {
  const Socket* s = SocketAt(socket);
  const BoxDescriptor& b = ivytown::Box(box);
  if (s == nullptr || !b.fixed_counter || instance < 0 ||
      instance >= b.num_instances()) {
    return 0;
  }
  std::lock_guard<std::mutex> lock(s->mu);
  return s->At(box, instance).fixed_value;
}

bool IvyTownUncore::GlobalFrozen(int socket) const {
  const Socket* s = SocketAt(socket);
  if (s == nullptr) return false;
  std::lock_guard<std::mutex> lock(s->mu);
  return s->frozen;
}

bool IvyTownUncore::AnyCounterEnabled(int socket, BoxType box) const {
  const Socket* s = SocketAt(socket);
  if (s == nullptr) return false;
  const BoxDescriptor& d = ivytown::Box(box);
  const Layout& l = LayoutOf(box);
  std::lock_guard<std::mutex> lock(s->mu);
  for (const InstanceState& in : s->boxes[static_cast<int>(box)]) {
    for (int c = 0; c < d.num_counters; ++c) {
      if (l.en.Extract(in.counters[c].control) != 0) return true;
    }
    if (d.fixed_counter && d.fixed_counter->en.Extract(in.fixed_control) != 0) {
      return true;
    }
  }
  return false;
}

absl::Status IvyTownUncore::PresetMsr(int socket, uint32_t msr,
                                      uint64_t value) {
  Socket* s = SocketAt(socket);
  const RegRef* r = FindMsr(msr);
  if (s == nullptr || r == nullptr) {
    return NoMsr(socket * cpus_per_socket_, msr);
  }
  std::lock_guard<std::mutex> lock(s->mu);
  *RawRegister(*s, *r) = value;
  return absl::OkStatus();
}

absl::Status IvyTownUncore::PresetPci(int socket, const PciAddress& fn,
                                      uint32_t offset, uint32_t value) {
  auto it = index_->pci.find(PciKey(fn));
  if (it == index_->pci.end() || it->second.socket != socket) {
    return NoPci(fn, offset);
  }
  const Index::Function& f = it->second;
  std::optional<RegRef> r = FindPciRegister(f.box, f.instance, f.aux, offset);
  if (!r) return NoPci(fn, offset);
  Socket& s = *sockets_[socket];
  std::lock_guard<std::mutex> lock(s.mu);
  uint64_t& reg = *RawRegister(s, *r);
  if (IsCounter(r->kind)) {
    reg = r->high ? (reg & 0xFFFFFFFFu) | (uint64_t{value} << 32)
                  : (reg & ~uint64_t{0xFFFFFFFFu}) | value;
  } else {
    reg = value;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Traffic and time.

namespace {

absl::Status CheckTarget(int sockets, int socket, BoxType box, int instance) {
  if (socket < 0 || socket >= sockets) {
    return absl::InvalidArgumentError(
        fmt::format("simulator: no socket {} ({} simulated)", socket, sockets));
  }
  if (static_cast<int>(box) >= kNumBoxTypes) {
    return absl::InvalidArgumentError("simulator: no such box type");
  }
  const BoxDescriptor& b = ivytown::Box(box);
  if (instance < 0 || instance >= b.num_instances()) {
    return absl::InvalidArgumentError(
        fmt::format("simulator: no {} instance {} ({} per socket)", b.name,
                    instance, b.num_instances()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status IvyTownUncore::Inject(int socket, const Traffic& traffic,
                                   std::span<const uint64_t> per_cycle,
                                   uint64_t repeat) {
  if (absl::Status s =
          CheckTarget(num_sockets(), socket, traffic.box, traffic.instance);
      !s.ok()) {
    return s;
  }
  if (per_cycle.empty()) {
    return absl::InvalidArgumentError("simulator: empty per-cycle sequence");
  }
  // Runs of equal values become one segment each.
  std::vector<Segment> segments;
  for (uint64_t v : per_cycle) {
    if (!segments.empty() && segments.back().values[0] == v) {
      ++segments.back().cycles;
    } else {
      segments.push_back({1, {v}});
    }
  }
  const Target target{traffic.box, traffic.instance};
  Run(*sockets_[socket], std::span<const Target>(&target, 1),
      std::span<const Traffic>(&traffic, 1), segments, repeat);
  return absl::OkStatus();
}

absl::Status IvyTownUncore::Inject(int socket, const Traffic& traffic,
                                   uint64_t per_cycle, uint64_t cycles) {
  if (absl::Status s =
          CheckTarget(num_sockets(), socket, traffic.box, traffic.instance);
      !s.ok()) {
    return s;
  }
  const Segment segment{cycles, {per_cycle}};
  const Target target{traffic.box, traffic.instance};
  Run(*sockets_[socket], std::span<const Target>(&target, 1),
      std::span<const Traffic>(&traffic, 1),
      std::span<const Segment>(&segment, 1), 1);
  return absl::OkStatus();
}

absl::Status IvyTownUncore::InjectTogether(int socket,
                                           std::span<const Stream> streams,
                                           uint64_t repeat) {
  std::vector<Target> targets;
  std::vector<Traffic> traffic;
  size_t length = 0;
  for (const Stream& st : streams) {
    if (absl::Status s = CheckTarget(num_sockets(), socket, st.traffic.box,
                                     st.traffic.instance);
        !s.ok()) {
      return s;
    }
    length = std::max(length, st.per_cycle.size());
    traffic.push_back(st.traffic);
    const bool seen =
        std::any_of(targets.begin(), targets.end(), [&](const Target& t) {
          return t.box == st.traffic.box && t.instance == st.traffic.instance;
        });
    if (!seen) targets.push_back({st.traffic.box, st.traffic.instance});
  }
  if (length == 0) {
    return absl::InvalidArgumentError("simulator: empty per-cycle sequence");
  }
  std::vector<Segment> segments;
  std::vector<uint64_t> values(streams.size());
  for (size_t i = 0; i < length; ++i) {
    for (size_t k = 0; k < streams.size(); ++k) {
      values[k] = i < streams[k].per_cycle.size() ? streams[k].per_cycle[i] : 0;
    }
    if (!segments.empty() && segments.back().values == values) {
      ++segments.back().cycles;
    } else {
      segments.push_back({1, values});
    }
  }
  Run(*sockets_[socket], targets, traffic, segments, repeat);
  return absl::OkStatus();
}

absl::Status IvyTownUncore::InjectSpread(int socket, BoxType box,
                                         std::span<const SpreadStream> streams,
                                         uint64_t cycles) {
  if (absl::Status s = CheckTarget(num_sockets(), socket, box, 0); !s.ok()) {
    return s;
  }
  Scratch& scratch = ThreadScratch();
  std::vector<Traffic>& traffic = scratch.traffic;
  std::vector<uint64_t>& cuts = scratch.cuts;
  traffic.clear();
  cuts.assign({0, cycles});
  for (const SpreadStream& st : streams) {
    if (st.traffic.box != box) {
      return absl::InvalidArgumentError(fmt::format(
          "simulator: a {} stream in a spread over {}",
          ivytown::Box(st.traffic.box).name, ivytown::Box(box).name));
    }
    if (absl::Status s =
            CheckTarget(num_sockets(), socket, box, st.traffic.instance);
        !s.ok()) {
      return s;
    }
    if (st.total != 0 && cycles == 0) {
      return absl::InvalidArgumentError(
          "simulator: occurrences spread over zero cycles");
    }
    traffic.push_back(st.traffic);
    if (cycles != 0) cuts.push_back(st.total % cycles);
  }
  if (cycles == 0) return absl::OkStatus();
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  const size_t used = cuts.size() - 1;
  if (scratch.segments.size() < used) scratch.segments.resize(used);
  for (size_t i = 0; i < used; ++i) {
    Segment& seg = scratch.segments[i];
    seg.cycles = cuts[i + 1] - cuts[i];
    seg.values.clear();
    for (const SpreadStream& st : streams) {
      const uint64_t base = st.total / cycles;
      seg.values.push_back(base + (cuts[i] < st.total % cycles ? 1 : 0));
    }
  }
  std::vector<Target>& targets = scratch.targets;
  targets.clear();
  for (int n = 0; n < ivytown::Box(box).num_instances(); ++n) {
    targets.push_back({box, n});
  }
  // Copies of the spans: Run reuses this thread's scratch for its plans.
  Run(*sockets_[socket], targets, traffic,
      std::span<const Segment>(scratch.segments.data(), used), 1);
  return absl::OkStatus();
}

void IvyTownUncore::TickBox(int socket, BoxType box, uint64_t cycles) {
  if (SocketAt(socket) == nullptr || cycles == 0) return;
  std::vector<Target> targets;
  targets.reserve(ivytown::Box(box).num_instances());
  for (int n = 0; n < ivytown::Box(box).num_instances(); ++n) {
    targets.push_back({box, n});
  }
  const Segment segment{cycles, {}};
  Run(*sockets_[socket], targets, {}, std::span<const Segment>(&segment, 1), 1);
}

void IvyTownUncore::Tick(int socket, uint64_t cycles) {
  if (SocketAt(socket) == nullptr || cycles == 0) return;
  std::vector<Target> targets;
  for (const BoxDescriptor& box : ivytown::AllBoxes()) {
    for (int n = 0; n < box.num_instances(); ++n) {
      targets.push_back({box.type, n});
    }
  }
  const Segment segment{cycles, {}};
  Run(*sockets_[socket], targets, {}, std::span<const Segment>(&segment, 1), 1);
}

namespace {

// A status bit number from the descriptors, where a negative int8_t means
// none (-1).
int BitOrNone(int8_t bit) { return bit < 0 ? -1 : static_cast<uint8_t>(bit); }

// Records a carry out of the top bit (S6).
template <typename SocketT>
void RecordOverflow(SocketT& s, const BoxDescriptor& box, InstanceState& in,
                    int instance, int counter, bool ov_en, bool box_has_ov_en) {
  // S6: a counter "enabled to communicate its overflow (.ov_en is set to
  // 1)" sets its box-level bit (L1575) and reports to the U-Box (L631-633);
  // a box without ov_en (CBo, IRP) always does.  The fixed counters have
  // their own ov_en (L894, Table 2-75).
  const bool reports = ov_en || (counter >= 0 && !box_has_ov_en);
  if (!reports) return;
  int global_bit = BitOrNone(box.instances[instance].global_status_bit);
  if (counter >= 0) {
    if (box.box_status_offset) {
      in.box_status |= uint64_t{1} << box.counter_status_bits[counter];
    }
  } else {
    const ivytown::FixedCounterDescriptor& x = *box.fixed_counter;
    if (box.box_status_offset && x.box_status_bit != ivytown::kNoStatusBit) {
      in.box_status |= uint64_t{1} << x.box_status_bit;
    }
    if (x.global_status_bit >= 0) {
      global_bit = BitOrNone(x.global_status_bit);
    }
  }
  if (global_bit >= 0) s.global_status |= uint64_t{1} << global_bit;
  // L638 "Uponreceiptofanoverflowmessagefromanybox,theUBoxwillassert
  // theglobalfreezesignal" (S7: from the next cycle on).
  if (ov_en) s.frozen = true;
}

}  // namespace

void IvyTownUncore::Run(Socket& s, std::span<const Target> targets,
                        std::span<const Traffic> streams,
                        std::span<const Segment> segments, uint64_t repeat) {
  std::lock_guard<std::mutex> lock(s.mu);
  // Decode every counter of every advancing instance once: the programming
  // cannot change while the lock is held.  Plans are this thread's scratch,
  // reused (their stream lists keep their room).
  Scratch& scratch = ThreadScratch();
  size_t used_plans = 0;
  auto next_plan = [&]() -> Plan& {
    if (scratch.plans.size() == used_plans) scratch.plans.emplace_back();
    Plan& p = scratch.plans[used_plans++];
    std::vector<int> streams = std::move(p.streams);
    streams.clear();
    p = Plan();
    p.streams = std::move(streams);
    return p;
  };
  for (const Target& t : targets) {
    const BoxDescriptor& box = ivytown::Box(t.box);
    const Layout& l = LayoutOf(t.box);
    InstanceState& in = s.At(t.box, t.instance);
    for (int c = 0; c < box.num_counters; ++c) {
      const uint64_t ctl = in.counters[c].control;
      Plan& p = next_plan();
      p.state = &in;
      p.box = &box;
      p.instance = t.instance;
      p.counter = c;
      p.enabled = l.en.Extract(ctl) != 0;
      // L867 edge_det; PCU occ_edge and occ_invert on occupancy events only
      // (S4).
      const bool occupancy = l.occ_sel.Extract(ctl) != 0;
      p.edge = l.edge.Extract(ctl) != 0 ||
               (occupancy && l.occ_edge.Extract(ctl) != 0);
      p.inv = occupancy && l.inv.Extract(ctl) != 0;
      p.thresh = l.thresh.Extract(ctl);
      p.ov_en = l.ov_en.Extract(ctl) != 0;
      p.mask = box.counter_mask();
      p.clockticks = l.clockticks &&
                     l.event.Extract(ctl) == l.clockticks->first &&
                     (l.ext.Extract(ctl) != 0) == l.clockticks->second;
      for (size_t k = 0; k < streams.size(); ++k) {
        if (streams[k].box == t.box && streams[k].instance == t.instance &&
            Counts(box, in, c, streams[k])) {
          p.streams.push_back(static_cast<int>(k));
        }
      }
    }
    if (box.fixed_counter) {
      // L812 "afixedcounterwhichincrementseachu-clock"; the iMC's counts
      // DRAM clocks (Table 2-75).
      Plan& p = next_plan();
      p.state = &in;
      p.box = &box;
      p.instance = t.instance;
      p.counter = -1;
      p.enabled = box.fixed_counter->en.Extract(in.fixed_control) != 0;
      p.ov_en = box.fixed_counter->ov_en.Extract(in.fixed_control) != 0;
      p.mask = WidthMask(box.fixed_counter->width);
      p.clockticks = true;
    }
  }
  const std::span<const Plan> plans(scratch.plans.data(), used_plans);
  using Step = Scratch::Step;
  std::vector<Step>& steps = scratch.steps;
  steps.assign(plans.size(), Step{});

  auto advance = [&](const Segment& seg) {
    uint64_t cycles = seg.cycles;
    while (cycles > 0) {
      Wide k = cycles;
      for (size_t i = 0; i < plans.size(); ++i) {
        const Plan& p = plans[i];
        Step& st = steps[i];
        uint64_t v = p.clockticks ? 1 : 0;
        for (int k2 : p.streams) v += seg.values[k2];
        // §1.4 (L548-552) "Ifthe.threshissettoanon-zerovalue,thatvalue
        // iscomparedagainsttheincomingcountforthateventineachcycle.
        // Iftheincomingcountis>=thethresholdvalue,thentheeventcount
        // ...willbeincrementedby1"; invert flips the test (S4).
        if (p.thresh != 0) {
          st.out = p.inv ? (v < p.thresh ? 1 : 0) : (v >= p.thresh ? 1 : 0);
        } else {
          st.out = v;
        }
        // L867 "ratherthanmeasuringtheeventineachcycleitisactive,the
        // correspondingcounterwillincrementwhena0to1transition"; L555
        // "the.edge_detbitfollowthethresholdcomparisoninsequence".
        const bool previous =
            p.counter >= 0 && p.state->counters[p.counter].previous_active;
        if (p.edge) {
          st.first = (!previous && st.out != 0) ? 1 : 0;
          st.rest = 0;
        } else {
          st.first = st.rest = st.out;
        }
        // A counter counts while en=1 and neither its box (L991) nor the
        // socket (L758, L638) is frozen.
        const ivytown::BoxControlLayout& bc = p.box->box_control;
        const bool box_frozen = p.box->box_control_offset &&
                                bc.frz.Extract(p.state->box_control) != 0;
        st.counting = p.enabled && !s.frozen && !box_frozen;
        if (st.counting && p.ov_en) {
          const uint64_t value =
              (p.counter >= 0 ? p.state->counters[p.counter].value
                              : p.state->fixed_value) &
              p.mask;
          const Wide wrap = CyclesToExceed(p.mask - value, st.first, st.rest);
          if (wrap != 0 && wrap < k) k = wrap;
        }
      }
      const uint64_t run = static_cast<uint64_t>(k);
      for (size_t i = 0; i < plans.size(); ++i) {
        const Plan& p = plans[i];
        const Step& st = steps[i];
        if (p.counter >= 0) {
          p.state->counters[p.counter].previous_active = st.out != 0;
        }
        if (!st.counting) continue;
        uint64_t& value = p.counter >= 0 ? p.state->counters[p.counter].value
                                         : p.state->fixed_value;
        const Wide total =
            static_cast<Wide>(st.first) + static_cast<Wide>(run - 1) * st.rest;
        // L882 "Acounteroverflowoccurswhenacarryoutfrombit43is
        // detected" (bit 47 for 48-bit boxes, L1631): counters wrap.
        const Wide next = static_cast<Wide>(value & p.mask) + total;
        value = static_cast<uint64_t>(next) & p.mask;
        if (next > p.mask) {
          RecordOverflow(s, *p.box, *p.state, p.instance, p.counter, p.ov_en,
                         LayoutOf(p.box->type).has_ov_en);
        }
      }
      cycles -= run;
    }
  };

  if (segments.size() == 1 && repeat > 1 &&
      static_cast<Wide>(segments[0].cycles) * repeat <=
          std::numeric_limits<uint64_t>::max()) {
    Segment one = segments[0];
    one.cycles *= repeat;
    advance(one);
    return;
  }
  for (uint64_t r = 0; r < repeat; ++r) {
    for (const Segment& seg : segments) advance(seg);
  }
}

}  // namespace uncore::sim
