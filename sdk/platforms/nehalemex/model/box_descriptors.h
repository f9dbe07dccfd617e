// Box descriptors: the Xeon 7500 (Nehalem-EX, family 6 model 0x2E) and Xeon
// E7 (Westmere-EX, model 0x2F) uncore PMON register model, as constexpr
// data.  Every register is an MSR, read and written on any CPU of the socket.
//
//   const BoxDescriptor& c = Box(BoxType::kC);
//   uint32_t ctl0 = c.ControlAddress(/*instance=*/3, /*counter=*/0);  // 0xDD0
//   uint32_t ctr0 = c.CounterAddress(3, 0);                           // 0xDD1
//   int n = c.NumInstances(Variant::kWestmereEx);                     // 10
//   uint64_t v = kGlobalCtl.en_all.Insert(0, 1);  // U_MSR_PMON_GLOBAL_CTL
//
// Boxes: U (system config controller, holds the socket-wide global control),
// C (coherence engine, one per core: 8 on NHM-EX, 10 on WSM-EX, at irregular
// MSR offsets), B (home agent), S (caching agent), M (memory controller),
// R (router), W (power controller, with a fixed counter).  Each box instance
// has a GLOBAL_CTL (ctr_en: one enable bit per counter), a GLOBAL_STATUS (ov)
// and a GLOBAL_OVF_CTL (clr_ov), then counter control/data pairs.
//
// Sources: the Xeon 7500 uncore programming guide (pp. 2-14 and 2-49 in
// /work/shared/spec), the Linux kernel's nhmex uncore driver (addresses,
// field layouts, sysfs format names) and LIKWID's register list.  Where they
// disagree or are silent the datum carries a `// DECISION:` comment and
// notes/decisions-xeon7500.md gives the question, each source and the choice.
//
// Guarantees: pure data, no allocation, usable in constant expressions; the
// invariants (no two registers at one address, every field inside its
// register, no two fields of a register overlapping) are static_asserts in
// box_descriptors.cc.
#ifndef UNCORE_SDK_PLATFORMS_NEHALEMEX_MODEL_BOX_DESCRIPTORS_H_
#define UNCORE_SDK_PLATFORMS_NEHALEMEX_MODEL_BOX_DESCRIPTORS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sdk/platforms/common/bit_range.h"

namespace uncore::nehalemex {

enum class Variant : uint8_t {
  kNehalemEx,   // Xeon 7500, model 0x2E, 8 C-Boxes
  kWestmereEx,  // Xeon E7, model 0x2F, 10 C-Boxes
};

inline constexpr int kCpuFamily = 6;
inline constexpr int kModelNehalemEx = 0x2E;
inline constexpr int kModelWestmereEx = 0x2F;

// The variant whose platform is named `name`: "nehalemex" or "westmereex",
// the canonical names only (aliases are the platform's identity record's:
// runtime::FindRegisterPlatform resolves them).
std::optional<Variant> VariantNamed(std::string_view name);
// "nehalemex" / "westmereex".
std::string_view PlatformName(Variant v);
// "Xeon 7500 (Nehalem-EX)" / "Xeon E7 (Westmere-EX)".
std::string_view VariantDisplayName(Variant v);
// The variant of a family-6 CPU model, if it is one of the two.
std::optional<Variant> VariantFromModel(int family, int model);

// A contiguous bit range within a 64-bit register value (bit_range.h).
using ::uncore::platforms::BitRange;

constexpr BitRange Bits(uint8_t hi, uint8_t lo) {
  return BitRange{lo, static_cast<uint8_t>(hi - lo + 1)};
}
constexpr BitRange Bit(uint8_t bit) { return BitRange{bit, 1}; }

// A named field of a register.
struct Field {
  std::string_view name;
  BitRange bits;
};

constexpr uint64_t FieldsMask(std::span<const Field> fields) {
  uint64_t m = 0;
  for (const Field& f : fields) m |= f.bits.mask();
  return m;
}

// ---------------------------------------------------------------------------
// U_MSR_PMON_GLOBAL_CTL (MSR 0xC00): the socket-wide control.
struct GlobalControl {
  uint32_t address = 0xC00;
  uint32_t status_address = 0xC01;   // U_MSR_PMON_GLOBAL_STATUS
  uint32_t ovf_ctl_address = 0xC02;  // U_MSR_PMON_GLOBAL_OVF_CTL
  // The U-Box's own counter enable (its ctr_en).
  // DECISION: bit 0 is the U-Box counter's enable and bits 4:1 select the
  // core that receives the PMI, as the kernel driver has them; the guide
  // pages at hand are silent on them.
  BitRange ctr_en = Bit(0);
  BitRange pmi_core_sel = Bits(4, 1);
  // Enables every uncore counter of the socket (with the box's ctr_en and
  // the counter's own en).
  BitRange en_all = Bit(28);
  // Write 1: resets every uncore counter of the socket; reads back 0.
  // DECISION: rst_all clears the counters' data and every box's overflow
  // status, not the control registers (the kernel never uses it; LIKWID
  // writes it alone to clear the counts).
  BitRange rst_all = Bit(29);
  // Freeze on PMI: when set, an overflow of a counter whose control has
  // pmi_en set makes the U-Box clear en_all (counting stops).  Setting it
  // does not freeze anything by itself.
  // DECISION: the freeze is modeled as the U-Box clearing en_all, the way
  // p. 2-49 says "the U-Box will disable counting".
  BitRange frz_all = Bit(31);

  constexpr uint64_t writable_mask() const {
    return ctr_en.mask() | pmi_core_sel.mask() | en_all.mask() |
           rst_all.mask() | frz_all.mask();
  }
};
inline constexpr GlobalControl kGlobalCtl{};

// ---------------------------------------------------------------------------
// Box types, in the kernel driver's order (ubox, cbox, bbox, sbox, mbox,
// rbox, wbox).
enum class BoxType : uint8_t { kU = 0, kC, kB, kS, kM, kR, kW };
inline constexpr int kNumBoxTypes = 7;
inline constexpr int kMaxInstances = 10;
inline constexpr int kMaxCounters = 8;
// DECISION: 48 bits for every counter, the W fixed counter included (p. 2-49
// gives 48 for the S-Box; the kernel uses 48 for every box and gives the
// fixed counter no width of its own).
inline constexpr uint8_t kCounterWidth = 48;

// Which control-register layout a box's counters use.
enum class ControlLayout : uint8_t {
  kGeneric,  // ev_sel 7:0, umask 15:8, edge 18, pmi_en 20, en 22, inv 23,
             // thresh 31:24 (C, S, W)
  kUbox,     // ev_sel 7:0, edge 18, pmi_en 20, en 22
  kBbox,     // en 0, ev_sel 5:1, pmi_en 6
  kMbox,     // en 0, pmi_en 1, count/storage/wrap/flag mode, inc_sel,
             // set_flag_sel
  kRbox,     // en 0, ev_sel 5:1, pmi_en 6
};

inline constexpr Field kGenericControlFields[] = {
    {"ev_sel", Bits(7, 0)},   {"umask", Bits(15, 8)}, {"edge", Bit(18)},
    {"pmi_en", Bit(20)},      {"en", Bit(22)},        {"inv", Bit(23)},
    {"thresh", Bits(31, 24)},
};
// DECISION: the U-Box control has only ev_sel, edge, pmi_en and en (the
// kernel's ubox format lists event and edge only; its enable is bit 22 as
// for the other 8-bit-event boxes).  umask, inv and thresh are reserved.
inline constexpr Field kUboxControlFields[] = {
    {"ev_sel", Bits(7, 0)},
    {"edge", Bit(18)},
    {"pmi_en", Bit(20)},
    {"en", Bit(22)},
};
// DECISION: B-Box pmi_en at bit 6: the kernel defines only en (0) and
// ev_sel (5:1) and uses config bits 7:6 as its own counter selector that it
// never writes; bit 6 as pmi_en follows the R-Box, which the kernel does
// define that way.  Bit 7 is reserved.
inline constexpr Field kBboxControlFields[] = {
    {"en", Bit(0)},
    {"ev_sel", Bits(5, 1)},
    {"pmi_en", Bit(6)},
};
inline constexpr Field kMboxControlFields[] = {
    {"en", Bit(0)},
    {"pmi_en", Bit(1)},
    {"count_mode", Bits(3, 2)},
    {"storage_mode", Bits(5, 4)},
    {"wrap_mode", Bit(6)},
    {"flag_mode", Bit(7)},
    {"inc_sel", Bits(13, 9)},
    {"set_flag_sel", Bits(21, 19)},
};
inline constexpr Field kRboxControlFields[] = {
    {"en", Bit(0)},
    {"ev_sel", Bits(5, 1)},
    {"pmi_en", Bit(6)},
};

// The kernel nhmex driver's sysfs format: where a perf term's value goes in
// (config, config1, config2).  `word` is 0, 1 or 2.
struct FormatField {
  std::string_view name;
  uint8_t word = 0;
  BitRange bits;
};

// DECISION: the names are the kernel's sysfs attribute names, so the 8-bit
// threshold is `thresh` (the kernel's variable is format_attr_thresh8; its
// sysfs file is `thresh`); `thresh8` is accepted as a spelling of it by the
// engine.  The B-Box and R-Box `event` is the 5-bit config:1-5.
inline constexpr FormatField kUboxFormat[] = {
    {"event", 0, Bits(7, 0)},
    {"edge", 0, Bit(18)},
};
inline constexpr FormatField kCboxFormat[] = {
    {"event", 0, Bits(7, 0)}, {"umask", 0, Bits(15, 8)},   {"edge", 0, Bit(18)},
    {"inv", 0, Bit(23)},      {"thresh", 0, Bits(31, 24)},
};
inline constexpr FormatField kBboxFormat[] = {
    {"event", 0, Bits(5, 1)},
    {"counter", 0, Bits(7, 6)},
    {"match", 1, Bits(63, 0)},
    {"mask", 2, Bits(63, 0)},
};
inline constexpr FormatField kSboxFormat[] = {
    {"event", 0, Bits(7, 0)},    {"umask", 0, Bits(15, 8)},
    {"edge", 0, Bit(18)},        {"inv", 0, Bit(23)},
    {"thresh", 0, Bits(31, 24)}, {"match", 1, Bits(63, 0)},
    {"mask", 2, Bits(63, 0)},
};
inline constexpr FormatField kMboxFormat[] = {
    {"count_mode", 0, Bits(3, 2)},    {"storage_mode", 0, Bits(5, 4)},
    {"wrap_mode", 0, Bit(6)},         {"flag_mode", 0, Bit(7)},
    {"inc_sel", 0, Bits(13, 9)},      {"set_flag_sel", 0, Bits(21, 19)},
    {"filter_cfg_en", 2, Bit(63)},    {"filter_match", 2, Bits(33, 0)},
    {"filter_mask", 2, Bits(61, 34)}, {"dsp", 1, Bits(31, 0)},
    {"thr", 1, Bits(31, 0)},          {"fvc", 1, Bits(31, 0)},
    {"pgt", 1, Bits(31, 0)},          {"map", 1, Bits(31, 0)},
    {"iss", 1, Bits(31, 0)},          {"pld", 1, Bits(63, 32)},
};
inline constexpr FormatField kRboxFormat[] = {
    {"event", 0, Bits(5, 1)},      {"xbr_mm_cfg", 0, Bits(63, 32)},
    {"xbr_match", 1, Bits(63, 0)}, {"xbr_mask", 2, Bits(63, 0)},
    {"qlx_cfg", 1, Bits(15, 0)},   {"iperf_cfg", 1, Bits(31, 0)},
};

// A match/mask facility: MM_CFG (bit 63 enables matching; writing MATCH or
// MASK while it is 1 raises a general-protection fault), then MATCH, MASK.
struct MatchMaskDescriptor {
  uint32_t mm_cfg = 0;  // 0: the facility has no MM_CFG (B-Box)
  uint32_t match = 0;
  uint32_t mask = 0;
  uint64_t match_writable = ~uint64_t{0};
  uint64_t mask_writable = ~uint64_t{0};

  constexpr bool present() const { return match != 0; }
};
// MM_CFG: bit 63 is mm_en; bits 62:0 read zero and ignore writes (p. 2-49).
inline constexpr BitRange kMmCfgEnable = Bit(63);

// An extra (sub-control) register of an M-Box, at an offset from the box's
// base, written from config1 (low or high half) for the events that use it.
enum class MboxSubRegister : uint8_t {
  kDsp = 0,
  kIss,
  kMap,
  kMscThr,
  kPgt,
  kPld,
  kZdpCtlFvc,
};
inline constexpr int kNumMboxSubRegisters = 7;
struct SubRegisterDescriptor {
  std::string_view name;  // the guide's / kernel's register name
  uint32_t offset = 0;    // from the box's GLOBAL_CTL
  uint64_t writable_nhm = 0;
  uint64_t writable_wsm = 0;
};
// DECISION: only the low 32 bits of each M-Box sub-control register are
// writable, as the kernel says ("only the lower 32 bits in these MSRs are
// significant"); ZDP_CTL_FVC is narrower and differs between the variants:
// NHM-EX uses bits 23:0 (shared 10:0 and 23, four 3-bit event fields from
// bit 11), WSM-EX bits 24:0 (shared 11:0 and 24, event fields from bit 12).
inline constexpr SubRegisterDescriptor kMboxSubRegisters[] = {
    {"DSP", 0x5, 0xFFFFFFFF, 0xFFFFFFFF},
    {"ISS", 0x6, 0xFFFFFFFF, 0xFFFFFFFF},
    {"MAP", 0x7, 0xFFFFFFFF, 0xFFFFFFFF},
    {"MSC_THR", 0x8, 0xFFFFFFFF, 0xFFFFFFFF},
    {"PGT", 0x9, 0xFFFFFFFF, 0xFFFFFFFF},
    {"PLD", 0xA, 0xFFFFFFFF, 0xFFFFFFFF},
    {"ZDP_CTL_FVC", 0xB, 0x00FFFFFF, 0x01FFFFFF},
};
// ZDP_CTL_FVC layout per variant: the shared bits and the 3-bit event field
// of inc_sel 0xD + n (n = 0..3).
struct FvcLayout {
  uint64_t shared_mask = 0;
  uint8_t event_field_lo = 0;
  constexpr BitRange EventField(int n) const {
    return BitRange{static_cast<uint8_t>(event_field_lo + 3 * n), 3};
  }
};
inline constexpr FvcLayout kFvcNehalemEx{.shared_mask = 0x7FF | (1u << 23),
                                         .event_field_lo = 11};
inline constexpr FvcLayout kFvcWestmereEx{.shared_mask = 0xFFF | (1u << 24),
                                          .event_field_lo = 12};
constexpr const FvcLayout& Fvc(Variant v) {
  return v == Variant::kNehalemEx ? kFvcNehalemEx : kFvcWestmereEx;
}
// The kernel's bbox_cmds_read / bbox_cmds_write M-Box events (inc_sel 0xD
// with this ZDP_CTL_FVC value) per variant.
struct MboxMemoryEvents {
  uint64_t read_fvc = 0;
  uint64_t write_fvc = 0;
};
constexpr MboxMemoryEvents MemoryEventFvc(Variant v) {
  return v == Variant::kNehalemEx ? MboxMemoryEvents{0x2800, 0x2820}
                                  : MboxMemoryEvents{0x5000, 0x5040};
}
inline constexpr int kMboxIncSelFvcFirst = 0xD;  // 0xD..0x10 use FVC fields

// M-Box address match/mask (MM_CFG, ADDR_MATCH, ADDR_MASK).
// DECISION: the match is 34 bits, the mask 27 bits (the kernel's masks);
// config2 carries them at 33:0 and 61:34 with filter_cfg_en at 63, and the
// top bit of that 28-bit field is dropped, as the kernel drops it.
inline constexpr uint64_t kMboxAddrMatchWritable = 0x3FFFFFFFFull;
inline constexpr uint64_t kMboxAddrMaskWritable = 0x7FFFFFFull;
inline constexpr int kMboxAddrMaskShift = 34;

// R-Box per-port registers: the R-Box instance r owns QPI ports 4r..4r+3.
// An R-Box event select (5 bits, < 0x18) names port (ev_sel / 6) of the box
// and one of six events; events 4 and 5 of a port use the two crossbar
// match/mask sets.
inline constexpr int kRboxPortsPerBox = 4;
inline constexpr int kRboxEventsPerPort = 6;
inline constexpr int kRboxMaxEventSelect = 0x17;
constexpr uint32_t RboxIperfCfg0(int port) { return 0xE04 + port; }
constexpr uint32_t RboxIperfCfg1(int port) { return 0xE24 + port; }
constexpr uint32_t RboxQlxCfg(int port) {
  return port < 4 ? 0xE0C + port : 0xE2C + port - 4;
}
constexpr uint32_t RboxXbrMmCfg(int port, int set) {
  return (set == 1 ? 0xE60 : 0xE70) + (port < 4 ? 0 : 0x10) + port * 4;
}
// DECISION: IPERF_CFG* are 32 bits, QLX_CFG 16 bits and the crossbar
// MM_CFG 32 bits (the widths of the kernel's config1/config fields); the
// crossbar MATCH/MASK take 64 bits.  The crossbar MM_CFG does not guard its
// MATCH/MASK with a GP fault: the kernel writes MM_CFG before them.
inline constexpr uint64_t kRboxIperfWritable = 0xFFFFFFFF;
inline constexpr uint64_t kRboxQlxWritable = 0xFFFF;
inline constexpr uint64_t kRboxXbrMmCfgWritable = 0xFFFFFFFF;

// The W-Box fixed counter (the uncore clock).
struct FixedCounterDescriptor {
  uint32_t counter = 0x394;  // W_MSR_PMON_FIXED_CTR
  uint32_t control = 0x395;  // W_MSR_PMON_FIXED_CTR_CTL
  BitRange en = Bit(0);      // in the fixed control
  // In the W-Box GLOBAL_CTL.  DECISION (sources silent): also the fixed
  // counter's ov / clr_ov bit in GLOBAL_STATUS / GLOBAL_OVF_CTL, the same
  // position as its enable.
  BitRange global_bit = Bit(31);
  // The kernel's clockticks alias: event=0xff selects the fixed counter.
  uint8_t kernel_event = 0xFF;
};
inline constexpr FixedCounterDescriptor kWFixed{};

struct BoxDescriptor {
  BoxType type = BoxType::kU;
  std::string_view name;        // "C-Box"
  std::string_view letter;      // "C": MSR names are <letter><n>_MSR_...
  std::string_view kernel_pmu;  // "cbox": the PMU is uncore_cbox[_N]
  int num_counters = 0;
  int instances_nhm = 0;
  int instances_wsm = 0;
  // Per instance: the address of the box's GLOBAL_CTL; STATUS is +1,
  // OVF_CTL +2, counter n's control +0x10 + 2n and data +0x11 + 2n.
  std::array<uint32_t, kMaxInstances> base{};
  ControlLayout layout = ControlLayout::kGeneric;
  std::span<const Field> control_fields;
  std::span<const FormatField> format;
  // The kernel's event mask: config bits a user may set (config word 0).
  uint64_t kernel_event_mask = 0;
  // Per instance (up to 2): the match/mask facility, if any.
  std::array<MatchMaskDescriptor, 2> match_mask{};
  bool has_fixed_counter = false;

  constexpr int NumInstances(Variant v) const {
    return v == Variant::kNehalemEx ? instances_nhm : instances_wsm;
  }
  constexpr uint32_t GlobalCtlAddress(int instance) const {
    return base[instance];
  }
  // The U-Box has none of its own (its STATUS and OVF_CTL are the socket's
  // U_MSR_PMON_GLOBAL_STATUS / OVF_CTL, at the same offsets).
  constexpr uint32_t StatusAddress(int instance) const {
    return base[instance] + 1;
  }
  constexpr uint32_t OvfCtlAddress(int instance) const {
    return base[instance] + 2;
  }
  constexpr uint32_t ControlAddress(int instance, int counter) const {
    return base[instance] + 0x10 + 2 * counter;
  }
  constexpr uint32_t CounterAddress(int instance, int counter) const {
    return base[instance] + 0x11 + 2 * counter;
  }
  // The box GLOBAL_CTL's ctr_en bits (and the fixed counter's enable).
  constexpr uint64_t CtrEnMask() const {
    uint64_t m = (uint64_t{1} << num_counters) - 1;
    if (has_fixed_counter) m |= kWFixed.global_bit.mask();
    return m;
  }
  constexpr uint64_t ControlWritable() const {
    return FieldsMask(control_fields);
  }
  constexpr const Field* FindField(std::string_view field) const {
    for (const Field& f : control_fields) {
      if (f.name == field) return &f;
    }
    return nullptr;
  }
  // Whether the control has the field (no pointer comparison: GCC's
  // sanitizer builds do not take those as constant expressions).
  constexpr bool HasField(std::string_view field) const {
    for (const Field& f : control_fields) {
      if (f.name == field) return true;
    }
    return false;
  }
  constexpr BitRange FieldBits(std::string_view field) const {
    const Field* f = FindField(field);
    return f == nullptr ? BitRange{} : f->bits;
  }
  constexpr const FormatField* FindFormat(std::string_view term) const {
    for (const FormatField& f : format) {
      if (f.name == term) return &f;
    }
    return nullptr;
  }
};

// Kernel event masks (config word 0 bits a perf event may carry).
inline constexpr uint64_t kGenericEventMask =
    Bits(7, 0).mask() | Bits(15, 8).mask() | Bit(18).mask() | Bit(23).mask() |
    Bits(31, 24).mask();
inline constexpr uint64_t kUboxEventMask = Bits(7, 0).mask() | Bit(18).mask();
inline constexpr uint64_t kBboxEventMask =
    Bits(5, 1).mask() | Bits(7, 6).mask();
inline constexpr uint64_t kMboxEventMask =
    Bits(3, 2).mask() | Bits(5, 4).mask() | Bit(6).mask() | Bit(7).mask() |
    Bits(13, 9).mask() | Bits(21, 19).mask();
// The R-Box's xbr_mm_cfg rides in config 63:32.
inline constexpr uint64_t kRboxEventMask =
    Bits(5, 1).mask() | Bits(63, 32).mask();

inline constexpr BoxDescriptor kUbox{
    .type = BoxType::kU,
    .name = "U-Box",
    .letter = "U",
    .kernel_pmu = "ubox",
    .num_counters = 1,
    .instances_nhm = 1,
    .instances_wsm = 1,
    .base = {0xC00},
    .layout = ControlLayout::kUbox,
    .control_fields = kUboxControlFields,
    .format = kUboxFormat,
    .kernel_event_mask = kUboxEventMask,
};

// The C-Box bases: C0 at 0xD00, then the kernel's per-instance offsets
// {0, 0x80, 0x40, 0xC0, 0x20, 0xA0, 0x60, 0xE0, 0x240, 0x2C0}: C-Box n of
// the core numbering sits at an interleaved address, and C8/C9 (WSM-EX
// only) jump past the R-Box range.  LIKWID's list agrees on all ten.
inline constexpr BoxDescriptor kCbox{
    .type = BoxType::kC,
    .name = "C-Box",
    .letter = "C",
    .kernel_pmu = "cbox",
    .num_counters = 6,
    .instances_nhm = 8,
    .instances_wsm = 10,
    .base = {0xD00, 0xD80, 0xD40, 0xDC0, 0xD20, 0xDA0, 0xD60, 0xDE0, 0xF40,
             0xFC0},
    .layout = ControlLayout::kGeneric,
    .control_fields = kGenericControlFields,
    .format = kCboxFormat,
    .kernel_event_mask = kGenericEventMask,
};

inline constexpr BoxDescriptor kBbox{
    .type = BoxType::kB,
    .name = "B-Box",
    .letter = "B",
    .kernel_pmu = "bbox",
    .num_counters = 4,
    .instances_nhm = 2,
    .instances_wsm = 2,
    .base = {0xC20, 0xC60},
    .layout = ControlLayout::kBbox,
    .control_fields = kBboxControlFields,
    .format = kBboxFormat,
    .kernel_event_mask = kBboxEventMask,
    // DECISION: the B-Box match/mask pair has no MM_CFG (the kernel names
    // none and writes MATCH then MASK directly; LIKWID names none), so no
    // write of it faults.
    .match_mask = {MatchMaskDescriptor{
                       .mm_cfg = 0, .match = 0xE45, .mask = 0xE46},
                   MatchMaskDescriptor{
                       .mm_cfg = 0, .match = 0xE4D, .mask = 0xE4E}},
};

// DECISION: S0's MM_CFG is 0xE48 (the kernel); LIKWID lists 0xE49, the
// same address it gives S0's MATCH, which cannot be.
inline constexpr BoxDescriptor kSbox{
    .type = BoxType::kS,
    .name = "S-Box",
    .letter = "S",
    .kernel_pmu = "sbox",
    .num_counters = 4,
    .instances_nhm = 2,
    .instances_wsm = 2,
    .base = {0xC40, 0xCC0},
    .layout = ControlLayout::kGeneric,
    .control_fields = kGenericControlFields,
    .format = kSboxFormat,
    .kernel_event_mask = kGenericEventMask,
    .match_mask = {MatchMaskDescriptor{
                       .mm_cfg = 0xE48, .match = 0xE49, .mask = 0xE4A},
                   MatchMaskDescriptor{
                       .mm_cfg = 0xE58, .match = 0xE59, .mask = 0xE5A}},
};
// S-Box event select 0x00 (TO_R_PROG_EV) counts match/mask hits.
inline constexpr uint8_t kSboxToRProgEv = 0x00;

// DECISION: the M-Box address MATCH/MASK are guarded by their MM_CFG like the
// S-Box's (a write while MM_CFG[63] is 1 faults): the kernel programs them in
// the same a-d order.
// DECISION: M1's counter 3 is 0xCF7 (base + 0x17, the kernel's stride);
// LIKWID lists 0xCB7, which is M0's counter 3.
inline constexpr BoxDescriptor kMbox{
    .type = BoxType::kM,
    .name = "M-Box",
    .letter = "M",
    .kernel_pmu = "mbox",
    .num_counters = 6,
    .instances_nhm = 2,
    .instances_wsm = 2,
    .base = {0xCA0, 0xCE0},
    .layout = ControlLayout::kMbox,
    .control_fields = kMboxControlFields,
    .format = kMboxFormat,
    .kernel_event_mask = kMboxEventMask,
    .match_mask = {MatchMaskDescriptor{.mm_cfg = 0xE54,
                                       .match = 0xE55,
                                       .mask = 0xE56,
                                       .match_writable = kMboxAddrMatchWritable,
                                       .mask_writable = kMboxAddrMaskWritable},
                   MatchMaskDescriptor{.mm_cfg = 0xE5C,
                                       .match = 0xE5D,
                                       .mask = 0xE5E,
                                       .match_writable = kMboxAddrMatchWritable,
                                       .mask_writable = kMboxAddrMaskWritable}},
};

inline constexpr BoxDescriptor kRbox{
    .type = BoxType::kR,
    .name = "R-Box",
    .letter = "R",
    .kernel_pmu = "rbox",
    .num_counters = 8,
    .instances_nhm = 2,
    .instances_wsm = 2,
    .base = {0xE00, 0xE20},
    .layout = ControlLayout::kRbox,
    .control_fields = kRboxControlFields,
    .format = kRboxFormat,
    .kernel_event_mask = kRboxEventMask,
};

// DECISION: W-Box control at 0xC90 + 2n and data at 0xC91 + 2n.  The kernel
// names 0xC90 "CNT0" and 0xC91 "EVT_SEL0" but uses 0xC90 as the control
// and 0xC91 as the counter; LIKWID names them EVNT_SEL0 / CTR0.  Both put
// the control at 0xC90.
inline constexpr BoxDescriptor kWbox{
    .type = BoxType::kW,
    .name = "W-Box",
    .letter = "W",
    .kernel_pmu = "wbox",
    .num_counters = 4,
    .instances_nhm = 1,
    .instances_wsm = 1,
    .base = {0xC80},
    .layout = ControlLayout::kGeneric,
    .control_fields = kGenericControlFields,
    .format = kCboxFormat,
    .kernel_event_mask = kGenericEventMask,
    .has_fixed_counter = true,
};

inline constexpr std::array<const BoxDescriptor*, kNumBoxTypes> kBoxes = {
    &kUbox, &kCbox, &kBbox, &kSbox, &kMbox, &kRbox, &kWbox};

constexpr const BoxDescriptor& Box(BoxType t) {
  return *kBoxes[static_cast<int>(t)];
}

// The box whose kernel PMU name is `pmu` ("cbox"), if any.
const BoxDescriptor* FindBoxByKernelName(std::string_view pmu);

// "uncore_cbox_3"; "uncore_ubox" / "uncore_wbox" for the one-instance boxes
// (the kernel's PMU names).
std::string KernelPmuName(const BoxDescriptor& box, int instance);

// A register of the model, for listings and the allow-list.
struct RegisterInfo {
  uint32_t address = 0;
  std::string name;       // "C3_MSR_PMON_CTL0"
  uint64_t writable = 0;  // bits software may set; others are reserved
  BoxType box = BoxType::kU;
  int instance = 0;
};
// Every PMON register of a variant, in address order.
std::span<const RegisterInfo> AllRegisters(Variant v);
// The register at `address`, or nullptr.
const RegisterInfo* FindRegister(Variant v, uint32_t address);

}  // namespace uncore::nehalemex

#endif  // UNCORE_SDK_PLATFORMS_NEHALEMEX_MODEL_BOX_DESCRIPTORS_H_
