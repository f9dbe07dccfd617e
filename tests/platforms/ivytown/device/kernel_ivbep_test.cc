// What Linux's ivbep driver does with IvyTown events beyond its event masks
// (notes/decisions.md #32, #33): filters it would not program are refused,
// groups it would schedule onto a counter the manual forbids are refused,
// and a counter restriction it does not know but the group honours is a
// warning.  Against the fixture sysfs tree of a 2-socket IvyTown.
#include "sdk/platforms/ivytown/device/kernel_ivbep.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"

namespace uncore::devices::perf {
namespace {

using ivytown::BoxType;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

const PmuCatalog& Ivt2s() {
  static const PmuCatalog* catalog = [] {
    absl::StatusOr<PmuCatalog> c =
        DiscoverPmus(std::string(UNCORE_PERF_FIXTURES) + "/ivt2s");
    EXPECT_TRUE(c.ok()) << common::StatusMessage(c.status());
    return new PmuCatalog(c.ok() ? *std::move(c) : PmuCatalog{});
  }();
  return *catalog;
}

ProgramRequest Request(std::initializer_list<std::string_view> specs,
                       bool multiplex = false) {
  ProgramRequest request;
  for (std::string_view s : specs) {
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(s);
    EXPECT_TRUE(e.ok()) << common::StatusMessage(e.status());
    if (e.ok()) request.events.push_back(*e);
  }
  request.sockets = {0};
  request.allow_multiplexing = multiplex;
  return request;
}

// The perf backend's verdict on `specs`: its warnings, or its error.
absl::StatusOr<std::vector<std::string>> Review(
    std::initializer_list<std::string_view> specs, bool multiplex = false) {
  const ProgramRequest request = Request(specs, multiplex);
  absl::StatusOr<std::vector<PerfCounter>> plan =
      PlanPerfCounters(request, Ivt2s());
  if (!plan.ok()) return plan.status();
  return ReviewKernelPlacement(request, *plan);
}

std::string ErrorOf(std::initializer_list<std::string_view> specs) {
  absl::StatusOr<std::vector<std::string>> r = Review(specs);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : common::StatusMessage(r.status());
}

TEST(KernelIvbepTest, PcuBandFilterOnlyForFreqBandEventsAndTheirByte) {
  EXPECT_THAT(ErrorOf({"pcu/DEMOTIONS_CORE0:filter_band0=0x3"}),
              AllOf(HasSubstr("without filter_band0"),
                    HasSubstr("only for FREQ_BAND0..3_CYCLES"),
                    HasSubstr("UNCORE_BACKEND=direct")));
  EXPECT_THAT(
      ErrorOf({"pcu/FREQ_BAND1_CYCLES:filter_band1=20,filter_band0=20"}),
      HasSubstr("without filter_band0 ("));
  absl::StatusOr<std::vector<PerfCounter>> ok = PlanPerfCounters(
      Request({"pcu/FREQ_BAND1_CYCLES:filter_band1=20"}), Ivt2s());
  ASSERT_TRUE(ok.ok()) << common::StatusMessage(ok.status());
  EXPECT_EQ((*ok)[0].config.config1, uint64_t{20} << 8);
}

TEST(KernelIvbepTest, QpiMatchMaskOnlyForCtoCount) {
  EXPECT_THAT(ErrorOf({"qpi[0]/TxL_FLITS_G0.DATA:match0=0x8,mask0=0x8"}),
              AllOf(HasSubstr("without match0, mask0"),
                    HasSubstr("only for CTO_COUNT")));
  EXPECT_TRUE(Review({"qpi[0]/CTO_COUNT:match_opc=0x1,mask_opc=0xf"}).ok());
}

TEST(KernelIvbepTest, CboFiltersOnlyForTheEventsOfTheExtraRegisterTable) {
  EXPECT_THAT(ErrorOf({"cbo[0]/LLC_VICTIMS.M_STATE:filter_state=0x1"}),
              HasSubstr("filter_state (the driver programs it only for "
                        "LLC_LOOKUP"));
  // The OR of two unit masks is not in the table.
  EXPECT_THAT(ErrorOf({"cbo[0]/LLC_LOOKUP.DATA_READ|WRITE:filter_state=0x1f"}),
              HasSubstr("without filter_state"));
  EXPECT_THAT(
      ErrorOf({"cbo[0]/TOR_INSERTS.OPCODE:filter_opc=0x182,filter_nid=0x1"}),
      AllOf(HasSubstr("without filter_nid"), Not(HasSubstr("filter_opc ("))));
  for (std::string_view ok :
       {"cbo[0]/TOR_INSERTS.NID_OPCODE:filter_opc=0x182,filter_nid=0x1",
        "cbo[0]/TOR_OCCUPANCY.MISS_OPCODE:filter_opc=0x182,filter_nc=1",
        "cbo[0]/LLC_LOOKUP.NID:filter_state=0x1f,filter_nid=0x2",
        "cbo[0]/LLC_VICTIMS.NID:filter_nid=0x2",
        "cbo[0]/LLC_VICTIMS.M_STATE:tid_en,filter_tid=0x3"}) {
    absl::StatusOr<std::vector<std::string>> r = Review({ok});
    EXPECT_TRUE(r.ok()) << ok << ": " << common::StatusMessage(r.status());
  }
}

TEST(KernelIvbepTest, ConstraintTablesAndTheScheduler) {
  EXPECT_EQ(KernelCounterMask(BoxType::kCbo, 0x0134, 4), 0x3);
  EXPECT_EQ(KernelCounterMask(BoxType::kCbo, 0x0203, 4), 0xf);  // TxR_STARVED
  EXPECT_EQ(KernelCounterMask(BoxType::kR2pcie, 0x0113, 4), 0xf);
  EXPECT_EQ(KernelCounterMask(BoxType::kR2pcie, 0x0123, 4), 0x3);
  EXPECT_EQ(KernelCounterMask(BoxType::kR3qpi, 0x13, 3), 0x1);
  EXPECT_EQ(KernelCounterMask(BoxType::kIrp, 0x00, 4), 0xf);
  // Constrained events first, each on its lowest free counter.
  const uint8_t a[] = {0x3, 0xf, 0x3};
  EXPECT_THAT(PredictKernelCounters(a), ElementsAre(0, 2, 1));
  const uint8_t b[] = {0xf, 0xf};
  EXPECT_THAT(PredictKernelCounters(b), ElementsAre(0, 1));
  const uint8_t c[] = {0x1, 0x1};
  EXPECT_THAT(PredictKernelCounters(c), ElementsAre(0, -1));
  EXPECT_EQ(CounterMaskText(0x3), "0-1");
  EXPECT_EQ(CounterMaskText(0xd), "0,2-3");
}

TEST(KernelIvbepTest, GroupThatBreaksAManualRestrictionIsRefused) {
  // TxR_STARVED: manual (and Intel's list) counters 0-1, the driver 0-3.
  // After two events constrained to 0-1 it would get counter 2.
  EXPECT_THAT(
      ErrorOf({"cbo[0]/LLC_VICTIMS.M_STATE", "cbo[0]/TxR_INSERTS.AD_CACHE",
               "cbo[0]/TxR_STARVED.AK_BOTH"}),
      AllOf(HasSubstr("cbo[0]/TxR_STARVED.AK_BOTH: the manual allows "
                      "only counters 0-1"),
            HasSubstr("would place it on counter 2"),
            HasSubstr("alone it gets counter 0"),
            HasSubstr("UNCORE_BACKEND=direct")));
  // R2PCIe RxR_OCCUPANCY: counter 0 only; the driver has no constraint.
  // Listed second after an unconstrained event, it would get counter 1.
  EXPECT_THAT(
      ErrorOf({"r2pcie/CLOCKTICKS", "r2pcie/RxR_OCCUPANCY.DRS"}),
      AllOf(HasSubstr("allows only counter 0 for"), HasSubstr("counter 1")));
}

TEST(KernelIvbepTest, RestrictionTheGroupHonoursIsAWarning) {
  absl::StatusOr<std::vector<std::string>> alone =
      Review({"r2pcie/RxR_OCCUPANCY.DRS", "r2pcie/CLOCKTICKS"});
  ASSERT_TRUE(alone.ok()) << common::StatusMessage(alone.status());
  ASSERT_THAT(*alone, SizeIs(1));
  EXPECT_THAT((*alone)[0],
              AllOf(HasSubstr("r2pcie/RxR_OCCUPANCY.DRS: the manual allows "
                              "only counter 0"),
                    HasSubstr("may use counters 0-3"),
                    HasSubstr("goes on counter 0, which is allowed")));
  // With multiplexing the placement cannot be predicted: a warning, even
  // for the order that would be refused in one group.
  absl::StatusOr<std::vector<std::string>> mux =
      Review({"r2pcie/CLOCKTICKS", "r2pcie/RxR_OCCUPANCY.DRS"},
             /*multiplex=*/true);
  ASSERT_TRUE(mux.ok()) << common::StatusMessage(mux.status());
  ASSERT_THAT(*mux, SizeIs(1));
  EXPECT_THAT((*mux)[0], HasSubstr("cannot be predicted"));
  // Events the driver schedules as the manual says: nothing to say.
  absl::StatusOr<std::vector<std::string>> plain =
      Review({"imc/CAS_COUNT.RD", "cbo/LLC_VICTIMS.M_STATE", "ubox/UCLK"});
  ASSERT_TRUE(plain.ok()) << common::StatusMessage(plain.status());
  EXPECT_THAT(*plain, IsEmpty());
}

// decisions.md #34: the driver cannot set the HA's q_occ_rst.
TEST(KernelIvbepTest, HaOccupancyWithoutQOccRstIsAWarning) {
  absl::StatusOr<std::vector<std::string>> r =
      Review({"ha/BT_OCCUPANCY.LOCAL", "ha/REQUESTS.READS"});
  ASSERT_TRUE(r.ok()) << common::StatusMessage(r.status());
  ASSERT_THAT(*r, SizeIs(1));
  EXPECT_THAT((*r)[0], AllOf(HasSubstr("ha/BT_OCCUPANCY.LOCAL: the manual "
                                       "asks for q_occ_rst"),
                             HasSubstr("drops bit 16")));
}

TEST(KernelIvbepTest, CaveatsForDescribe) {
  auto caveats = [](std::string_view text) {
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(text);
    EXPECT_TRUE(e.ok()) << common::StatusMessage(e.status());
    absl::StatusOr<spec::Encoding> enc = spec::EncodeEvent(*e);
    EXPECT_TRUE(enc.ok()) << common::StatusMessage(enc.status());
    return PerfCaveats(*e, *enc);
  };
  EXPECT_THAT(caveats("pcu/DEMOTIONS_CORE3:filter_band0=0x8"),
              ElementsAre(AllOf(HasSubstr("perf would lose filter_band0"),
                                HasSubstr("refuses this event"))));
  EXPECT_THAT(caveats("cbo/QLRU.AGE0"),
              ElementsAre(AllOf(HasSubstr("allows only counters 0-1"),
                                HasSubstr("may schedule it on counters 0-3"))));
  EXPECT_THAT(caveats("ha/TxR_BL_OCCUPANCY.SCHED0"),
              ElementsAre(HasSubstr("q_occ_rst")));
  EXPECT_THAT(caveats("imc/CAS_COUNT.RD"), IsEmpty());
  EXPECT_THAT(caveats("imc/DCLK"), IsEmpty());
  // decisions.md #37: the disputed widths.
  EXPECT_THAT(caveats("ubox/UCLK"),
              ElementsAre(HasSubstr("both 44 and 48 bits wide")));
  EXPECT_THAT(caveats("irp/CLOCKTICKS"),
              Contains(HasSubstr("driver assumes 48")));
}

}  // namespace
}  // namespace uncore::devices::perf
