// IvyTownUncore: the register model and the counting rules, programmed
// through its RegisterSpace face with addresses from the box descriptors.
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"
#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/platforms/ivytown/sim/demo_traffic.h"

namespace uncore::sim {
namespace {

using ivytown::AccessSpace;
using ivytown::BoxDescriptor;
using ivytown::BoxType;
using ivytown::kGlobal;
using registers::PciAddress;
using Traffic = IvyTownUncore::Traffic;

constexpr uint64_t kEn = uint64_t{1} << 22;
constexpr uint64_t kOvEn = uint64_t{1} << 20;
constexpr uint64_t kExt = uint64_t{1} << 21;
constexpr uint64_t kEdge = uint64_t{1} << 18;
constexpr uint64_t kRst = uint64_t{1} << 17;
constexpr uint64_t kBit23 = uint64_t{1} << 23;  // reserved
constexpr uint64_t kTidEn = uint64_t{1} << 19;
constexpr uint64_t kFrz = uint64_t{1} << 8;
constexpr uint64_t kMustWriteOne = 0x30000;
constexpr uint64_t kFrzAll = uint64_t{1} << 31;
constexpr uint64_t kUnfrzAll = uint64_t{1} << 29;

uint64_t Thresh(uint64_t t) { return t << 24; }

// Programs and reads one socket of a IvyTownUncore by descriptor
// coordinates, through the RegisterSpace interface (MSR via the socket's
// CPU, PCI via the topology).
class Regs {
 public:
  Regs(IvyTownUncore* sim, int socket) : sim_(sim), socket_(socket) {}

  // Raw register access at `offset` of (box, instance).
  void Write(BoxType b, int n, uint32_t offset, uint64_t v, bool aux = false) {
    const BoxDescriptor& box = ivytown::Box(b);
    if (box.space == AccessSpace::kMsr) {
      ASSERT_TRUE(
          sim_->WriteMsr(cpu(), box.RegisterAddress(n, offset), v).ok());
    } else {
      ASSERT_TRUE(
          sim_->WritePci(Fn(b, n, aux), offset, static_cast<uint32_t>(v)).ok());
    }
  }
  uint64_t Read(BoxType b, int n, uint32_t offset, bool aux = false) {
    const BoxDescriptor& box = ivytown::Box(b);
    if (box.space == AccessSpace::kMsr) {
      uint64_t v = 0;
      EXPECT_TRUE(
          sim_->ReadMsr(cpu(), box.RegisterAddress(n, offset), &v).ok());
      return v;
    }
    uint32_t v = 0;
    EXPECT_TRUE(sim_->ReadPci(Fn(b, n, aux), offset, &v).ok());
    return v;
  }
  // A 44/48-bit counter: MSR, or PCI low dword then high dword.
  uint64_t ReadCounterAt(BoxType b, int n, uint32_t offset) {
    if (ivytown::Box(b).space == AccessSpace::kMsr) return Read(b, n, offset);
    const uint64_t lo = Read(b, n, offset);
    const uint64_t hi = Read(b, n, offset + 4);
    return (hi << 32) | lo;
  }
  void WriteCounterAt(BoxType b, int n, uint32_t offset, uint64_t v) {
    if (ivytown::Box(b).space == AccessSpace::kMsr) {
      Write(b, n, offset, v);
      return;
    }
    Write(b, n, offset, v & 0xFFFFFFFFu);
    Write(b, n, offset + 4, v >> 32);
  }

  void Ctl(BoxType b, int n, int c, uint64_t v) {
    Write(b, n, ivytown::Box(b).control_offsets[c], v);
  }
  uint64_t Ctr(BoxType b, int n, int c) {
    return ReadCounterAt(b, n, ivytown::Box(b).counter_offsets[c]);
  }
  void SetCtr(BoxType b, int n, int c, uint64_t v) {
    WriteCounterAt(b, n, ivytown::Box(b).counter_offsets[c], v);
  }
  void BoxCtl(BoxType b, int n, uint64_t v) {
    Write(b, n, *ivytown::Box(b).box_control_offset, v);
  }
  uint64_t BoxStatus(BoxType b, int n) {
    return Read(b, n, *ivytown::Box(b).box_status_offset);
  }
  void ClearBoxStatus(BoxType b, int n, uint64_t bits) {
    Write(b, n, *ivytown::Box(b).box_status_offset, bits);
  }
  void Filter(BoxType b, int n, std::string_view field, uint64_t value) {
    const BoxDescriptor& box = ivytown::Box(b);
    const ivytown::FieldDescriptor* f = box.FindField(field);
    ASSERT_NE(f, nullptr) << field;
    const ivytown::FilterRegisterDescriptor& reg = box.filters[f->filter];
    const uint64_t old = Read(b, n, reg.offset, reg.in_aux_function);
    Write(b, n, reg.offset, f->bits.Insert(old, value), reg.in_aux_function);
  }
  void Global(uint64_t v) {
    ASSERT_TRUE(sim_->WriteMsr(cpu(), kGlobal.global_control, v).ok());
  }
  uint64_t GlobalStatus() {
    uint64_t v = 0;
    EXPECT_TRUE(sim_->ReadMsr(cpu(), kGlobal.global_status, &v).ok());
    return v;
  }
  PciAddress Fn(BoxType b, int n, bool aux = false) {
    const auto* p = sim_->topology().sockets[socket_].FindPci(b, n);
    EXPECT_NE(p, nullptr);
    return aux ? *p->aux : *p->pmon;
  }
  int cpu() const { return sim_->topology().sockets[socket_].msr_cpu; }

 private:
  IvyTownUncore* sim_;
  int socket_;
};

// Counter control for catalog event `event`.`umask` (umask may be empty).
uint64_t Event(BoxType b, std::string_view event, std::string_view umask) {
  const ivytown::EventDescriptor* e = ivytown::FindEvent(b, event);
  EXPECT_NE(e, nullptr) << event;
  if (e == nullptr) return 0;
  uint64_t v = e->code | (e->extended ? kExt : 0);
  if (!umask.empty()) {
    const ivytown::UmaskDescriptor* u = e->FindUmask(umask);
    EXPECT_NE(u, nullptr) << umask;
    if (u != nullptr) v |= uint64_t{u->value} << 8;
  }
  return v;
}

Traffic TrafficFor(BoxType b, int n, std::string_view event,
                   std::string_view umask) {
  const uint64_t ctl = Event(b, event, umask);
  Traffic t;
  t.box = b;
  t.instance = n;
  t.code = static_cast<uint8_t>(ctl & 0xFF);
  t.extended = (ctl & kExt) != 0;
  t.umask = static_cast<uint8_t>((ctl >> 8) & 0xFF);
  return t;
}

// ---------------------------------------------------------------------------
// Exact counts in every box type.

struct BoxCase {
  BoxType box;
  int instance;
  std::string_view event;
  std::string_view umask;
};

class EveryBoxTest : public ::testing::TestWithParam<BoxCase> {};

TEST_P(EveryBoxTest, CountsInjectedTrafficExactly) {
  const BoxCase& p = GetParam();
  IvyTownUncore sim(/*sockets=*/2);
  Regs r(&sim, /*socket=*/1);
  const BoxDescriptor& box = ivytown::Box(p.box);
  if (box.box_control_offset) r.BoxCtl(p.box, p.instance, kMustWriteOne | 3);
  const int c = box.num_counters - 1;  // the last counter, for variety
  r.Ctl(p.box, p.instance, c, Event(p.box, p.event, p.umask) | kEn);
  ASSERT_TRUE(
      sim.Inject(1, TrafficFor(p.box, p.instance, p.event, p.umask), 3, 4115)
          .ok());
  EXPECT_EQ(r.Ctr(p.box, p.instance, c), 3u * 4115u);
  // Socket 0 and the other instances did not move.
  EXPECT_EQ(sim.PeekCounter(0, p.box, p.instance, c), 0u);
  if (box.num_instances() > 1) {
    EXPECT_EQ(
        sim.PeekCounter(1, p.box, (p.instance + 1) % box.num_instances(), c),
        0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sim, EveryBoxTest,
    ::testing::Values(
        BoxCase{BoxType::kUbox, 0, "EVENT_MSG", "DOORBELL_RCVD"},
        BoxCase{BoxType::kCbo, 3, "LLC_VICTIMS", "M_STATE"},
        BoxCase{BoxType::kHa, 1, "REQUESTS", "READS"},
        BoxCase{BoxType::kImc, 5, "CAS_COUNT", "RD"},
        BoxCase{BoxType::kIrp, 0, "RxR_BL_DRS_INSERTS", ""},
        BoxCase{BoxType::kPcu, 0, "VOLT_TRANS_CYCLES_INCREASE", ""},
        BoxCase{BoxType::kQpi, 2, "TxL_FLITS_G1", "SNP"},
        BoxCase{BoxType::kR2pcie, 0, "RING_AD_USED", "CW_VR0_EVEN"},
        BoxCase{BoxType::kR3qpi, 2, "RING_AD_USED", "CW_VR0_EVEN"}));

TEST(SimulatedUncoreTest, TopologyIsTheSimulatedOne) {
  IvyTownUncore sim(2, 4);
  const machine::Topology expected =
      machine::SimulatedTopology(ivytown::Record(), 2, 4);
  ASSERT_EQ(sim.topology().sockets.size(), 2u);
  EXPECT_EQ(sim.topology().sockets[1].msr_cpu, expected.sockets[1].msr_cpu);
  EXPECT_EQ(sim.topology().sockets[1].FindPci(BoxType::kImc, 0)->pmon->bus,
            0xff);
  // Any CPU of socket 1 reaches socket 1's MSRs.
  ASSERT_TRUE(sim.WriteMsr(7, 0x0D16, 42).ok());
  EXPECT_EQ(sim.PeekMsr(1, 0x0D16), 42u);
  EXPECT_EQ(sim.PeekMsr(0, 0x0D16), 0u);
}

TEST(SimulatedUncoreTest, UmaskMustIntersectAndExtMustMatch) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  r.Ctl(BoxType::kImc, 0, 0, Event(BoxType::kImc, "CAS_COUNT", "RD") | kEn);
  r.Ctl(BoxType::kImc, 0, 1, Event(BoxType::kImc, "CAS_COUNT", "WR") | kEn);
  r.Ctl(BoxType::kImc, 0, 2, Event(BoxType::kImc, "CAS_COUNT", "ALL") | kEn);
  ASSERT_TRUE(
      sim.Inject(0, TrafficFor(BoxType::kImc, 0, "CAS_COUNT", "RD"), 1, 10)
          .ok());
  ASSERT_TRUE(
      sim.Inject(0, TrafficFor(BoxType::kImc, 0, "CAS_COUNT", "WR"), 2, 10)
          .ok());
  EXPECT_EQ(r.Ctr(BoxType::kImc, 0, 0), 10u);
  EXPECT_EQ(r.Ctr(BoxType::kImc, 0, 1), 20u);
  EXPECT_EQ(r.Ctr(BoxType::kImc, 0, 2), 30u);
  // QPI code 0x00: TxL_FLITS_G0 without ext, TxL_FLITS_G1 with it.
  r.Ctl(BoxType::kQpi, 0, 0, Event(BoxType::kQpi, "TxL_FLITS_G1", "HOM") | kEn);
  Traffic g0 = TrafficFor(BoxType::kQpi, 0, "TxL_FLITS_G0", "DATA");
  ASSERT_TRUE(sim.Inject(0, g0, 1, 50).ok());
  EXPECT_EQ(r.Ctr(BoxType::kQpi, 0, 0), 0u);
  ASSERT_TRUE(
      sim.Inject(0, TrafficFor(BoxType::kQpi, 0, "TxL_FLITS_G1", "HOM_REQ"), 1,
                 50)
          .ok());
  EXPECT_EQ(r.Ctr(BoxType::kQpi, 0, 0), 50u);
}

// ---------------------------------------------------------------------------
// Freeze.

TEST(SimulatedUncoreTest, GlobalFreezeStopsEveryBoxOfTheSocket) {
  IvyTownUncore sim(2);
  Regs r(&sim, 0);
  Regs r1(&sim, 1);
  r.Ctl(BoxType::kCbo, 0, 0,
        Event(BoxType::kCbo, "LLC_VICTIMS", "M_STATE") | kEn);
  r.Ctl(BoxType::kImc, 0, 0, Event(BoxType::kImc, "CAS_COUNT", "RD") | kEn);
  r1.Ctl(BoxType::kImc, 0, 0, Event(BoxType::kImc, "CAS_COUNT", "RD") | kEn);
  const Traffic cbo = TrafficFor(BoxType::kCbo, 0, "LLC_VICTIMS", "M_STATE");
  const Traffic imc = TrafficFor(BoxType::kImc, 0, "CAS_COUNT", "RD");
  r.Global(kFrzAll);
  EXPECT_TRUE(sim.GlobalFrozen(0));
  EXPECT_FALSE(sim.GlobalFrozen(1));
  EXPECT_EQ(sim.PeekMsr(0, kGlobal.global_control), 0u);  // WO: reads 0
  ASSERT_TRUE(sim.Inject(0, cbo, 1, 100).ok());
  ASSERT_TRUE(sim.Inject(0, imc, 1, 100).ok());
  ASSERT_TRUE(sim.Inject(1, imc, 1, 100).ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), 0u);
  EXPECT_EQ(r.Ctr(BoxType::kImc, 0, 0), 0u);
  EXPECT_EQ(r1.Ctr(BoxType::kImc, 0, 0), 100u);  // socket 1 is not frozen
  r.Global(kUnfrzAll);
  EXPECT_FALSE(sim.GlobalFrozen(0));
  ASSERT_TRUE(sim.Inject(0, cbo, 1, 100).ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), 100u);
  // Both bits at once: freeze wins (S8).
  r.Global(kFrzAll | kUnfrzAll);
  EXPECT_TRUE(sim.GlobalFrozen(0));
}

TEST(SimulatedUncoreTest, BoxFreezePersistsUntilClearedAndEnGates) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const uint64_t ev = Event(BoxType::kCbo, "LLC_VICTIMS", "M_STATE");
  r.Ctl(BoxType::kCbo, 2, 0, ev | kEn);
  r.Ctl(BoxType::kCbo, 2, 1, ev);  // not enabled
  r.Ctl(BoxType::kCbo, 3, 0, ev | kEn);
  r.BoxCtl(BoxType::kCbo, 2, kMustWriteOne | kFrz);
  EXPECT_EQ(r.Read(BoxType::kCbo, 2, 0x04), kMustWriteOne | kFrz);
  ASSERT_TRUE(sim.Inject(0,
                         TrafficFor(BoxType::kCbo, 2, "LLC_VICTIMS", "M_STATE"),
                         1, 10)
                  .ok());
  ASSERT_TRUE(sim.Inject(0,
                         TrafficFor(BoxType::kCbo, 3, "LLC_VICTIMS", "M_STATE"),
                         1, 10)
                  .ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 2, 0), 0u);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 3, 0), 10u);  // other boxes keep counting
  r.BoxCtl(BoxType::kCbo, 2, kMustWriteOne);
  ASSERT_TRUE(sim.Inject(0,
                         TrafficFor(BoxType::kCbo, 2, "LLC_VICTIMS", "M_STATE"),
                         1, 10)
                  .ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 2, 0), 10u);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 2, 1), 0u);  // en=0
}

TEST(SimulatedUncoreTest, ResetCountersAndControlsKeepFilters) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const uint64_t ev = Event(BoxType::kCbo, "TOR_INSERTS", "OPCODE");
  r.Filter(BoxType::kCbo, 1, "filter_opc", 0x182);
  r.Ctl(BoxType::kCbo, 1, 0, ev | kEn);
  r.Ctl(BoxType::kCbo, 1, 1, ev | kEn);
  Traffic t = TrafficFor(BoxType::kCbo, 1, "TOR_INSERTS", "OPCODE");
  t.opcode = 0x182;
  ASSERT_TRUE(sim.Inject(0, t, 1, 7).ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 1, 0), 7u);
  // rst bit of one counter control: that counter only, reads back 0.
  r.Ctl(BoxType::kCbo, 1, 0, ev | kEn | kRst);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 1, 0), 0u);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 1, 1), 7u);
  EXPECT_EQ(r.Read(BoxType::kCbo, 1, 0x10), ev | kEn);
  // rst_ctrs: every general counter, the controls stay.
  r.BoxCtl(BoxType::kCbo, 1, kMustWriteOne | 0x2);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 1, 1), 0u);
  EXPECT_EQ(r.Read(BoxType::kCbo, 1, 0x11), ev | kEn);
  EXPECT_EQ(r.Read(BoxType::kCbo, 1, 0x04), kMustWriteOne);  // WO bits read 0
  // rst_ctrl: the controls; the filters stay (S2).
  ASSERT_TRUE(sim.Inject(0, t, 1, 5).ok());
  r.BoxCtl(BoxType::kCbo, 1, kMustWriteOne | 0x1);
  EXPECT_EQ(r.Read(BoxType::kCbo, 1, 0x10), 0u);
  EXPECT_EQ(r.Read(BoxType::kCbo, 1, 0x11), 0u);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 1, 0), 5u);
  EXPECT_EQ((r.Read(BoxType::kCbo, 1, 0x1A) >> 20) & 0x1FF, 0x182u);
}

// ---------------------------------------------------------------------------
// Width, wrap and overflow.

TEST(SimulatedUncoreTest, Cbo44BitWrapSetsOvCWithoutFreezing) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  r.Ctl(BoxType::kCbo, 4, 2,
        Event(BoxType::kCbo, "LLC_VICTIMS", "M_STATE") | kEn);
  r.SetCtr(BoxType::kCbo, 4, 2, (uint64_t{1} << 44) - 10);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 4, 2), (uint64_t{1} << 44) - 10);
  ASSERT_TRUE(sim.Inject(0,
                         TrafficFor(BoxType::kCbo, 4, "LLC_VICTIMS", "M_STATE"),
                         1, 9)
                  .ok());
  EXPECT_EQ(r.GlobalStatus(), 0u);
  ASSERT_TRUE(sim.Inject(0,
                         TrafficFor(BoxType::kCbo, 4, "LLC_VICTIMS", "M_STATE"),
                         1, 6)
                  .ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 4, 2), 5u);  // wrapped at bit 44
  // CBo 4 -> ov_c bit 3+4 (decisions.md #2); no ov_en, no freeze (S6).
  EXPECT_EQ(r.GlobalStatus(), uint64_t{1} << 7);
  EXPECT_FALSE(sim.GlobalFrozen(0));
  // W1C: writing 0 keeps it, writing 1 clears it.
  ASSERT_TRUE(sim.WriteMsr(0, kGlobal.global_status, 0).ok());
  EXPECT_EQ(r.GlobalStatus(), uint64_t{1} << 7);
  ASSERT_TRUE(sim.WriteMsr(0, kGlobal.global_status, uint64_t{1} << 7).ok());
  EXPECT_EQ(r.GlobalStatus(), 0u);
}

TEST(SimulatedUncoreTest, Imc48BitWrapSetsBoxStatusAndOvEnFreezes) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType imc = BoxType::kImc;
  const uint64_t ev = Event(imc, "CAS_COUNT", "RD");
  const Traffic t = TrafficFor(imc, 1, "CAS_COUNT", "RD");
  // Without ov_en the counter wraps silently: L2037 sets the box's
  // overflow bit only for a counter "enabled to communicate its overflow
  // (.ov_en is set to 1)" (S6, decisions.md #35).
  r.Ctl(imc, 1, 0, ev | kEn);
  r.SetCtr(imc, 1, 0, (uint64_t{1} << 48) - 3);
  ASSERT_TRUE(sim.Inject(0, t, 2, 2).ok());
  EXPECT_EQ(r.Ctr(imc, 1, 0), 1u);
  EXPECT_EQ(r.BoxStatus(imc, 1), 0u);
  EXPECT_EQ(r.GlobalStatus(), 0u);
  EXPECT_FALSE(sim.GlobalFrozen(0));
  // With ov_en on counter 3: box status bit 3+1 (decisions.md #3), ov_m0
  // (bit 20), and the socket freezes.
  r.Ctl(imc, 1, 3, ev | kEn | kOvEn);
  r.SetCtr(imc, 1, 3, (uint64_t{1} << 48) - 5);
  ASSERT_TRUE(sim.Inject(0, t, 1, 100).ok());
  EXPECT_EQ(r.Ctr(imc, 1, 3), 0u);  // froze right after the carry (S7)
  EXPECT_EQ(r.Ctr(imc, 1, 0), 6u);  // counter 0 stopped at the same cycle
  EXPECT_EQ(r.BoxStatus(imc, 1), 0x10u);
  EXPECT_EQ(r.GlobalStatus(), uint64_t{1} << 20);
  EXPECT_TRUE(sim.GlobalFrozen(0));
  r.ClearBoxStatus(imc, 1, 0x2);  // the wrong bit: no change
  EXPECT_EQ(r.BoxStatus(imc, 1), 0x10u);
  r.ClearBoxStatus(imc, 1, 0x10);
  EXPECT_EQ(r.BoxStatus(imc, 1), 0u);
}

TEST(SimulatedUncoreTest, OverflowBitNeedsOvEnExceptOnTheIrp) {
  // Every box with ov_en and a CLOCKTICKS event: a wrap without ov_en
  // leaves BOX_STATUS alone; with it, the counter's bit is set.
  int boxes = 0;
  for (const BoxDescriptor& box : ivytown::AllBoxes()) {
    if (!box.box_status_offset || box.FindField("ov_en") == nullptr) continue;
    std::optional<uint64_t> clockticks;
    for (const ivytown::EventDescriptor& e : ivytown::EventsOf(box.type)) {
      if (e.name.ends_with("CLOCKTICKS") && !e.has_umasks()) {
        clockticks = e.code | (e.extended ? kExt : 0);
      }
    }
    if (!clockticks) continue;
    SCOPED_TRACE(box.name);
    ++boxes;
    for (const uint64_t ov_en : {uint64_t{0}, kOvEn}) {
      IvyTownUncore sim;
      Regs r(&sim, 0);
      r.SetCtr(box.type, 0, 0, box.counter_mask());
      r.Ctl(box.type, 0, 0, *clockticks | kEn | ov_en);
      sim.Tick(0, 3);
      EXPECT_EQ(r.BoxStatus(box.type, 0),
                ov_en != 0 ? uint64_t{1} << box.counter_status_bits[0] : 0u);
    }
  }
  EXPECT_EQ(boxes, 6);  // HA, iMC, PCU, QPI, R2PCIe, R3QPI
  // The IRP has a BOX_STATUS but no ov_en (L2478): its bit is set on
  // every wrap (L2460), and it has no GLOBAL_STATUS bit (decisions.md #7).
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType irp = BoxType::kIrp;
  r.Ctl(irp, 0, 1, Event(irp, "CLOCKTICKS", "") | kEn);
  r.SetCtr(irp, 0, 1, ivytown::Box(irp).counter_mask() - 1);
  sim.Tick(0, 5);
  EXPECT_EQ(r.Ctr(irp, 0, 1), 3u);
  EXPECT_EQ(r.BoxStatus(irp, 0), 0x2u);
  EXPECT_EQ(r.GlobalStatus(), 0u);
}

TEST(SimulatedUncoreTest, ManualQpiSamplingExampleFreezesTheSocket) {
  // §2.1.2 e (L701): Q_P0_PCI_PMON_CTR1 = 2^48 - 1000, CTL1 ev_sel 0x0... we
  // use RxL_FLITS_G0.IDLE (0x01, umask 0x01; digest §8 item 11), ov_en.
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType qpi = BoxType::kQpi;
  r.Global(kFrzAll);
  r.BoxCtl(qpi, 0, kMustWriteOne | 0x3);
  r.Ctl(qpi, 0, 1, Event(qpi, "RxL_FLITS_G0", "IDLE") | kEn | kOvEn);
  EXPECT_EQ(r.Read(qpi, 0, 0xDC), 0x00500101u);
  r.Ctl(BoxType::kCbo, 0, 0,
        Event(BoxType::kCbo, "LLC_VICTIMS", "M_STATE") | kEn);
  r.SetCtr(qpi, 0, 1, (uint64_t{1} << 48) - 1000);
  r.Global(kUnfrzAll);
  const Traffic idle = TrafficFor(qpi, 0, "RxL_FLITS_G0", "IDLE");
  ASSERT_TRUE(sim.Inject(0, idle, 1, 999).ok());
  EXPECT_FALSE(sim.GlobalFrozen(0));
  EXPECT_EQ(r.Ctr(qpi, 0, 1), (uint64_t{1} << 48) - 1);
  std::vector<uint64_t> flits(600, 1);
  ASSERT_TRUE(sim.Inject(0, idle, flits).ok());  // the 1000th and 599 more
  EXPECT_TRUE(sim.GlobalFrozen(0));
  EXPECT_EQ(r.Ctr(qpi, 0, 1), 0u);
  EXPECT_EQ(r.GlobalStatus(), uint64_t{1} << 22);  // ov_q0
  EXPECT_EQ(r.BoxStatus(qpi, 0), 0x2u);
  // Every box of the socket is frozen.
  ASSERT_TRUE(sim.Inject(0,
                         TrafficFor(BoxType::kCbo, 0, "LLC_VICTIMS", "M_STATE"),
                         1, 10)
                  .ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), 0u);
  // §2.1.4: clear the status bits, unfreeze, counting resumes.
  r.ClearBoxStatus(qpi, 0, 0x2);
  ASSERT_TRUE(sim.WriteMsr(0, kGlobal.global_status, uint64_t{1} << 22).ok());
  r.Global(kUnfrzAll);
  ASSERT_TRUE(sim.Inject(0, idle, 1, 10).ok());
  EXPECT_EQ(r.Ctr(qpi, 0, 1), 10u);
  EXPECT_EQ(r.GlobalStatus(), 0u);
}

// ---------------------------------------------------------------------------
// Threshold, invert, edge.

TEST(SimulatedUncoreTest, ThresholdAndEdgeOnTorOccupancy) {
  const std::vector<uint64_t> occupancy = {0, 3, 5, 0, 0, 2, 2};
  struct Case {
    uint64_t modifiers;
    uint64_t expected;
  };
  const uint64_t ev = Event(BoxType::kCbo, "TOR_OCCUPANCY", "ALL");
  for (const Case& c : {
           Case{0, 12},                 // sum
           Case{Thresh(2), 4},          // 3, 5, 2, 2
           Case{Thresh(2) | kEdge, 2},  // rises at 1 and 5
           Case{Thresh(4), 1},          // 5
           Case{kEdge, 2},              // v != 0 rises
           // Bit 23 is reserved (decisions.md #12): dropped, no invert.
           Case{Thresh(2) | kBit23, 4},
           Case{kBit23, 12},
       }) {
    IvyTownUncore sim;
    Regs r(&sim, 0);
    r.Ctl(BoxType::kCbo, 0, 0, ev | kEn | c.modifiers);
    ASSERT_TRUE(sim.Inject(0,
                           TrafficFor(BoxType::kCbo, 0, "TOR_OCCUPANCY", "ALL"),
                           occupancy)
                    .ok());
    EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), c.expected)
        << "modifiers " << std::hex << c.modifiers;
  }
}

TEST(SimulatedUncoreTest, ReservedBit23IsNotStoredInAnyCounterControl) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  for (const BoxDescriptor& box : ivytown::AllBoxes()) {
    r.Ctl(box.type, 0, 0, kEn | Thresh(1) | kBit23);
    EXPECT_EQ(r.Read(box.type, 0, box.control_offsets[0]) & kBit23, 0u)
        << box.name;
  }
}

TEST(SimulatedUncoreTest, EdgeStateCarriesAcrossInjectionsAndRepeats) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const uint64_t ev = Event(BoxType::kCbo, "TOR_OCCUPANCY", "ALL");
  r.Ctl(BoxType::kCbo, 0, 0, ev | kEn | Thresh(2) | kEdge);
  r.Ctl(BoxType::kCbo, 0, 1, ev | kEn | Thresh(2));
  const Traffic t = TrafficFor(BoxType::kCbo, 0, "TOR_OCCUPANCY", "ALL");
  const std::vector<uint64_t> occupancy = {0, 3, 5, 0, 0, 2, 2};
  ASSERT_TRUE(sim.Inject(0, t, occupancy, /*repeat=*/1000).ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), 2000u);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 1), 4000u);
  // Still above the threshold from the last cycle: no new edge.
  ASSERT_TRUE(sim.Inject(0, t, 3, 100).ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), 2000u);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 1), 4100u);
  sim.Tick(0, 1);  // idle cycle: the output drops
  ASSERT_TRUE(sim.Inject(0, t, 3, 100).ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), 2001u);
}

TEST(SimulatedUncoreTest, StreamsInTheSameCycleAreSummedBeforeThreshold) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const uint64_t ev = Event(BoxType::kCbo, "TOR_OCCUPANCY", "ALL");
  r.Ctl(BoxType::kCbo, 0, 0, ev | kEn | Thresh(4));
  r.Ctl(BoxType::kCbo, 0, 1, ev | kEn);
  const Traffic t = TrafficFor(BoxType::kCbo, 0, "TOR_OCCUPANCY", "ALL");
  const std::vector<IvyTownUncore::Stream> streams = {{t, {2, 2, 1, 0}},
                                                      {t, {2, 1, 3}}};
  ASSERT_TRUE(sim.InjectTogether(0, streams).ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), 2u);  // sums 4, 3, 4, 0
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 1), 11u);
}

TEST(SimulatedUncoreTest, PcuOccInvertAndOccEdgeActLikeInvAndEdge) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType pcu = BoxType::kPcu;
  const uint64_t ev = Event(pcu, "POWER_STATE_OCCUPANCY", "CORES_C0");
  const uint64_t occ_invert = uint64_t{1} << 30;
  const uint64_t occ_edge = uint64_t{1} << 31;
  r.Ctl(pcu, 0, 0, ev | kEn | Thresh(5));
  r.Ctl(pcu, 0, 1, ev | kEn | Thresh(5) | occ_invert);
  r.Ctl(pcu, 0, 2, ev | kEn | Thresh(5) | occ_edge);
  const std::vector<uint64_t> cores = {6, 6, 2, 5, 8, 1};
  ASSERT_TRUE(
      sim.Inject(0, TrafficFor(pcu, 0, "POWER_STATE_OCCUPANCY", "CORES_C0"),
                 cores)
          .ok());
  EXPECT_EQ(r.Ctr(pcu, 0, 0), 4u);
  EXPECT_EQ(r.Ctr(pcu, 0, 1), 2u);
  EXPECT_EQ(r.Ctr(pcu, 0, 2), 2u);
}

// decisions.md #36: occ_invert and occ_edge belong to the occupancy events
// (occ_sel != 0); on any other PCU event they change nothing.
TEST(SimulatedUncoreTest, PcuOccInvertAndOccEdgeIgnoreOtherEvents) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType pcu = BoxType::kPcu;
  const uint64_t ev = Event(pcu, "FREQ_MAX_POWER_CYCLES", "");
  const uint64_t occ_invert = uint64_t{1} << 30;
  const uint64_t occ_edge = uint64_t{1} << 31;
  r.Ctl(pcu, 0, 0, ev | kEn | Thresh(1));
  r.Ctl(pcu, 0, 1, ev | kEn | Thresh(1) | occ_invert);
  r.Ctl(pcu, 0, 2, ev | kEn | Thresh(1) | occ_edge);
  r.Ctl(pcu, 0, 3, ev | kEn | Thresh(1) | kEdge);
  const std::vector<uint64_t> limited = {1, 1, 0, 1, 1, 0};
  ASSERT_TRUE(
      sim.Inject(0, TrafficFor(pcu, 0, "FREQ_MAX_POWER_CYCLES", ""), limited)
          .ok());
  EXPECT_EQ(r.Ctr(pcu, 0, 0), 4u);
  EXPECT_EQ(r.Ctr(pcu, 0, 1), 4u);  // not the 2 cycles below 1
  EXPECT_EQ(r.Ctr(pcu, 0, 2), 4u);  // not the 2 rising edges
  EXPECT_EQ(r.Ctr(pcu, 0, 3), 2u);  // the event's own edge detect works
}

// ---------------------------------------------------------------------------
// Filters.

TEST(SimulatedUncoreTest, CboOpcodeNidAndTidFilters) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType cbo = BoxType::kCbo;
  r.Filter(cbo, 0, "filter_opc", 0x182);
  r.Filter(cbo, 0, "filter_nid", 0x2);
  r.Filter(cbo, 0, "filter_tid", 0x5);
  r.Ctl(cbo, 0, 0, Event(cbo, "TOR_INSERTS", "OPCODE") | kEn);
  r.Ctl(cbo, 0, 1, Event(cbo, "TOR_INSERTS", "NID_OPCODE") | kEn);
  r.Ctl(cbo, 0, 2, Event(cbo, "TOR_INSERTS", "EVICTION") | kEn | kTidEn);
  r.Ctl(cbo, 0, 3, Event(cbo, "TOR_INSERTS", "EVICTION") | kEn);
  Traffic t = TrafficFor(cbo, 0, "TOR_INSERTS", "NID_OPCODE");
  ASSERT_TRUE(sim.Inject(0, t, 1, 1).ok());  // no opcode: no match
  t.opcode = 0x180;
  ASSERT_TRUE(sim.Inject(0, t, 1, 2).ok());  // mismatch
  t.opcode = 0x182;
  ASSERT_TRUE(sim.Inject(0, t, 1, 4).ok());  // opcode matches, nid unset
  t.nid_mask = 0x1;
  ASSERT_TRUE(sim.Inject(0, t, 1, 8).ok());  // nid mismatch
  t.nid_mask = 0x3;
  ASSERT_TRUE(sim.Inject(0, t, 1, 16).ok());  // both match
  EXPECT_EQ(r.Ctr(cbo, 0, 0), 4u + 8u + 16u);
  EXPECT_EQ(r.Ctr(cbo, 0, 1), 16u);
  Traffic ev = TrafficFor(cbo, 0, "TOR_INSERTS", "EVICTION");
  ASSERT_TRUE(sim.Inject(0, ev, 1, 3).ok());  // no tid
  ev.tid = 4;
  ASSERT_TRUE(sim.Inject(0, ev, 1, 5).ok());
  ev.tid = 5;
  ASSERT_TRUE(sim.Inject(0, ev, 1, 7).ok());
  EXPECT_EQ(r.Ctr(cbo, 0, 2), 7u);
  EXPECT_EQ(r.Ctr(cbo, 0, 3), 15u);
}

TEST(SimulatedUncoreTest, LlcLookupStateMask) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType cbo = BoxType::kCbo;
  r.Filter(cbo, 6, "filter_state", 0x1E);  // S, E, M, F: hits
  r.Ctl(cbo, 6, 0, Event(cbo, "LLC_LOOKUP", "DATA_READ") | kEn);
  Traffic t = TrafficFor(cbo, 6, "LLC_LOOKUP", "DATA_READ");
  ASSERT_TRUE(sim.Inject(0, t, 1, 100).ok());  // state unset
  t.state_mask = 0x01;                         // I: a miss
  ASSERT_TRUE(sim.Inject(0, t, 1, 10).ok());
  t.state_mask = 0x04;  // E
  ASSERT_TRUE(sim.Inject(0, t, 1, 20).ok());
  EXPECT_EQ(r.Ctr(cbo, 6, 0), 20u);
  r.Filter(cbo, 6, "filter_state", 0x01);
  t.state_mask = 0x01;
  ASSERT_TRUE(sim.Inject(0, t, 1, 30).ok());
  EXPECT_EQ(r.Ctr(cbo, 6, 0), 50u);
}

TEST(SimulatedUncoreTest, HaOpcodeAndAddressMatch) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType ha = BoxType::kHa;
  const uint64_t address = (uint64_t{0x1234} << 32) | 0xABCDEF40;
  r.Filter(ha, 0, "filter_opc", 0x05);
  r.Filter(ha, 0, "filter_addr_lo", (address >> 6) & 0x3FFFFFF);
  r.Filter(ha, 0, "filter_addr_hi", address >> 32);
  r.Ctl(ha, 0, 0, Event(ha, "ADDR_OPC_MATCH", "OPC") | kEn);
  r.Ctl(ha, 0, 1, Event(ha, "ADDR_OPC_MATCH", "FILT") | kEn);
  Traffic t = TrafficFor(ha, 0, "ADDR_OPC_MATCH", "FILT");
  t.opcode = 0x05;
  t.address = address + 0x3F;  // bits 5:0 are not compared
  ASSERT_TRUE(sim.Inject(0, t, 1, 10).ok());
  t.address = address + 0x40;  // another line
  ASSERT_TRUE(sim.Inject(0, t, 1, 20).ok());
  t.opcode = 0x06;
  t.address = address;
  ASSERT_TRUE(sim.Inject(0, t, 1, 40).ok());
  EXPECT_EQ(r.Ctr(ha, 0, 0), 30u);
  EXPECT_EQ(r.Ctr(ha, 0, 1), 10u);
}

TEST(SimulatedUncoreTest, QpiPacketMatchAndMask) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType qpi = BoxType::kQpi;
  // Table 2-137 DRS.AnyDataC: Match0 0x1C00, Mask0 0x1F80.
  r.Filter(qpi, 1, "match0", 0x1C00);
  r.Filter(qpi, 1, "mask0", 0x1F80);
  r.Ctl(qpi, 1, 0, Event(qpi, "CTO_COUNT", "") | kEn);
  Traffic t = TrafficFor(qpi, 1, "CTO_COUNT", "");
  ASSERT_TRUE(sim.Inject(0, t, 1, 5).ok());  // no packet: no match
  t.qpi_packet0 = 0x1C40;                    // opcode bit 6 is masked off
  ASSERT_TRUE(sim.Inject(0, t, 2, 10).ok());
  t.qpi_packet0 = 0x1800;  // NCB
  ASSERT_TRUE(sim.Inject(0, t, 2, 10).ok());
  EXPECT_EQ(r.Ctr(qpi, 1, 0), 20u);
  // DRS.DataC_M adds Match1/Mask1 [19:16] = 0x8 / 0xF.
  r.Filter(qpi, 1, "match_rds", 0x8);
  r.Filter(qpi, 1, "mask_rds", 0xF);
  t.qpi_packet0 = 0x1C00;
  ASSERT_TRUE(sim.Inject(0, t, 1, 3).ok());  // packet1 unset
  t.qpi_packet1 = uint64_t{0x4} << 16;       // E
  ASSERT_TRUE(sim.Inject(0, t, 1, 3).ok());
  t.qpi_packet1 = uint64_t{0x8} << 16;  // M
  ASSERT_TRUE(sim.Inject(0, t, 1, 3).ok());
  EXPECT_EQ(r.Ctr(qpi, 1, 0), 23u);
  // The registers live in the mask/match function (L3109).
  EXPECT_EQ(sim.PeekPci(0, r.Fn(qpi, 1, /*aux=*/true), 0x238), 0x1F80u);
}

TEST(SimulatedUncoreTest, PcuFrequencyBands) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType pcu = BoxType::kPcu;
  r.Filter(pcu, 0, "filter_band0", 12);  // 1.2 GHz
  r.Filter(pcu, 0, "filter_band1", 20);
  r.Ctl(pcu, 0, 0, Event(pcu, "FREQ_BAND0_CYCLES", "") | kEn);
  r.Ctl(pcu, 0, 1, Event(pcu, "FREQ_BAND1_CYCLES", "") | kEn);
  Traffic b0 = TrafficFor(pcu, 0, "FREQ_BAND0_CYCLES", "");
  Traffic b1 = TrafficFor(pcu, 0, "FREQ_BAND1_CYCLES", "");
  for (uint32_t f : {10u, 12u, 16u, 20u, 24u}) {
    b0.band_frequency = b1.band_frequency = f;
    const std::vector<IvyTownUncore::Stream> s = {{b0, {1}}, {b1, {1}}};
    ASSERT_TRUE(sim.InjectTogether(0, s, /*repeat=*/100).ok());
  }
  EXPECT_EQ(r.Ctr(pcu, 0, 0), 400u);
  EXPECT_EQ(r.Ctr(pcu, 0, 1), 200u);
}

// ---------------------------------------------------------------------------
// PCI counters: two dwords, torn reads.

TEST(SimulatedUncoreTest, PciReadTearsWhenUnfrozenAndNotWhenFrozen) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType imc = BoxType::kImc;
  r.Ctl(imc, 0, 0, Event(imc, "CAS_COUNT", "RD") | kEn);
  const uint64_t start = 0xFFFFFFF0;
  r.SetCtr(imc, 0, 0, start);
  const Traffic t = TrafficFor(imc, 0, "CAS_COUNT", "RD");
  int hook_calls = 0;
  sim.SetPciReadHook([&](int socket, const PciAddress&, uint32_t offset) {
    ++hook_calls;
    EXPECT_EQ(offset, 0xA4u);
    ASSERT_TRUE(sim.Inject(socket, t, 1, 0x20).ok());
  });
  // Unfrozen: the low dword is read before, the high dword after, the carry.
  const uint64_t torn = r.Ctr(imc, 0, 0);
  EXPECT_EQ(hook_calls, 1);
  EXPECT_EQ(torn, 0x1FFFFFFF0u);
  EXPECT_NE(torn, start);
  EXPECT_NE(torn, start + 0x20);
  // Frozen (box frz, as §2.1.3 a asks): the two halves agree.
  r.SetCtr(imc, 0, 0, start);
  r.BoxCtl(imc, 0, kMustWriteOne | kFrz);
  EXPECT_EQ(r.Ctr(imc, 0, 0), start);
  sim.SetPciReadHook(nullptr);
  r.BoxCtl(imc, 0, kMustWriteOne);
  EXPECT_EQ(r.Ctr(imc, 0, 0), start);
  EXPECT_EQ(hook_calls, 2);
}

TEST(SimulatedUncoreTest, PciCounterHalvesAreWrittenSeparately) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const BoxType ha = BoxType::kHa;
  r.Write(ha, 1, 0xA0 + 4, 0xFFFFFFFF);  // high dword: bits above 47 dropped
  r.Write(ha, 1, 0xA0, 0x12345678);
  EXPECT_EQ(sim.PeekCounter(0, ha, 1, 0), 0xFFFF12345678u);
  EXPECT_EQ(r.Read(ha, 1, 0xA4), 0xFFFFu);
  // IRP counter 2 lives at 0xB8 (irregular offsets, 44 bits).
  r.SetCtr(BoxType::kIrp, 0, 2, ~uint64_t{0});
  EXPECT_EQ(sim.PeekCounter(0, BoxType::kIrp, 0, 2), (uint64_t{1} << 44) - 1);
}

// ---------------------------------------------------------------------------
// Fixed counters and clocks.

TEST(SimulatedUncoreTest, UclkAndDclkCountTicks) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const auto& uclk = *ivytown::Box(BoxType::kUbox).fixed_counter;
  const auto& dclk = *ivytown::Box(BoxType::kImc).fixed_counter;
  r.Write(BoxType::kUbox, 0, uclk.control_offset, kEn);
  r.Write(BoxType::kImc, 2, dclk.control_offset, kEn);
  r.Ctl(BoxType::kCbo, 0, 0, Event(BoxType::kCbo, "CLOCKTICKS", "") | kEn);
  r.Ctl(BoxType::kQpi, 0, 0, Event(BoxType::kQpi, "CLOCKTICKS", "") | kEn);
  sim.Tick(0, 100000);
  EXPECT_EQ(r.ReadCounterAt(BoxType::kUbox, 0, uclk.counter_offset), 100000u);
  EXPECT_EQ(r.ReadCounterAt(BoxType::kImc, 2, dclk.counter_offset), 100000u);
  EXPECT_EQ(r.ReadCounterAt(BoxType::kImc, 3, dclk.counter_offset), 0u);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), 100000u);
  EXPECT_EQ(r.Ctr(BoxType::kQpi, 0, 0), 100000u);
  // Injected cycles are cycles of that instance (S10).
  ASSERT_TRUE(
      sim.Inject(0, TrafficFor(BoxType::kImc, 2, "CAS_COUNT", "RD"), 1, 50)
          .ok());
  EXPECT_EQ(r.ReadCounterAt(BoxType::kImc, 2, dclk.counter_offset), 100050u);
  EXPECT_EQ(r.ReadCounterAt(BoxType::kUbox, 0, uclk.counter_offset), 100000u);
  // One box's clock domain.
  sim.TickBox(0, BoxType::kQpi, 7);
  EXPECT_EQ(r.Ctr(BoxType::kQpi, 0, 0), 100007u);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), 100000u);
  // The DCLK rst bit (19, WO) zeroes it and reads back 0.
  r.Write(BoxType::kImc, 2, dclk.control_offset, kEn | (uint64_t{1} << 19));
  EXPECT_EQ(r.ReadCounterAt(BoxType::kImc, 2, dclk.counter_offset), 0u);
  EXPECT_EQ(r.Read(BoxType::kImc, 2, dclk.control_offset), kEn);
  // A box freeze stops the fixed counter too (S3).
  r.BoxCtl(BoxType::kImc, 2, kMustWriteOne | kFrz);
  sim.Tick(0, 10);
  EXPECT_EQ(r.ReadCounterAt(BoxType::kImc, 2, dclk.counter_offset), 0u);
}

TEST(SimulatedUncoreTest, UclkOverflowSetsOvUFixedAndFreezes) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const auto& uclk = *ivytown::Box(BoxType::kUbox).fixed_counter;
  r.Write(BoxType::kUbox, 0, uclk.counter_offset, (uint64_t{1} << 44) - 5);
  r.Write(BoxType::kUbox, 0, uclk.control_offset, kEn | kOvEn);
  sim.Tick(0, 10);
  EXPECT_EQ(r.ReadCounterAt(BoxType::kUbox, 0, uclk.counter_offset), 0u);
  EXPECT_EQ(r.GlobalStatus(), 1u);                // ov_u_fixed
  EXPECT_EQ(r.BoxStatus(BoxType::kUbox, 0), 0u);  // decisions.md #5
  EXPECT_TRUE(sim.GlobalFrozen(0));
}

// ---------------------------------------------------------------------------
// Reserved bits, unknown registers, presets, access counts.

TEST(SimulatedUncoreTest, ReservedAndWriteOnlyBitsReadZero) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  r.Ctl(BoxType::kCbo, 0, 0, 0xFFFFFFFF);
  EXPECT_EQ(r.Read(BoxType::kCbo, 0, 0x10), 0xFF4EFFFFu & ~kRst);
  r.Ctl(BoxType::kUbox, 0, 1, ~uint64_t{0});
  EXPECT_EQ(r.Read(BoxType::kUbox, 0, 0x11), 0x1F56FFFFu & ~kRst);
  r.Ctl(BoxType::kHa, 0, 0, 0xFFFFFFFF);  // rst 17 and q_occ_rst 16 are WO
  EXPECT_EQ(r.Read(BoxType::kHa, 0, 0xD8),
            ivytown::Box(BoxType::kHa).control_writable_mask & ~0x30000u);
  r.BoxCtl(BoxType::kR2pcie, 0, 0xFFFFFFFC);  // no must-write-one bits here
  EXPECT_EQ(r.Read(BoxType::kR2pcie, 0, 0xF4), kFrz);
  r.Write(BoxType::kCbo, 0, 0x14, 0xFFFFFFFF);
  EXPECT_EQ(r.Read(BoxType::kCbo, 0, 0x14), 0x007E001Fu);
  r.SetCtr(BoxType::kCbo, 0, 0, ~uint64_t{0});
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), (uint64_t{1} << 44) - 1);
  ASSERT_TRUE(sim.WriteMsr(0, kGlobal.global_control, 0xFFFFFFFF).ok());
  uint64_t v = 0;
  ASSERT_TRUE(sim.ReadMsr(0, kGlobal.global_control, &v).ok());
  EXPECT_EQ(v, 0x40007FFFu);  // wk_on_pmi and pmi_core_sel
  EXPECT_TRUE(sim.GlobalFrozen(0));
  ASSERT_TRUE(sim.ReadMsr(0, kGlobal.global_config, &v).ok());
  EXPECT_EQ(v, 8u);  // num_c reset value
  // The W1C status ignores writes of 0 and cannot be set by software.
  ASSERT_TRUE(sim.WriteMsr(0, kGlobal.global_status, 0xFFFFFFFF).ok());
  EXPECT_EQ(r.GlobalStatus(), 0u);
}

TEST(SimulatedUncoreTest, UnknownRegistersAreNotFound) {
  IvyTownUncore sim(1, 2);
  uint64_t v = 0;
  uint32_t d = 0;
  // 0xD55: the CBo2 "Box Status" of Table 1-2 only (decisions.md #1).
  EXPECT_EQ(sim.ReadMsr(0, 0xD55, &v).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(sim.WriteMsr(0, 0xD55, 1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(sim.ReadMsr(0, 0x3FD, &v).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(sim.ReadMsr(2, 0xC00, &v).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(sim.ReadMsr(-1, 0xC00, &v).code(), absl::StatusCode::kNotFound);
  Regs r(&sim, 0);
  const PciAddress imc = r.Fn(BoxType::kImc, 0);
  EXPECT_EQ(sim.ReadPci(imc, 0x00, &d).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(sim.WritePci(imc, 0x228, 0).code(), absl::StatusCode::kNotFound);
  PciAddress other = imc;
  other.bus = 0x3f;
  EXPECT_EQ(sim.ReadPci(other, 0xD8, &d).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(sim.ReadPci(imc, 0xD8, &d).ok());
  EXPECT_EQ(sim.PresetMsr(0, 0xD55, 1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(
      sim.Inject(0, Traffic{.box = BoxType::kCbo, .instance = 15}, 1, 1).code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sim.Inject(3, Traffic{}, 1, 1).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SimulatedUncoreTest, PresetsStoreRawValuesAndAccessesAreCounted) {
  IvyTownUncore sim;
  const uint64_t before = sim.access_count();
  // Another agent's enabled counter: en=1 plus a reserved bit (20).
  ASSERT_TRUE(sim.PresetMsr(0, 0x0D10, 0x00400137 | (uint64_t{1} << 20)).ok());
  EXPECT_EQ(sim.PeekMsr(0, 0x0D10), 0x00500137u);
  EXPECT_EQ(sim.access_count(), before);  // presets and peeks are free
  uint64_t v = 0;
  ASSERT_TRUE(sim.ReadMsr(0, 0x0D10, &v).ok());
  EXPECT_EQ(v, 0x00400137u);  // the reserved bit reads 0
  const PciAddress fn =
      *sim.topology().sockets[0].FindPci(BoxType::kImc, 0)->pmon;
  ASSERT_TRUE(sim.PresetPci(0, fn, 0xA4, 0x1).ok());
  EXPECT_EQ(sim.PeekCounter(0, BoxType::kImc, 0, 0), uint64_t{1} << 32);
  EXPECT_EQ(sim.PeekPci(0, fn, 0xA4), 1u);
  ASSERT_TRUE(sim.WriteMsr(0, 0x0D16, 1).ok());
  EXPECT_EQ(sim.access_count(), before + 2);
}

// ---------------------------------------------------------------------------
// Concurrency.

TEST(SimulatedUncoreTest, ConcurrentInjectionsAndReadsLoseNothing) {
  IvyTownUncore sim(2);
  for (int s = 0; s < 2; ++s) {
    Regs r(&sim, s);
    r.Ctl(BoxType::kCbo, 0, 0,
          Event(BoxType::kCbo, "LLC_VICTIMS", "M_STATE") | kEn);
    r.Ctl(BoxType::kImc, 0, 0, Event(BoxType::kImc, "CAS_COUNT", "RD") | kEn);
  }
  constexpr int kThreads = 4;
  constexpr int kRounds = 500;
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&sim, i] {
      const Traffic cbo =
          TrafficFor(BoxType::kCbo, 0, "LLC_VICTIMS", "M_STATE");
      const Traffic imc = TrafficFor(BoxType::kImc, 0, "CAS_COUNT", "RD");
      for (int k = 0; k < kRounds; ++k) {
        EXPECT_TRUE(sim.Inject(i % 2, cbo, 2, 5).ok());
        EXPECT_TRUE(sim.Inject(i % 2, imc, 3, 7).ok());
        sim.Tick(i % 2, 3);
      }
    });
  }
  std::thread reader([&sim, &done] {
    Regs r(&sim, 1);
    while (!done.load()) {
      r.Global(kFrzAll);
      (void)r.Ctr(BoxType::kImc, 0, 0);
      r.Global(kUnfrzAll);
    }
  });
  for (std::thread& t : threads) t.join();
  done = true;
  reader.join();
  // Socket 1's freezes dropped some of its counts; socket 0 had none.
  Regs r(&sim, 0);
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0), uint64_t{kThreads / 2} * kRounds * 10);
  EXPECT_EQ(r.Ctr(BoxType::kImc, 0, 0), uint64_t{kThreads / 2} * kRounds * 21);
  Regs r1(&sim, 1);
  EXPECT_LE(r1.Ctr(BoxType::kCbo, 0, 0), uint64_t{kThreads / 2} * kRounds * 10);
}

// ---------------------------------------------------------------------------
// Large runs are closed-form, not cycle by cycle.

TEST(SimulatedUncoreTest, BillionsOfCyclesAreCheap) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const uint64_t ev = Event(BoxType::kCbo, "TOR_OCCUPANCY", "ALL");
  r.Ctl(BoxType::kCbo, 0, 0, ev | kEn);
  r.Ctl(BoxType::kCbo, 0, 1, ev | kEn | Thresh(3));
  const Traffic t = TrafficFor(BoxType::kCbo, 0, "TOR_OCCUPANCY", "ALL");
  ASSERT_TRUE(sim.Inject(0, t, 20, uint64_t{1} << 40).ok());
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 0),
            uint64_t{4} << 40);  // 20 * 2^40 wrapped
  EXPECT_EQ(r.Ctr(BoxType::kCbo, 0, 1), uint64_t{1} << 40);
  EXPECT_EQ(r.GlobalStatus(), uint64_t{1} << 3);  // counter 0 wrapped
}

// ---------------------------------------------------------------------------
// The demo traffic model.

TEST(DemoTrafficModelTest, AdvanceByInjectsScaledTrafficAndTicksClocks) {
  EXPECT_EQ(DemoTrafficModel::kLabel, "SIMULATED");
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const auto& uclk = *ivytown::Box(BoxType::kUbox).fixed_counter;
  const auto& dclk = *ivytown::Box(BoxType::kImc).fixed_counter;
  r.Write(BoxType::kUbox, 0, uclk.control_offset, kEn);
  r.Write(BoxType::kImc, 0, dclk.control_offset, kEn);
  for (int ch = 0; ch < 8; ++ch) {
    r.Ctl(BoxType::kImc, ch, 0, Event(BoxType::kImc, "CAS_COUNT", "RD") | kEn);
    r.Ctl(BoxType::kImc, ch, 1, Event(BoxType::kImc, "CAS_COUNT", "WR") | kEn);
  }
  r.Filter(BoxType::kCbo, 0, "filter_state", 0x1F);
  r.Ctl(BoxType::kCbo, 0, 0,
        Event(BoxType::kCbo, "LLC_LOOKUP", "DATA_READ") | kEn);
  r.Ctl(BoxType::kPcu, 0, 0,
        Event(BoxType::kPcu, "FREQ_BAND0_CYCLES", "") | kEn);
  r.Filter(BoxType::kPcu, 0, "filter_band0", 15);
  DemoTrafficModel demo(&sim);
  demo.SetActivity(/*memory_bytes_per_second=*/12.0e9,
                   /*llc_lookups_per_second=*/1.5e9);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(demo.AdvanceBy(std::chrono::microseconds(100)).ok());
  }
  EXPECT_EQ(demo.simulated_time(), std::chrono::milliseconds(1));
  EXPECT_EQ(r.ReadCounterAt(BoxType::kUbox, 0, uclk.counter_offset), 2000000u);
  EXPECT_EQ(r.ReadCounterAt(BoxType::kImc, 0, dclk.counter_offset), 800000u);
  uint64_t rd = 0, wr = 0;
  for (int ch = 0; ch < 8; ++ch) {
    rd += r.Ctr(BoxType::kImc, ch, 0);
    wr += r.Ctr(BoxType::kImc, ch, 1);
  }
  // 8 GB/s of reads and 4 GB/s of writes for 1 ms, 64 bytes a line.
  EXPECT_NEAR(static_cast<double>(rd), 8.0e9 / 64 * 1e-3, 8);
  EXPECT_NEAR(static_cast<double>(wr), 4.0e9 / 64 * 1e-3, 8);
  EXPECT_NEAR(static_cast<double>(r.Ctr(BoxType::kCbo, 0, 0)),
              1.5e9 / 15 * 1e-3, 2);
  EXPECT_EQ(r.Ctr(BoxType::kPcu, 0, 0), 800000u);  // 2.0 GHz >= 1.5 GHz
}

TEST(DemoTrafficModelTest, BackgroundThreadAdvancesWithWallClock) {
  IvyTownUncore sim;
  Regs r(&sim, 0);
  const auto& uclk = *ivytown::Box(BoxType::kUbox).fixed_counter;
  r.Write(BoxType::kUbox, 0, uclk.control_offset, kEn);
  DemoTrafficModel demo(&sim);
  demo.Start(std::chrono::milliseconds(1));
  EXPECT_TRUE(demo.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  demo.Stop();
  EXPECT_FALSE(demo.running());
  EXPECT_TRUE(demo.last_error().ok());
  EXPECT_GT(r.ReadCounterAt(BoxType::kUbox, 0, uclk.counter_offset), 0u);
}

}  // namespace
}  // namespace uncore::sim
