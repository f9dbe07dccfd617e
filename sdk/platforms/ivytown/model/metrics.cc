// The manual's 93 derived metrics as data (see metrics.h for the language).
//
// Conventions applied to every entry (notes/metrics.md explains them):
//   - SAMPLE_INTERVAL is the box's own uncore clock: {cbo/CLOCKTICKS},
//     {ha/CLOCKTICKS}, {r2pcie/CLOCKTICKS}; the iMC's MC_Chy_PCI_PMON_CTR_FIXED
//     is {imc/DCLK}.  ELAPSED_SECONDS appears only where the manual means wall
//     time (QPI_SPEED's TSC / TSC_SPEED).
//   - PCT_* and *_PCT are scaled x 100 with unit "%".
//   - Filters are written with the kernel's field names, so the manual's
//     FILTER / FILTER0 / FILTER1 register names drop out.
//   - `fix` is set only where the expression differs from the manual's
//     formula beyond these conventions (or the printed register name is
//     wrong: "Notation only").
#include "sdk/platforms/ivytown/model/metrics.h"

#include <cstddef>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>

#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"

namespace uncore::ivytown {
namespace {

// DECISION: rank and node parameters take the ranges of the fields they feed
// (POWER_*_CYCLES.RANK0-7; the QPI match DNID of an up-to-8-node system).
constexpr MetricParameter kRankParam{
    .name = "x",
    .default_value = 0,
    .min_value = 0,
    .max_value = 7,
    .meaning = "DRAM rank of the channel (unit mask RANK0..RANK7)"};
constexpr MetricParameter kNodeParam{
    .name = "x",
    .default_value = 0,
    .min_value = 0,
    .max_value = 7,
    .meaning = "destination node id (DNID) the received packets carry"};
// DECISION: FILTER1.nid is a bit mask of node ids and the manual's "all
// nodes" mask is 0xF (L1170-1187), i.e. four nodes.  Defaults: this socket is
// node 0 (0x1), the others are nodes 1-3 (0xE).  Set both to match the
// system (e.g. socket 1 of a 2-socket box: my_node=0x2, other_nodes=0x1).
constexpr MetricParameter kMyNodeParam{
    .name = "my_node",
    .default_value = 0x1,
    .min_value = 0x1,
    .max_value = 0xF,
    .meaning = "bit mask of the node ids homed on this socket (FILTER1.nid)"};
constexpr MetricParameter kOtherNodesParam{
    .name = "other_nodes",
    .default_value = 0xE,
    .min_value = 0x1,
    .max_value = 0xF,
    .meaning = "bit mask of the node ids homed on other sockets (FILTER1.nid)"};

constexpr MetricDescriptor kMetrics[] = {
    // ---- CBo (section 2.3.6, L1119-1225): 37 ----
    {.name = "AVG_INGRESS_DEPTH",
     .box = BoxType::kCbo,
     .description = "Mean number of core requests waiting in the ingress queue "
                    "(IRQ) per uncore cycle.",
     .expression = "{cbo/RxR_OCCUPANCY.IRQ} / {cbo/CLOCKTICKS}",
     .unit = "entries",
     .rate_per_second = false,
     .manual_formula = "RxR_OCCUPANCY.IRQ / SAMPLE_INTERVAL",
     .fix = "",
     .manual_line = "L1119"},
    {.name = "AVG_INGRESS_LATENCY",
     .box = BoxType::kCbo,
     .description =
         "Mean uncore cycles a core request spends in the ingress queue "
         "(IRQ).",
     .expression = "{cbo/RxR_OCCUPANCY.IRQ} / {cbo/RxR_INSERTS.IRQ}",
     .unit = "cycles",
     .rate_per_second = false,
     .manual_formula = "RxR_OCCUPANCY.IRQ / RxR_INSERTS.IRQ",
     .fix = "",
     .manual_line = "L1120"},
    {.name = "AVG_INGRESS_LATENCY_WHEN_NE",
     .box = BoxType::kCbo,
     .description =
         "IRQ occupancy per busy period (queue going non-empty); near "
         "the request latency when requests seldom overlap.",
     .expression = "{cbo/RxR_OCCUPANCY.IRQ} / {cbo/COUNTER0_OCCUPANCY:thresh=1,"
                   "edge}",
     .unit = "cycles",
     .rate_per_second = false,
     .manual_formula =
         "RxR_OCCUPANCY.IRQ / COUNTER0_OCCUPANCY{edge_det,thresh=0x1}",
     .fix = "",
     .manual_line = "L1122"},
    {.name = "AVG_TOR_DRDS_MISS_WHEN_NE",
     .box = BoxType::kCbo,
     .description =
         "Mean number of LLC-missing demand data reads in the TOR over "
         "the cycles holding at least one.",
     .expression = "{cbo/TOR_OCCUPANCY.MISS_OPCODE:filter_opc=0x182} / {"
                   "cbo/COUNTER0_OCCUPANCY:thresh=1}",
     .unit = "entries",
     .rate_per_second = false,
     .manual_formula =
         "(TOR_OCCUPANCY.MISS_OPCODE / COUNTER0_OCCUPANCY{edge_det,"
         "thresh=0x1})) with: Cn_MSR_PMON_BOX_FILTER1.opc=0x182",
     .fix = "Dropped the manual's unmatched ')'. Dropped edge_det from "
            "COUNTER0_OCCUPANCY: with edge detection it counts "
            "empty-to-non-empty transitions (L561), so the quotient was "
            "entries x cycles per busy period, not the number of entries "
            "when not empty that the name promises; thresh=1 alone counts "
            "the not-empty cycles (L550-556, L1201).",
     .manual_line = "L1123"},
    {.name = "AVG_TOR_DRDS_WHEN_NE",
     .box = BoxType::kCbo,
     .description =
         "Mean number of demand data reads in the TOR over the cycles "
         "holding at least one.",
     .expression = "{cbo/TOR_OCCUPANCY.OPCODE:filter_opc=0x182} / {"
                   "cbo/COUNTER0_OCCUPANCY:thresh=1}",
     .unit = "entries",
     .rate_per_second = false,
     .manual_formula = "(TOR_OCCUPANCY.OPCODE / COUNTER0_OCCUPANCY{edge_det,"
                       "thresh=0x1}) with: Cn_MSR_PMON_BOX_FILTER1.opc=0x182",
     .fix = "Dropped edge_det from COUNTER0_OCCUPANCY: with edge detection "
            "it counts empty-to-non-empty transitions (L561), so the "
            "quotient was entries x cycles per busy period, not the number "
            "of entries when not empty that the name promises; thresh=1 "
            "alone counts the not-empty cycles (L550-556, L1201).",
     .manual_line = "L1126"},
    {.name = "AVG_TOR_DRD_HIT_LATENCY",
     .box = BoxType::kCbo,
     .description = "Mean TOR lifetime, in uncore cycles, of demand data reads "
                    "that hit the LLC.",
     .expression = "({cbo/TOR_OCCUPANCY.OPCODE:filter_opc=0x182} - {"
                   "cbo/TOR_OCCUPANCY.MISS_OPCODE:filter_opc=0x182}) / ({"
                   "cbo/TOR_INSERTS.OPCODE:filter_opc=0x182} - {"
                   "cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182})",
     .unit = "cycles",
     .rate_per_second = false,
     .manual_formula = "((TOR_OCCUPANCY.OPCODE - TOR_OCCUPANCY.MISS_OPCODE) / "
                       "(TOR_INSERTS.OPCODE - TOR_INSERTS.MISS_OPCODE)) with: "
                       "Cn_MSR_PMON_BOX_FILTER.opc=0x182",
     .fix = "Notation only: the manual names Cn_MSR_PMON_BOX_FILTER, which "
            "is FILTER0 (Table 2-16); opc and nid live in FILTER1 (Table "
            "2-17). The filter_opc/filter_nid field names make the "
            "register implicit, so the expression is unchanged.",
     .manual_line = "L1129"},
    {.name = "AVG_TOR_DRD_LATENCY",
     .box = BoxType::kCbo,
     .description =
         "Mean TOR lifetime, in uncore cycles, of demand data reads.",
     .expression = "{cbo/TOR_OCCUPANCY.OPCODE:filter_opc=0x182} / {"
                   "cbo/TOR_INSERTS.OPCODE:filter_opc=0x182}",
     .unit = "cycles",
     .rate_per_second = false,
     .manual_formula = "(TOR_OCCUPANCY.OPCODE / TOR_INSERTS.OPCODE) with: "
                       "Cn_MSR_PMON_BOX_FILTER1.opc=0x182",
     .fix = "",
     .manual_line = "L1134"},
    {.name = "AVG_TOR_DRD_LOC_MISS_LATENCY",
     .box = BoxType::kCbo,
     .description =
         "Mean TOR lifetime of LLC-missing demand data reads homed on "
         "this socket's nodes ($my_node).",
     .expression = "{cbo/TOR_OCCUPANCY.NID_MISS_OPCODE:filter_opc=0x182,"
                   "filter_nid=$my_node} / {"
                   "cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x182,"
                   "filter_nid=$my_node}",
     .unit = "cycles",
     .rate_per_second = false,
     .params = {kMyNodeParam},
     .manual_formula =
         "(TOR_OCCUPANCY.MISS_OPCODE / TOR_INSERTS.MISS_OPCODE) with: "
         "Cn_MSR_PMON_BOX_FILTER1.{opc,nid}={0x182,my_node}",
     .fix = "TOR MISS_OPCODE (0x03) ignores FILTER1.nid: only the NID_* "
            "unit masks apply it (Table 2-33), so as printed this equals "
            "AVG_TOR_DRD_MISS_LATENCY. Uses NID_MISS_OPCODE (0x43) so the "
            "node filter takes effect.",
     .manual_line = "L1137"},
    {.name = "AVG_TOR_DRD_MISS_LATENCY",
     .box = BoxType::kCbo,
     .description = "Mean TOR lifetime, in uncore cycles, of demand data reads "
                    "that miss the LLC.",
     .expression = "{cbo/TOR_OCCUPANCY.MISS_OPCODE:filter_opc=0x182} / {"
                   "cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182}",
     .unit = "cycles",
     .rate_per_second = false,
     .manual_formula =
         "(TOR_OCCUPANCY.MISS_OPCODE / TOR_INSERTS.MISS_OPCODE) with: "
         "Cn_MSR_PMON_BOX_FILTER1.opc=0x182",
     .fix = "",
     .manual_line = "L1140"},
    {.name = "AVG_TOR_DRD_REM_MISS_LATENCY",
     .box = BoxType::kCbo,
     .description =
         "Mean TOR lifetime of LLC-missing demand data reads homed on "
         "other nodes ($other_nodes).",
     .expression = "{cbo/TOR_OCCUPANCY.NID_MISS_OPCODE:filter_opc=0x182,"
                   "filter_nid=$other_nodes} / {"
                   "cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x182,"
                   "filter_nid=$other_nodes}",
     .unit = "cycles",
     .rate_per_second = false,
     .params = {kOtherNodesParam},
     .manual_formula =
         "(TOR_OCCUPANCY.MISS_OPCODE / TOR_INSERTS.MISS_OPCODE) with: "
         "Cn_MSR_PMON_BOX_FILTER.{opc,nid}={0x182,other_nodes}",
     .fix = "TOR MISS_OPCODE (0x03) ignores FILTER1.nid: only the NID_* "
            "unit masks apply it (Table 2-33), so as printed this equals "
            "AVG_TOR_DRD_MISS_LATENCY. Uses NID_MISS_OPCODE (0x43) so the "
            "node filter takes effect. Notation only: the manual names "
            "Cn_MSR_PMON_BOX_FILTER, which is FILTER0 (Table 2-16); opc "
            "and nid live in FILTER1 (Table 2-17). The "
            "filter_opc/filter_nid field names make the register implicit, "
            "so the expression is unchanged.",
     .manual_line = "L1143"},
    {.name = "CYC_INGRESS_BLOCKED",
     .box = BoxType::kCbo,
     .description =
         "Fraction of uncore cycles the ingress arbiter was blocked by "
         "an externally starved IRQ.",
     .expression = "{cbo/RxR_EXT_STARVED.IRQ} / {cbo/CLOCKTICKS}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RxR_EXT_STARVED.IRQ / SAMPLE_INTERVAL",
     .fix = "",
     .manual_line = "L1146"},
    {.name = "CYC_USED_DNEVEN",
     .box = BoxType::kCbo,
     .description =
         "Fraction of uncore cycles the BL (data) ring was in use at "
         "this CBo stop, down, even polarity.",
     .expression = "{cbo/RING_BL_USED.DOWN_VR0_EVEN|DOWN_VR1_EVEN} / {"
                   "cbo/CLOCKTICKS}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RING_BL_USED.DN_EVEN / SAMPLE_INTERVAL",
     .fix = "RING_BL_USED has no DN_EVEN unit mask (Table 2-24). Uses "
            "DOWN_VR0_EVEN|DOWN_VR1_EVEN, which the event's note gives as "
            "the meaning of the UP/DN_EVEN/ODD names (L1325); at most one "
            "packet per direction per cycle, so the OR equals the sum.",
     .manual_line = "L1147"},
    {.name = "CYC_USED_DNODD",
     .box = BoxType::kCbo,
     .description =
         "Fraction of uncore cycles the BL (data) ring was in use at "
         "this CBo stop, down, odd polarity.",
     .expression = "{cbo/RING_BL_USED.DOWN_VR0_ODD|DOWN_VR1_ODD} / {"
                   "cbo/CLOCKTICKS}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RING_BL_USED.DN_ODD / SAMPLE_INTERVAL",
     .fix = "RING_BL_USED has no DN_ODD unit mask (Table 2-24). Uses "
            "DOWN_VR0_ODD|DOWN_VR1_ODD, which the event's note gives as "
            "the meaning of the UP/DN_EVEN/ODD names (L1325); at most one "
            "packet per direction per cycle, so the OR equals the sum.",
     .manual_line = "L1148"},
    {.name = "CYC_USED_UPEVEN",
     .box = BoxType::kCbo,
     .description =
         "Fraction of uncore cycles the BL (data) ring was in use at "
         "this CBo stop, up, even polarity.",
     .expression =
         "{cbo/RING_BL_USED.UP_VR0_EVEN|UP_VR1_EVEN} / {cbo/CLOCKTICKS}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RING_BL_USED.UP_EVEN / SAMPLE_INTERVAL",
     .fix = "RING_BL_USED has no UP_EVEN unit mask (Table 2-24). Uses "
            "UP_VR0_EVEN|UP_VR1_EVEN, which the event's note gives as the "
            "meaning of the UP/DN_EVEN/ODD names (L1325); at most one "
            "packet per direction per cycle, so the OR equals the sum.",
     .manual_line = "L1149"},
    {.name = "CYC_USED_UPODD",
     .box = BoxType::kCbo,
     .description =
         "Fraction of uncore cycles the BL (data) ring was in use at "
         "this CBo stop, up, odd polarity.",
     .expression =
         "{cbo/RING_BL_USED.UP_VR0_ODD|UP_VR1_ODD} / {cbo/CLOCKTICKS}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RING_BL_USED.UP_ODD / SAMPLE_INTERVAL",
     .fix = "RING_BL_USED has no UP_ODD unit mask (Table 2-24). Uses "
            "UP_VR0_ODD|UP_VR1_ODD, which the event's note gives as the "
            "meaning of the UP/DN_EVEN/ODD names (L1325); at most one "
            "packet per direction per cycle, so the OR equals the sum.",
     .manual_line = "L1150"},
    {.name = "FAST_STR_LLC_MISS",
     .box = BoxType::kCbo,
     .description = "ItoM requests (fast-string stores) that miss the LLC.",
     .expression = "{cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x1C8}",
     .unit = "count",
     .rate_per_second = true,
     .manual_formula = "TOR_INSERTS.MISS_OPCODE with: "
                       "Cn_MSR_PMON_BOX_FILTER1.opc=0x1C8",
     .fix = "",
     .manual_line = "L1151"},
    {.name = "FAST_STR_LLC_REQ",
     .box = BoxType::kCbo,
     .description = "ItoM requests (fast-string stores) looked up in the LLC.",
     .expression = "{cbo/TOR_INSERTS.OPCODE:filter_opc=0x1C8}",
     .unit = "count",
     .rate_per_second = true,
     .manual_formula =
         "TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER1.opc=0x1C8",
     .fix = "",
     .manual_line = "L1153"},
    {.name = "INGRESS_REJ_V_INS",
     .box = BoxType::kCbo,
     .description = "Rejected ingress (IRQ) requests per IRQ insertion.",
     .expression = "{cbo/RxR_INSERTS.IRQ_REJ} / {cbo/RxR_INSERTS.IRQ}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RxR_INSERTS.IRQ_REJECTED / RxR_INSERTS.IRQ",
     .fix = "RxR_INSERTS has no IRQ_REJECTED unit mask: its name is "
            "IRQ_REJ (0x02, Table 2-28); IRQ_REJECTED is the RxR_OCCUPANCY "
            "spelling.",
     .manual_line = "L1155"},
    {.name = "IO_READ_BW",
     .box = BoxType::kCbo,
     .description =
         "Inbound DMA writes to memory (disk/network reads: PCIItoM + "
         "PCINSWrF), in MB (10^6 bytes).",
     .expression = "({cbo/TOR_INSERTS.OPCODE:filter_opc=0x19C} + {"
                   "cbo/TOR_INSERTS.OPCODE:filter_opc=0x1E6}) * 64 / 1000000",
     .unit = "MB",
     .rate_per_second = true,
     .manual_formula =
         "(TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER1.opc=0x19C + "
         "TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER.opc=0x1E6) * "
         "64 / 1000000",
     .fix = "Notation only: the manual names Cn_MSR_PMON_BOX_FILTER, which "
            "is FILTER0 (Table 2-16); opc and nid live in FILTER1 (Table "
            "2-17). The filter_opc/filter_nid field names make the "
            "register implicit, so the expression is unchanged.",
     .manual_line = "L1158"},
    {.name = "IO_WRITE_BW",
     .box = BoxType::kCbo,
     .description =
         "Inbound DMA reads from memory (disk/network writes: PCIRdCur "
         "+ PCINSRd), in MB (10^6 bytes).",
     .expression = "({cbo/TOR_INSERTS.OPCODE:filter_opc=0x19E} + {"
                   "cbo/TOR_INSERTS.OPCODE:filter_opc=0x1E4}) * 64 / 1000000",
     .unit = "MB",
     .rate_per_second = true,
     .manual_formula =
         "(TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER1.opc=0x19E + "
         "TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER.opc=0x1E4) * "
         "64 / 1000000",
     .fix = "Notation only: the manual names Cn_MSR_PMON_BOX_FILTER, which "
            "is FILTER0 (Table 2-16); opc and nid live in FILTER1 (Table "
            "2-17). The filter_opc/filter_nid field names make the "
            "register implicit, so the expression is unchanged.",
     .manual_line = "L1162"},
    {.name = "LLC_DRD_MISS_PCT",
     .box = BoxType::kCbo,
     .description =
         "Percent of LLC data-read lookups that found the line invalid "
         "(a miss).",
     .expression = "{cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1} / {"
                   "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x3F} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula =
         "LLC_LOOKUP.DATA_READ (Cn_MSR_PMON_BOX_FILTER0.state=0x1) / "
         "LLC_LOOKUP.DATA_READ (Cn_MSR_PMON_BOX_FILTER.state=0x3F)",
     .fix = "",
     .manual_line = "L1166"},
    {.name = "LLC_DRD_RFO_MISS_TO_LOC_MEM",
     .box = BoxType::kCbo,
     .description = "Share of LLC-missing demand reads and RFOs homed on this "
                    "socket's nodes ($my_node).",
     .expression = "({cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x182,"
                   "filter_nid=$my_node} + {"
                   "cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x180,"
                   "filter_nid=$my_node}) / ({"
                   "cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x182,"
                   "filter_nid=0xF} + {"
                   "cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x180,"
                   "filter_nid=0xF})",
     .unit = "ratio",
     .rate_per_second = false,
     .params = {kMyNodeParam},
     .manual_formula =
         "(TOR_INSERTS.NID_MISS_OPCODE with: Cn_MSR_PMON_BOX_FILTER1.{"
         "opc,nid}={0x182,my_node} + TOR_INSERTS.NID_MISS_OPCODE with: "
         "Cn_MSR_PMON_BOX_FILTER.{opc,nid}={0x180,my_node}) / "
         "(TOR_INSERTS.NID_MISS_OPCODE with: Cn_MSR_PMON_BOX_FILTER.{"
         "opc,nid}={0x182,0xF} + TOR_INSERTS.NID_MISS_OPCODE with: "
         "Cn_MSR_PMON_BOX_FILTER.{opc,nid}={0x180,0xF})",
     .fix = "Notation only: the manual names Cn_MSR_PMON_BOX_FILTER, which "
            "is FILTER0 (Table 2-16); opc and nid live in FILTER1 (Table "
            "2-17). The filter_opc/filter_nid field names make the "
            "register implicit, so the expression is unchanged.",
     .manual_line = "L1170"},
    {.name = "LLC_DRD_RFO_MISS_TO_REM_MEM",
     .box = BoxType::kCbo,
     .description = "Share of LLC-missing demand reads and RFOs homed on other "
                    "nodes ($other_nodes).",
     .expression = "({cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x182,"
                   "filter_nid=$other_nodes} + {"
                   "cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x180,"
                   "filter_nid=$other_nodes}) / ({"
                   "cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x182,"
                   "filter_nid=0xF} + {"
                   "cbo/TOR_INSERTS.NID_MISS_OPCODE:filter_opc=0x180,"
                   "filter_nid=0xF})",
     .unit = "ratio",
     .rate_per_second = false,
     .params = {kOtherNodesParam},
     .manual_formula =
         "(TOR_INSERTS.NID_MISS_OPCODE with: Cn_MSR_PMON_BOX_FILTER1.{"
         "opc,nid}={0x182,other_nodes} + TOR_INSERTS.NID_MISS_OPCODE "
         "with: Cn_MSR_PMON_BOX_FILTER.{opc,nid}={0x180,other_nodes}) / "
         "(TOR_INSERTS.NID_MISS_OPCODE with: Cn_MSR_PMON_BOX_FILTER.{"
         "opc,nid}={0x182,0xF} + TOR_INSERTS.NID_MISS_OPCODE with: "
         "Cn_MSR_PMON_BOX_FILTER.{opc,nid}={0x180,0xF})",
     .fix = "Notation only: the manual names Cn_MSR_PMON_BOX_FILTER, which "
            "is FILTER0 (Table 2-16); opc and nid live in FILTER1 (Table "
            "2-17). The filter_opc/filter_nid field names make the "
            "register implicit, so the expression is unchanged.",
     .manual_line = "L1179"},
    {.name = "LLC_MPI",
     .box = BoxType::kCbo,
     .description =
         "LLC misses (any request type) per instruction retired on the "
         "socket's cores.",
     .expression =
         "{cbo/LLC_LOOKUP.ANY:filter_state=0x1} / {cpu/instructions/}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "LLC_LOOKUP.ANY (Cn_MSR_PMON_BOX_FILTER0.state=0x1) / "
                       "INST_RETIRED.ALL (on Core)",
     .fix = "INST_RETIRED.ALL is a core event, not an uncore one: written "
            "as the generic perf event cpu/instructions/, which only the "
            "perf backend can count (over every CPU of the socket). The "
            "direct and simulated backends cannot evaluate this metric.",
     .manual_line = "L1188"},
    {.name = "LLC_PCIE_DATA_BYTES",
     .box = BoxType::kCbo,
     .description = "Bytes PCIe devices wrote through the LLC with allocating "
                    "writes (PCIItoM).",
     .expression = "{cbo/TOR_INSERTS.OPCODE:filter_opc=0x19C} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER1.opc=0x19C * "
         "64",
     .fix = "",
     .manual_line = "L1191"},
    {.name = "LLC_RFO_MISS_PCT",
     .box = BoxType::kCbo,
     .description = "Percent of demand RFO requests that miss the LLC.",
     .expression = "{cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x180} / {"
                   "cbo/TOR_INSERTS.OPCODE:filter_opc=0x180} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "(TOR_INSERTS.MISS_OPCODE / TOR_INSERTS.OPCODE) with: "
                       "Cn_MSR_PMON_BOX_FILTER1.opc=0x180",
     .fix = "",
     .manual_line = "L1193"},
    {.name = "MEM_WB_BYTES",
     .box = BoxType::kCbo,
     .description = "Bytes written back to memory by evictions of modified LLC "
                    "lines.",
     .expression = "{cbo/LLC_VICTIMS.M_STATE} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "LLC_VICTIMS.M_STATE * 64",
     .fix = "",
     .manual_line = "L1208"},
    {.name = "PARTIAL_PCI_READS",
     .box = BoxType::kCbo,
     .description = "PCIe partial (uncacheable) reads: opcode 0x195, PCIPRd, "
                    "missing from the manual's opcode table.",
     .expression = "{cbo/TOR_INSERTS.OPCODE:filter_opc=0x195}",
     .unit = "count",
     .rate_per_second = true,
     .manual_formula =
         "TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER1.opc=0x195",
     .fix = "",
     .manual_line = "L1209"},
    {.name = "PARTIAL_PCI_WRITES",
     .box = BoxType::kCbo,
     .description = "PCIe non-snoop partial-line writes (PCINSWr).",
     .expression = "{cbo/TOR_INSERTS.OPCODE:filter_opc=0x1E5}",
     .unit = "count",
     .rate_per_second = true,
     .manual_formula =
         "TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER1.opc=0x1E5",
     .fix = "",
     .manual_line = "L1211"},
    {.name = "PCIE_DATA_BYTES",
     .box = BoxType::kCbo,
     .description = "Bytes written by PCIe devices (PCIWiLF + PCIItoM).",
     .expression = "({cbo/TOR_INSERTS.OPCODE:filter_opc=0x194} + {"
                   "cbo/TOR_INSERTS.OPCODE:filter_opc=0x19C}) * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "(TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER1.opc=0x194 + "
         "TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER.opc=0x19C) * "
         "64",
     .fix = "Notation only: the manual names Cn_MSR_PMON_BOX_FILTER, which "
            "is FILTER0 (Table 2-16); opc and nid live in FILTER1 (Table "
            "2-17). The filter_opc/filter_nid field names make the "
            "register implicit, so the expression is unchanged.",
     .manual_line = "L1213"},
    {.name = "RING_THRU_DNEVEN_BYTES",
     .box = BoxType::kCbo,
     .description =
         "Bytes carried by the BL ring past this CBo stop, down, even "
         "polarity (32 per busy cycle).",
     .expression = "{cbo/RING_BL_USED.DOWN_VR0_EVEN|DOWN_VR1_EVEN} * 32",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "RING_BL_USED.DN_EVEN * 32",
     .fix = "RING_BL_USED has no DN_EVEN unit mask (Table 2-24). Uses "
            "DOWN_VR0_EVEN|DOWN_VR1_EVEN, which the event's note gives as "
            "the meaning of the UP/DN_EVEN/ODD names (L1325); at most one "
            "packet per direction per cycle, so the OR equals the sum.",
     .manual_line = "L1217"},
    {.name = "RING_THRU_DNODD_BYTES",
     .box = BoxType::kCbo,
     .description =
         "Bytes carried by the BL ring past this CBo stop, down, odd "
         "polarity (32 per busy cycle).",
     .expression = "{cbo/RING_BL_USED.DOWN_VR0_ODD|DOWN_VR1_ODD} * 32",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "RING_BL_USED.DN_ODD * 32",
     .fix = "RING_BL_USED has no DN_ODD unit mask (Table 2-24). Uses "
            "DOWN_VR0_ODD|DOWN_VR1_ODD, which the event's note gives as "
            "the meaning of the UP/DN_EVEN/ODD names (L1325); at most one "
            "packet per direction per cycle, so the OR equals the sum.",
     .manual_line = "L1218"},
    {.name = "RING_THRU_UPEVEN_BYTES",
     .box = BoxType::kCbo,
     .description = "Bytes carried by the BL ring past this CBo stop, up, even "
                    "polarity (32 per busy cycle).",
     .expression = "{cbo/RING_BL_USED.UP_VR0_EVEN|UP_VR1_EVEN} * 32",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "RING_BL_USED.UP_EVEN * 32",
     .fix = "RING_BL_USED has no UP_EVEN unit mask (Table 2-24). Uses "
            "UP_VR0_EVEN|UP_VR1_EVEN, which the event's note gives as the "
            "meaning of the UP/DN_EVEN/ODD names (L1325); at most one "
            "packet per direction per cycle, so the OR equals the sum.",
     .manual_line = "L1219"},
    {.name = "RING_THRU_UPODD_BYTES",
     .box = BoxType::kCbo,
     .description = "Bytes carried by the BL ring past this CBo stop, up, odd "
                    "polarity (32 per busy cycle).",
     .expression = "{cbo/RING_BL_USED.UP_VR0_ODD|UP_VR1_ODD} * 32",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "RING_BL_USED.UP_ODD * 32",
     .fix = "RING_BL_USED has no UP_ODD unit mask (Table 2-24). Uses "
            "UP_VR0_ODD|UP_VR1_ODD, which the event's note gives as the "
            "meaning of the UP/DN_EVEN/ODD names (L1325); at most one "
            "packet per direction per cycle, so the OR equals the sum.",
     .manual_line = "L1220"},
    {.name = "STREAMED_FULL_STORES",
     .box = BoxType::kCbo,
     .description = "Full-line streaming (write-combining) stores (WCiLF).",
     .expression = "{cbo/TOR_INSERTS.OPCODE:filter_opc=0x18C}",
     .unit = "count",
     .rate_per_second = true,
     .manual_formula =
         "TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER1.opc=0x18C",
     .fix = "",
     .manual_line = "L1221"},
    {.name = "STREAMED_PART_STORES",
     .box = BoxType::kCbo,
     .description = "Partial-line streaming (write-combining) stores (WCiL).",
     .expression = "{cbo/TOR_INSERTS.OPCODE:filter_opc=0x18D}",
     .unit = "count",
     .rate_per_second = true,
     .manual_formula =
         "TOR_INSERTS.OPCODE with: Cn_MSR_PMON_BOX_FILTER1.opc=0x18D",
     .fix = "",
     .manual_line = "L1223"},
    {.name = "UC_READS",
     .box = BoxType::kCbo,
     .description = "Uncacheable partial reads (PRd) that miss the LLC.",
     .expression = "{cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x187}",
     .unit = "count",
     .rate_per_second = true,
     .manual_formula = "TOR_INSERTS.MISS_OPCODE with: "
                       "Cn_MSR_PMON_BOX_FILTER1.opc=0x187",
     .fix = "",
     .manual_line = "L1225"},
    // ---- HA (section 2.4.5, L1689-1694): 4 ----
    {.name = "PCT_CYCLES_BL_FULL",
     .box = BoxType::kHa,
     .description = "Percent of HA cycles the BL (data) egress queue was full.",
     .expression = "{ha/TxR_BL_CYCLES_FULL.ALL} / {ha/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "TxR_BL_CYCLES_FULL.ALL / SAMPLE_INTERVAL",
     .fix = "",
     .manual_line = "L1689"},
    {.name = "PCT_CYCLES_D2C_DISABLED",
     .box = BoxType::kHa,
     .description = "Percent of HA cycles Direct2Core was disabled.",
     .expression = "{ha/DIRECT2CORE_CYCLES_DISABLED} / {ha/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "DIRECT2CORE_CYCLES_DISABLED / SAMPLE_INTERVAL",
     .fix = "",
     .manual_line = "L1690"},
    {.name = "PCT_RD_REQUESTS",
     .box = BoxType::kHa,
     .description = "Reads as a percent of the read and write requests the HA "
                    "received.",
     .expression = "{ha/REQUESTS.READS} / ({ha/REQUESTS.READS} + {"
                   "ha/REQUESTS.WRITES}) * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "REQUESTS.READS / (REQUESTS.READS + REQUESTS.WRITES)",
     .fix = "",
     .manual_line = "L1691"},
    {.name = "PCT_WR_REQUESTS",
     .box = BoxType::kHa,
     .description = "Writes as a percent of the read and write requests the HA "
                    "received.",
     .expression = "{ha/REQUESTS.WRITES} / ({ha/REQUESTS.READS} + {"
                   "ha/REQUESTS.WRITES}) * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "REQUESTS.WRITES / (REQUESTS.READS + REQUESTS.WRITES)",
     .fix = "",
     .manual_line = "L1694"},
    // ---- iMC (section 2.5.7, L2157-2175): 14 ----
    {.name = "MEM_BW_READS",
     .box = BoxType::kImc,
     .description = "DRAM read traffic in bytes (64 per read CAS).",
     .expression = "{imc/CAS_COUNT.RD} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "(CAS_COUNT.RD * 64)",
     .fix = "",
     .manual_line = "L2157"},
    {.name = "MEM_BW_TOTAL",
     .box = BoxType::kImc,
     .description = "DRAM read plus write traffic in bytes.",
     .expression = "MEM_BW_READS + MEM_BW_WRITES",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "MEM_BW_READS + MEM_BW_WRITES",
     .fix = "",
     .manual_line = "L2160"},
    {.name = "MEM_BW_WRITES",
     .box = BoxType::kImc,
     .description = "DRAM write traffic in bytes (64 per write CAS).",
     .expression = "{imc/CAS_COUNT.WR} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "(CAS_COUNT.WR * 64)",
     .fix = "",
     .manual_line = "L2162"},
    {.name = "PCT_CYCLES_CRITICAL_THROTTLE",
     .box = BoxType::kImc,
     .description =
         "Percent of DRAM clocks in critical thermal throttling (all "
         "traffic blocked).",
     .expression = "{imc/POWER_CRITICAL_THROTTLE_CYCLES} / {imc/DCLK} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula =
         "POWER_CRITICAL_THROTTLE_CYCLES / MC_Chy_PCI_PMON_CTR_FIXED",
     .fix = "",
     .manual_line = "L2164"},
    {.name = "PCT_CYCLES_DLLOFF",
     .box = BoxType::kImc,
     .description = "Percent of DRAM clocks all ranks were in slow (DLL off) "
                    "power-down.",
     .expression = "{imc/POWER_CHANNEL_DLLOFF} / {imc/DCLK} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "POWER_CHANNEL_DLLOFF / MC_Chy_PCI_PMON_CTR_FIXED",
     .fix = "",
     .manual_line = "L2164"},
    {.name = "PCT_CYCLES_DRAM_RANKx_IN_CKE",
     .box = BoxType::kImc,
     .description =
         "Percent of DRAM clocks rank $x had CKE on (not powered down).",
     .expression = "{imc/POWER_CKE_CYCLES.RANK$x} / {imc/DCLK} * 100",
     .unit = "%",
     .rate_per_second = false,
     .params = {kRankParam},
     .manual_formula = "POWER_CKE_CYCLES.RANKx / MC_Chy_PCI_PMON_CTR_FIXED",
     .fix = "",
     .manual_line = "L2164"},
    {.name = "PCT_CYCLES_DRAM_RANKx_IN_THR",
     .box = BoxType::kImc,
     .description = "Percent of DRAM clocks rank $x was thermally throttled.",
     .expression = "{imc/POWER_THROTTLE_CYCLES.RANK$x} / {imc/DCLK} * 100",
     .unit = "%",
     .rate_per_second = false,
     .params = {kRankParam},
     .manual_formula =
         "POWER_THROTTLE_CYCLES.RANKx / MC_Chy_PCI_PMON_CTR_FIXED",
     .fix = "",
     .manual_line = "L2166"},
    {.name = "PCT_CYCLES_PPD",
     .box = BoxType::kImc,
     .description =
         "Percent of DRAM clocks all ranks were in precharge power-down.",
     .expression = "{imc/POWER_CHANNEL_PPD} / {imc/DCLK} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "POWER_CHANNEL_PPD / MC_Chy_PCI_PMON_CTR_FIXED",
     .fix = "",
     .manual_line = "L2168"},
    {.name = "PCT_CYCLES_SELF_REFRESH",
     .box = BoxType::kImc,
     .description =
         "Percent of DRAM clocks in self-refresh (seen only while the "
         "iMC is clocked).",
     .expression = "{imc/POWER_SELF_REFRESH} / {imc/DCLK} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "POWER_SELF_REFRESH / MC_Chy_PCI_PMON_CTR_FIXED",
     .fix = "",
     .manual_line = "L2168"},
    {.name = "PCT_RD_REQUESTS",
     .box = BoxType::kImc,
     .description =
         "Reads as a percent of requests entering the read and write "
         "pending queues.",
     .expression =
         "{imc/RPQ_INSERTS} / ({imc/RPQ_INSERTS} + {imc/WPQ_INSERTS}) * "
         "100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "RPQ_INSERTS / (RPQ_INSERTS + WPQ_INSERTS)",
     .fix = "",
     .manual_line = "L2168"},
    {.name = "PCT_REQUESTS_PAGE_EMPTY",
     .box = BoxType::kImc,
     .description = "Percent of CAS commands that opened a row in an idle bank "
                    "(page empty).",
     .expression =
         "({imc/ACT_COUNT.RD|WR|BYP} - {imc/PRE_COUNT.PAGE_MISS}) / ({"
         "imc/CAS_COUNT.RD} + {imc/CAS_COUNT.WR}) * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "(ACT_COUNT - PRE_COUNT.PAGE_MISS) / (CAS_COUNT.RD + "
                       "CAS_COUNT.WR)",
     .fix = "On IvyTown ACT_COUNT has unit masks RD, WR and BYP (Table "
            "2-77) and no plain form (the bare name is the prior "
            "generation's); writes RD|WR|BYP so every activate counts.",
     .manual_line = "L2169"},
    {.name = "PCT_REQUESTS_PAGE_HIT",
     .box = BoxType::kImc,
     .description =
         "Percent of CAS commands that hit an already open row (page "
         "hit).",
     .expression = "100 - (PCT_REQUESTS_PAGE_EMPTY + PCT_REQUESTS_PAGE_MISS)",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "1 - (PCT_REQUESTS_PAGE_EMPTY + PCT_REQUESTS_PAGE_MISS)",
     .fix = "",
     .manual_line = "L2172"},
    {.name = "PCT_REQUESTS_PAGE_MISS",
     .box = BoxType::kImc,
     .description =
         "Percent of CAS commands that first had to close another row "
         "(page miss).",
     .expression = "{imc/PRE_COUNT.PAGE_MISS} / ({imc/CAS_COUNT.RD} + {"
                   "imc/CAS_COUNT.WR}) * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "PRE_COUNT.PAGE_MISS / (CAS_COUNT.RD + CAS_COUNT.WR)",
     .fix = "",
     .manual_line = "L2172"},
    {.name = "PCT_WR_REQUESTS",
     .box = BoxType::kImc,
     .description =
         "Writes as a percent of requests entering the read and write "
         "pending queues.",
     .expression =
         "{imc/WPQ_INSERTS} / ({imc/RPQ_INSERTS} + {imc/WPQ_INSERTS}) * "
         "100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "WPQ_INSERTS / (RPQ_INSERTS + WPQ_INSERTS)",
     .fix = "",
     .manual_line = "L2175"},
    // ---- PCU (L2792): 4 ----
    {.name = "PCT_CYC_FREQ_CURRENT_LTD",
     .box = BoxType::kPcu,
     .description =
         "Percent of PCU cycles the maximum core frequency was capped "
         "by current (ICC) limits.",
     .expression = "{pcu/FREQ_MAX_CURRENT_CYCLES} / {pcu/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "FREQ_MAX_CURRENT_CYCLES / CLOCKTICKS",
     .fix = "",
     .manual_line = "L2792"},
    {.name = "PCT_CYC_FREQ_OS_LTD",
     .box = BoxType::kPcu,
     .description =
         "Percent of PCU cycles the maximum core frequency was capped "
         "by the operating system's request.",
     .expression = "{pcu/FREQ_MAX_OS_CYCLES} / {pcu/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "FREQ_MAX_OS_CYCLES / CLOCKTICKS",
     .fix = "",
     .manual_line = "L2792"},
    {.name = "PCT_CYC_FREQ_POWER_LTD",
     .box = BoxType::kPcu,
     .description =
         "Percent of PCU cycles the maximum core frequency was capped "
         "by power limits.",
     .expression = "{pcu/FREQ_MAX_POWER_CYCLES} / {pcu/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "FREQ_MAX_POWER_CYCLES / CLOCKTICKS",
     .fix = "",
     .manual_line = "L2792"},
    {.name = "PCT_CYC_FREQ_THERMAL_LTD",
     .box = BoxType::kPcu,
     .description =
         "Percent of PCU cycles the maximum core frequency was capped "
         "by thermal limits.",
     .expression =
         "{pcu/FREQ_MAX_LIMIT_THERMAL_CYCLES} / {pcu/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "FREQ_MAX_CURRENT_CYCLES / CLOCKTICKS",
     .fix = "The manual divides FREQ_MAX_CURRENT_CYCLES (the current "
            "limit, a copy of PCT_CYC_FREQ_CURRENT_LTD); the thermal limit "
            "is counted by FREQ_MAX_LIMIT_THERMAL_CYCLES (0x04, L2994).",
     .manual_line = "L2792"},
    // ---- QPI link layer (section 2.8.6, L3313-3347): 26 ----
    {.name = "DATA_FROM_QPI",
     .box = BoxType::kQpi,
     .description =
         "Data payload received on this link (DRS plus NCB data flits), "
         "in bytes.",
     .expression = "DRS_DATA_MSGS_FROM_QPI + NCB_DATA_MSGS_FROM_QPI",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "DRS_DATA_MSGS_FROM_QPI + NCB_DATA_MSGS_FROM_QPI",
     .fix = "",
     .manual_line = "L3313"},
    {.name = "DATA_FROM_QPI_TO_HA_OR_IIO",
     .box = BoxType::kQpi,
     .description =
         "Received data not sent straight to a core, so handled by the "
         "HA or IIO, in bytes.",
     .expression = "DATA_FROM_QPI - DATA_FROM_QPI_TO_LLC",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "DATA_FROM_QPI - DATA_FROM_QPI_TO_LLC",
     .fix = "",
     .manual_line = "L3313"},
    {.name = "DATA_FROM_QPI_TO_LLC",
     .box = BoxType::kQpi,
     .description =
         "Received data delivered straight to the requesting core's CBo "
         "(Direct2Core), in bytes.",
     .expression = "{qpi/DIRECT2CORE.SUCCESS_RBT_HIT} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "DIRECT2CORE.SUCCESS * 64",
     .fix = "DIRECT2CORE has no SUCCESS unit mask: the success case is "
            "SUCCESS_RBT_HIT (0x01, Table 2-139).",
     .manual_line = "L3314"},
    {.name = "DATA_FROM_QPI_TO_NODEx",
     .box = BoxType::kQpi,
     .description =
         "Received DRS and NCB data packets addressed to node $x, in "
         "bytes.",
     .expression =
         "DRS_DataC_FROM_QPI_TO_NODEx + DRS_WRITE_FROM_QPI_TO_NODEx + "
         "NCB_DATA_FROM_QPI_TO_NODEx",
     .unit = "bytes",
     .rate_per_second = true,
     .params = {kNodeParam},
     .manual_formula =
         "DRS_DataC_FROM_QPI_TO_NODEx + DRS_WRITE_FROM_QPI_TO_NODEx + "
         "NCB_DATA_FROM_QPI_TO_NODEx",
     .fix = "",
     .manual_line = "L3316"},
    {.name = "DRS_DATA_MSGS_FROM_QPI",
     .box = BoxType::kQpi,
     .description = "Received DRS data flits, in bytes (8 per flit).",
     .expression = "{qpi/RxL_FLITS_G1.DRS_DATA} * 8",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "(RxL_FLITS_G1.DRS_DATA * 8)",
     .fix = "",
     .manual_line = "L3317"},
    {.name = "DRS_DataC_FROM_QPI_TO_NODEx",
     .box = BoxType::kQpi,
     .description =
         "Received DRS DataC responses addressed to node $x, in bytes.",
     .expression = "{qpi/CTO_COUNT:match_mc=0xE,match_opc=0x0,match_dnid=$x,"
                   "mask0=0x3FF80} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .params = {kNodeParam},
     .manual_formula =
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0{[12:0],dnid}={"
         "0x1C00,x},Q_Py_PCI_PMON_PKT_z_MASK0[17:0]=0x3FF80}) * 64",
     .fix = "",
     .manual_line = "L3318"},
    {.name = "DRS_DataC_M_FROM_QPI",
     .box = BoxType::kQpi,
     .description =
         "Received DRS DataC responses that grant the line in F state, in "
         "bytes (the manual's name says M; its description and formula say "
         "F: DRS_M_FROM_QPI counts M).",
     .expression = "{qpi/CTO_COUNT:match0=0x1C00,mask0=0x1FE0,match_rds=0x1,"
                   "mask_rds=0xF} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C00,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0},"
         "Q_Py_PCI_PMON_PKT_z_MATCH1[19:16]=0x1,"
         "Q_Py_PCI_PMON_PKT_z_MASK1[19:16]=0xF}) * 64",
     .fix = "The manual's braces close early; the match fields are one "
            "group. RDS=0x1 (Forwarding, Table 2-133) is kept, as the "
            "manual's description (\"DataC_F packets\") and formula say; "
            "only the name says M (notes/decisions.md #31).",
     .manual_line = "L3319"},
    {.name = "DRS_FULL_CACHELINE_MSGS_FROM_QPI",
     .box = BoxType::kQpi,
     .description = "Received full-line (9-flit) DRS messages, in bytes.",
     .expression = "{qpi/CTO_COUNT:match0=0x1C00,mask0=0x1F00} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C00,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1F00}) * 64)",
     .fix = "Dropped the manual's unmatched trailing ')'.",
     .manual_line = "L3320"},
    {.name = "DRS_F_OR_E_FROM_QPI",
     .box = BoxType::kQpi,
     .description = "Received DRS data responses granting F or E state (DataC, "
                    "_Cmp and _FrcAckCnflt), in bytes.",
     .expression = "({qpi/CTO_COUNT:match0=0x1C00,mask0=0x1FE0,match_rds=0x4,"
                   "mask_rds=0xF} + {qpi/CTO_COUNT:match0=0x1C00,mask0=0x1FE0,"
                   "match_rds=0x1,mask_rds=0xF} + {qpi/CTO_COUNT:match0=0x1C40,"
                   "mask0=0x1FE0,match_rds=0x4,mask_rds=0xF} + {"
                   "qpi/CTO_COUNT:match0=0x1C40,mask0=0x1FE0,match_rds=0x1,"
                   "mask_rds=0xF} + {qpi/CTO_COUNT:match0=0x1C20,mask0=0x1FE0,"
                   "match_rds=0x4,mask_rds=0xF} + {qpi/CTO_COUNT:match0=0x1C20,"
                   "mask0=0x1FE0,match_rds=0x1,mask_rds=0xF}) * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "((CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C00,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0,"
         "Q_Py_PCI_PMON_PKT_z_MATCH1[19:16]=0x4,"
         "Q_Py_PCI_PMON_PKT_z_MASK1[19:16]=0xF}) + (CTO_COUNT with:{"
         "Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C00,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0,"
         "Q_Py_PCI_PMON_PKT_z_MATCH1[19:16]=0x1,"
         "Q_Py_PCI_PMON_PKT_z_MASK1[19:16]=0xF}) + (CTO_COUNT with:{"
         "Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C40,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0,"
         "Q_Py_PCI_PMON_PKT_z_MATCH1[19:16]=0x4,"
         "Q_Py_PCI_PMON_PKT_z_MASK1[19:16]=0xF}) + (CTO_COUNT with:{"
         "Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C40,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0,"
         "Q_Py_PCI_PMON_PKT_z_MATCH1[19:16]=0x1,"
         "Q_Py_PCI_PMON_PKT_z_MASK1[19:16]=0xF}) + (CTO_COUNT with:{"
         "Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C20,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0,"
         "Q_Py_PCI_PMON_PKT_z_MATCH1[19:16]=0x4,"
         "Q_Py_PCI_PMON_PKT_z_MASK1[19:16]=0xF}) + (CTO_COUNT with:{"
         "Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C20,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0,"
         "Q_Py_PCI_PMON_PKT_z_MATCH1[19:16]=0x1,"
         "Q_Py_PCI_PMON_PKT_z_MASK1[19:16]=0xF})) * 64",
     .fix = "",
     .manual_line = "L3320"},
    {.name = "DRS_M_FROM_QPI",
     .box = BoxType::kQpi,
     .description = "Received DRS data responses granting M state, in bytes.",
     .expression = "{qpi/CTO_COUNT:match0=0x1C00,mask0=0x1FE0,match_rds=0x8,"
                   "mask_rds=0xF} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C00,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0,"
         "Q_Py_PCI_PMON_PKT_z_MATCH1[19:16]=0x8,"
         "Q_Py_PCI_PMON_PKT_z_MASK1[19:16]=0xF}) * 64",
     .fix = "",
     .manual_line = "L3322"},
    {.name = "DRS_PTL_CACHELINE_MSGS_FROM_QPI",
     .box = BoxType::kQpi,
     .description = "Received partial-line (11-flit) DRS messages, in bytes.",
     .expression = "{qpi/CTO_COUNT:match0=0x1D00,mask0=0x1F00} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1D00,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1F00}) * 64",
     .fix = "",
     .manual_line = "L3322"},
    {.name = "DRS_WB_FROM_QPI",
     .box = BoxType::kQpi,
     .description = "Received DRS writebacks (WbIData + WbSData + WbEData), in "
                    "bytes.",
     .expression = "DRS_WbI_FROM_QPI + DRS_WbS_FROM_QPI + DRS_WbE_FROM_QPI",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "DRS_WbI_FROM_QPI + DRS_WbS_FROM_QPI + DRS_WbE_FROM_QPI",
     .fix = "",
     .manual_line = "L3322"},
    {.name = "DRS_WRITE_FROM_QPI_TO_NODEx",
     .box = BoxType::kQpi,
     .description =
         "Received DRS data packets other than DataC addressed to node "
         "$x, in bytes.",
     .expression = "({qpi/CTO_COUNT:match_mc=0xE,match_opc=0x0,match_dnid=$x,"
                   "mask0=0x3FE00} - {qpi/CTO_COUNT:match_mc=0xE,match_opc=0x0,"
                   "match_dnid=$x,mask0=0x3FF80}) * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .params = {kNodeParam},
     .manual_formula =
         "((CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0{[12:0],dnid}={"
         "0x1C00,x},Q_Py_PCI_PMON_PKT_z_MASK0[17:0]=0x3FE00}) - "
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0{[12:0],dnid}={"
         "0x1C00,x},Q_Py_PCI_PMON_PKT_z_MASK0[17:0]=0x3FF80})) * 64",
     .fix = "",
     .manual_line = "L3323"},
    {.name = "DRS_WbE_FROM_QPI",
     .box = BoxType::kQpi,
     .description = "Received WbEData writebacks (line kept in E), in bytes.",
     .expression = "{qpi/CTO_COUNT:match0=0x1CC0,mask0=0x1FE0} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1CC0,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0}) * 64",
     .fix = "",
     .manual_line = "L3324"},
    {.name = "DRS_WbI_FROM_QPI",
     .box = BoxType::kQpi,
     .description =
         "Received WbIData writebacks (line dropped to I), in bytes.",
     .expression = "{qpi/CTO_COUNT:match0=0x1C80,mask0=0x1FE0} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1C80,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0}) * 64",
     .fix = "",
     .manual_line = "L3324"},
    {.name = "DRS_WbS_FROM_QPI",
     .box = BoxType::kQpi,
     .description = "Received WbSData writebacks (line kept in S), in bytes.",
     .expression = "{qpi/CTO_COUNT:match0=0x1CA0,mask0=0x1FE0} * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula =
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0[12:0]=0x1CA0,"
         "Q_Py_PCI_PMON_PKT_z_MASK0[12:0]=0x1FE0}) * 64",
     .fix = "",
     .manual_line = "L3324"},
    {.name = "NCB_DATA_FROM_QPI_TO_NODEx",
     .box = BoxType::kQpi,
     .description =
         "Received NCB data packets other than interrupts addressed to "
         "node $x, in bytes.",
     .expression = "({qpi/CTO_COUNT:match_mc=0xC,match_opc=0x0,match_dnid=$x,"
                   "mask0=0x3FE00} - {qpi/CTO_COUNT:match_mc=0xC,match_opc=0x8,"
                   "match_dnid=$x,mask0=0x3FF80}) * 64",
     .unit = "bytes",
     .rate_per_second = true,
     .params = {kNodeParam},
     .manual_formula =
         "((CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0{[12:0],dnid}={"
         "0x1800,x},Q_Py_PCI_PMON_PKT_z_MASK0[17:0]=0x3FE00}) - "
         "(CTO_COUNT with:{Q_Py_PCI_PMON_PKT_z_MATCH0{[12:0],dnid}={"
         "0x1900,x},Q_Py_PCI_PMON_PKT_z_MASK0[17:0]=0x3FF80})) * 64",
     .fix = "",
     .manual_line = "L3324"},
    {.name = "NCB_DATA_MSGS_FROM_QPI",
     .box = BoxType::kQpi,
     .description = "Received NCB data flits, in bytes (8 per flit).",
     .expression = "{qpi/RxL_FLITS_G2.NCB_DATA} * 8",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "(RxL_FLITS_G2.NCB_DATA * 8)",
     .fix = "",
     .manual_line = "L3339"},
    {.name = "PCT_LINK_CRC_RETRY_CYCLES",
     .box = BoxType::kQpi,
     .description = "Percent of link cycles in which a CRC error started a "
                    "link-level retry (a lower bound on retry time).",
     .expression = "{qpi/RxL_CRC_ERRORS.NORMAL_OP} / {qpi/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "RxL_CRC_CYCLES_IN_LLR / CLOCKTICKS",
     .fix = "RxL_CRC_CYCLES_IN_LLR exists in neither the manual's event "
            "list nor Intel's published one, and no IvyTown event counts "
            "cycles spent in link-level retry. Uses "
            "RxL_CRC_ERRORS.NORMAL_OP (0x03, umask 0x02; Intel's published "
            "list only): flits whose CRC failed in normal operation, each "
            "of which starts one retry. The value is the percent of cycles "
            "in which a retry began, a lower bound.",
     .manual_line = "L3340"},
    {.name = "PCT_LINK_FULL_POWER_CYCLES",
     .box = BoxType::kQpi,
     .description = "Percent of link cycles the receive side was in L0 (this "
                    "includes L0p).",
     .expression = "{qpi/RxL0_POWER_CYCLES} / {qpi/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "RxL0_POWER_CYCLES / CLOCKTICKS",
     .fix = "",
     .manual_line = "L3340"},
    {.name = "PCT_LINK_HALF_DISABLED_CYCLES",
     .box = BoxType::kQpi,
     .description =
         "Percent of link cycles the receive side was in L0p (half the "
         "lanes off).",
     .expression = "{qpi/RxL0P_POWER_CYCLES} / {qpi/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "RxL0P_POWER_CYCLES / CLOCKTICKS",
     .fix = "",
     .manual_line = "L3340"},
    {.name = "PCT_LINK_SHUTDOWN_CYCLES",
     .box = BoxType::kQpi,
     .description = "Percent of link cycles the link was in L1 (shut down).",
     .expression = "{qpi/L1_POWER_CYCLES} / {qpi/CLOCKTICKS} * 100",
     .unit = "%",
     .rate_per_second = false,
     .manual_formula = "L1_POWER_CYCLES / CLOCKTICKS",
     .fix = "",
     .manual_line = "L3341"},
    {.name = "QPI_DATA_BW",
     .box = BoxType::kQpi,
     .description = "Data flits sent on this link, in bytes (8 per flit).",
     .expression = "{qpi/TxL_FLITS_G0.DATA} * 8",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "TxL_FLITS_G0.DATA * 8",
     .fix = "",
     .manual_line = "L3341"},
    {.name = "QPI_LINK_BW",
     .box = BoxType::kQpi,
     .description = "Data and control flits sent on this link, in bytes (8 per "
                    "flit).",
     .expression =
         "({qpi/TxL_FLITS_G0.DATA} + {qpi/TxL_FLITS_G0.NON_DATA}) * 8",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "(TxL_FLITS_G0.DATA + TxL_FLITS_G0.NON_DATA) * 8",
     .fix = "",
     .manual_line = "L3342"},
    {.name = "QPI_LINK_UTIL",
     .box = BoxType::kQpi,
     .description = "Received non-idle flits per flit slot (two slots per link "
                    "clock), from 0 to 1.",
     .expression =
         "({qpi/RxL_FLITS_G0.DATA} + {qpi/RxL_FLITS_G0.NON_DATA}) / (2 "
         "* {qpi/CLOCKTICKS})",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula =
         "(RxL_FLITS_G0.DATA + RxL_FLITS_G0.NON_DATA) / (2 * CLOCKTICKS)",
     .fix = "",
     .manual_line = "L3344"},
    {.name = "QPI_SPEED",
     .box = BoxType::kQpi,
     .description = "Link transfer rate in GT/s (8 transfers per link clock); "
                    "meaningful per link.",
     .expression = "round({qpi/CLOCKTICKS} / ELAPSED_SECONDS / 1e6) * 8 / 1000",
     .unit = "GT/s",
     .rate_per_second = false,
     .manual_formula = "ROUND((CLOCKTICKS / TSC) * TSC_SPEED, 0) * (8 / 1000)",
     .fix = "",
     .manual_line = "L3347"},
    // ---- R2PCIe (section 2.9.6, L3973-3996): 8 ----
    {.name = "CYC_USED_DNEVEN",
     .box = BoxType::kR2pcie,
     .description = "Fraction of uncore cycles the BL ring was in use at the "
                    "R2PCIe stop, counter-clockwise (down), even polarity.",
     .expression = "{r2pcie/RING_BL_USED.CCW_VR0_EVEN|CCW_VR1_EVEN} / {"
                   "r2pcie/CLOCKTICKS}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RING_BL_USED.CCW_EVEN / SAMPLE_INTERVAL",
     .fix = "RING_BL_USED has no CCW_EVEN unit mask (Table 2-179). Uses "
            "CCW_VR0_EVEN|CCW_VR1_EVEN, which the event's note gives as "
            "the meaning of CW/CCW_EVEN/ODD (L4029); at most one packet "
            "per direction per cycle, so the OR equals the sum.",
     .manual_line = "L3973"},
    {.name = "CYC_USED_DNODD",
     .box = BoxType::kR2pcie,
     .description = "Fraction of uncore cycles the BL ring was in use at the "
                    "R2PCIe stop, counter-clockwise (down), odd polarity.",
     .expression = "{r2pcie/RING_BL_USED.CCW_VR0_ODD|CCW_VR1_ODD} / {"
                   "r2pcie/CLOCKTICKS}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RING_BL_USED.CCW_ODD / SAMPLE_INTERVAL",
     .fix = "RING_BL_USED has no CCW_ODD unit mask (Table 2-179). Uses "
            "CCW_VR0_ODD|CCW_VR1_ODD, which the event's note gives as the "
            "meaning of CW/CCW_EVEN/ODD (L4029); at most one packet per "
            "direction per cycle, so the OR equals the sum.",
     .manual_line = "L3974"},
    {.name = "CYC_USED_UPEVEN",
     .box = BoxType::kR2pcie,
     .description = "Fraction of uncore cycles the BL ring was in use at the "
                    "R2PCIe stop, clockwise (up), even polarity.",
     .expression = "{r2pcie/RING_BL_USED.CW_VR0_EVEN|CW_VR1_EVEN} / {"
                   "r2pcie/CLOCKTICKS}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RING_BL_USED.CW_EVEN / SAMPLE_INTERVAL",
     .fix = "RING_BL_USED has no CW_EVEN unit mask (Table 2-179). Uses "
            "CW_VR0_EVEN|CW_VR1_EVEN, which the event's note gives as the "
            "meaning of CW/CCW_EVEN/ODD (L4029); at most one packet per "
            "direction per cycle, so the OR equals the sum.",
     .manual_line = "L3991"},
    {.name = "CYC_USED_UPODD",
     .box = BoxType::kR2pcie,
     .description = "Fraction of uncore cycles the BL ring was in use at the "
                    "R2PCIe stop, clockwise (up), odd polarity.",
     .expression = "{r2pcie/RING_BL_USED.CW_VR0_ODD|CW_VR1_ODD} / {"
                   "r2pcie/CLOCKTICKS}",
     .unit = "ratio",
     .rate_per_second = false,
     .manual_formula = "RING_BL_USED.CW_ODD / SAMPLE_INTERVAL",
     .fix = "RING_BL_USED has no CW_ODD unit mask (Table 2-179). Uses "
            "CW_VR0_ODD|CW_VR1_ODD, which the event's note gives as the "
            "meaning of CW/CCW_EVEN/ODD (L4029); at most one packet per "
            "direction per cycle, so the OR equals the sum.",
     .manual_line = "L3992"},
    {.name = "RING_THRU_DNEVEN_BYTES",
     .box = BoxType::kR2pcie,
     .description =
         "Bytes carried by the BL ring past the R2PCIe stop, "
         "counter-clockwise (down), even polarity (32 per busy cycle).",
     .expression = "{r2pcie/RING_BL_USED.CCW_VR0_EVEN|CCW_VR1_EVEN} * 32",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "RING_BL_USED.CCW_EVEN * 32",
     .fix = "RING_BL_USED has no CCW_EVEN unit mask (Table 2-179). Uses "
            "CCW_VR0_EVEN|CCW_VR1_EVEN, which the event's note gives as "
            "the meaning of CW/CCW_EVEN/ODD (L4029); at most one packet "
            "per direction per cycle, so the OR equals the sum.",
     .manual_line = "L3993"},
    {.name = "RING_THRU_DNODD_BYTES",
     .box = BoxType::kR2pcie,
     .description =
         "Bytes carried by the BL ring past the R2PCIe stop, "
         "counter-clockwise (down), odd polarity (32 per busy cycle).",
     .expression = "{r2pcie/RING_BL_USED.CCW_VR0_ODD|CCW_VR1_ODD} * 32",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "RING_BL_USED.CCW_ODD * 32",
     .fix = "RING_BL_USED has no CCW_ODD unit mask (Table 2-179). Uses "
            "CCW_VR0_ODD|CCW_VR1_ODD, which the event's note gives as the "
            "meaning of CW/CCW_EVEN/ODD (L4029); at most one packet per "
            "direction per cycle, so the OR equals the sum.",
     .manual_line = "L3994"},
    {.name = "RING_THRU_UPEVEN_BYTES",
     .box = BoxType::kR2pcie,
     .description =
         "Bytes carried by the BL ring past the R2PCIe stop, clockwise "
         "(up), even polarity (32 per busy cycle).",
     .expression = "{r2pcie/RING_BL_USED.CW_VR0_EVEN|CW_VR1_EVEN} * 32",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "RING_BL_USED.CW_EVEN * 32",
     .fix = "RING_BL_USED has no CW_EVEN unit mask (Table 2-179). Uses "
            "CW_VR0_EVEN|CW_VR1_EVEN, which the event's note gives as the "
            "meaning of CW/CCW_EVEN/ODD (L4029); at most one packet per "
            "direction per cycle, so the OR equals the sum.",
     .manual_line = "L3995"},
    {.name = "RING_THRU_UPODD_BYTES",
     .box = BoxType::kR2pcie,
     .description =
         "Bytes carried by the BL ring past the R2PCIe stop, clockwise "
         "(up), odd polarity (32 per busy cycle).",
     .expression = "{r2pcie/RING_BL_USED.CW_VR0_ODD|CW_VR1_ODD} * 32",
     .unit = "bytes",
     .rate_per_second = true,
     .manual_formula = "RING_BL_USED.CW_ODD * 32",
     .fix = "RING_BL_USED has no CW_ODD unit mask (Table 2-179). Uses "
            "CW_VR0_ODD|CW_VR1_ODD, which the event's note gives as the "
            "meaning of CW/CCW_EVEN/ODD (L4029); at most one packet per "
            "direction per cycle, so the OR equals the sum.",
     .manual_line = "L3996"},
};

constexpr size_t CountOf(BoxType box) {
  size_t n = 0;
  for (const MetricDescriptor& m : kMetrics) {
    if (m.box == box) ++n;
  }
  return n;
}

constexpr bool GroupedInBoxTypeOrder() {
  for (size_t i = 1; i < std::size(kMetrics); ++i) {
    if (kMetrics[i].box < kMetrics[i - 1].box) return false;
  }
  return true;
}

static_assert(std::size(kMetrics) == 93, "the manual lists 93 metrics");
static_assert(CountOf(BoxType::kCbo) == 37);
static_assert(CountOf(BoxType::kHa) == 4);
static_assert(CountOf(BoxType::kImc) == 14);
static_assert(CountOf(BoxType::kPcu) == 4);
static_assert(CountOf(BoxType::kQpi) == 26);
static_assert(CountOf(BoxType::kR2pcie) == 8);
static_assert(GroupedInBoxTypeOrder());

}  // namespace

std::span<const MetricDescriptor> AllMetrics() { return kMetrics; }

std::span<const PerfMetricName> PerfMetricNames() {
  // Intel's perf metric names (the newer Xeons' metric lists) for the
  // IvyTown metrics that measure the same thing.  Intel's io_bandwidth_read
  // is what devices read from memory (IvyTown's IO_WRITE_BW: disk and
  // network writes), io_bandwidth_write what they write into it.
  static constexpr PerfMetricName kNames[] = {
      {"memory_bandwidth_read", "MEM_BW_READS"},
      {"memory_bandwidth_write", "MEM_BW_WRITES"},
      {"memory_bandwidth_total", "MEM_BW_TOTAL"},
      {"io_bandwidth_read", "IO_WRITE_BW"},
      {"io_bandwidth_write", "IO_READ_BW"},
      {"upi_data_transmit_bw", "QPI_DATA_BW"},
  };
  return kNames;
}

const MetricDescriptor* FindMetric(std::string_view name, bool* ambiguous) {
  if (ambiguous != nullptr) *ambiguous = false;
  for (const PerfMetricName& p : PerfMetricNames()) {
    if (common::EqualsIgnoreCase(p.perf_name, name)) {
      return FindMetric(p.metric, ambiguous);
    }
  }
  std::optional<BoxType> box;
  if (const size_t dot = name.find('.'); dot != std::string_view::npos) {
    const BoxDescriptor* b = FindBox(name.substr(0, dot));
    if (b == nullptr) return nullptr;
    box = b->type;
    name = name.substr(dot + 1);
  }
  const MetricDescriptor* found = nullptr;
  for (const MetricDescriptor& m : kMetrics) {
    if (box.has_value() && m.box != *box) continue;
    if (!common::EqualsIgnoreCase(m.name, name)) continue;
    if (found != nullptr) {
      // Names are unique within a box, so this is an unqualified name that
      // several boxes define.
      if (ambiguous != nullptr) *ambiguous = true;
      return nullptr;
    }
    found = &m;
  }
  return found;
}

}  // namespace uncore::ivytown
