#include "sdk/platforms/nehalemex/backend/nehalemex_describe.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/platforms/nehalemex/device/nehalemex_device.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/registers/recording_register_space.h"
#include "sdk/report/text_table.h"
#include "sdk/runtime/name_resolution.h"

namespace uncore::nehalemex {
namespace {

std::string Hex(uint32_t a) { return fmt::format("0x{:03X}", a); }

std::string FieldList(const BoxDescriptor& box) {
  std::string out;
  for (const nehalemex::Field& f : box.control_fields) {
    if (!out.empty()) out += ", ";
    out += f.bits.width == 1
               ? fmt::format("{} {}", f.name, f.bits.lo)
               : fmt::format("{} {}:{}", f.name, f.bits.hi(), f.bits.lo);
  }
  return out;
}

}  // namespace

std::string RegisterModelText(Variant v) {
  std::string text = fmt::format(
      "{} uncore PMON registers (family {} model 0x{:X}); every register is "
      "an MSR,\nreached through any CPU of the socket.  Counters are {} bits "
      "wide.\n\n",
      nehalemex::VariantDisplayName(v), nehalemex::kCpuFamily,
      v == Variant::kNehalemEx ? nehalemex::kModelNehalemEx
                               : nehalemex::kModelWestmereEx,
      nehalemex::kCounterWidth);

  text += fmt::format(
      "U_MSR_PMON_GLOBAL_CTL {} (the socket-wide control)\n"
      "  bit  {:>2}     ctr_en        the U-Box counter's enable\n"
      "  bits {:>2}:{:<2}  pmi_core_sel  which core receives the PMI\n"
      "  bit  {:>2}     en_all        enables every uncore counter (with the "
      "box ctr_en and the counter's en)\n"
      "  bit  {:>2}     rst_all       write 1: zero every counter and "
      "overflow status; reads 0\n"
      "  bit  {:>2}     frz_all       freeze on PMI: an overflow of a counter "
      "with pmi_en clears en_all\n"
      "                         (setting it freezes nothing by itself)\n"
      "  U_MSR_PMON_GLOBAL_STATUS {}, U_MSR_PMON_GLOBAL_OVF_CTL {}\n\n",
      Hex(kGlobalCtl.address), kGlobalCtl.ctr_en.lo,
      kGlobalCtl.pmi_core_sel.hi(), kGlobalCtl.pmi_core_sel.lo,
      kGlobalCtl.en_all.lo, kGlobalCtl.rst_all.lo, kGlobalCtl.frz_all.lo,
      Hex(kGlobalCtl.status_address), Hex(kGlobalCtl.ovf_ctl_address));

  text +=
      "Boxes (GLOBAL_CTL: ctr_en, one bit per counter; GLOBAL_STATUS: ov; "
      "GLOBAL_OVF_CTL: clr_ov)\n";
  report::TextTable boxes({.indent = "  "});
  boxes.AddColumn("box", report::Align::kLeft);
  boxes.AddColumn("PMU", report::Align::kLeft);
  boxes.AddColumn("n", report::Align::kRight);
  boxes.AddColumn("ctrs", report::Align::kRight);
  boxes.AddColumn("GLOBAL_CTL/STATUS/OVF_CTL", report::Align::kLeft);
  boxes.AddColumn("CTL0..n / CTR0..n", report::Align::kLeft);
  for (const BoxDescriptor* box : nehalemex::kBoxes) {
    for (int i = 0; i < box->NumInstances(v); ++i) {
      if (box->type == BoxType::kC) continue;  // below
      const int last = box->num_counters - 1;
      boxes.AddRow(
          {fmt::format("{}{}", box->letter,
                       box->NumInstances(v) == 1 ? "" : std::to_string(i)),
           nehalemex::KernelPmuName(*box, i),
           std::to_string(box->NumInstances(v)),
           std::to_string(box->num_counters),
           fmt::format("{}/{}/{}", Hex(box->GlobalCtlAddress(i)),
                       Hex(box->StatusAddress(i)), Hex(box->OvfCtlAddress(i))),
           fmt::format("{}..{} / {}..{} (step 2)",
                       Hex(box->ControlAddress(i, 0)),
                       Hex(box->ControlAddress(i, last)),
                       Hex(box->CounterAddress(i, 0)),
                       Hex(box->CounterAddress(i, last)))});
    }
  }
  boxes.Render(&text);
  text += "\nControl register fields\n";
  for (const BoxDescriptor* box : nehalemex::kBoxes) {
    text += fmt::format("  {}  {}\n", box->letter, FieldList(*box));
  }

  text += fmt::format(
      "\nC-Box programming ({} C-Boxes at irregular offsets; each: "
      "GLOBAL_CTL ctr_en 5:0,\nGLOBAL_STATUS ov 5:0, GLOBAL_OVF_CTL clr_ov "
      "5:0, then CTLn at +0x10+2n and CTRn at +0x11+2n)\n",
      nehalemex::kCbox.NumInstances(v));
  report::TextTable cboxes({.indent = "  "});
  cboxes.AddColumn("C-Box", report::Align::kLeft);
  cboxes.AddColumn("GLOBAL_CTL", report::Align::kLeft);
  cboxes.AddColumn("STATUS", report::Align::kLeft);
  cboxes.AddColumn("OVF_CTL", report::Align::kLeft);
  cboxes.AddColumn("CTL0..CTL5", report::Align::kLeft);
  cboxes.AddColumn("CTR0..CTR5", report::Align::kLeft);
  const BoxDescriptor& c = nehalemex::kCbox;
  for (int i = 0; i < c.NumInstances(v); ++i) {
    std::string ctls;
    std::string ctrs;
    for (int k = 0; k < c.num_counters; ++k) {
      ctls +=
          fmt::format("{}{}", k == 0 ? "" : " ", Hex(c.ControlAddress(i, k)));
      ctrs +=
          fmt::format("{}{}", k == 0 ? "" : " ", Hex(c.CounterAddress(i, k)));
    }
    cboxes.AddRow({nehalemex::KernelPmuName(c, i), Hex(c.GlobalCtlAddress(i)),
                   Hex(c.StatusAddress(i)), Hex(c.OvfCtlAddress(i)), ctls,
                   ctrs});
  }
  cboxes.Render(&text);

  text +=
      "\nS-Box match/mask sequence (guide p. 2-49; a MATCH/MASK write "
      "while MM_CFG[63] = 1 is a\ngeneral-protection fault)\n";
  for (int i = 0; i < 2; ++i) {
    const nehalemex::MatchMaskDescriptor& mm = nehalemex::kSbox.match_mask[i];
    text += fmt::format(
        "  S{0}: a) S{0}_MSR_MM_CFG {1} <- 0 (bit 63 = 0)\n"
        "      b) S{0}_MSR_MATCH {2} <- match, S{0}_MSR_MASK {3} <- mask\n"
        "      c) the counter's control (S{0}_MSR_PMON_CTLn {4}..{5}) event "
        "select 0x00 (TO_R_PROG_EV)\n"
        "      d) S{0}_MSR_MM_CFG {1} <- 1 << 63 (start matching)\n",
        i, Hex(mm.mm_cfg), Hex(mm.match), Hex(mm.mask),
        Hex(nehalemex::kSbox.ControlAddress(i, 0)),
        Hex(nehalemex::kSbox.ControlAddress(i, 3)));
  }
  text += "  The M-Box address match uses the same order: ";
  for (int i = 0; i < 2; ++i) {
    const nehalemex::MatchMaskDescriptor& mm = nehalemex::kMbox.match_mask[i];
    text += fmt::format("{}M{} MM_CFG {}, ADDR_MATCH {}, ADDR_MASK {}",
                        i == 0 ? "" : "; ", i, Hex(mm.mm_cfg), Hex(mm.match),
                        Hex(mm.mask));
  }
  text +=
      fmt::format(".\n  B-Box MATCH/MASK (no MM_CFG): B0 {}/{}, B1 {}/{}.\n",
                  Hex(nehalemex::kBbox.match_mask[0].match),
                  Hex(nehalemex::kBbox.match_mask[0].mask),
                  Hex(nehalemex::kBbox.match_mask[1].match),
                  Hex(nehalemex::kBbox.match_mask[1].mask));

  text +=
      "\nM-Box sub-control registers (offset from the M-Box GLOBAL_CTL; "
      "writable bits on this variant)\n";
  for (const nehalemex::SubRegisterDescriptor& s :
       nehalemex::kMboxSubRegisters) {
    text +=
        fmt::format("  {:<12} M0 {}  M1 {}  0x{:X}\n", s.name,
                    Hex(nehalemex::kMbox.GlobalCtlAddress(0) + s.offset),
                    Hex(nehalemex::kMbox.GlobalCtlAddress(1) + s.offset),
                    v == Variant::kNehalemEx ? s.writable_nhm : s.writable_wsm);
  }
  text += "\nR-Box per-port registers (R0: ports 0-3, R1: ports 4-7)\n";
  for (int p = 0; p < 2 * nehalemex::kRboxPortsPerBox; ++p) {
    text += fmt::format(
        "  port {}: IPERF_CFG0 {}, IPERF_CFG1 {}, QLX_CFG {}, XBR set 1 "
        "MM_CFG/MATCH/MASK {}.., set 2 {}..\n",
        p, Hex(nehalemex::RboxIperfCfg0(p)), Hex(nehalemex::RboxIperfCfg1(p)),
        Hex(nehalemex::RboxQlxCfg(p)), Hex(nehalemex::RboxXbrMmCfg(p, 1)),
        Hex(nehalemex::RboxXbrMmCfg(p, 2)));
  }
  text += fmt::format(
      "\nW-Box fixed counter: W_MSR_PMON_FIXED_CTR {}, "
      "W_MSR_PMON_FIXED_CTR_CTL "
      "{} (en bit 0),\nenabled by W GLOBAL_CTL bit {} (uncore_wbox "
      "event=0xff)\n",
      Hex(nehalemex::kWFixed.counter), Hex(nehalemex::kWFixed.control),
      nehalemex::kWFixed.global_bit.lo);
  return text;
}

absl::StatusOr<runtime::DescribedWrites> DescribeWrites(Variant v,
                                                        std::string_view spec) {
  const perfmon::Platform& tables = v == Variant::kNehalemEx
                                        ? perfmon::NehalemexPlatform()
                                        : perfmon::WestmereexPlatform();
  UNCORE_ASSIGN_OR_RETURN(std::vector<spec::EventSpec> events,
                          runtime::EventsOfName(tables, spec));
  registers::RecordingRegisterSpace space;
  devices::NehalemExDevice dev(&space, v, {{.socket = 0, .cpu = 0}});
  devices::ProgramRequest request;
  request.events = std::move(events);
  UNCORE_RETURN_IF_ERROR(dev.Program(request));
  runtime::DescribedWrites out;
  out.header = fmt::format(
      "register writes that program {} on a {} socket, in order\n"
      "(Program first reads every register it changes; Release writes them "
      "all back)\n",
      spec, VariantDisplayName(v));
  out.writes = dev.program_writes();
  (void)dev.Release();
  return out;
}

}  // namespace uncore::nehalemex
