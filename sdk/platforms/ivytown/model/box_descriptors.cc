// The nine IvyTown uncore box descriptors, as constexpr data.
//
// Source: Intel 329468-002 (the manual, ../shared/spec/ivytown-uncore-manual-
// 329468-002.txt; `Lnnnn` = its line).  PCI device ids are recorded facts
// (notes/kernel-ivbep-facts.md).  Every `// DECISION:` is listed in
// notes/decisions.md and pinned by
// tests/platforms/ivytown/model/box_descriptors_test.cc.
#include "sdk/platforms/ivytown/model/box_descriptors.h"

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "sdk/common/text.h"

namespace uncore::ivytown {
namespace {

// ---------------------------------------------------------------------------
// Helpers.

// Bits hi:lo, as the manual writes them.
constexpr BitRange Bits(int hi, int lo) {
  return BitRange{static_cast<uint8_t>(lo), static_cast<uint8_t>(hi - lo + 1)};
}
constexpr BitRange Bit(int b) { return Bits(b, b); }

constexpr FieldDescriptor Ctl(std::string_view name,
                              std::string_view manual_name, BitRange bits,
                              FieldUse use, FieldRole role,
                              bool is_flag = false) {
  return FieldDescriptor{.name = name,
                         .manual_name = manual_name,
                         .reg = FieldRegister::kControl,
                         .filter = 0,
                         .bits = bits,
                         .use = use,
                         .is_flag = is_flag,
                         .role = role};
}

constexpr FieldDescriptor Flt(std::string_view name,
                              std::string_view manual_name, uint8_t filter,
                              BitRange bits, FilterMatch match,
                              FieldRole role = FieldRole::kFilter,
                              uint8_t pair = 0) {
  return FieldDescriptor{.name = name,
                         .manual_name = manual_name,
                         .reg = FieldRegister::kFilter,
                         .filter = filter,
                         .bits = bits,
                         .use = FieldUse::kModifier,
                         .is_flag = false,
                         .role = role,
                         .match = match,
                         .pair = pair};
}

constexpr PciFunction Pci(uint8_t device, uint8_t function,
                          uint16_t device_id) {
  return PciFunction{
      .device = device, .function = function, .device_id = device_id};
}

constexpr InstanceDescriptor MsrInstance(std::string_view name,
                                         uint32_t msr_base,
                                         int global_status_bit) {
  return InstanceDescriptor{name, msr_base, PciFunction{}, PciFunction{},
                            static_cast<int8_t>(global_status_bit)};
}

constexpr InstanceDescriptor PciInstance(std::string_view name,
                                         PciFunction pmon,
                                         int global_status_bit,
                                         PciFunction aux = PciFunction{}) {
  return InstanceDescriptor{name, 0, pmon, aux,
                            static_cast<int8_t>(global_status_bit)};
}

// ---------------------------------------------------------------------------
// Counter-control fields (notes/field-names.md is the contract for names).

constexpr FieldDescriptor kEventField = Ctl(
    "event", "ev_sel", Bits(7, 0), FieldUse::kEvent, FieldRole::kEventSelect);
constexpr FieldDescriptor kUmaskField =
    Ctl("umask", "umask", Bits(15, 8), FieldUse::kEvent, FieldRole::kUmask);
constexpr FieldDescriptor kRstField =
    Ctl("rst", "rst", Bit(17), FieldUse::kEngine, FieldRole::kReset);
constexpr FieldDescriptor kEdgeField =
    Ctl("edge", "edge_det", Bit(18), FieldUse::kModifier, FieldRole::kEdge,
        /*is_flag=*/true);
constexpr FieldDescriptor kOvEnField = Ctl(
    "ov_en", "ov_en", Bit(20), FieldUse::kEngine, FieldRole::kOverflowEnable);
// DECISION: #11 QPI extra select bit at 21, not 16.  L3167 "ev_sel_ext21RW-V0
// ExtensionbittotheEventSelectfield" (Table 2-131) vs L3300 "anextrabit(b16)
// mustbeset"; bit 16 is rsv in the same table (L3184).
constexpr FieldDescriptor kExtField = Ctl(
    "ext", "ev_sel_ext", Bit(21), FieldUse::kEvent, FieldRole::kExtendedSelect);
constexpr FieldDescriptor kEnField =
    Ctl("en", "en", Bit(22), FieldUse::kEngine, FieldRole::kEnable);
// DECISION: #12 no `inv` anywhere.  Every counter-control field table marks
// bit 23 reserved: L858 (U-Box), L995 (CBo) "rsv23RV0Reserved;SWmustwriteto0
// elsebehaviorisundefined", L1639 (HA), L2103 (iMC), L2475 (IRP), L3164
// (QPI), L3934 (R2PCIe), L4188 (R3QPI); the PCU's table is missing and its
// invert is occ_invert (#9).  The kernel's ivbep event masks drop bit 23 too.
// No field covers it, so the writable masks exclude it and the spec parser
// refuses `inv` with the reason.  The event text that still mentions invert
// (L1204, L2248) matches the previous generation, whose bit 23 the kernel's
// SNB-EP masks keep.
constexpr FieldDescriptor kThresh8Field =
    Ctl("thresh", "thresh", Bits(31, 24), FieldUse::kModifier,
        FieldRole::kThreshold);
// U-Box (L857 "thresh28:24RW0Thresholdusedincountercomparison") and PCU.
constexpr FieldDescriptor kThresh5Field =
    Ctl("thresh", "thresh", Bits(28, 24), FieldUse::kModifier,
        FieldRole::kThreshold);

// ---------------------------------------------------------------------------
// U-Box (§2.2, L774-920).  MSR base 0xC00: fixed 0xC08/0xC09, CTL 0xC10-11,
// BOX_STATUS 0xC15, CTR 0xC16-17 (L833).  No box control (L487).

constexpr std::string_view kUboxAliases[] = {"uncore_ubox", "u"};

constexpr FieldDescriptor kUboxFields[] = {
    kEventField, kUmaskField, kRstField,     kEdgeField,
    kOvEnField,  kEnField,    kThresh5Field,
};

constexpr InstanceDescriptor kUboxInstances[] = {
    // L799 "ov_u1RW1C0SetifoverflowisdetectedfromaUBoxPMONregister".
    MsrInstance("U-Box", 0x0C00, 1),
};

constexpr FixedCounterDescriptor kUclk{
    .name = "UCLK",
    .manual_control_name = "U_MSR_PMON_UCLK_FIXED_CTL",
    .manual_counter_name = "U_MSR_PMON_UCLK_FIXED_CTR",
    .control_offset = 0x08,
    .counter_offset = 0x09,
    // DECISION: #4 44 bits.  L811 "a48-bitfixedcounterwhichincrementseach
    // u-clock" vs the field table L898 "rsv63:44RV0Reservedevent_count43:0
    // RW-V048-bitperformanceeventcounter".  Bits 63:44 are reserved, and a
    // modular delta at 44 bits is exact on 44- or 48-bit hardware.
    .width = 44,
    .width_disputed = true,  // DECISION: #37 no sampling on UCLK
    .en = Bit(22),           // L892 "en22RW-V0LocalCounterEnable"
    .ov_en = Bit(20),        // L894
    .rst = {},               // L898 "rsv19:0": no reset bit
    // DECISION: #5 no box-status bit.  L855 "ov1:0 ... fromthecorresponding
    // UBOXPMONregister" has two bits for CTR1:0; L895-897 say the fixed
    // counter sets "U_MSR_PMON_BOX_STATUS.ov" and "GLOBAL_STATUS.ov_u_fixed".
    // We rely on ov_u_fixed alone.
    .box_status_bit = kNoStatusBit,
    .control_writable_mask = 0x00500000,
    // L801 "ov_u_fixed0RW1C0SetifoverflowisdetectedfromUBoxfixedPMON".
    .global_status_bit = 0,
};

// ---------------------------------------------------------------------------
// CBo (§2.3, L921-1540).  Base 0xD00 + 0x20*n: BOX_CTL +0x04, CTL +0x10..13,
// FILTER0 +0x14, CTR +0x16..19, FILTER1 +0x1A (Table 2-12, L962-970).

constexpr std::string_view kCboAliases[] = {"cbox", "c", "uncore_cbox"};

constexpr uint8_t kCboFilter0 = 0;
constexpr uint8_t kCboFilter1 = 1;

constexpr FieldDescriptor kCboFields[] = {
    kEventField,
    kUmaskField,
    kRstField,
    kEdgeField,
    // L998 "tid_en19RW-V0TIDFilterEnable".  L997: 21:20 rsv, so no ov_en.
    Ctl("tid_en", "tid_en", Bit(19), FieldUse::kModifier, FieldRole::kTidEnable,
        /*is_flag=*/true),
    kEnField,
    kThresh8Field,
    // L1039 "tid4:000[4]Non-threadrelateddata[3:1]Core-ID[0]Thread1/0".
    Flt("filter_tid", "FILTER0.tid", kCboFilter0, Bits(4, 0),
        FilterMatch::kThreadEquals, FieldRole::kThreadFilter),
    // DECISION: #18 state is 22:17 (6 bits).  L1031 "state22:17RW0Selectstate"
    // (Table 2-16) vs L1249 "CBoFilter0[23:17]" and L1242 "5-bitstatefield";
    // bit 23 is rsv in the field table (L1030 "rsv31:23").
    Flt("filter_state", "FILTER0.state", kCboFilter0, Bits(22, 17),
        FilterMatch::kStateAnyBit),
    // DECISION: #19 nid is 15:0.  L1049 "rsv19:15RV0Reservednid15:0RW0Matchon
    // TargetNodeID" overlaps at bit 15; the field wins, 19:16 stay reserved.
    Flt("filter_nid", "FILTER1.nid", kCboFilter1, Bits(15, 0),
        FilterMatch::kNodeAnyBit),
    // L1046 "opc(7bIDIOpcodew/top2b0x3)28:20RW0MatchonOpcode".
    Flt("filter_opc", "FILTER1.opc", kCboFilter1, Bits(28, 20),
        FilterMatch::kOpcodeEquals),
    // L1044 nc, isoc: not modelled by the simulator.
    Flt("filter_nc", "FILTER1.nc", kCboFilter1, Bit(30), FilterMatch::kNone),
    Flt("filter_isoc", "FILTER1.isoc", kCboFilter1, Bit(31),
        FilterMatch::kNone),
};

constexpr FilterRegisterDescriptor kCboFilters[] = {
    {.name = "Cn_MSR_PMON_BOX_FILTER",
     .offset = 0x14,
     .size_bits = 32,
     .writable_mask = 0x007E001F},
    {.name = "Cn_MSR_PMON_BOX_FILTER1",
     .offset = 0x1A,
     .size_bits = 32,
     .writable_mask = 0xDFF0FFFF},
};

// DECISION: #2 CBo n reports in U_MSR_PMON_GLOBAL_STATUS bit 3+n.  L795
// "ov_c[14-0]17:3RW1C0 ... 1bitforeachCBowherebit5correspondsCBo0": 15 CBos
// fill 17:3 exactly; "bit 5" would put CBo13/14 on ov_h0/ov_h1 (L791-793).
constexpr InstanceDescriptor CboInstance(std::string_view name, int n) {
  return MsrInstance(name, static_cast<uint32_t>(0x0D00 + 0x20 * n), 3 + n);
}

constexpr InstanceDescriptor kCboInstances[] = {
    CboInstance("CBo0", 0),   CboInstance("CBo1", 1),
    CboInstance("CBo2", 2),   CboInstance("CBo3", 3),
    CboInstance("CBo4", 4),   CboInstance("CBo5", 5),
    CboInstance("CBo6", 6),   CboInstance("CBo7", 7),
    CboInstance("CBo8", 8),   CboInstance("CBo9", 9),
    CboInstance("CBo10", 10), CboInstance("CBo11", 11),
    CboInstance("CBo12", 12), CboInstance("CBo13", 13),
    CboInstance("CBo14", 14),
};

// ---------------------------------------------------------------------------
// Common PCI-box layout: CTL D8/DC/E0/E4, CTR A0/A8/B0/B8 (low dword at the
// offset, high dword at +4), BOX_CTL F4, BOX_STATUS F8.

constexpr std::array<uint32_t, kMaxCounters> kPciControls = {0xD8, 0xDC, 0xE0,
                                                             0xE4};
constexpr std::array<uint32_t, kMaxCounters> kPciCounters = {0xA0, 0xA8, 0xB0,
                                                             0xB8};

// Box control: frz 8, rst_ctrs 1, rst_ctrl 0; "rsv17:16RV0Reserved;SWmust
// writeto1" for CBo (L987), HA (L1618), iMC (L2079), IRP (L2453), PCU
// (L2747), QPI (L3137).  R2PCIe (L3901) and R3QPI (L4161) have "ig31:9".
constexpr BoxControlLayout kBoxControlMustWriteOne{
    .frz = Bit(8),
    .rst_ctrs = Bit(1),
    .rst_ctrl = Bit(0),
    .must_write_one = 0x00030000};
constexpr BoxControlLayout kBoxControlPlain{
    .frz = Bit(8), .rst_ctrs = Bit(1), .rst_ctrl = Bit(0), .must_write_one = 0};

// Fields of the iMC, R2PCIe and R3QPI counter controls (Tables 2-74, 2-175,
// 2-192): the common layout with ov_en and no q_occ_rst.
constexpr FieldDescriptor kCommonPciFields[] = {
    kEventField, kUmaskField, kRstField,     kEdgeField,
    kOvEnField,  kEnField,    kThresh8Field,
};

// ---------------------------------------------------------------------------
// HA (§2.4, L1541-2001; Table 2-37, L1595).

constexpr std::string_view kHaAliases[] = {"uncore_ha"};

constexpr FieldDescriptor kHaFields[] = {
    kEventField,
    kUmaskField,
    // L1659 "q_occ_rst16WO0Whensetto1,clearqueueoccupancycounter".
    Ctl("q_occ_rst", "q_occ_rst", Bit(16), FieldUse::kEngine,
        FieldRole::kQueueOccupancyReset),
    kRstField,
    kEdgeField,
    kOvEnField,
    kEnField,
    kThresh8Field,
    // L1673 "lo_addr31:6RWS0 ... [31:6]", "hi_addr13:0RWS0 ... [45:32]",
    // "opc5:0RWS0Matchtoincomingopcode".
    Flt("filter_addr_lo", "ADDRMATCH0.lo_addr", 0, Bits(31, 6),
        FilterMatch::kAddressLow),
    Flt("filter_addr_hi", "ADDRMATCH1.hi_addr", 1, Bits(13, 0),
        FilterMatch::kAddressHigh),
    Flt("filter_opc", "OPCODEMATCH.opc", 2, Bits(5, 0),
        FilterMatch::kOpcodeEquals),
};

constexpr FilterRegisterDescriptor kHaFilters[] = {
    {.name = "HAn_PCI_PMON_BOX_ADDRMATCH0",
     .offset = 0x40,
     .size_bits = 32,
     .writable_mask = 0xFFFFFFC0},
    {.name = "HAn_PCI_PMON_BOX_ADDRMATCH1",
     .offset = 0x44,
     .size_bits = 32,
     .writable_mask = 0x00003FFF},
    {.name = "HAn_PCI_PMON_BOX_OPCODEMATCH",
     .offset = 0x48,
     .size_bits = 32,
     .writable_mask = 0x0000003F},
};

constexpr InstanceDescriptor kHaInstances[] = {
    PciInstance("HA0", Pci(14, 1, 0x0E30), 18),
    // DECISION: #8 HA1 is D28:F1.  L1595 "HA1PMONRegistersD28:F1" (Table 2-37,
    // and the clean p55 page) vs L570 "HA1D30:F1" (Table 1-3), which would
    // collide with iMC1 channel 3 (L2063 "MC1Channel3PMONRegistersD30:F1").
    PciInstance("HA1", Pci(28, 1, 0x0E38), 19),
};

// ---------------------------------------------------------------------------
// iMC (§2.5, L2002-2413; Table 2-71, L2063).

constexpr std::string_view kImcAliases[] = {"uncore_imc", "mc"};

// DECISION: #17 channel y of controller m.  L2063 "MC0Channel0PMONRegisters
// D16:F4MC0Channel1 ... D16:F5MC0Channel2 ... D16:F0MC0Channel3 ... D16:F1"
// (MC1 the same on D30).  Device ids follow the function (0x0EB4 = D16:F4);
// the kernel's comments call 0x0EB0/0x0EB1 "Channel 3/4", but its box order
// (eb4, eb5, eb0, eb1) is the manual's channel order.
// GLOBAL_STATUS: L789 "ov_m020 ... iMC0", L787 "ov_m121 ... iMC1".
constexpr InstanceDescriptor kImcInstances[] = {
    PciInstance("iMC0 channel 0", Pci(16, 4, 0x0EB4), 20),
    PciInstance("iMC0 channel 1", Pci(16, 5, 0x0EB5), 20),
    PciInstance("iMC0 channel 2", Pci(16, 0, 0x0EB0), 20),
    PciInstance("iMC0 channel 3", Pci(16, 1, 0x0EB1), 20),
    PciInstance("iMC1 channel 0", Pci(30, 4, 0x0EF4), 21),
    PciInstance("iMC1 channel 1", Pci(30, 5, 0x0EF5), 21),
    PciInstance("iMC1 channel 2", Pci(30, 0, 0x0EF0), 21),
    PciInstance("iMC1 channel 3", Pci(30, 1, 0x0EF1), 21),
};

// DECISION: #3 the DCLK fixed counter overflows into BOX_STATUS bit 0 and
// general counters 0-3 into bits 1-4.  L2088-2090 "ov4:0 ... Bit4-overflowfor
// *_PMON_CTR4Bit1-overflowfor*_PMON_CTR1Bit0-overflowforthefixedcounter":
// there is no CTR4, so bit i+1 is CTR i.
constexpr FixedCounterDescriptor kDclk{
    .name = "DCLK",
    .manual_control_name = "MC_CHy_PCI_PMON_FIXED_CTL",
    .manual_counter_name = "MC_CHy_PCI_PMON_FIXED_CTR",
    .control_offset = 0xF0,
    .counter_offset = 0xD0,  // "D4+D0": low dword at 0xD0
    .width = 48,             // L2152 "event_count47:0"
    // Table 2-75 (L2145-2152): en 22, ov_en 20, rst 19 (WO), the rest ig/rsv.
    .en = Bit(22),
    .ov_en = Bit(20),
    .rst = Bit(19),
    .box_status_bit = 0,
    .control_writable_mask = 0x00580000,
    .global_status_bit = -1,  // the controller's ov_m bit
};

// ---------------------------------------------------------------------------
// IRP (§2.6, L2414-2668; Table 2-105, L2430-2453).

constexpr std::string_view kIrpAliases[] = {"uncore_irp"};

// L2478 "rsv21:20RV0Reserved": no ov_en.
constexpr FieldDescriptor kIrpFields[] = {
    kEventField, kUmaskField, kRstField, kEdgeField, kEnField, kThresh8Field,
};

// DECISION: #7 no GLOBAL_STATUS bit for the IRP: Table 2-3 (L777-801) has none
// and the IRP CTL has no ov_en (L2478).  Its BOX_STATUS (F8, L2460) is kept.
constexpr InstanceDescriptor kIrpInstances[] = {
    PciInstance("IRP", Pci(5, 6, 0x0E39), -1),
};

// ---------------------------------------------------------------------------
// PCU (§2.7, L2669-3063; Table 2-118, L2713).  MSR base 0xC20: BOX_CTL 0xC24,
// CTL 0xC30-33, FILTER 0xC34, BOX_STATUS 0xC35, CTR 0xC36-39.

constexpr std::string_view kPcuAliases[] = {"uncore_pcu"};

// DECISION: #9 the PCU CTL field table (Table 2-121) is missing from the
// extraction (L2756 jumps from the box status to "-.occ_invert-Changesthe.
// threshtestcondition").  The layout below rests on: L505 (same bit layout in
// every box "withonlyminorexceptions"), L2697 "PCU_MSR_PMON_CTL.ov_en", the
// events' "ExtraSelectBit" column (L2768) placed at 21 like QPI's ev_sel_ext
// (L3167), Table 2-126 (L2763-2768: .occ_sel, .thresh up to 0x5,
// .occ_edge_det), POWER_STATE_OCCUPANCY's umasks 0x40/0x80/0xC0 (= occ_sel in
// CTL 15:14), and the kernel facts (thresh5 = 28:24, occ_sel 14-15,
// occ_invert 30, occ_edge_det 31).  No inv: bit 23 is not documented here.
constexpr FieldDescriptor kPcuFields[] = {
    kEventField,
    // DECISION: #21 umask 15:8 carries POWER_STATE_OCCUPANCY's 0x40/0x80/
    // 0xC0; occ_sel is its top two bits (the one overlap of control fields).
    kUmaskField,
    Ctl("occ_sel", "occ_sel", Bits(15, 14), FieldUse::kModifier,
        FieldRole::kOccupancySelect),
    kRstField,
    kEdgeField,
    kOvEnField,
    kExtField,
    kEnField,
    kThresh5Field,
    Ctl("occ_invert", "occ_invert", Bit(30), FieldUse::kModifier,
        FieldRole::kOccupancyInvert, /*is_flag=*/true),
    Ctl("occ_edge", "occ_edge_det", Bit(31), FieldUse::kModifier,
        FieldRole::kOccupancyEdge, /*is_flag=*/true),
    // L2937-2976: FREQ_BAND0..3_CYCLES depend on PCUFilter[7:0] .. [31:24].
    Flt("filter_band0", "PCUFilter[7:0]", 0, Bits(7, 0),
        FilterMatch::kFrequencyAtLeast),
    Flt("filter_band1", "PCUFilter[15:8]", 0, Bits(15, 8),
        FilterMatch::kFrequencyAtLeast),
    Flt("filter_band2", "PCUFilter[23:16]", 0, Bits(23, 16),
        FilterMatch::kFrequencyAtLeast),
    Flt("filter_band3", "PCUFilter[31:24]", 0, Bits(31, 24),
        FilterMatch::kFrequencyAtLeast),
};

constexpr FilterRegisterDescriptor kPcuFilters[] = {
    {.name = "PCU_MSR_PMON_BOX_FILTER",
     .offset = 0x14,
     .size_bits = 32,
     .writable_mask = 0xFFFFFFFF},
};

constexpr InstanceDescriptor kPcuInstances[] = {
    // L797 "ov_p2RW1C0SetifoverflowisdetectedfromaPCUPMONregister".
    MsrInstance("PCU", 0x0C20, 2),
};

// ---------------------------------------------------------------------------
// QPI link layer (§2.8, L3064-3857; Table 2-128, L3109).

constexpr std::string_view kQpiAliases[] = {"uncore_qpi", "qpi_ll"};

// Filter registers, in the port's mask/match function (L3109).
constexpr uint8_t kQpiMatch0 = 0;
constexpr uint8_t kQpiMatch1 = 1;
constexpr uint8_t kQpiMask0 = 2;
constexpr uint8_t kQpiMask1 = 3;

// PKT_MATCH0/MASK0: RNID_4 31, DNID 17:13, MC 12:9, OPC 8:5, VNW 4:3
// (Table 2-134, L3197-3200); PKT_MATCH1/MASK1: RDS 19:16, RNID_3_0 3:0
// (Table 2-133, L3192-3196).  `match0` ... `mask1` alias the whole register
// (the kernel's config1/config2 halves).
// DECISION: #21 the aliases overlap their subfields by design; reserved bits
// (L3192/L3197 "Reserved;Mustwriteto0") stay outside `writable_mask`, so a
// value with them set must be refused, not masked.
constexpr FieldDescriptor kQpiFields[] = {
    kEventField,
    kUmaskField,
    kRstField,
    kEdgeField,
    kOvEnField,
    kExtField,
    kEnField,
    kThresh8Field,
    Flt("match0", "PKT_MATCH0", kQpiMatch0, Bits(31, 0),
        FilterMatch::kPacketMatch, FieldRole::kMatch, 0),
    Flt("match_rnid4", "PKT_MATCH0.RNID_4", kQpiMatch0, Bit(31),
        FilterMatch::kPartOfRegister, FieldRole::kMatch),
    Flt("match_dnid", "PKT_MATCH0.DNID", kQpiMatch0, Bits(17, 13),
        FilterMatch::kPartOfRegister, FieldRole::kMatch),
    Flt("match_mc", "PKT_MATCH0.MC", kQpiMatch0, Bits(12, 9),
        FilterMatch::kPartOfRegister, FieldRole::kMatch),
    Flt("match_opc", "PKT_MATCH0.OPC", kQpiMatch0, Bits(8, 5),
        FilterMatch::kPartOfRegister, FieldRole::kMatch),
    Flt("match_vnw", "PKT_MATCH0.VNW", kQpiMatch0, Bits(4, 3),
        FilterMatch::kPartOfRegister, FieldRole::kMatch),
    Flt("match1", "PKT_MATCH1", kQpiMatch1, Bits(31, 0),
        FilterMatch::kPacketMatch, FieldRole::kMatch, 1),
    Flt("match_rds", "PKT_MATCH1.RDS", kQpiMatch1, Bits(19, 16),
        FilterMatch::kPartOfRegister, FieldRole::kMatch),
    Flt("match_rnid30", "PKT_MATCH1.RNID_3_0", kQpiMatch1, Bits(3, 0),
        FilterMatch::kPartOfRegister, FieldRole::kMatch),
    Flt("mask0", "PKT_MASK0", kQpiMask0, Bits(31, 0), FilterMatch::kPacketMask,
        FieldRole::kMask, 0),
    Flt("mask_rnid4", "PKT_MASK0.RNID_4", kQpiMask0, Bit(31),
        FilterMatch::kPartOfRegister, FieldRole::kMask),
    Flt("mask_dnid", "PKT_MASK0.DNID", kQpiMask0, Bits(17, 13),
        FilterMatch::kPartOfRegister, FieldRole::kMask),
    Flt("mask_mc", "PKT_MASK0.MC", kQpiMask0, Bits(12, 9),
        FilterMatch::kPartOfRegister, FieldRole::kMask),
    Flt("mask_opc", "PKT_MASK0.OPC", kQpiMask0, Bits(8, 5),
        FilterMatch::kPartOfRegister, FieldRole::kMask),
    Flt("mask_vnw", "PKT_MASK0.VNW", kQpiMask0, Bits(4, 3),
        FilterMatch::kPartOfRegister, FieldRole::kMask),
    Flt("mask1", "PKT_MASK1", kQpiMask1, Bits(31, 0), FilterMatch::kPacketMask,
        FieldRole::kMask, 1),
    Flt("mask_rds", "PKT_MASK1.RDS", kQpiMask1, Bits(19, 16),
        FilterMatch::kPartOfRegister, FieldRole::kMask),
    Flt("mask_rnid30", "PKT_MASK1.RNID_3_0", kQpiMask1, Bits(3, 0),
        FilterMatch::kPartOfRegister, FieldRole::kMask),
};

// DECISION: #15 0x228 is PKT_MATCH0.  L3109 lists "Q_Py_PCI_PMON_PKT_MATCH0228
// 32QPIPortyPMONPacketFilterMask0": the name and Table 1-3 (L590 "22C-228
// Match0,1") win over the description.
constexpr FilterRegisterDescriptor kQpiFilters[] = {
    {.name = "Q_Py_PCI_PMON_PKT_MATCH0",
     .offset = 0x228,
     .in_aux_function = true,
     .size_bits = 32,
     .writable_mask = 0x8003FFF8},
    {.name = "Q_Py_PCI_PMON_PKT_MATCH1",
     .offset = 0x22C,
     .in_aux_function = true,
     .size_bits = 32,
     .writable_mask = 0x000F000F},
    {.name = "Q_Py_PCI_PMON_PKT_MASK0",
     .offset = 0x238,
     .in_aux_function = true,
     .size_bits = 32,
     .writable_mask = 0x8003FFF8},
    {.name = "Q_Py_PCI_PMON_PKT_MASK1",
     .offset = 0x23C,
     .in_aux_function = true,
     .size_bits = 32,
     .writable_mask = 0x000F000F},
};

// DECISION: #13 ports 0 and 1 report in ov_q0 (bit 22), port 2 in ov_q1 (bit
// 23).  L3097 "ov_qbitcorrespondingtotheQPIPort" but Table 2-3 has two bits,
// L785 "ov_q022 ... QPI0" / L783 "ov_q123 ... QPI1", and Table 1-3 (L590)
// names "QPI0D8,9:F2D(8,9)forPort0,1QPI1D24:F2D24forPort2".
//
// DECISION: #14 port 2's mask/match function D24:F6 (L3109
// "QPI1Mask/MatchPort2PMONRegistersD24:F6") has no known device id: the
// kernel's table stops at port 1 (0x0E86, 0x0E96).  We do not guess one:
// device_id 0 (present() == false) means "not identified"; the engine must
// refuse match/mask on port 2 unless the topology identifies D24:F6.
constexpr InstanceDescriptor kQpiInstances[] = {
    PciInstance("QPI port 0", Pci(8, 2, 0x0E32), 22, Pci(8, 6, 0x0E86)),
    PciInstance("QPI port 1", Pci(9, 2, 0x0E33), 22, Pci(9, 6, 0x0E96)),
    PciInstance("QPI port 2", Pci(24, 2, 0x0E3A), 23, Pci(24, 6, 0x0000)),
};

// ---------------------------------------------------------------------------
// R2PCIe (§2.9, L3858-4092; Table 2-172, L3901).

constexpr std::string_view kR2pcieAliases[] = {"uncore_r2pcie", "r2"};

constexpr InstanceDescriptor kR2pcieInstances[] = {
    // L777 "ov_rp26RW1C0SetifoverflowisdetectedfromanR2PCIePMONregister".
    PciInstance("R2PCIe", Pci(19, 1, 0x0E34), 26),
};

// ---------------------------------------------------------------------------
// R3QPI (§2.10, L4093-4488; Table 2-189, L4145).  Three counters.

constexpr std::string_view kR3qpiAliases[] = {"uncore_r3qpi", "r3"};

// DECISION: #16 three links, as the manual (L4145 "R3QPI0Link0 ... D19:F5
// R3QPI0Link1 ... D19:F6R3QPI1Link2 ... D18:F5"); the kernel declares two
// boxes but lists link 2's id (0x0E3E).  Links 0,1 -> ov_rq0 (bit 24), link 2
// -> ov_rq1 (bit 25): L781 "ov_rq024 ... R3QPI0", L779 "ov_rq125 ... R3QPI1";
// L4196 spells them "ov_r3{1,0}".
constexpr InstanceDescriptor kR3qpiInstances[] = {
    PciInstance("R3QPI link 0", Pci(19, 5, 0x0E36), 24),
    PciInstance("R3QPI link 1", Pci(19, 6, 0x0E37), 24),
    PciInstance("R3QPI link 2", Pci(18, 5, 0x0E3E), 25),
};

// ---------------------------------------------------------------------------
// The kernel's view (Linux's ivbep uncore driver, arch/x86/events/intel/
// uncore_snbep.c; notes/kernel-ivbep-facts.md): PMU names and counts, event
// masks, how config1/config2 carry the filter registers, when the driver
// programs them (notes/decisions.md #32), and its scheduling constraints
// (#33).

// config1 = FILTER0 | FILTER1 << 32 (CBo); config1 = the band filter (PCU);
// config1 = MATCH0 | MATCH1 << 32, config2 = MASK0 | MASK1 << 32 (QPI).
constexpr KernelFilterPacking kConfig1Low{.config = 1, .shift = 0};
constexpr KernelFilterPacking kConfig1High{.config = 1, .shift = 32};
constexpr KernelFilterPacking kConfig2Low{.config = 2, .shift = 0};
constexpr KernelFilterPacking kConfig2High{.config = 2, .shift = 32};

// CBo filter groups, in the order of the driver's extra-register field bits.
constexpr uint8_t kKernelTid = 0x1;    // FILTER0.tid
constexpr uint8_t kKernelState = 0x2;  // FILTER0.state
constexpr uint8_t kKernelNid = 0x4;    // FILTER1.nid
constexpr uint8_t kKernelOpc = 0x8;    // FILTER1.opc, nc, isoc

constexpr KernelFilterGroup kCboKernelGroups[] = {
    {.filter = kCboFilter0,
     .bits = 0x0000001F,
     .rule = "the driver programs it only with tid_en"},
    {.filter = kCboFilter0,
     .bits = 0x007E0000,
     .rule = "the driver programs it only for LLC_LOOKUP with unit mask 0x03, "
             "0x05, 0x09, 0x11, "
             "0x41, 0x43, 0x45, 0x49 or 0x51"},
    {.filter = kCboFilter1,
     .bits = 0x0000FFFF,
     .rule = "the driver programs it only for the NID unit masks of "
             "LLC_LOOKUP, TOR_INSERTS, "
             "TOR_OCCUPANCY and LLC_VICTIMS"},
    {.filter = kCboFilter1,
     .bits = 0xDFF00000,
     .rule = "the driver programs it only for the OPCODE unit masks of "
             "TOR_INSERTS and "
             "TOR_OCCUPANCY (0x01, 0x03, 0x21, 0x23, 0x41, 0x43, 0x81, "
             "0x83)"},
};

// ivbep_uncore_cbox_extra_regs (its filter_link entry, 0x1031, programs a
// field the manual's FILTER0 does not have: not modelled).
constexpr uint64_t kKernelTidEn = uint64_t{1} << 19;
constexpr KernelExtraReg kCboKernelExtraRegs[] = {
    {kKernelTidEn, kKernelTidEn, kKernelTid},
    {0x1134, 0xffff, kKernelState},
    {0x4134, 0xffff, kKernelState | kKernelNid},
    {0x5134, 0xffff, kKernelState | kKernelNid},
    {0x0334, 0xffff, kKernelState},
    {0x4334, 0xffff, kKernelState | kKernelNid},
    {0x0534, 0xffff, kKernelState},
    {0x4534, 0xffff, kKernelState | kKernelNid},
    {0x0934, 0xffff, kKernelState},
    {0x4934, 0xffff, kKernelState | kKernelNid},
    {0x0135, 0xffff, kKernelOpc},
    {0x0335, 0xffff, kKernelOpc},
    {0x2135, 0xffff, kKernelOpc},
    {0x2335, 0xffff, kKernelOpc},
    {0x4135, 0xffff, kKernelOpc | kKernelNid},
    {0x4335, 0xffff, kKernelOpc | kKernelNid},
    {0x4435, 0xffff, kKernelNid},
    {0x4835, 0xffff, kKernelNid},
    {0x4a35, 0xffff, kKernelNid},
    {0x5035, 0xffff, kKernelNid},
    {0x8135, 0xffff, kKernelOpc},
    {0x8335, 0xffff, kKernelOpc},
    {0x0136, 0xffff, kKernelOpc},
    {0x0336, 0xffff, kKernelOpc},
    {0x2136, 0xffff, kKernelOpc},
    {0x2336, 0xffff, kKernelOpc},
    {0x4136, 0xffff, kKernelOpc | kKernelNid},
    {0x4336, 0xffff, kKernelOpc | kKernelNid},
    {0x4436, 0xffff, kKernelNid},
    {0x4836, 0xffff, kKernelNid},
    {0x4a36, 0xffff, kKernelNid},
    {0x5036, 0xffff, kKernelNid},
    {0x8136, 0xffff, kKernelOpc},
    {0x8336, 0xffff, kKernelOpc},
    {0x4037, 0x40ff, kKernelNid},
};

// snbep_pcu_hw_config: FREQ_BAND0..3_CYCLES (0x0b-0x0e), each its own byte.
constexpr std::string_view kPcuKernelRule =
    "the driver programs the band filter only for FREQ_BAND0..3_CYCLES, "
    "events 0x0b-0x0e, each with its own "
    "byte: filter_band0 for 0x0b ... filter_band3 for 0x0e";
constexpr KernelFilterGroup kPcuKernelGroups[] = {
    {.filter = 0, .bits = 0x000000FF, .rule = kPcuKernelRule},
    {.filter = 0, .bits = 0x0000FF00, .rule = kPcuKernelRule},
    {.filter = 0, .bits = 0x00FF0000, .rule = kPcuKernelRule},
    {.filter = 0, .bits = 0xFF000000, .rule = kPcuKernelRule},
};

// snbep_qpi_hw_config: match/mask only for event select 0x38 (CTO_COUNT).
constexpr std::string_view kQpiKernelRule =
    "the driver programs the packet match/mask only for CTO_COUNT, event "
    "0x38";
constexpr KernelFilterGroup kQpiKernelGroups[] = {
    {.filter = kQpiMatch0, .bits = 0xFFFFFFFF, .rule = kQpiKernelRule},
    {.filter = kQpiMatch1, .bits = 0xFFFFFFFF, .rule = kQpiKernelRule},
    {.filter = kQpiMask0, .bits = 0xFFFFFFFF, .rule = kQpiKernelRule},
    {.filter = kQpiMask1, .bits = 0xFFFFFFFF, .rule = kQpiKernelRule},
};

// snbep_uncore_{cbox,r2pcie,r3qpi}_constraints (the ivbep types use them).
constexpr KernelConstraint kCboKernelConstraints[] = {
    {0x01, 0x1}, {0x02, 0x3}, {0x04, 0x3}, {0x05, 0x3}, {0x07, 0x3},
    {0x09, 0x3}, {0x11, 0x1}, {0x12, 0x3}, {0x13, 0x3}, {0x1b, 0xc},
    {0x1c, 0xc}, {0x1d, 0xc}, {0x1e, 0xc}, {0x1f, 0xe}, {0x21, 0x3},
    {0x23, 0x3}, {0x31, 0x3}, {0x32, 0x3}, {0x33, 0x3}, {0x34, 0x3},
    {0x35, 0x3}, {0x36, 0x1}, {0x37, 0x3}, {0x38, 0x3}, {0x39, 0x3},
    {0x3b, 0x1},
};

constexpr KernelConstraint kR2pcieKernelConstraints[] = {
    {0x10, 0x3}, {0x11, 0x3}, {0x12, 0x1}, {0x23, 0x3}, {0x24, 0x3},
    {0x25, 0x3}, {0x26, 0x3}, {0x32, 0x3}, {0x33, 0x3}, {0x34, 0x3},
};

constexpr KernelConstraint kR3qpiKernelConstraints[] = {
    {0x10, 0x3}, {0x11, 0x3}, {0x12, 0x3}, {0x13, 0x1}, {0x20, 0x3},
    {0x21, 0x3}, {0x22, 0x3}, {0x23, 0x3}, {0x24, 0x3}, {0x25, 0x3},
    {0x26, 0x3}, {0x28, 0x3}, {0x29, 0x3}, {0x2a, 0x3}, {0x2b, 0x3},
    {0x2c, 0x3}, {0x2d, 0x3}, {0x2e, 0x3}, {0x2f, 0x3}, {0x30, 0x3},
    {0x31, 0x3}, {0x32, 0x3}, {0x33, 0x3}, {0x34, 0x3}, {0x36, 0x3},
    {0x37, 0x3}, {0x38, 0x3}, {0x39, 0x3},
};

// A box whose filter registers perf cannot reach.
constexpr KernelView PlainKernelView(std::string_view pmu, int boxes,
                                     uint64_t event_mask, int counters) {
  return KernelView{.pmu = pmu,
                    .boxes = static_cast<uint8_t>(boxes),
                    .event_mask = event_mask,
                    .counters = static_cast<uint8_t>(counters)};
}

// ---------------------------------------------------------------------------
// The descriptors.
//
// DECISION: #20 max_increment_per_cycle reads the manual's "Nb per cycle" as an
// N-bit increment, 2^N - 1 (HA L1563, iMC L2030, IRP L2423, QPI L3086, R3QPI
// L4111 "8b" -> 255; PCU L2689 "4b" -> 15; R2PCIe L3865 "5b" -> 31), because
// the event tables exceed a literal 8 (IRP and QPI occupancy events list 128).
// CBo: L947 "counter0canincrementbyamaximumof20percycle" -> 20.  U-Box: no
// statement; its four events list 1 (L916) -> 1.  HA: raised to 512 for
// BT_OCCUPANCY (L1689 "BT_OCCUPANCY0x430-3512"), the one event above 2^8 - 1.

constexpr std::array<BoxDescriptor, kNumBoxTypes> kBoxes = {{
    {
        .type = BoxType::kUbox,
        .name = "ubox",
        .manual_name = "U-Box",
        .register_prefix = "U_MSR_PMON_",
        .clock = ClockDomain::kUclk,
        .aliases = kUboxAliases,
        .space = AccessSpace::kMsr,
        .instances = kUboxInstances,
        .num_counters = 2,
        .counter_width = 44,  // L881 "dataregistersare44-bitwide"
        .control_offsets = {0x10, 0x11},
        .counter_offsets = {0x16, 0x17},
        .control_writable_mask = 0x1F56FFFF,
        .box_control_offset = std::nullopt,  // L487 "exceptionoftheUBox"
        .box_status_offset = 0x15,
        .box_control = {},
        .counter_status_bits = {0, 1},
        .box_status_writable_mask = 0x3,  // L855 "ov1:0RW1C0"
        .fields = kUboxFields,
        .filters = {},
        .fixed_counter = kUclk,
        .max_increment_per_cycle = 1,
        .kernel = PlainKernelView("uncore_ubox", 1, 0x1f04ffff, 2),
    },
    {
        .type = BoxType::kCbo,
        .name = "cbo",
        .manual_name = "C-Box",
        .register_prefix = "Cn_MSR_PMON_",
        .clock = ClockDomain::kUclk,
        .aliases = kCboAliases,
        .space = AccessSpace::kMsr,
        .instances = kCboInstances,
        .num_counters = 4,
        .counter_width = 44,  // L985 "dataregistersare44bwide"
        .control_offsets = {0x10, 0x11, 0x12, 0x13},
        .counter_offsets = {0x16, 0x17, 0x18, 0x19},
        .control_writable_mask = 0xFF4EFFFF,
        .box_control_offset = 0x04,
        // DECISION: #1 no CBo BOX_STATUS.  Table 2-12 (L962-970) lists every
        // CBo MSR and has none, no field table exists, and the CBo CTL has no
        // ov_en (L997 "rsv21:20RV0Reserved") to set one.  The lone "0xD55,
        // 0xD44BoxStatus/Control" of C-Box 2 in Table 1-2 (L568) fits the
        // base+0x15 slot of the U-Box (0xC15) and PCU (0xC35), but an MSR the
        // manual does not define may fault, and the allow-list only admits
        // what is here.
        .box_status_offset = std::nullopt,
        .box_control = kBoxControlMustWriteOne,
        .counter_status_bits = {0, 1, 2, 3},  // unused: no status register
        .box_status_writable_mask = 0,
        .fields = kCboFields,
        .filters = kCboFilters,
        .fixed_counter = std::nullopt,
        .max_increment_per_cycle = 20,
        .kernel = KernelView{.pmu = "uncore_cbox",
                             .boxes = 15,
                             .event_mask = 0xff0cffff,
                             .counters = 4,
                             .packing = {kConfig1Low, kConfig1High},
                             .filter_instances = 15,
                             .gate = KernelFilterGate::kExtraRegs,
                             .groups = kCboKernelGroups,
                             .extra_regs = kCboKernelExtraRegs,
                             .constraints = kCboKernelConstraints},
    },
    {
        .type = BoxType::kHa,
        .name = "ha",
        .manual_name = "HA",
        .register_prefix = "HAn_PCI_PMON_",
        .clock = ClockDomain::kUclk,
        .aliases = kHaAliases,
        .space = AccessSpace::kPci,
        .instances = kHaInstances,
        .num_counters = 4,
        .counter_width = 48,  // L1630 "dataregistersare48-bitwide"
        .control_offsets = kPciControls,
        .counter_offsets = kPciCounters,
        .control_writable_mask = 0xFF57FFFF,
        .box_control_offset = 0xF4,
        .box_status_offset = 0xF8,
        .box_control = kBoxControlMustWriteOne,
        .counter_status_bits = {0, 1, 2, 3},
        .box_status_writable_mask = 0xF,  // L1627 "ov3:0RW1C0"
        .fields = kHaFields,
        .filters = kHaFilters,
        .fixed_counter = std::nullopt,
        .max_increment_per_cycle = 512,
        .kernel = PlainKernelView("uncore_ha", 2, 0xff04ffff, 4),
    },
    {
        .type = BoxType::kImc,
        .name = "imc",
        .manual_name = "iMC",
        .register_prefix = "MC_CHy_PCI_PMON_",
        .clock = ClockDomain::kDclk,
        .aliases = kImcAliases,
        .space = AccessSpace::kPci,
        .instances = kImcInstances,
        .num_counters = 4,
        .counter_width = 48,  // L2091 "dataregistersare48-bitwide"
        .control_offsets = kPciControls,
        .counter_offsets = kPciCounters,
        .control_writable_mask = 0xFF56FFFF,
        .box_control_offset = 0xF4,
        .box_status_offset = 0xF8,
        .box_control = kBoxControlMustWriteOne,
        .counter_status_bits = {1, 2, 3, 4},  // DECISION: #3, see kDclk
        .box_status_writable_mask = 0x1F,     // L2088 "ov4:0RW1C0"
        .fields = kCommonPciFields,
        .filters = {},
        .fixed_counter = kDclk,
        .max_increment_per_cycle = 255,
        .kernel = PlainKernelView("uncore_imc", 8, 0xff04ffff, 4),
    },
    {
        .type = BoxType::kIrp,
        .name = "irp",
        .manual_name = "IRP",
        .register_prefix = "IRP_PCI_PMON_",
        .clock = ClockDomain::kIoClk,
        .aliases = kIrpAliases,
        .space = AccessSpace::kPci,
        .instances = kIrpInstances,
        .num_counters = 4,
        // DECISION: #6 44 bits.  L2421 "twosetsoftwo48bwidecounters" and Table
        // 1-1 (L522) say 48; the field table L2496 says "ig63:44RV0Ignored
        // event_count43:0RW-V044-bitperformanceeventcounter".  The register
        // table wins, and a modular delta at 44 bits is exact on either.
        .counter_width = 44,
        .counter_width_disputed = true,  // DECISION: #37
        // L2430/L2453: IRP0 CTL0/1 D8/DC, IRP1 CTL0/1 E0/E4; IRP0 CTR0/1
        // A0/B0, IRP1 CTR0/1 B8/C0 (irregular; Table 1-3 L590 agrees).
        .control_offsets = {0xD8, 0xDC, 0xE0, 0xE4},
        .counter_offsets = {0xA0, 0xB0, 0xB8, 0xC0},
        .control_writable_mask = 0xFF46FFFF,
        .box_control_offset = 0xF4,
        .box_status_offset = 0xF8,
        .box_control = kBoxControlMustWriteOne,
        .counter_status_bits = {0, 1, 2, 3},
        .box_status_writable_mask = 0xF,  // L2460 "ov3:0RW1C0"
        .fields = kIrpFields,
        // The IRP_PmonFilter register (L2518) has no documented address.
        .filters = {},
        .fixed_counter = std::nullopt,
        .max_increment_per_cycle = 255,
        .kernel = PlainKernelView("uncore_irp", 1, 0xff04ffff, 4),
    },
    {
        .type = BoxType::kPcu,
        .name = "pcu",
        .manual_name = "PCU",
        .register_prefix = "PCU_MSR_PMON_",
        .clock = ClockDomain::kPclk,
        .aliases = kPcuAliases,
        .space = AccessSpace::kMsr,
        .instances = kPcuInstances,
        .num_counters = 4,
        // DECISION: #10 48 bits: the PCU CTR field table (Table 2-122) is
        // missing; L2687 "four48-bitwidecounters" and Table 1-1 (L522) agree.
        .counter_width = 48,
        .control_offsets = {0x10, 0x11, 0x12, 0x13},
        .counter_offsets = {0x16, 0x17, 0x18, 0x19},
        .control_writable_mask = 0xDF76FFFF,
        .box_control_offset = 0x04,
        .box_status_offset = 0x15,
        .box_control = kBoxControlMustWriteOne,
        .counter_status_bits = {0, 1, 2, 3},
        .box_status_writable_mask = 0xF,  // L2754 "ov3:0RW1C0"
        .fields = kPcuFields,
        .filters = kPcuFilters,
        .fixed_counter = std::nullopt,
        .max_increment_per_cycle = 15,
        .kernel = KernelView{.pmu = "uncore_pcu",
                             .boxes = 1,
                             .event_mask = 0xdf04c0ff,
                             .counters = 4,
                             .packing = {kConfig1Low},
                             .filter_instances = 1,
                             .gate = KernelFilterGate::kGroupPerCode,
                             .gate_code = 0x0b,
                             .groups = kPcuKernelGroups},
    },
    {
        .type = BoxType::kQpi,
        .name = "qpi",
        .manual_name = "QPI",
        .register_prefix = "Q_Py_PCI_PMON_",
        .clock = ClockDomain::kQfclk,
        .aliases = kQpiAliases,
        .space = AccessSpace::kPci,
        .instances = kQpiInstances,
        .num_counters = 4,
        .counter_width = 48,  // L3148 "dataregistersare48bwide"
        .control_offsets = kPciControls,
        .counter_offsets = kPciCounters,
        .control_writable_mask = 0xFF76FFFF,
        .box_control_offset = 0xF4,
        .box_status_offset = 0xF8,
        .box_control = kBoxControlMustWriteOne,
        .counter_status_bits = {0, 1, 2, 3},
        .box_status_writable_mask = 0xF,  // L3145 "ov3:0RW1C0"
        .fields = kQpiFields,
        .filters = kQpiFilters,
        .fixed_counter = std::nullopt,
        .max_increment_per_cycle = 255,
        .kernel = KernelView{.pmu = "uncore_qpi",
                             .boxes = 3,
                             .event_mask = 0xff24ffff,
                             .counters = 4,
                             .packing = {kConfig1Low, kConfig1High, kConfig2Low,
                                         kConfig2High},
                             // No mask/match device for port 2 (#14).
                             .filter_instances = 2,
                             .gate = KernelFilterGate::kEventCode,
                             .gate_code = 0x38,
                             .groups = kQpiKernelGroups},
    },
    {
        .type = BoxType::kR2pcie,
        .name = "r2pcie",
        .manual_name = "R2PCIe",
        .register_prefix = "R2_PCI_PMON_",
        .clock = ClockDomain::kUclk,
        .aliases = kR2pcieAliases,
        .space = AccessSpace::kPci,
        .instances = kR2pcieInstances,
        .num_counters = 4,
        .counter_width = 44,  // L3923 "dataregistersare44-bitwide"
        .control_offsets = kPciControls,
        .counter_offsets = kPciCounters,
        .control_writable_mask = 0xFF56FFFF,
        .box_control_offset = 0xF4,
        .box_status_offset = 0xF8,
        .box_control = kBoxControlPlain,
        .counter_status_bits = {0, 1, 2, 3},
        .box_status_writable_mask = 0xF,  // L3931 "ov3:0RW1C0"
        .fields = kCommonPciFields,
        .filters = {},
        .fixed_counter = std::nullopt,
        .max_increment_per_cycle = 31,
        .kernel = KernelView{.pmu = "uncore_r2pcie",
                             .boxes = 1,
                             .event_mask = 0xff04ffff,
                             .counters = 4,
                             .constraints = kR2pcieKernelConstraints},
    },
    {
        .type = BoxType::kR3qpi,
        .name = "r3qpi",
        .manual_name = "R3QPI",
        .register_prefix = "R3_Ly_PCI_PMON_",
        .clock = ClockDomain::kUclk,
        .aliases = kR3qpiAliases,
        .space = AccessSpace::kPci,
        .instances = kR3qpiInstances,
        .num_counters = 3,  // L4109 "three44bwidecounters"
        .counter_width = 44,
        .control_offsets = {0xD8, 0xDC, 0xE0},
        .counter_offsets = {0xA0, 0xA8, 0xB0},
        .control_writable_mask = 0xFF56FFFF,
        .box_control_offset = 0xF4,
        .box_status_offset = 0xF8,
        .box_control = kBoxControlPlain,
        .counter_status_bits = {0, 1, 2},
        .box_status_writable_mask = 0x7,  // L4168 "ov2:0RW1C0"
        .fields = kCommonPciFields,
        .filters = {},
        .fixed_counter = std::nullopt,
        .max_increment_per_cycle = 255,
        .kernel = KernelView{.pmu = "uncore_r3qpi",
                             .boxes = 2,
                             .event_mask = 0xff04ffff,
                             .counters = 3,
                             .constraints = kR3qpiKernelConstraints},
    },
}};

// ---------------------------------------------------------------------------
// Compile-time checks.

constexpr bool Overlaps(BitRange a, BitRange b) {
  return (a.mask() & b.mask()) != 0;
}

constexpr bool SameRegister(const FieldDescriptor& a,
                            const FieldDescriptor& b) {
  return a.reg == b.reg &&
         (a.reg == FieldRegister::kControl || a.filter == b.filter);
}

// QPI match0/match1/mask0/mask1: a field spanning its whole filter register.
constexpr bool IsWholeRegisterAlias(const BoxDescriptor& box,
                                    const FieldDescriptor& f) {
  return f.reg == FieldRegister::kFilter && f.filter < box.filters.size() &&
         f.bits.lo == 0 && f.bits.width == box.filters[f.filter].size_bits;
}

// The two documented overlaps: whole-register aliases, and PCU occ_sel
// inside umask.
constexpr bool MayOverlap(const BoxDescriptor& box, const FieldDescriptor& a,
                          const FieldDescriptor& b) {
  if (IsWholeRegisterAlias(box, a) || IsWholeRegisterAlias(box, b)) {
    return true;
  }
  return box.type == BoxType::kPcu &&
         ((a.role == FieldRole::kUmask &&
           b.role == FieldRole::kOccupancySelect) ||
          (a.role == FieldRole::kOccupancySelect &&
           b.role == FieldRole::kUmask));
}

// Roles the engines look up with FindRole: at most one field each.
constexpr bool RoleIsUnique(FieldRole role) {
  return role != FieldRole::kFilter && role != FieldRole::kMatch &&
         role != FieldRole::kMask;
}

constexpr uint64_t ControlFieldUnion(const BoxDescriptor& box) {
  uint64_t mask = 0;
  for (const FieldDescriptor& f : box.fields) {
    if (f.reg == FieldRegister::kControl) mask |= f.bits.mask();
  }
  return mask;
}

constexpr uint64_t FilterFieldUnion(const BoxDescriptor& box, size_t filter) {
  uint64_t mask = 0;
  for (const FieldDescriptor& f : box.fields) {
    if (f.reg == FieldRegister::kFilter && f.filter == filter &&
        !IsWholeRegisterAlias(box, f)) {
      mask |= f.bits.mask();
    }
  }
  return mask;
}

constexpr bool FieldsAreConsistent(const BoxDescriptor& box) {
  for (size_t i = 0; i < box.fields.size(); ++i) {
    const FieldDescriptor& f = box.fields[i];
    if (f.bits.empty() || f.name.empty() || f.manual_name.empty()) {
      return false;
    }
    if (f.is_flag && f.bits.width != 1) return false;
    if (f.reg == FieldRegister::kControl) {
      if (f.bits.lo + f.bits.width > 32) return false;  // CTLs are 32-bit
      if ((f.bits.mask() & ~box.control_writable_mask) != 0) return false;
    } else {
      if (f.filter >= box.filters.size()) return false;
      const FilterRegisterDescriptor& reg = box.filters[f.filter];
      if (f.bits.lo + f.bits.width > reg.size_bits) return false;
      if (!IsWholeRegisterAlias(box, f) &&
          (f.bits.mask() & ~reg.writable_mask) != 0) {
        return false;
      }
    }
    for (size_t j = i + 1; j < box.fields.size(); ++j) {
      const FieldDescriptor& g = box.fields[j];
      if (f.name == g.name) return false;
      if (f.role == g.role && RoleIsUnique(f.role)) return false;
      if (SameRegister(f, g) && Overlaps(f.bits, g.bits) &&
          !MayOverlap(box, f, g)) {
        return false;
      }
    }
  }
  if (box.control_writable_mask != ControlFieldUnion(box)) return false;
  for (size_t i = 0; i < box.filters.size(); ++i) {
    if (box.filters[i].writable_mask != FilterFieldUnion(box, i)) return false;
  }
  return true;
}

constexpr bool StatusIsConsistent(const BoxDescriptor& box) {
  if (!box.box_status_offset) return box.box_status_writable_mask == 0;
  uint64_t seen = 0;
  for (int i = 0; i < box.num_counters; ++i) {
    const uint64_t bit = uint64_t{1} << box.counter_status_bits[i];
    if ((bit & seen) != 0 || (bit & ~box.box_status_writable_mask) != 0) {
      return false;
    }
    seen |= bit;
  }
  if (box.fixed_counter && box.fixed_counter->box_status_bit != kNoStatusBit) {
    const uint64_t bit = uint64_t{1} << box.fixed_counter->box_status_bit;
    if ((bit & seen) != 0 || (bit & ~box.box_status_writable_mask) != 0) {
      return false;
    }
    seen |= bit;
  }
  return seen == box.box_status_writable_mask;
}

constexpr bool BoxControlIsConsistent(const BoxDescriptor& box) {
  if (!box.box_control_offset) {
    return box.box_control.frz.empty() && box.box_control.must_write_one == 0;
  }
  const BoxControlLayout& c = box.box_control;
  return c.frz.width == 1 && c.rst_ctrs.width == 1 && c.rst_ctrl.width == 1 &&
         !Overlaps(c.frz, c.rst_ctrs) && !Overlaps(c.frz, c.rst_ctrl) &&
         !Overlaps(c.rst_ctrs, c.rst_ctrl) &&
         ((c.frz.mask() | c.rst_ctrs.mask() | c.rst_ctrl.mask()) &
          c.must_write_one) == 0;
}

constexpr bool FixedCounterIsConsistent(const BoxDescriptor& box) {
  if (!box.fixed_counter) return true;
  const FixedCounterDescriptor& x = *box.fixed_counter;
  const uint64_t bits = x.en.mask() | x.ov_en.mask() | x.rst.mask();
  return (x.width == 44 || x.width == 48) && x.en.width == 1 &&
         x.ov_en.width == 1 && bits == x.control_writable_mask &&
         !Overlaps(x.en, x.ov_en) && !Overlaps(x.en, x.rst) &&
         !Overlaps(x.ov_en, x.rst) && x.global_status_bit >= -1 &&
         x.global_status_bit <= 26;
}

// Every register of an instance, as [begin, end) in its own space; PCI
// counters span two dwords.  The aux function is a separate device.
struct Span {
  uint32_t begin;
  uint32_t end;
};

constexpr bool AddressesAreDistinct(const BoxDescriptor& box) {
  const bool pci = box.space == AccessSpace::kPci;
  const uint32_t reg = pci ? 4 : 1;
  const uint32_t ctr = pci ? 8 : 1;
  for (int n = 0; n < box.num_instances(); ++n) {
    std::array<Span, 2 * kMaxCounters + 4 + 4> spans{};
    size_t count = 0;
    for (int i = 0; i < box.num_counters; ++i) {
      const uint32_t c = box.CounterControlAddress(n, i);
      const uint32_t d = box.CounterAddress(n, i);
      spans[count++] = {c, c + reg};
      spans[count++] = {d, d + ctr};
    }
    if (auto a = box.BoxControlAddress(n)) spans[count++] = {*a, *a + reg};
    if (auto a = box.BoxStatusAddress(n)) spans[count++] = {*a, *a + reg};
    if (box.fixed_counter) {
      const uint32_t c =
          box.RegisterAddress(n, box.fixed_counter->control_offset);
      const uint32_t d =
          box.RegisterAddress(n, box.fixed_counter->counter_offset);
      spans[count++] = {c, c + reg};
      spans[count++] = {d, d + ctr};
    }
    for (size_t f = 0; f < box.filters.size(); ++f) {
      if (box.filters[f].in_aux_function) continue;
      const uint32_t a = box.FilterAddress(n, static_cast<int>(f));
      spans[count++] = {a, a + reg};
    }
    for (size_t i = 0; i < count; ++i) {
      for (size_t j = i + 1; j < count; ++j) {
        if (spans[i].begin < spans[j].end && spans[j].begin < spans[i].end) {
          return false;
        }
      }
    }
  }
  return true;
}

constexpr bool InstancesAreConsistent(const BoxDescriptor& box) {
  if (box.instances.empty()) return false;
  for (const InstanceDescriptor& in : box.instances) {
    if (in.name.empty()) return false;
    if (in.global_status_bit < -1 || in.global_status_bit > 26) return false;
    if (box.space == AccessSpace::kMsr) {
      if (in.msr_base == 0 || in.pmon.present()) return false;
    } else {
      if (in.msr_base != 0 || !in.pmon.present()) return false;
    }
  }
  bool needs_aux = false;
  for (const FilterRegisterDescriptor& f : box.filters) {
    needs_aux = needs_aux || f.in_aux_function;
  }
  if (needs_aux) {
    for (const InstanceDescriptor& in : box.instances) {
      if (in.aux.device == 0) return false;
    }
  }
  return true;
}

constexpr int CountRole(const BoxDescriptor& box, FieldRole role) {
  int n = 0;
  for (const FieldDescriptor& f : box.fields) n += f.role == role ? 1 : 0;
  return n;
}

constexpr bool IsFilterRole(FieldRole role) {
  return role == FieldRole::kThreadFilter || role == FieldRole::kFilter ||
         role == FieldRole::kMatch || role == FieldRole::kMask;
}

constexpr bool IsEngineRole(FieldRole role) {
  return role == FieldRole::kEnable || role == FieldRole::kOverflowEnable ||
         role == FieldRole::kReset || role == FieldRole::kQueueOccupancyReset;
}

constexpr bool IsEventRole(FieldRole role) {
  return role == FieldRole::kEventSelect ||
         role == FieldRole::kExtendedSelect || role == FieldRole::kUmask;
}

// The whole-register packet field of match/mask pair `pair` with `match`.
constexpr bool HasPacketField(const BoxDescriptor& box, FilterMatch match,
                              uint8_t pair) {
  for (const FieldDescriptor& g : box.fields) {
    if (g.match == match && g.pair == pair && IsWholeRegisterAlias(box, g)) {
      return true;
    }
  }
  return false;
}

// Roles and match semantics: exactly one en, event select and umask; the
// thread filter comes with tid_en; control roles on control fields and
// filter roles on filter fields (whose register exists); a role's use is
// what the engines expect; every packet match has its mask and the
// reverse; every sub-field has its whole-register field.
constexpr bool RolesAreConsistent(const BoxDescriptor& box) {
  if (CountRole(box, FieldRole::kEnable) != 1 ||
      CountRole(box, FieldRole::kEventSelect) != 1 ||
      CountRole(box, FieldRole::kUmask) != 1) {
    return false;
  }
  if (CountRole(box, FieldRole::kTidEnable) !=
      CountRole(box, FieldRole::kThreadFilter)) {
    return false;
  }
  for (const FieldDescriptor& f : box.fields) {
    const bool filter = f.reg == FieldRegister::kFilter;
    if (filter != IsFilterRole(f.role)) return false;
    if (filter && f.filter >= box.filters.size()) return false;
    if (!filter && f.match != FilterMatch::kNone) return false;
    if (IsEngineRole(f.role) != (f.use == FieldUse::kEngine)) return false;
    if (IsEventRole(f.role) != (f.use == FieldUse::kEvent)) return false;
    if ((f.role == FieldRole::kThreadFilter) !=
        (f.match == FilterMatch::kThreadEquals)) {
      return false;
    }
    switch (f.match) {
      case FilterMatch::kPacketMatch:
        if (f.role != FieldRole::kMatch || !IsWholeRegisterAlias(box, f) ||
            !HasPacketField(box, FilterMatch::kPacketMask, f.pair)) {
          return false;
        }
        break;
      case FilterMatch::kPacketMask:
        if (f.role != FieldRole::kMask || !IsWholeRegisterAlias(box, f) ||
            !HasPacketField(box, FilterMatch::kPacketMatch, f.pair)) {
          return false;
        }
        break;
      case FilterMatch::kPartOfRegister: {
        bool whole = false;
        for (const FieldDescriptor& g : box.fields) {
          whole =
              whole || (g.reg == FieldRegister::kFilter &&
                        g.filter == f.filter && IsWholeRegisterAlias(box, g));
        }
        if (!whole || IsWholeRegisterAlias(box, f)) return false;
        break;
      }
      default:
        break;
    }
  }
  return true;
}

// The manual's register names start with the box's prefix.
constexpr bool PrefixIsConsistent(const BoxDescriptor& box) {
  const std::string_view prefix = box.register_prefix;
  if (prefix.empty() || !prefix.ends_with('_')) return false;
  for (const FilterRegisterDescriptor& f : box.filters) {
    if (!f.name.starts_with(prefix)) return false;
  }
  if (box.fixed_counter &&
      (!box.fixed_counter->manual_control_name.starts_with(prefix) ||
       !box.fixed_counter->manual_counter_name.starts_with(prefix))) {
    return false;
  }
  return true;
}

constexpr uint64_t RegisterMask(const FilterRegisterDescriptor& reg) {
  return BitRange{0, reg.size_bits}.mask();
}

// The kernel's view fits the box: PMU counts within the instances, an event
// mask inside the writable control bits with no engine bit, filter
// registers packed into config1/config2 without overlap (and only those a
// gate lets through), filter groups that cover every writable bit of a
// packed register once, extra registers naming existing groups, and
// constraints on existing counters with each code once.
constexpr bool KernelViewIsConsistent(const BoxDescriptor& box) {
  const KernelView& k = box.kernel;
  if (!k.pmu.starts_with("uncore_") || k.boxes < 1 ||
      k.boxes > box.num_instances() || k.counters < 1 ||
      k.counters > box.num_counters ||
      k.filter_instances > box.num_instances()) {
    return false;
  }
  if ((k.event_mask & ~box.control_writable_mask) != 0) return false;
  for (const FieldDescriptor& f : box.fields) {
    if (f.use == FieldUse::kEngine && (k.event_mask & f.bits.mask()) != 0) {
      return false;
    }
  }
  bool any_packed = false;
  for (size_t i = 0; i < k.packing.size(); ++i) {
    const KernelFilterPacking& p = k.packing[i];
    if (p.config == 0) continue;
    if (i >= box.filters.size() || p.config > 2 ||
        p.shift + box.filters[i].size_bits > 64) {
      return false;
    }
    any_packed = true;
    const uint64_t bits = RegisterMask(box.filters[i]) << p.shift;
    for (size_t j = i + 1; j < k.packing.size(); ++j) {
      const KernelFilterPacking& q = k.packing[j];
      if (q.config != p.config || j >= box.filters.size()) continue;
      if ((bits & (RegisterMask(box.filters[j]) << q.shift)) != 0) {
        return false;
      }
    }
  }
  if (any_packed != (k.gate != KernelFilterGate::kNever)) return false;
  if (any_packed && k.filter_instances == 0) return false;
  if ((k.gate == KernelFilterGate::kNever) != k.groups.empty()) return false;
  if (k.groups.size() > 8) return false;
  for (size_t g = 0; g < k.groups.size(); ++g) {
    const KernelFilterGroup& group = k.groups[g];
    if (group.filter >= box.filters.size() ||
        k.packing[group.filter].config == 0 || group.rule.empty() ||
        group.bits == 0 ||
        (group.bits & ~RegisterMask(box.filters[group.filter])) != 0) {
      return false;
    }
    for (size_t h = g + 1; h < k.groups.size(); ++h) {
      if (k.groups[h].filter == group.filter &&
          (k.groups[h].bits & group.bits) != 0) {
        return false;
      }
    }
  }
  for (size_t i = 0; i < box.filters.size(); ++i) {
    if (k.packing[i].config == 0) continue;
    uint64_t covered = 0;
    for (const KernelFilterGroup& group : k.groups) {
      if (group.filter == i) covered |= group.bits;
    }
    if ((box.filters[i].writable_mask & ~covered) != 0) return false;
  }
  const uint32_t all_groups = (1u << k.groups.size()) - 1;
  for (const KernelExtraReg& r : k.extra_regs) {
    if (r.groups == 0 || (r.groups & ~all_groups) != 0) return false;
  }
  if (!k.extra_regs.empty() != (k.gate == KernelFilterGate::kExtraRegs)) {
    return false;
  }
  if (k.gate == KernelFilterGate::kGroupPerCode &&
      k.gate_code + k.groups.size() > 256) {
    return false;
  }
  const uint8_t counters = static_cast<uint8_t>((1u << k.counters) - 1);
  for (size_t i = 0; i < k.constraints.size(); ++i) {
    const KernelConstraint& c = k.constraints[i];
    if (c.counters == 0 || (c.counters & ~counters) != 0) return false;
    for (size_t j = i + 1; j < k.constraints.size(); ++j) {
      if (k.constraints[j].code == c.code) return false;
    }
  }
  return true;
}

constexpr bool IsConsistent(const BoxDescriptor& box) {
  return box.num_counters >= 1 && box.num_counters <= kMaxCounters &&
         (box.counter_width == 44 || box.counter_width == 48) &&
         box.max_increment_per_cycle >= 1 && FieldsAreConsistent(box) &&
         StatusIsConsistent(box) && BoxControlIsConsistent(box) &&
         FixedCounterIsConsistent(box) && AddressesAreDistinct(box) &&
         InstancesAreConsistent(box) && RolesAreConsistent(box) &&
         PrefixIsConsistent(box) && KernelViewIsConsistent(box);
}

constexpr bool TypesAreInOrder() {
  for (int i = 0; i < kNumBoxTypes; ++i) {
    if (static_cast<int>(kBoxes[i].type) != i) return false;
  }
  return true;
}

constexpr const BoxDescriptor& B(BoxType type) {
  return kBoxes[static_cast<int>(type)];
}

static_assert(TypesAreInOrder());
static_assert(IsConsistent(B(BoxType::kUbox)));
static_assert(IsConsistent(B(BoxType::kCbo)));
static_assert(IsConsistent(B(BoxType::kHa)));
static_assert(IsConsistent(B(BoxType::kImc)));
static_assert(IsConsistent(B(BoxType::kIrp)));
static_assert(IsConsistent(B(BoxType::kPcu)));
static_assert(IsConsistent(B(BoxType::kQpi)));
static_assert(IsConsistent(B(BoxType::kR2pcie)));
static_assert(IsConsistent(B(BoxType::kR3qpi)));

// Golden addresses (Table 1-2, L568-569; Table 2-12, L962-970).
static_assert(B(BoxType::kCbo).CounterControlAddress(3, 0) == 0x0D70);
static_assert(*B(BoxType::kCbo).BoxControlAddress(0) == 0x0D04);
static_assert(*B(BoxType::kCbo).BoxControlAddress(14) == 0x0EC4);
static_assert(B(BoxType::kCbo).FilterAddress(14, kCboFilter0) == 0x0ED4);
static_assert(B(BoxType::kCbo).FilterAddress(14, kCboFilter1) == 0x0EDA);
static_assert(B(BoxType::kCbo).CounterAddress(14, 3) == 0x0ED9);
static_assert(B(BoxType::kUbox).CounterControlAddress(0, 0) == 0x0C10);
static_assert(B(BoxType::kUbox).CounterAddress(0, 1) == 0x0C17);
static_assert(*B(BoxType::kUbox).BoxStatusAddress(0) == 0x0C15);
static_assert(B(BoxType::kPcu).CounterControlAddress(0, 0) == 0x0C30);
static_assert(B(BoxType::kPcu).CounterAddress(0, 3) == 0x0C39);
static_assert(B(BoxType::kPcu).FilterAddress(0, 0) == 0x0C34);
static_assert(*B(BoxType::kPcu).BoxControlAddress(0) == 0x0C24);
static_assert(*B(BoxType::kPcu).BoxStatusAddress(0) == 0x0C35);
static_assert(B(BoxType::kImc).CounterControlAddress(0, 0) == 0xD8);
static_assert(B(BoxType::kIrp).CounterAddress(0, 2) == 0xB8);
// CBo n reports in GLOBAL_STATUS bit 3+n: 15 CBos fill 17:3 exactly.
static_assert(B(BoxType::kCbo).instances[14].global_status_bit == 17);
// The literal control masks above equal the union of the control fields
// (checked in FieldsAreConsistent); spelled out for the two odd ones.
static_assert(ControlFieldUnion(B(BoxType::kPcu)) == 0xDF76FFFF);
static_assert(ControlFieldUnion(B(BoxType::kUbox)) == 0x1F56FFFF);
// Roles the engines rely on (encoder, direct plan, simulator).
static_assert(B(BoxType::kCbo).FindRole(FieldRole::kThreadFilter)->filter ==
              kCboFilter0);
static_assert(
    B(BoxType::kHa).FindRole(FieldRole::kQueueOccupancyReset)->bits.lo == 16);
static_assert(B(BoxType::kCbo).FindRole(FieldRole::kOverflowEnable) ==
              nullptr);  // L997: no ov_en, so no sampling on the CBo
// The kernel's config1/config2 layout (notes/kernel-ivbep-facts.md).
static_assert(B(BoxType::kCbo).kernel.packing[kCboFilter1].shift == 32);
static_assert(B(BoxType::kQpi).kernel.packing[kQpiMask1].config == 2 &&
              B(BoxType::kQpi).kernel.packing[kQpiMask1].shift == 32);

}  // namespace

const BoxDescriptor& Box(BoxType type) { return B(type); }

std::span<const BoxDescriptor> AllBoxes() { return kBoxes; }

const BoxDescriptor* FindBox(std::string_view name) {
  for (const BoxDescriptor& box : kBoxes) {
    if (common::EqualsIgnoreCase(name, box.name)) return &box;
    for (std::string_view alias : box.aliases) {
      if (common::EqualsIgnoreCase(name, alias)) return &box;
    }
  }
  return nullptr;
}

}  // namespace uncore::ivytown
