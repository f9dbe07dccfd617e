#include "sdk/spec/event_spec.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uncore::spec {
namespace {

using ivytown::BoxType;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

EventSpec MustParse(std::string_view text) {
  absl::StatusOr<EventSpec> spec = ParseEventSpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return spec.ok() ? *std::move(spec) : EventSpec{};
}

std::string ErrorOf(std::string_view text) {
  absl::StatusOr<Spec> spec = ParseSpec(text);
  EXPECT_FALSE(spec.ok()) << text << " parsed but should not";
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST(EventSpecTest, NamedEventWithUmask) {
  EventSpec e = MustParse("imc/CAS_COUNT.RD");
  EXPECT_EQ(e.kind, EventSpec::Kind::kBoxEvent);
  EXPECT_EQ(e.box->type, BoxType::kImc);
  ASSERT_NE(e.event, nullptr);
  EXPECT_EQ(e.event->name, "CAS_COUNT");
  EXPECT_EQ(e.code, 0x04);
  EXPECT_EQ(e.umask, 0x03);
  EXPECT_TRUE(e.instances.all());
  EXPECT_EQ(e.Canonical(), "imc/CAS_COUNT.RD");
}

TEST(EventSpecTest, NamesAreCaseInsensitive) {
  EventSpec e = MustParse("IMC/cas_count.rd");
  EXPECT_EQ(e.Canonical(), "imc/CAS_COUNT.RD");
  EXPECT_EQ(
      MustParse("CBox/llc_lookup.data_read:FILTER_STATE=0x1f").Canonical(),
      "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f");
}

TEST(EventSpecTest, FilterModifiers) {
  EventSpec e = MustParse("cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f");
  EXPECT_EQ(e.Modifier("filter_state"), 0x1f);
  EventSpec t = MustParse("cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182");
  EXPECT_EQ(t.Modifier("filter_opc"), 0x182);
  EventSpec p = MustParse("pcu/FREQ_BAND0_CYCLES:filter_band0=20");
  EXPECT_EQ(p.Modifier("filter_band0"), 20u);
}

TEST(EventSpecTest, ModifiersSeparatedByCommaOrColon) {
  EventSpec a = MustParse("cbo/COUNTER0_OCCUPANCY:thresh=1,edge");
  EventSpec b = MustParse("cbo/COUNTER0_OCCUPANCY:thresh=1:edge");
  EXPECT_EQ(a.Canonical(), b.Canonical());
  EXPECT_EQ(a.Modifier("edge"), 1u);
}

TEST(EventSpecTest, FixedCounters) {
  EventSpec u = MustParse("ubox/UCLK");
  EXPECT_EQ(u.kind, EventSpec::Kind::kFixedCounter);
  EXPECT_EQ(u.box->type, BoxType::kUbox);
  EventSpec d = MustParse("imc/dclk");
  EXPECT_EQ(d.kind, EventSpec::Kind::kFixedCounter);
  // The kernel's spelling of the same counter.
  EventSpec k = MustParse("uncore_imc/event=0xff/");
  EXPECT_EQ(k.kind, EventSpec::Kind::kFixedCounter);
  EXPECT_EQ(k.Canonical(), "imc/DCLK");
}

TEST(EventSpecTest, RawKernelSyntax) {
  EventSpec e = MustParse("uncore_imc/event=0x04,umask=0x03/");
  EXPECT_EQ(e.box->type, BoxType::kImc);
  ASSERT_NE(e.event, nullptr);
  EXPECT_EQ(e.event->name, "CAS_COUNT");
  EXPECT_EQ(e.Canonical(), "imc/CAS_COUNT.RD");

  EventSpec t = MustParse("imc/event=0x04,umask=0x03,thresh=1,edge=1/");
  EXPECT_EQ(t.Modifier("thresh"), 1u);
  EXPECT_EQ(t.Modifier("edge"), 1u);
  EXPECT_EQ(t.Canonical(), "imc/CAS_COUNT.RD:thresh=0x1,edge");
  // Without the closing slash too.
  EXPECT_EQ(MustParse("imc/event=0x4,umask=0x3").Canonical(),
            "imc/CAS_COUNT.RD");
}

TEST(EventSpecTest, KernelPmuInstanceSuffix) {
  EventSpec e = MustParse("uncore_cbox_3/event=0x37,umask=0x1/");
  EXPECT_EQ(e.box->type, BoxType::kCbo);
  EXPECT_THAT(e.instances.ids, ElementsAre(3));
  EXPECT_EQ(e.Canonical(), "cbo[3]/LLC_VICTIMS.M_STATE");
  EXPECT_THAT(ErrorOf("uncore_cbox_15/event=0x37,umask=0x1/"),
              HasSubstr("instances 0-14"));
}

TEST(EventSpecTest, ExtendedEventCodeInKernelSyntax) {
  // The kernel's event_ext: bit 8 of event= is the extra select bit.
  EventSpec e =
      MustParse("uncore_qpi_0/event=0x138,match0=0x1c00,mask0=0x1fe0/");
  EXPECT_TRUE(e.extended);
  EXPECT_EQ(e.code, 0x38);
  ASSERT_NE(e.event, nullptr);
  EXPECT_EQ(e.event->name, "CTO_COUNT");
  EXPECT_THAT(ErrorOf("imc/event=0x104,umask=1/"), HasSubstr("8 bits"));
}

TEST(EventSpecTest, InstanceSelection) {
  EXPECT_THAT(MustParse("cbo[0-3]/CLOCKTICKS").instances.ids,
              ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(MustParse("imc[0,2]/CAS_COUNT.RD").instances.ids,
              ElementsAre(0, 2));
  EXPECT_THAT(MustParse("cbo[5,1-2,2]/CLOCKTICKS").instances.ids,
              ElementsAre(1, 2, 5));
  EXPECT_EQ(MustParse("imc[0,2]/CAS_COUNT.RD").Canonical(),
            "imc[0,2]/CAS_COUNT.RD");
  EXPECT_EQ(MustParse("cbo[0-2,4]/CLOCKTICKS").Canonical(),
            "cbo[0-2,4]/CLOCKTICKS");
  // Every instance named is the same as the default.
  EXPECT_TRUE(MustParse("imc[0-7]/CAS_COUNT.RD").instances.all());
  EXPECT_THAT(ErrorOf("imc[0-8]/CAS_COUNT.RD"), HasSubstr("instances 0-7"));
  EXPECT_THAT(ErrorOf("imc[3-1]/CAS_COUNT.RD"), HasSubstr("backwards"));
  EXPECT_THAT(ErrorOf("imc[1/CAS_COUNT.RD"), HasSubstr("']'"));
}

TEST(EventSpecTest, UmaskUnion) {
  EventSpec e = MustParse("imc/CAS_COUNT.RD|WR");
  EXPECT_EQ(e.umask, 0x0f);
  EXPECT_EQ(e.Canonical(), "imc/CAS_COUNT.RD|WR");
}

TEST(EventSpecTest, MetricsByPathAndBareName) {
  absl::StatusOr<Spec> m = ParseSpec("metric/MEM_BW_READS");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->is_metric());
  EXPECT_EQ(std::get<MetricSpec>(m->value).metric->name, "MEM_BW_READS");
  absl::StatusOr<Spec> bare = ParseSpec("mem_bw_reads");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(std::get<MetricSpec>(bare->value).metric->name, "MEM_BW_READS");
  absl::StatusOr<Spec> qualified = ParseSpec("metric/r2pcie.CYC_USED_DNEVEN");
  ASSERT_TRUE(qualified.ok()) << qualified.status();
  EXPECT_EQ(std::get<MetricSpec>(qualified->value).metric->box,
            BoxType::kR2pcie);
  EXPECT_THAT(ErrorOf("metric/CYC_USED_DNEVEN"), HasSubstr("several boxes"));
  EXPECT_THAT(ErrorOf("metric/MEM_BW_RAEDS"), HasSubstr("MEM_BW_READS"));
}

TEST(EventSpecTest, MetricParameters) {
  absl::StatusOr<Spec> m = ParseSpec("metric/PCT_CYCLES_DRAM_RANKx_IN_CKE:x=3");
  ASSERT_TRUE(m.ok()) << m.status();
  const MetricSpec& ms = std::get<MetricSpec>(m->value);
  ASSERT_EQ(ms.params.size(), 1u);
  EXPECT_EQ(ms.params[0].second, 3);
  EXPECT_THAT(ErrorOf("metric/PCT_CYCLES_DRAM_RANKx_IN_CKE:x=9"),
              HasSubstr("0..7"));
  EXPECT_THAT(ErrorOf("metric/MEM_BW_READS:x=1"),
              HasSubstr("takes no parameters"));
}

TEST(EventSpecTest, GenericPerfEvents) {
  EventSpec tsc = MustParse("msr/tsc/");
  EXPECT_EQ(tsc.kind, EventSpec::Kind::kGenericPerf);
  EXPECT_EQ(tsc.pmu, "msr");
  EXPECT_THAT(tsc.perf_terms, ElementsAre(PerfTerm{"tsc", std::nullopt}));
  EventSpec energy = MustParse("power/energy-pkg/");
  EXPECT_EQ(energy.perf_terms[0].name, "energy-pkg");
  EventSpec raw = MustParse("amd_df/event=0x7,umask=0x38/");
  EXPECT_THAT(raw.perf_terms,
              ElementsAre(PerfTerm{"event", 7}, PerfTerm{"umask", 0x38}));
  EXPECT_EQ(raw.Canonical(), "amd_df/event=0x7,umask=0x38/");
  EXPECT_THAT(ErrorOf("msr/tsc"), HasSubstr("closing '/'"));
  // A kernel alias of an uncore PMU is a perf event; an IvyTown event name
  // or a fixed counter in the same place stays an IvyTown event.
  EventSpec alias = MustParse("uncore_imc_0/cas_count_read/");
  EXPECT_EQ(alias.kind, EventSpec::Kind::kGenericPerf);
  EXPECT_EQ(alias.pmu, "uncore_imc_0");
  EXPECT_EQ(MustParse("uncore_imc/clockticks/").pmu, "uncore_imc");
  EXPECT_EQ(MustParse("uncore_cbox_3/event=0x37,umask=0x1/").kind,
            EventSpec::Kind::kBoxEvent);
}

TEST(EventSpecTest, ErrorsPointAtTheColumnAndSuggest) {
  const std::string unknown_event = ErrorOf("cbo/LLC_LOKUP.DATA_READ");
  EXPECT_THAT(unknown_event, HasSubstr("column 5"));
  EXPECT_THAT(unknown_event, HasSubstr("unknown cbo event 'LLC_LOKUP'"));
  EXPECT_THAT(unknown_event, HasSubstr("LLC_LOOKUP"));
  EXPECT_THAT(unknown_event, HasSubstr("\n      ^"));

  const std::string unknown_box = ErrorOf("imcc/CAS_COUNT.RD");
  EXPECT_THAT(unknown_box, HasSubstr("unknown box 'imcc'"));
  EXPECT_THAT(unknown_box, HasSubstr("imc"));

  const std::string unknown_umask = ErrorOf("imc/CAS_COUNT.READ");
  EXPECT_THAT(unknown_umask, HasSubstr("no unit mask 'READ'"));
  EXPECT_THAT(unknown_umask, HasSubstr("column 15"));

  const std::string unknown_mod = ErrorOf("imc/CAS_COUNT.RD:tresh=1");
  EXPECT_THAT(unknown_mod, HasSubstr("no modifier 'tresh'"));
  EXPECT_THAT(unknown_mod, HasSubstr("thresh"));
}

TEST(EventSpecTest, ValueWiderThanFieldIsAnError) {
  EXPECT_THAT(ErrorOf("imc/CAS_COUNT.RD:thresh=0x100"),
              HasSubstr("does not fit in the 8-bit field"));
  EXPECT_THAT(ErrorOf("ubox/EVENT_MSG.VLW_RCVD:thresh=0x20"),
              HasSubstr("5-bit"));
  EXPECT_THAT(ErrorOf("cbo/LLC_LOOKUP.DATA_READ:filter_state=0x40"),
              HasSubstr("6-bit"));
  EXPECT_THAT(ErrorOf("cbo/TOR_INSERTS.OPCODE:filter_opc=0x200"),
              HasSubstr("9-bit"));
  EXPECT_THAT(ErrorOf("imc/event=0x04,umask=0x103/"), HasSubstr("8 bits"));
  EXPECT_THAT(ErrorOf("imc/CAS_COUNT.RD:thresh=99999999999999999999999"),
              HasSubstr("64 bits"));
}

TEST(EventSpecTest, WrongUmaskIsAnError) {
  EXPECT_THAT(ErrorOf("imc/event=0x04,umask=0x40/"),
              HasSubstr("belong to no unit mask"));
  EXPECT_THAT(ErrorOf("imc/CAS_COUNT"), HasSubstr("needs a unit mask"));
  EXPECT_THAT(ErrorOf("imc/CAS_COUNT.RD:umask=0x4"), HasSubstr("not both"));
}

TEST(EventSpecTest, MissingRequiredFilterIsAnError) {
  const std::string e = ErrorOf("cbo/LLC_LOOKUP.DATA_READ");
  EXPECT_THAT(e, HasSubstr("filter_state"));
  EXPECT_THAT(ErrorOf("cbo/TOR_INSERTS.MISS_OPCODE"), HasSubstr("filter_opc"));
  EXPECT_THAT(ErrorOf("qpi/CTO_COUNT"), HasSubstr("match0"));
  // Another field of the same register is not the needed one.
  EXPECT_THAT(ErrorOf("cbo/LLC_LOOKUP.DATA_READ:tid_en,filter_tid=1"),
              HasSubstr("filter_state"));
}

// CTO_COUNT needs its packet match/mask: the QPI sub-fields alone are enough,
// without a whole-register match0 ... mask1.
TEST(EventSpecTest, QpiSubFieldsAloneSetTheMatchAndMask) {
  EventSpec e = MustParse("qpi/CTO_COUNT:match_opc=0x1,mask_opc=0xf");
  EXPECT_EQ(e.Modifier("match_opc"), 1u);
  EXPECT_EQ(e.Modifier("mask_opc"), 0xfu);
  EXPECT_EQ(e.Modifier("match0"), std::nullopt);
  MustParse("qpi/CTO_COUNT:match_rds=0x1,mask_rds=0xf");
  MustParse("uncore_qpi_0/event=0x138,match_mc=0xe,mask_mc=0xf/");
}

// notes/decisions.md #12: bit 23 is reserved in every counter control.
TEST(EventSpecTest, InvIsRefusedBecauseBit23IsReserved) {
  const std::string cbo = ErrorOf("cbo/CLOCKTICKS:inv:thresh=1");
  EXPECT_THAT(cbo, HasSubstr("'inv' cannot be used on IvyTown's C-Box"));
  EXPECT_THAT(cbo, HasSubstr("bit 23 of its counter control is reserved"));
  EXPECT_THAT(cbo, HasSubstr("SW must write to 0"));
  EXPECT_THAT(cbo, HasSubstr("count cbo/CLOCKTICKS and "
                             "cbo/CLOCKTICKS:thresh=N and subtract"));
  EXPECT_THAT(cbo, HasSubstr("column 16"));
  // Every box, in both syntaxes; the clock named is the box's own.
  EXPECT_THAT(ErrorOf("imc/CAS_COUNT.RD:thresh=1,inv"),
              HasSubstr("count imc/DCLOCKTICKS and imc/CAS_COUNT:thresh=N"));
  EXPECT_THAT(ErrorOf("ubox/event=0x42,umask=1,inv=1,thresh=1/"),
              HasSubstr("count ubox/UCLK and"));
  EXPECT_THAT(ErrorOf("pcu/POWER_STATE_OCCUPANCY.CORES_C0:thresh=5,inv"),
              HasSubstr("occ_invert"));
  for (const char* text :
       {"ha/REQUESTS.READS:thresh=1,inv", "irp/CLOCKTICKS:inv,thresh=1",
        "qpi/TxL_FLITS_G0.DATA:inv,thresh=1", "r2pcie/CLOCKTICKS:inv",
        "r3qpi/CLOCKTICKS:inv", "uncore_cbox_0/event=0x1f,inv=1,thresh=1/"}) {
    EXPECT_THAT(ErrorOf(text), HasSubstr("bit 23")) << text;
  }
}

TEST(EventSpecTest, EngineFieldsCannotBeSet) {
  EXPECT_THAT(ErrorOf("imc/CAS_COUNT.RD:en=1"),
              HasSubstr("programmed by the SDK"));
  EXPECT_THAT(ErrorOf("imc/CAS_COUNT.RD:rst"),
              HasSubstr("programmed by the SDK"));
}

TEST(EventSpecTest, DuplicatesAndTrailingText) {
  EXPECT_THAT(ErrorOf("imc/CAS_COUNT.RD:thresh=1,thresh=2"),
              HasSubstr("given twice"));
  EXPECT_THAT(ErrorOf("imc/CAS_COUNT.RD extra"), HasSubstr("unexpected text"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("empty"));
  EXPECT_THAT(ErrorOf("imc"), HasSubstr("is a box"));
  EXPECT_THAT(ErrorOf("nosuchthing"), HasSubstr("unknown metric or box"));
}

TEST(EventSpecTest, SplitSpecList) {
  EXPECT_THAT(SplitSpecList("imc/CAS_COUNT.RD,imc/CAS_COUNT.WR"),
              ElementsAre("imc/CAS_COUNT.RD", "imc/CAS_COUNT.WR"));
  EXPECT_THAT(
      SplitSpecList("uncore_imc/event=0x04,umask=0x03/,msr/tsc/;MEM_BW_READS"),
      ElementsAre("uncore_imc/event=0x04,umask=0x03/", "msr/tsc/",
                  "MEM_BW_READS"));
  EXPECT_THAT(
      SplitSpecList("cbo/COUNTER0_OCCUPANCY:thresh=1,edge,metric/MEM_BW_TOTAL"),
      ElementsAre("cbo/COUNTER0_OCCUPANCY:thresh=1,edge",
                  "metric/MEM_BW_TOTAL"));
  EXPECT_THAT(SplitSpecList(" a/b , ; "), ElementsAre("a/b"));
}

TEST(ParseMetricNameTest, BareQualifiedAndFullNamesAreTheSameMetric) {
  for (const char* text : {"MEM_BW_TOTAL", "imc.MEM_BW_TOTAL",
                           "metric/MEM_BW_TOTAL", "METRIC/imc.mem_bw_total"}) {
    absl::StatusOr<MetricSpec> m = ParseMetricName(text);
    ASSERT_TRUE(m.ok()) << text << ": " << m.status();
    EXPECT_EQ(m->Canonical(), "metric/imc.MEM_BW_TOTAL") << text;
  }
}

TEST(ParseMetricNameTest, AnEventOrAnUnknownNameIsAnError) {
  absl::StatusOr<MetricSpec> event = ParseMetricName("imc/CAS_COUNT.RD");
  ASSERT_FALSE(event.ok());
  EXPECT_EQ(event.status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<MetricSpec> unknown = ParseMetricName("NO_SUCH_METRIC");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace uncore::spec
