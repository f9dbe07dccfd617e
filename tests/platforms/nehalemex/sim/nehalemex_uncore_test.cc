#include "sdk/platforms/nehalemex/sim/nehalemex_uncore.h"

#include <cstdint>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "sdk/platforms/nehalemex/model/box_descriptors.h"
#include "sdk/sim/simulated_activity.h"

namespace uncore::sim {
namespace {

using nehalemex::BoxType;
using nehalemex::kCbox;
using nehalemex::kGlobalCtl;
using nehalemex::kMbox;
using nehalemex::kSbox;
using nehalemex::kWFixed;
using nehalemex::Variant;

constexpr uint64_t kEnAll = uint64_t{1} << 28;
constexpr uint64_t kRstAll = uint64_t{1} << 29;
constexpr uint64_t kFrzAll = uint64_t{1} << 31;
constexpr uint64_t kEn22 = uint64_t{1} << 22;
constexpr uint64_t kPmi20 = uint64_t{1} << 20;
constexpr uint64_t kMax48 = (uint64_t{1} << 48) - 1;

uint64_t Read(NehalemExUncore& sim, int cpu, uint32_t msr) {
  uint64_t v = 0;
  EXPECT_TRUE(sim.ReadMsr(cpu, msr, &v).ok()) << std::hex << msr;
  return v;
}

// C-Box 2, counter 1: event 0x01 umask 0x03.
void ProgramC2Counter1(NehalemExUncore& sim, uint64_t extra = 0) {
  ASSERT_TRUE(
      sim.WriteMsr(0, kCbox.ControlAddress(2, 1), kEn22 | 0x0301 | extra).ok());
  ASSERT_TRUE(sim.WriteMsr(0, kCbox.GlobalCtlAddress(2), 0x2).ok());
}

TEST(NehalemExUncore, CountsOnlyWithAllThreeEnables) {
  auto sim = NehalemExUncore::Create(Variant::kNehalemEx, 1);
  const uint32_t ctr = kCbox.CounterAddress(2, 1);
  ASSERT_TRUE(
      sim->WriteMsr(0, kCbox.ControlAddress(2, 1), kEn22 | 0x0301).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 5).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 0u);  // no ctr_en, no en_all
  ASSERT_TRUE(sim->WriteMsr(0, kCbox.GlobalCtlAddress(2), 0x2).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 5).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 0u);  // no en_all
  ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, kEnAll).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 5).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 5u);
  // Another event select, another instance: not this counter.
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0302, 7).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 3, 0x0301, 7).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 5u);
  // Clearing the control's en stops it.
  ASSERT_TRUE(sim->WriteMsr(0, kCbox.ControlAddress(2, 1), 0x0301).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 5).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 5u);
}

TEST(NehalemExUncore, WrapSetsOverflowAndClrOvClearsIt) {
  auto sim = NehalemExUncore::Create(Variant::kNehalemEx, 1);
  ProgramC2Counter1(*sim);
  ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, kEnAll).ok());
  const uint32_t ctr = kCbox.CounterAddress(2, 1);
  ASSERT_TRUE(sim->WriteMsr(0, ctr, kMax48 - 2).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 2).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), kMax48);
  EXPECT_EQ(Read(*sim, 0, kCbox.StatusAddress(2)), 0u);
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 4).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 3u);  // wrapped, still counting
  EXPECT_EQ(Read(*sim, 0, kCbox.StatusAddress(2)), 0x2u);
  // No PMI enabled: en_all stays.
  EXPECT_EQ(Read(*sim, 0, kGlobalCtl.address) & kEnAll, kEnAll);
  // Status is read-only; OVF_CTL clears and reads 0.
  EXPECT_TRUE(NehalemExUncore::IsGeneralProtectionFault(
      sim->WriteMsr(0, kCbox.StatusAddress(2), 0)));
  ASSERT_TRUE(sim->WriteMsr(0, kCbox.OvfCtlAddress(2), 0x2).ok());
  EXPECT_EQ(Read(*sim, 0, kCbox.StatusAddress(2)), 0u);
  EXPECT_EQ(Read(*sim, 0, kCbox.OvfCtlAddress(2)), 0u);
}

TEST(NehalemExUncore, FreezeOnPmiClearsEnAll) {
  auto sim = NehalemExUncore::Create(Variant::kWestmereEx, 1);
  ProgramC2Counter1(*sim, kPmi20);
  // frz_all by itself freezes nothing.
  ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, kEnAll | kFrzAll).ok());
  const uint32_t ctr = kCbox.CounterAddress(2, 1);
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 10).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 10u);
  ASSERT_TRUE(sim->WriteMsr(0, ctr, kMax48).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 1).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 0u);
  EXPECT_EQ(Read(*sim, 0, kGlobalCtl.address), kFrzAll);  // en_all cleared
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 9).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 0u);  // frozen
  // Without frz_all a PMI overflow does not freeze.
  ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, kEnAll).ok());
  ASSERT_TRUE(sim->WriteMsr(0, ctr, kMax48).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 3).ok());
  EXPECT_EQ(Read(*sim, 0, ctr), 2u);
  EXPECT_EQ(Read(*sim, 0, kGlobalCtl.address), kEnAll);
}

TEST(NehalemExUncore, RstAllZeroesCountersAndStatus) {
  auto sim = NehalemExUncore::Create(Variant::kNehalemEx, 2);
  ProgramC2Counter1(*sim);
  ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, kEnAll).ok());
  ASSERT_TRUE(sim->WriteMsr(0, kCbox.CounterAddress(2, 1), kMax48).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kC, 2, 0x0301, 5).ok());
  ASSERT_TRUE(sim->WriteMsr(1, kCbox.CounterAddress(0, 0), 77).ok());
  ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, kEnAll | kRstAll).ok());
  EXPECT_EQ(Read(*sim, 0, kCbox.CounterAddress(2, 1)), 0u);
  EXPECT_EQ(Read(*sim, 0, kCbox.StatusAddress(2)), 0u);
  EXPECT_EQ(Read(*sim, 0, kGlobalCtl.address), kEnAll);  // rst_all reads 0
  // The control survives; the other socket is untouched.
  EXPECT_EQ(Read(*sim, 0, kCbox.ControlAddress(2, 1)), kEn22 | 0x0301);
  EXPECT_EQ(Read(*sim, 1, kCbox.CounterAddress(0, 0)), 77u);
}

TEST(NehalemExUncore, SboxMatchMaskWriteWithMmCfgEnabledIsAGpFault) {
  auto sim = NehalemExUncore::Create(Variant::kNehalemEx, 1);
  const auto& mm = kSbox.match_mask[1];
  ASSERT_TRUE(sim->WriteMsr(0, mm.match, 0x1234).ok());
  ASSERT_TRUE(sim->WriteMsr(0, mm.mm_cfg, uint64_t{1} << 63).ok());
  const absl::Status st = sim->WriteMsr(0, mm.match, 0x5678);
  EXPECT_TRUE(NehalemExUncore::IsGeneralProtectionFault(st)) << st;
  EXPECT_NE(std::string(st.message()).find("MM_CFG"), std::string::npos) << st;
  EXPECT_TRUE(
      NehalemExUncore::IsGeneralProtectionFault(sim->WriteMsr(0, mm.mask, 0)));
  EXPECT_EQ(Read(*sim, 0, mm.match), 0x1234u);  // unchanged
  EXPECT_EQ(sim->gp_faults(), 2);
  ASSERT_TRUE(sim->WriteMsr(0, mm.mm_cfg, 0).ok());
  EXPECT_TRUE(sim->WriteMsr(0, mm.match, 0x5678).ok());
  // The other S-Box's guard is its own.
  ASSERT_TRUE(
      sim->WriteMsr(0, kSbox.match_mask[0].mm_cfg, uint64_t{1} << 63).ok());
  EXPECT_TRUE(sim->WriteMsr(0, mm.mask, 0xFF).ok());
}

TEST(NehalemExUncore, MboxGuardedBboxNot) {
  auto sim = NehalemExUncore::Create(Variant::kWestmereEx, 1);
  const auto& m = kMbox.match_mask[0];
  ASSERT_TRUE(sim->WriteMsr(0, m.mm_cfg, uint64_t{1} << 63).ok());
  EXPECT_TRUE(
      NehalemExUncore::IsGeneralProtectionFault(sim->WriteMsr(0, m.match, 1)));
  const auto& b = nehalemex::kBbox.match_mask[0];
  EXPECT_TRUE(sim->WriteMsr(0, b.match, 1).ok());
}

TEST(NehalemExUncore, ReservedBitsAndUnknownMsrsFault) {
  auto sim = NehalemExUncore::Create(Variant::kNehalemEx, 1);
  // C-Box control bit 16 is reserved; counter bit 48; 0xC00 bit 30.
  EXPECT_TRUE(NehalemExUncore::IsGeneralProtectionFault(
      sim->WriteMsr(0, kCbox.ControlAddress(0, 0), uint64_t{1} << 16)));
  EXPECT_TRUE(NehalemExUncore::IsGeneralProtectionFault(
      sim->WriteMsr(0, kCbox.CounterAddress(0, 0), uint64_t{1} << 48)));
  EXPECT_TRUE(NehalemExUncore::IsGeneralProtectionFault(
      sim->WriteMsr(0, kGlobalCtl.address, uint64_t{1} << 30)));
  // C-Box ctr_en has 6 bits.
  EXPECT_TRUE(NehalemExUncore::IsGeneralProtectionFault(
      sim->WriteMsr(0, kCbox.GlobalCtlAddress(0), 0x40)));
  // C8 does not exist on Nehalem-EX.
  uint64_t v = 0;
  EXPECT_TRUE(NehalemExUncore::IsGeneralProtectionFault(
      sim->ReadMsr(0, kCbox.GlobalCtlAddress(8), &v)));
  // M-Box ZDP_CTL_FVC: bit 24 is writable on Westmere-EX only.
  const uint32_t fvc = kMbox.GlobalCtlAddress(0) + 0xB;
  EXPECT_TRUE(NehalemExUncore::IsGeneralProtectionFault(
      sim->WriteMsr(0, fvc, uint64_t{1} << 24)));
  auto wsm = NehalemExUncore::Create(Variant::kWestmereEx, 1);
  EXPECT_TRUE(wsm->WriteMsr(0, fvc, uint64_t{1} << 24).ok());
  // MM_CFG bits 62:0 are ignored and read zero.
  ASSERT_TRUE(sim->WriteMsr(0, kSbox.match_mask[0].mm_cfg, 0xFFFF).ok());
  EXPECT_EQ(Read(*sim, 0, kSbox.match_mask[0].mm_cfg), 0u);
  // A CPU outside the simulation.
  EXPECT_FALSE(sim->ReadMsr(1, kGlobalCtl.address, &v).ok());
}

TEST(NehalemExUncore, DemoModeAdvancesFromTheClock) {
  uint64_t now = 1'000'000'000;
  NehalemExUncore::Options opt;
  opt.demo = true;
  opt.clock = [&now] { return now; };
  opt.rates.read_bytes_per_s = 6.4e9;  // 1e8 lines/s, 5e7 per M-Box
  opt.rates.uncore_clock_hz = 2e9;
  opt.rates.other_events_per_s = 1e6;
  auto sim = NehalemExUncore::Create(Variant::kNehalemEx, 1, opt);
  // M0 counter 0: inc_sel 0xD with the bbox_cmds_read FVC value.
  const uint32_t fvc = kMbox.GlobalCtlAddress(0) + 0xB;
  ASSERT_TRUE(sim->WriteMsr(0, fvc, 0x2800).ok());
  ASSERT_TRUE(
      sim->WriteMsr(0, kMbox.ControlAddress(0, 0), (0xD << 9) | 1).ok());
  ASSERT_TRUE(sim->WriteMsr(0, kMbox.GlobalCtlAddress(0), 0x1).ok());
  // C0 counter 0: any other event.
  ASSERT_TRUE(sim->WriteMsr(0, kCbox.ControlAddress(0, 0), kEn22 | 0x11).ok());
  ASSERT_TRUE(sim->WriteMsr(0, kCbox.GlobalCtlAddress(0), 0x1).ok());
  // The W fixed counter.
  ASSERT_TRUE(sim->WriteMsr(0, kWFixed.control, 1).ok());
  ASSERT_TRUE(
      sim->WriteMsr(0, nehalemex::kWbox.GlobalCtlAddress(0), 1ull << 31).ok());
  ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, kEnAll).ok());
  now += 10'000'000;  // 10 ms
  EXPECT_EQ(Read(*sim, 0, kMbox.CounterAddress(0, 0)), 500'000u);
  EXPECT_EQ(Read(*sim, 0, kCbox.CounterAddress(0, 0)), 10'000u);
  EXPECT_EQ(Read(*sim, 0, kWFixed.counter), 20'000'000u);
  // Disabled: time passes without counts.
  ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, 0).ok());
  now += 10'000'000;
  EXPECT_EQ(Read(*sim, 0, kCbox.CounterAddress(0, 0)), 10'000u);
}

// The 7500's SimulatedActivity (sim/simulated_activity.h): a program's
// bytes/s become the memory events MEM_BW_* read, one per 64-byte line (2/3
// reads on the M-Boxes' bbox_cmds_read, 1/3 writes on bbox_cmds_write and
// the B-Boxes' IMT_INSERTS_WR), counts before a change at the old rate, 0
// for a compute phase while the uncore clock goes on.  Both variants.
TEST(NehalemExUncore, SimulatedActivityDrivesTheMemoryEvents) {
  for (const Variant variant : {Variant::kNehalemEx, Variant::kWestmereEx}) {
    SCOPED_TRACE(nehalemex::VariantDisplayName(variant));
    uint64_t now = 1'000'000'000;
    NehalemExUncore::Options opt;
    opt.clock = [&now] { return now; };  // demo off: nothing moves yet
    auto sim = NehalemExUncore::Create(variant, 1, opt);
    const nehalemex::MboxMemoryEvents mem = nehalemex::MemoryEventFvc(variant);
    const uint32_t fvc_offset =
        nehalemex::kMboxSubRegisters
            [static_cast<int>(nehalemex::MboxSubRegister::kZdpCtlFvc)]
                .offset;
    // M0 counter 0: reads; M1 counter 0: writes (inc_sel 0xD, the FVC
    // event field 0).
    ASSERT_TRUE(
        sim->WriteMsr(0, kMbox.GlobalCtlAddress(0) + fvc_offset, mem.read_fvc)
            .ok());
    ASSERT_TRUE(
        sim->WriteMsr(0, kMbox.GlobalCtlAddress(1) + fvc_offset, mem.write_fvc)
            .ok());
    for (int m : {0, 1}) {
      ASSERT_TRUE(
          sim->WriteMsr(0, kMbox.ControlAddress(m, 0), (0xD << 9) | 1).ok());
      ASSERT_TRUE(sim->WriteMsr(0, kMbox.GlobalCtlAddress(m), 0x1).ok());
    }
    // B0 counter 1: IMT_INSERTS_WR (ev_sel 0x0C in bits 5:1).
    ASSERT_TRUE(
        sim->WriteMsr(0, nehalemex::kBbox.ControlAddress(0, 1), (0x0C << 1) | 1)
            .ok());
    ASSERT_TRUE(
        sim->WriteMsr(0, nehalemex::kBbox.GlobalCtlAddress(0), 0x2).ok());
    // The W-Box fixed counter (the uncore clock).
    ASSERT_TRUE(sim->WriteMsr(0, kWFixed.control, 1).ok());
    ASSERT_TRUE(
        sim->WriteMsr(0, nehalemex::kWbox.GlobalCtlAddress(0), 1ull << 31)
            .ok());
    ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, kEnAll).ok());

    const uint32_t reads = kMbox.CounterAddress(0, 0);
    const uint32_t writes = kMbox.CounterAddress(1, 0);
    const uint32_t imt_wr = nehalemex::kBbox.CounterAddress(0, 1);
    now += 10'000'000;
    EXPECT_EQ(Read(*sim, 0, reads), 0u);  // no activity told yet

    // 6.4 GB/s: 1e8 lines/s, 2/3 reads and 1/3 writes, split over the two
    // M-Boxes and the B-Boxes.
    SimulatedActivity& activity = *sim;  // what the session drives
    ASSERT_TRUE(activity.SetMemoryActivity(6.4e9).ok());
    now += 30'000'000;  // 30 ms
    const double lines = 1e8 * 0.03;
    const int mboxes = kMbox.NumInstances(variant);
    const int bboxes = nehalemex::kBbox.NumInstances(variant);
    EXPECT_NEAR(static_cast<double>(Read(*sim, 0, reads)),
                lines * 2 / 3 / mboxes, 1);
    EXPECT_NEAR(static_cast<double>(Read(*sim, 0, writes)), lines / 3 / mboxes,
                1);
    EXPECT_NEAR(static_cast<double>(Read(*sim, 0, imt_wr)), lines / 3 / bboxes,
                1);
    const uint64_t clock_before = Read(*sim, 0, kWFixed.counter);

    // A compute phase: the 10 ms before the change count at 6.4 GB/s, the
    // 20 ms after it nothing; the uncore clock goes on.
    now += 10'000'000;
    ASSERT_TRUE(sim->SetMemoryActivity(0).ok());
    now += 20'000'000;
    ASSERT_TRUE(sim->AdvanceToNow().ok());
    EXPECT_NEAR(static_cast<double>(Read(*sim, 0, reads)),
                1e8 * 0.04 * 2 / 3 / mboxes, 1);
    EXPECT_NEAR(static_cast<double>(Read(*sim, 0, imt_wr)),
                1e8 * 0.04 / 3 / bboxes, 1);
    EXPECT_NEAR(
        static_cast<double>(Read(*sim, 0, kWFixed.counter) - clock_before),
        opt.rates.uncore_clock_hz * 0.03, 1);
    EXPECT_EQ(sim->demo_rates().read_bytes_per_s, 0);
    // Negative is 0.
    ASSERT_TRUE(sim->SetMemoryActivity(-5).ok());
    EXPECT_EQ(sim->demo_rates().write_bytes_per_s, 0);
  }
}

TEST(NehalemExUncore, FixedCounterAndUbox) {
  auto sim = NehalemExUncore::Create(Variant::kNehalemEx, 1);
  ASSERT_TRUE(sim->WriteMsr(0, kWFixed.control, 1).ok());
  ASSERT_TRUE(
      sim->WriteMsr(0, nehalemex::kWbox.GlobalCtlAddress(0), 1ull << 31).ok());
  // U-Box counter: ctr_en is bit 0 of 0xC00 itself.
  ASSERT_TRUE(sim->WriteMsr(0, 0xC10, kEn22 | 0x05).ok());
  ASSERT_TRUE(sim->WriteMsr(0, kGlobalCtl.address, kEnAll | 1).ok());
  ASSERT_TRUE(sim->AddFixedCounts(0, 123).ok());
  ASSERT_TRUE(sim->AddEvents(0, BoxType::kU, 0, 0x05, 4).ok());
  EXPECT_EQ(Read(*sim, 0, kWFixed.counter), 123u);
  EXPECT_EQ(Read(*sim, 0, 0xC11), 4u);
  EXPECT_FALSE(sim->AddEvents(0, BoxType::kC, 8, 0, 1).ok());
}

}  // namespace
}  // namespace uncore::sim
