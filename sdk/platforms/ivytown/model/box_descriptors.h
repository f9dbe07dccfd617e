// Box descriptors: the IvyTown (Xeon E5 v2 / E7 v2) uncore PMON register
// model, as constexpr data, one descriptor per box type.
//
//   const BoxDescriptor& cbo = Box(BoxType::kCbo);
//   uint64_t ctl0 = cbo.CounterControlAddress(/*instance=*/3, /*counter=*/0);
//   // ctl0 == 0x0D70 (MSR)
//
// Every address the SDK ever touches is computed here from the descriptor by
// one generic engine: there is no per-box switch elsewhere.  Engines find
// fields by role (FindRole), match filters by FilterMatch and read the Linux
// driver's view from `kernel`; names are for users and messages.  Addresses are MSR
// numbers for MSR boxes and PCI-config offsets (within the instance's PCI
// function) for PCI boxes.  Discovered facts (which sockets exist, which PCI
// bus a socket's uncore lives on, how many CBos a part has) are NOT here: they
// belong to a Topology.
//
// Where the manual (Intel 329468-002) is ambiguous or wrong, the datum carries
// a `// DECISION:` comment quoting the manual's line; notes/decisions.md lists
// them all and tests/platforms/ivytown/model/box_descriptors_test.cc pins each one.
//
// Guarantees: pure data, no allocation, usable in constant expressions.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_BOX_DESCRIPTORS_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_BOX_DESCRIPTORS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "sdk/platforms/common/access_space.h"
#include "sdk/platforms/common/bit_range.h"
#include "sdk/platforms/common/register_units.h"

namespace uncore::ivytown {

// The nine IvyTown uncore box types, in the manual's chapter order.
enum class BoxType : uint8_t {
  kUbox = 0,
  kCbo,
  kHa,
  kImc,
  kIrp,
  kPcu,
  kQpi,
  kR2pcie,
  kR3qpi,
};
inline constexpr int kNumBoxTypes = 9;

// MSR or PCI configuration space (access_space.h).
using ::uncore::platforms::AccessSpace;

// A contiguous bit range within a 64-bit register value (bit_range.h).
using ::uncore::platforms::BitRange;

// Which register a field lives in.
enum class FieldRegister : uint8_t {
  kControl,  // the counter's own control register (Cn_MSR_PMON_CTLx, ...)
  kFilter,   // one of the box's filter registers, see FieldDescriptor::filter
};

// How a control or filter field may be used from an event spec.
enum class FieldUse : uint8_t {
  kEvent,     // set from the event (event select, extended select, umask)
  kModifier,  // a user modifier (`thresh`, `edge`, `inv`, `tid_en`, filters)
  kEngine,    // owned by the programming engine (en, ov_en, rst, q_occ_rst)
};

// What a field does, so that engines find the enable bit, the unit mask or
// the thread-id filter by meaning instead of by name.  Names stay for users
// (a spec naming a field, messages); code dispatches on roles.
enum class FieldRole : uint8_t {
  kEventSelect,          // ev_sel
  kExtendedSelect,       // ev_sel_ext (PCU, QPI)
  kUmask,                // umask
  kReset,                // rst (WO: clears the counter)
  kEdge,                 // edge_det
  kOverflowEnable,       // ov_en
  kEnable,               // en
  kThreshold,            // thresh
  kTidEnable,            // tid_en (CBo)
  kQueueOccupancyReset,  // q_occ_rst (HA, WO)
  kOccupancySelect,      // occ_sel (PCU)
  kOccupancyInvert,      // occ_invert (PCU)
  kOccupancyEdge,        // occ_edge_det (PCU)
  kThreadFilter,         // the thread-id filter that tid_en enables (CBo)
  kFilter,               // any other filter field
  kMatch,                // a packet-match field (QPI PKT_MATCHn)
  kMask,                 // a packet-mask field (QPI PKT_MASKn)
};

// How traffic is matched against a filter field's value (the simulator's
// reading of the manual's field descriptions).
enum class FilterMatch : uint8_t {
  kNone,              // a control field, or a filter bit not modelled
  kOpcodeEquals,      // the request's opcode equals the value
  kThreadEquals,      // the request's thread id equals the value (tid_en)
  kNodeAnyBit,        // the target node mask shares a bit with the value
  kStateAnyBit,       // the cache-state mask shares a bit with the value
  kAddressLow,        // address bits at the field's own position
  kAddressHigh,       // address[32 + width - 1 : 32]
  kFrequencyAtLeast,  // the uncore frequency is at least the value
  kPacketMatch,       // packet ^ value is 0 under the mask of pair `pair`
  kPacketMask,        // the mask of match/mask pair `pair`
  kPartOfRegister,    // a sub-field: its whole-register field matches
};

// One named field.  Names follow the Linux kernel's sysfs spelling so that
// users can compare with `perf stat` (`event`, `umask`, `edge`, `inv`,
// `thresh`, `tid_en`, `filter_state`, `filter_opc`, ...); the manual's own
// mnemonic is kept beside it for messages and documentation.
struct FieldDescriptor {
  std::string_view name;         // kernel spelling, e.g. "filter_opc"
  std::string_view manual_name;  // manual's spelling, e.g. "FILTER1.opc"
  FieldRegister reg = FieldRegister::kControl;
  uint8_t filter = 0;  // index into BoxDescriptor::filters when reg==kFilter
  BitRange bits{};
  FieldUse use = FieldUse::kModifier;
  bool is_flag = false;  // a single bit set by naming it (`edge`, `inv`)
  FieldRole role = FieldRole::kFilter;
  FilterMatch match = FilterMatch::kNone;  // filter fields only
  uint8_t pair = 0;  // kPacketMatch / kPacketMask: the match/mask pair
};

// A filter / match register shared by every counter of a box instance.
struct FilterRegisterDescriptor {
  std::string_view name;  // manual name with the instance as 'n'/'y'
  // MSR boxes: offset added to the instance's MSR base.
  // PCI boxes: config-space offset within the function chosen by
  // `in_aux_function` (false: the PMON function; true: the instance's
  // auxiliary function, e.g. the QPI mask/match device).
  uint32_t offset = 0;
  bool in_aux_function = false;
  uint8_t size_bits = 32;
  uint64_t writable_mask = 0;  // bits software may set; the rest are rsv
};

// A PCI device:function and the device id that identifies it (vendor
// 0x8086; register_units.h).
using ::uncore::platforms::PciFunction;

// One instance of a box type on a socket.
struct InstanceDescriptor {
  std::string_view name;  // "CBo3", "iMC1 channel 2", "QPI port 0"
  uint32_t msr_base = 0;  // MSR boxes: base every offset is added to
  PciFunction pmon{};     // PCI boxes: the PMON function
  PciFunction aux{};      // PCI boxes: a second function (QPI mask/match)
  int8_t global_status_bit = -1;  // U_MSR_PMON_GLOBAL_STATUS ov bit, -1: none
};

// Box control register layout (Cn_MSR_PMON_BOX_CTL and friends).
struct BoxControlLayout {
  BitRange frz{};
  BitRange rst_ctrs{};
  BitRange rst_ctrl{};
  uint64_t must_write_one = 0;  // "rsv 17:16: SW must write to 1"
};

// `FixedCounterDescriptor::box_status_bit` when the manual documents no bit
// of the box status register for the fixed counter (U-Box UCLK).
inline constexpr uint8_t kNoStatusBit = 0xFF;

// A fixed-function counter (U-Box UCLK, iMC DCLK).
struct FixedCounterDescriptor {
  std::string_view name;  // event name users write: "UCLK", "DCLK"
  std::string_view manual_control_name;
  std::string_view manual_counter_name;
  uint32_t control_offset = 0;
  uint32_t counter_offset = 0;  // PCI: low dword; high dword at +4
  uint8_t width = 0;
  // The manual gives two widths (notes/decisions.md #37): `width` is the
  // safe one for deltas, but a sampling preload cannot be placed exactly.
  bool width_disputed = false;
  BitRange en{};
  BitRange ov_en{};
  BitRange rst{};              // empty when the counter has no reset bit
  uint8_t box_status_bit = 0;  // bit in the box status register
  uint64_t control_writable_mask = 0;
  // U_MSR_PMON_GLOBAL_STATUS bit of the fixed counter; -1: the instance's
  // `global_status_bit` (the U-Box UCLK counter has its own, ov_u_fixed).
  int8_t global_status_bit = -1;
};

inline constexpr int kMaxCounters = 4;
inline constexpr int kMaxFilterRegisters = 4;

// The clock a box's counters tick in (the CLOCKTICKS event's category in the
// manual).
enum class ClockDomain : uint8_t {
  kUclk,   // uncore clock: U-Box, CBo, HA, R2PCIe, R3QPI (L1199, L1718)
  kDclk,   // DRAM clock, half the DDR rate: iMC (L2098)
  kIoClk,  // IRP clocks, "IO_CLKS" (L2555)
  kPclk,   // the PCU's fixed 800 MHz clock (L2776)
  kQfclk,  // QPI link-layer flit clock, "qfclks" (L3310)
};

// "UCLK", "DCLK", ...: the manual's name of the clock.
constexpr std::string_view ClockDomainName(ClockDomain clock) {
  switch (clock) {
    case ClockDomain::kUclk:
      return "UCLK";
    case ClockDomain::kDclk:
      return "DCLK";
    case ClockDomain::kIoClk:
      return "IO clock";
    case ClockDomain::kPclk:
      return "PCU clock (800 MHz)";
    case ClockDomain::kQfclk:
      return "QFCLK";
  }
  return "?";
}

// ---- the Linux kernel's ivbep uncore driver's view of a box ----
// Facts from arch/x86/events/intel/uncore_snbep.c
// (notes/kernel-ivbep-facts.md); no kernel code.

// Where the driver takes a filter register's value from: perf's config1 or
// config2, at `shift`.  `config` 0: the driver does not program it.
struct KernelFilterPacking {
  uint8_t config = 0;  // 1: config1, 2: config2, 0: not reachable
  uint8_t shift = 0;   // 0 or 32
};

// When the driver programs the box's filter registers at all.
enum class KernelFilterGate : uint8_t {
  kNever,         // no filter register reachable through perf
  kExtraRegs,     // per event, by its extra-register table (CBo)
  kGroupPerCode,  // group i only for event code `gate_code + i` (PCU bands)
  kEventCode,     // every group, only for event code `gate_code` (QPI)
};

// A set of filter bits the driver programs together, and when, as a
// message: "the driver programs it only ...".
struct KernelFilterGroup {
  uint8_t filter = 0;  // index into BoxDescriptor::filters
  uint64_t bits = 0;   // the bits of that register in the group
  std::string_view rule;
};

// An extra-register entry: an event whose perf config matches `value` under
// `mask` gets the groups of bit mask `groups` programmed.
struct KernelExtraReg {
  uint64_t value = 0;
  uint64_t mask = 0;
  uint8_t groups = 0;  // bit i: KernelView::groups[i]
};

// A scheduling constraint: event code -> counters (bit i: counter i).
struct KernelConstraint {
  uint8_t code = 0;
  uint8_t counters = 0;
};

struct KernelView {
  std::string_view pmu;     // PMU name: uncore_<pmu>, or uncore_<pmu>_<i>
  uint8_t boxes = 1;        // PMUs the driver registers (instances)
  uint64_t event_mask = 0;  // bits of perf config the driver keeps
  uint8_t counters = 0;     // general counters per box in the driver
  std::array<KernelFilterPacking, kMaxFilterRegisters> packing{};
  // Instances whose filter registers the driver reaches (QPI: no mask/match
  // device for port 2).
  uint8_t filter_instances = 0;
  KernelFilterGate gate = KernelFilterGate::kNever;
  uint8_t gate_code = 0;
  std::span<const KernelFilterGroup> groups{};
  std::span<const KernelExtraReg> extra_regs{};
  std::span<const KernelConstraint> constraints{};
};

struct BoxDescriptor {
  BoxType type = BoxType::kUbox;
  std::string_view name;         // spec-language name: "cbo", "imc", ...
  std::string_view manual_name;  // "C-Box", "iMC", ...
  // The manual's register-name prefix, 'n'/'y' standing for the instance
  // (Tables 1-2, 1-3): "Cn_MSR_PMON_" + "CTL0".
  std::string_view register_prefix;
  ClockDomain clock = ClockDomain::kUclk;
  std::span<const std::string_view> aliases;  // other accepted box names
  AccessSpace space = AccessSpace::kMsr;
  std::span<const InstanceDescriptor> instances;  // maximum per socket

  // General-purpose counters.
  uint8_t num_counters = 0;
  uint8_t counter_width = 0;  // 44 or 48
  // The manual gives two widths (notes/decisions.md #37).
  bool counter_width_disputed = false;
  // MSR: offsets added to the instance base.  PCI: config offsets; counter
  // data registers are read as two 32-bit halves, low dword at the offset.
  std::array<uint32_t, kMaxCounters> control_offsets{};
  std::array<uint32_t, kMaxCounters> counter_offsets{};
  uint64_t control_writable_mask = 0;  // everything else is reserved

  // Box-level registers.  The U-Box has no box control.
  std::optional<uint32_t> box_control_offset;
  std::optional<uint32_t> box_status_offset;
  BoxControlLayout box_control{};
  // Box status: bit of general counter i is `counter_status_bits[i]`.
  std::array<uint8_t, kMaxCounters> counter_status_bits{};
  uint64_t box_status_writable_mask = 0;

  std::span<const FieldDescriptor> fields;
  std::span<const FilterRegisterDescriptor> filters;
  std::optional<FixedCounterDescriptor> fixed_counter;

  uint16_t max_increment_per_cycle = 1;  // box-wide statement of the manual

  KernelView kernel{};  // how Linux's ivbep driver exposes the box

  // ---- the generic address engine ----
  constexpr uint32_t RegisterAddress(int instance, uint32_t offset) const {
    return space == AccessSpace::kMsr ? instances[instance].msr_base + offset
                                      : offset;
  }
  constexpr uint32_t CounterControlAddress(int instance, int counter) const {
    return RegisterAddress(instance, control_offsets[counter]);
  }
  constexpr uint32_t CounterAddress(int instance, int counter) const {
    return RegisterAddress(instance, counter_offsets[counter]);
  }
  constexpr std::optional<uint32_t> BoxControlAddress(int instance) const {
    if (!box_control_offset) return std::nullopt;
    return RegisterAddress(instance, *box_control_offset);
  }
  constexpr std::optional<uint32_t> BoxStatusAddress(int instance) const {
    if (!box_status_offset) return std::nullopt;
    return RegisterAddress(instance, *box_status_offset);
  }
  constexpr uint32_t FilterAddress(int instance, int filter) const {
    return RegisterAddress(instance, filters[filter].offset);
  }
  constexpr int num_instances() const {
    return static_cast<int>(instances.size());
  }
  constexpr uint64_t counter_mask() const {
    return counter_width >= 64 ? ~uint64_t{0}
                               : (uint64_t{1} << counter_width) - 1;
  }
  // The field named `name` (kernel spelling), or nullptr.  For user input
  // (a spec naming a field); engines use FindRole.
  constexpr const FieldDescriptor* FindField(std::string_view field) const {
    for (const FieldDescriptor& f : fields) {
      if (f.name == field) return &f;
    }
    return nullptr;
  }
  // The first field with `role`, or nullptr (every role but kFilter, kMatch
  // and kMask occurs at most once per box: static_asserted).
  constexpr const FieldDescriptor* FindRole(FieldRole field_role) const {
    for (const FieldDescriptor& f : fields) {
      if (f.role == field_role) return &f;
    }
    return nullptr;
  }
};

// The descriptor of each box type.
const BoxDescriptor& Box(BoxType type);
// All nine, in BoxType order.
std::span<const BoxDescriptor> AllBoxes();
// The box whose name or alias is `name` (case-insensitive), or nullptr.
const BoxDescriptor* FindBox(std::string_view name);

// ---- socket-global registers (U-Box global control, Table 2-1) ----
struct GlobalRegisters {
  uint32_t global_control = 0x0C00;  // U_MSR_PMON_GLOBAL_CTL
  uint32_t global_status = 0x0C01;   // U_MSR_PMON_GLOBAL_STATUS
  uint32_t global_config = 0x0C06;   // U_MSR_PMON_GLOBAL_CONFIG
  BitRange frz_all{31, 1};
  BitRange wk_on_pmi{30, 1};
  BitRange unfrz_all{29, 1};
  BitRange pmi_core_sel{0, 15};
  uint64_t global_control_writable_mask = 0xE0007FFF;
  uint64_t global_status_writable_mask = 0x07FFFFFF;  // ov bits 26:0, RW1C
};
inline constexpr GlobalRegisters kGlobal{};

}  // namespace uncore::ivytown

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_MODEL_BOX_DESCRIPTORS_H_
