#include "sdk/spec/encoder.h"

#include <string>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"
#include "tests/testing/catalog_specs.h"

namespace uncore::spec {
namespace {

using ivytown::BoxType;
using ::testing::AllOf;
using ::testing::HasSubstr;

Encoding MustEncode(std::string_view text) {
  absl::StatusOr<EventSpec> spec = ParseEventSpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  if (!spec.ok()) return {};
  absl::StatusOr<Encoding> enc = EncodeEvent(*spec);
  EXPECT_TRUE(enc.ok()) << text << ": " << enc.status();
  return enc.ok() ? *std::move(enc) : Encoding{};
}

std::string EncodeError(std::string_view text) {
  absl::StatusOr<EventSpec> spec = ParseEventSpec(text);
  if (!spec.ok()) return std::string(spec.status().message());
  absl::StatusOr<Encoding> enc = EncodeEvent(*spec);
  EXPECT_FALSE(enc.ok()) << text;
  return enc.ok() ? "" : std::string(enc.status().message());
}

// The manual's own example (section 2.1.2 c, with the code corrected from
// 0x03 to 0x37): LLC_VICTIMS.M_STATE is ev_sel 0x37, umask 0x01, en set.
TEST(EncoderTest, ManualExampleLlcVictimsMState) {
  Encoding enc = MustEncode("cbo/LLC_VICTIMS.M_STATE");
  EXPECT_EQ(enc.box->type, BoxType::kCbo);
  EXPECT_EQ(enc.control & 0xff, 0x37u);
  EXPECT_EQ((enc.control >> 8) & 0xff, 0x01u);
  EXPECT_EQ((enc.control >> 22) & 1, 1u);
  EXPECT_EQ(enc.control, 0x00400137u);
  EXPECT_TRUE(enc.filters.empty());
}

TEST(EncoderTest, ImcCasCountRead) {
  Encoding enc = MustEncode("imc/CAS_COUNT.RD");
  EXPECT_EQ(enc.control, 0x00400304u);
  EXPECT_EQ(enc.counter_mask, 0x0f);
  EXPECT_FALSE(enc.fixed_counter);
}

TEST(EncoderTest, LlcLookupStateFilterGoesToFilter0) {
  Encoding enc = MustEncode("cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f");
  EXPECT_EQ(enc.control, 0x00400334u);
  ASSERT_EQ(enc.filters.size(), 1u);
  const auto& reg = enc.box->filters[enc.filters[0].filter];
  EXPECT_EQ(reg.offset, 0x14u);  // Cn_MSR_PMON_BOX_FILTER (FILTER0)
  EXPECT_EQ(enc.filters[0].value, uint64_t{0x1f} << 17);
  EXPECT_EQ(enc.filters[0].mask, uint64_t{0x3f} << 17);
}

TEST(EncoderTest, TorOpcodeFilterGoesToFilter1) {
  Encoding enc = MustEncode("cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182");
  ASSERT_EQ(enc.filters.size(), 1u);
  const auto& reg = enc.box->filters[enc.filters[0].filter];
  EXPECT_EQ(reg.offset, 0x1Au);  // Cn_MSR_PMON_BOX_FILTER1
  EXPECT_EQ(enc.filters[0].value, uint64_t{0x182} << 20);
}

TEST(EncoderTest, PcuBandFilter) {
  Encoding enc = MustEncode("pcu/FREQ_BAND0_CYCLES:filter_band0=20");
  ASSERT_EQ(enc.filters.size(), 1u);
  EXPECT_EQ(enc.filters[0].value, 20u);
  EXPECT_EQ(enc.filters[0].mask, 0xffu);
  EXPECT_EQ(enc.control & 0xff, 0x0bu);
}

TEST(EncoderTest, ThresholdAndEdge) {
  Encoding enc = MustEncode("imc/event=0x04,umask=0x03,thresh=1,edge=1/");
  EXPECT_EQ(enc.control, 0x01440304u);
  Encoding occ = MustEncode("cbo/COUNTER0_OCCUPANCY:thresh=1,edge");
  EXPECT_EQ((occ.control >> 23) & 1, 0u);  // reserved (decisions.md #12)
  EXPECT_EQ(occ.control >> 24, 1u);
  EXPECT_THAT(EncodeError("imc/CAS_COUNT.RD:edge"), HasSubstr("thresh=1"));
}

TEST(EncoderTest, ExtendedSelectBit) {
  Encoding enc = MustEncode("qpi/CTO_COUNT:match0=0x1c00,mask0=0x1fe0");
  EXPECT_EQ(enc.control, 0x00600038u);  // ext (bit 21) + en (bit 22) + 0x38
  ASSERT_EQ(enc.filters.size(), 2u);
  for (const FilterValue& fv : enc.filters) {
    EXPECT_TRUE(enc.box->filters[fv.filter].in_aux_function);
  }
}

TEST(EncoderTest, QpiWholeRegisterAndSubfieldsMustAgree) {
  Encoding ok =
      MustEncode("qpi/CTO_COUNT:match0=0x1c00,match_mc=0xe,mask0=0x1e00");
  EXPECT_EQ(ok.filters[0].value, 0x1c00u);
  EXPECT_THAT(
      EncodeError("qpi/CTO_COUNT:match0=0x1c00,match_mc=0x1,mask0=0x1e00"),
      HasSubstr("disagrees"));
}

TEST(EncoderTest, QpiSubFieldsAloneProgramMatchAndMask) {
  Encoding enc = MustEncode("qpi/CTO_COUNT:match_opc=0x1,mask_opc=0xf");
  ASSERT_EQ(enc.filters.size(), 2u);
  EXPECT_EQ(enc.filters[0].filter, 0);  // PKT_MATCH0: OPC is 8:5
  EXPECT_EQ(enc.filters[0].value, 0x20u);
  EXPECT_EQ(enc.filters[0].mask, 0x1e0u);
  EXPECT_EQ(enc.filters[1].filter, 2);  // PKT_MASK0
  EXPECT_EQ(enc.filters[1].value, 0x1e0u);
}

// decisions.md #36: occ_invert/occ_edge only act on occupancy events.
TEST(EncoderTest, PcuOccModifiersNeedAnOccupancyEvent) {
  Encoding occ = MustEncode(
      "pcu/POWER_STATE_OCCUPANCY.CORES_C0:thresh=5,occ_invert,occ_edge");
  EXPECT_EQ(occ.control >> 30, 0x3u);
  EXPECT_THAT(EncodeError("pcu/FREQ_MAX_POWER_CYCLES:thresh=1,occ_invert"),
              AllOf(HasSubstr("occ_invert acts only on the PCU's occupancy"),
                    HasSubstr("POWER_STATE_OCCUPANCY")));
  EXPECT_THAT(EncodeError("pcu/event=0x5,occ_edge=1,thresh=1/"),
              HasSubstr("occ_edge acts only"));
}

TEST(EncoderTest, ReservedFilterBitsAreRefused) {
  // PKT_MATCH0 bits 30:18 and 2:0 are reserved (must write 0).
  EXPECT_THAT(EncodeError("qpi/CTO_COUNT:match0=0xffffffff,mask0=0x1fe0"),
              HasSubstr("reserved bits"));
}

TEST(EncoderTest, FilterTidNeedsTidEn) {
  EXPECT_THAT(EncodeError("cbo/CLOCKTICKS:filter_tid=0x3"),
              HasSubstr("tid_en"));
  Encoding enc = MustEncode("cbo/CLOCKTICKS:filter_tid=0x3,tid_en");
  EXPECT_EQ((enc.control >> 19) & 1, 1u);
}

TEST(EncoderTest, FixedCounters) {
  Encoding u = MustEncode("ubox/UCLK");
  EXPECT_TRUE(u.fixed_counter);
  EXPECT_EQ(u.control, 1u << 22);
  EXPECT_EQ(u.counter_mask, 0);
  Encoding d = MustEncode("imc[1]/DCLK");
  EXPECT_TRUE(d.fixed_counter);
  EXPECT_EQ(d.control, 1u << 22);
}

TEST(EncoderTest, CounterConstraintsComeFromTheCatalog) {
  EXPECT_EQ(MustEncode("cbo/RxR_OCCUPANCY.IRQ").counter_mask, 0x1);
  EXPECT_EQ(MustEncode("cbo/RING_AD_USED.CW").counter_mask, 0xc);
  EXPECT_EQ(MustEncode("cbo/CLOCKTICKS").counter_mask, 0xf);
}

TEST(EncoderTest, RawCodeNotInCatalogIsNoted) {
  Encoding enc = MustEncode("r2pcie/event=0x7e/");
  EXPECT_EQ(enc.control, 0x0040007eu);
  EXPECT_EQ(enc.counter_mask, 0x0f);
  ASSERT_FALSE(enc.notes.empty());
  EXPECT_THAT(enc.notes[0], HasSubstr("not in the catalog"));
}

TEST(EncoderTest, GenericPerfIsNotEncodedHere) {
  absl::StatusOr<EventSpec> spec = ParseEventSpec("msr/tsc/");
  ASSERT_TRUE(spec.ok());
  absl::StatusOr<Encoding> enc = EncodeEvent(*spec);
  EXPECT_EQ(enc.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(EncoderTest, ControlNeverSetsReservedBits) {
  for (const char* text : {"cbo/COUNTER0_OCCUPANCY:thresh=0xff,edge",
                           "ubox/LOCK_CYCLES:thresh=0x1f,edge",
                           "qpi/TxL_FLITS_G0.DATA:thresh=0xff,edge",
                           "ha/REQUESTS.READS:thresh=3"}) {
    Encoding enc = MustEncode(text);
    EXPECT_EQ(enc.control & ~enc.box->control_writable_mask, 0u) << text;
  }
}

// Every catalog entry encodes, and decoding its encoding gives back a spec
// that encodes identically.
TEST(EncoderTest, EveryCatalogEntryEncodesAndRoundTrips) {
  int checked = 0;
  for (const std::string& text : testing::EveryCatalogSpec()) {
    absl::StatusOr<EventSpec> spec = ParseEventSpec(text);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status();
    absl::StatusOr<Encoding> enc = EncodeEvent(*spec);
    ASSERT_TRUE(enc.ok()) << text << ": " << enc.status();
    EXPECT_EQ(enc->control & ~enc->box->control_writable_mask, 0u) << text;
    EXPECT_NE(enc->counter_mask, 0) << text;
    // Canonical spelling parses back to the same encoding.
    absl::StatusOr<EventSpec> again = ParseEventSpec(spec->Canonical());
    ASSERT_TRUE(again.ok()) << spec->Canonical() << ": " << again.status();
    absl::StatusOr<Encoding> enc2 = EncodeEvent(*again);
    ASSERT_TRUE(enc2.ok()) << enc2.status();
    EXPECT_EQ(enc2->control, enc->control) << text;
    EXPECT_EQ(enc2->filters, enc->filters) << text;
    // Register values decode back to the same event.
    absl::StatusOr<EventSpec> decoded =
        DecodeEvent(*enc->box, false, enc->control, enc->filters);
    ASSERT_TRUE(decoded.ok()) << text << ": " << decoded.status();
    EXPECT_EQ(decoded->event, spec->event) << text;
    absl::StatusOr<Encoding> enc3 = EncodeEvent(*decoded);
    ASSERT_TRUE(enc3.ok()) << decoded->Canonical() << ": " << enc3.status();
    EXPECT_EQ(enc3->control, enc->control) << text;
    EXPECT_EQ(enc3->filters, enc->filters) << text;
    ++checked;
  }
  EXPECT_GT(checked, 1000);
}

TEST(EncoderTest, DecodeRejectsReservedBitsAndDisabledCounters) {
  const ivytown::BoxDescriptor& imc = ivytown::Box(BoxType::kImc);
  EXPECT_FALSE(DecodeEvent(imc, false, 0x00000304, {}).ok());  // en clear
  EXPECT_FALSE(DecodeEvent(imc, false, 0x00610304, {}).ok());  // rsv 21
  absl::StatusOr<EventSpec> ok = DecodeEvent(imc, false, 0x00400304, {});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->Canonical(), "imc/CAS_COUNT.RD");
}

}  // namespace
}  // namespace uncore::spec
