// Pins the Nehalem-EX / Westmere-EX register model against its sources: the
// Xeon 7500 uncore guide (pp. 2-14, 2-49), the kernel's nhmex driver and
// LIKWID (the addresses below are the ones those sources list).
#include "sdk/platforms/nehalemex/model/box_descriptors.h"

#include <cstdint>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace uncore::nehalemex {
namespace {

TEST(NehalemExDescriptors, CboxBasesAtTheirIrregularOffsets) {
  // C0..C9 GLOBAL_CTL: kernel offsets {0,0x80,0x40,0xc0,0x20,0xa0,0x60,0xe0,
  // 0x240,0x2c0} from 0xD00; LIKWID lists the same ten addresses.
  const uint32_t expected[10] = {0xD00, 0xD80, 0xD40, 0xDC0, 0xD20,
                                 0xDA0, 0xD60, 0xDE0, 0xF40, 0xFC0};
  for (int i = 0; i < 10; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(kCbox.GlobalCtlAddress(i), expected[i]);
    EXPECT_EQ(kCbox.StatusAddress(i), expected[i] + 1);
    EXPECT_EQ(kCbox.OvfCtlAddress(i), expected[i] + 2);
    EXPECT_EQ(kCbox.ControlAddress(i, 0), expected[i] + 0x10);
    EXPECT_EQ(kCbox.CounterAddress(i, 0), expected[i] + 0x11);
    EXPECT_EQ(kCbox.ControlAddress(i, 5), expected[i] + 0x1A);
    EXPECT_EQ(kCbox.CounterAddress(i, 5), expected[i] + 0x1B);
  }
  EXPECT_EQ(kCbox.NumInstances(Variant::kNehalemEx), 8);
  EXPECT_EQ(kCbox.NumInstances(Variant::kWestmereEx), 10);
  EXPECT_EQ(kCbox.num_counters, 6);
  // C8 exists on Westmere-EX only.
  EXPECT_EQ(FindRegister(Variant::kNehalemEx, 0xF40), nullptr);
  ASSERT_NE(FindRegister(Variant::kWestmereEx, 0xF40), nullptr);
  EXPECT_EQ(FindRegister(Variant::kWestmereEx, 0xF40)->name,
            "C8_MSR_PMON_GLOBAL_CTL");
  EXPECT_EQ(FindRegister(Variant::kWestmereEx, 0xFDB)->name,
            "C9_MSR_PMON_CTR5");
}

TEST(NehalemExDescriptors, CboxGlobalControlStatusOverflowFields) {
  // p. 2-14: ctr_en, ov and clr_ov are bits 5:0, one per counter.
  EXPECT_EQ(kCbox.CtrEnMask(), 0x3Fu);
  const RegisterInfo* ovf = FindRegister(Variant::kNehalemEx, 0xD02);
  ASSERT_NE(ovf, nullptr);
  EXPECT_EQ(ovf->writable, 0x3Fu);
  EXPECT_EQ(FindRegister(Variant::kNehalemEx, 0xD01)->writable, 0u);
}

TEST(NehalemExDescriptors, SboxMatchMaskRegisters) {
  EXPECT_EQ(kSbox.match_mask[0].mm_cfg, 0xE48u);
  EXPECT_EQ(kSbox.match_mask[0].match, 0xE49u);
  EXPECT_EQ(kSbox.match_mask[0].mask, 0xE4Au);
  EXPECT_EQ(kSbox.match_mask[1].mm_cfg, 0xE58u);
  EXPECT_EQ(kSbox.match_mask[1].match, 0xE59u);
  EXPECT_EQ(kSbox.match_mask[1].mask, 0xE5Au);
  EXPECT_EQ(kMmCfgEnable.mask(), uint64_t{1} << 63);
  EXPECT_EQ(kSbox.GlobalCtlAddress(1), 0xCC0u);
  EXPECT_EQ(kSbox.ControlAddress(0, 0), 0xC50u);
  EXPECT_EQ(kSboxToRProgEv, 0);
  EXPECT_EQ(FindRegister(Variant::kNehalemEx, 0xE48)->name, "S0_MSR_MM_CFG");
}

TEST(NehalemExDescriptors, OtherMatchMaskRegisters) {
  EXPECT_EQ(kBbox.match_mask[0].match, 0xE45u);
  EXPECT_EQ(kBbox.match_mask[0].mask, 0xE46u);
  EXPECT_EQ(kBbox.match_mask[1].match, 0xE4Du);
  EXPECT_EQ(kBbox.match_mask[0].mm_cfg, 0u);
  EXPECT_EQ(kMbox.match_mask[0].mm_cfg, 0xE54u);
  EXPECT_EQ(kMbox.match_mask[1].mm_cfg, 0xE5Cu);
  EXPECT_EQ(kMbox.match_mask[1].mask, 0xE5Eu);
  EXPECT_EQ(RboxXbrMmCfg(0, 1), 0xE60u);
  EXPECT_EQ(RboxXbrMmCfg(3, 2), 0xE7Cu);
  EXPECT_EQ(RboxXbrMmCfg(4, 1), 0xE80u);
  EXPECT_EQ(RboxQlxCfg(5), 0xE2Du);
  EXPECT_EQ(RboxIperfCfg0(4), 0xE08u);
  EXPECT_EQ(RboxIperfCfg1(7), 0xE2Bu);
}

TEST(NehalemExDescriptors, UboxGlobalControlBits) {
  EXPECT_EQ(kGlobalCtl.address, 0xC00u);
  EXPECT_EQ(kGlobalCtl.en_all.mask(), uint64_t{1} << 28);
  EXPECT_EQ(kGlobalCtl.rst_all.mask(), uint64_t{1} << 29);
  EXPECT_EQ(kGlobalCtl.frz_all.mask(), uint64_t{1} << 31);
  EXPECT_EQ(kGlobalCtl.status_address, 0xC01u);
  EXPECT_EQ(kGlobalCtl.ovf_ctl_address, 0xC02u);
  EXPECT_EQ(kUbox.ControlAddress(0, 0), 0xC10u);
  EXPECT_EQ(kUbox.CounterAddress(0, 0), 0xC11u);
  // Bit 30 is reserved.
  EXPECT_EQ(kGlobalCtl.writable_mask() & (uint64_t{1} << 30), 0u);
}

TEST(NehalemExDescriptors, WboxFixedCounter) {
  EXPECT_EQ(kWFixed.counter, 0x394u);
  EXPECT_EQ(kWFixed.control, 0x395u);
  EXPECT_EQ(kWFixed.global_bit.mask(), uint64_t{1} << 31);
  EXPECT_EQ(kWbox.GlobalCtlAddress(0), 0xC80u);
  EXPECT_EQ(kWbox.ControlAddress(0, 0), 0xC90u);
  EXPECT_EQ(kWbox.CounterAddress(0, 3), 0xC97u);
  EXPECT_EQ(kWbox.CtrEnMask(), 0x8000000Fu);
}

TEST(NehalemExDescriptors, OtherBoxes) {
  EXPECT_EQ(kBbox.GlobalCtlAddress(1), 0xC60u);
  EXPECT_EQ(kBbox.ControlAddress(1, 3), 0xC76u);
  EXPECT_EQ(kMbox.GlobalCtlAddress(1), 0xCE0u);
  EXPECT_EQ(kMbox.CounterAddress(1, 3), 0xCF7u);
  EXPECT_EQ(kMbox.GlobalCtlAddress(0) + kMboxSubRegisters[6].offset, 0xCABu);
  EXPECT_EQ(kRbox.GlobalCtlAddress(1), 0xE20u);
  EXPECT_EQ(kRbox.CounterAddress(1, 7), 0xE3Fu);
  for (const BoxDescriptor* box : kBoxes) {
    EXPECT_NE(box->FindField("en"), nullptr) << box->name;
  }
}

TEST(NehalemExDescriptors, ControlLayouts) {
  EXPECT_EQ(kCbox.FieldBits("en").lo, 22);
  EXPECT_EQ(kCbox.FieldBits("thresh").mask(), 0xFF000000u);
  EXPECT_EQ(kBbox.FieldBits("ev_sel").mask(), 0x3Eu);
  EXPECT_EQ(kBbox.FieldBits("en").lo, 0);
  EXPECT_EQ(kRbox.FieldBits("pmi_en").lo, 6);
  EXPECT_EQ(kMbox.FieldBits("inc_sel").mask(), 0x3E00u);
  EXPECT_EQ(kMbox.FieldBits("set_flag_sel").mask(), 0x380000u);
  EXPECT_EQ(Fvc(Variant::kNehalemEx).EventField(0).mask(), 0x3800u);
  EXPECT_EQ(Fvc(Variant::kWestmereEx).EventField(0).mask(), 0x7000u);
}

TEST(NehalemExDescriptors, KernelFormatNames) {
  EXPECT_NE(kCbox.FindFormat("thresh"), nullptr);
  EXPECT_EQ(kBbox.FindFormat("event")->bits.mask(), 0x3Eu);
  EXPECT_EQ(kBbox.FindFormat("counter")->bits.mask(), 0xC0u);
  EXPECT_EQ(kMbox.FindFormat("pld")->bits.lo, 32);
  EXPECT_EQ(kMbox.FindFormat("filter_mask")->word, 2);
  EXPECT_EQ(kRbox.FindFormat("xbr_mm_cfg")->bits.lo, 32);
  EXPECT_EQ(kUbox.FindFormat("umask"), nullptr);
  EXPECT_EQ(FindBoxByKernelName("sbox"), &kSbox);
  EXPECT_EQ(KernelPmuName(kCbox, 3), "uncore_cbox_3");
  EXPECT_EQ(KernelPmuName(kWbox, 0), "uncore_wbox");
}

TEST(NehalemExDescriptors, AddressesUniqueAndSorted) {
  for (Variant v : {Variant::kNehalemEx, Variant::kWestmereEx}) {
    std::set<uint32_t> seen;
    uint32_t last = 0;
    for (const RegisterInfo& r : AllRegisters(v)) {
      EXPECT_TRUE(seen.insert(r.address).second) << r.name;
      EXPECT_GE(r.address, last);
      last = r.address;
    }
  }
}

TEST(NehalemExDescriptors, PlatformNames) {
  EXPECT_EQ(VariantNamed("nehalemex"), Variant::kNehalemEx);
  EXPECT_EQ(VariantNamed("westmereex"), Variant::kWestmereEx);
  // Aliases are the identity record's, resolved before (backends_test).
  EXPECT_EQ(VariantNamed("xeon7500"), std::nullopt);
  EXPECT_EQ(VariantNamed("ivytown"), std::nullopt);
  EXPECT_EQ(VariantFromModel(6, 0x2E), Variant::kNehalemEx);
  EXPECT_EQ(VariantFromModel(6, 0x2F), Variant::kWestmereEx);
  EXPECT_EQ(VariantFromModel(6, 0x3E), std::nullopt);
}

}  // namespace
}  // namespace uncore::nehalemex
