#include "sdk/platforms/ivytown/model/event_catalog.h"

#include <array>
#include <cctype>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"

namespace uncore::ivytown {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::vector<std::string> Strings(std::span<const std::string_view> list) {
  return std::vector<std::string>(list.begin(), list.end());
}

// Every filter field an event or unit mask needs: the event's and its own.
std::set<std::string> FiltersOf(const EventDescriptor& e,
                                const UmaskDescriptor* u) {
  std::set<std::string> out;
  for (const std::string& f : Strings(e.filters)) out.insert(f);
  if (u != nullptr) {
    for (const std::string& f : Strings(u->filters)) out.insert(f);
  }
  return out;
}

const EventDescriptor& MustFind(BoxType box, std::string_view name) {
  const EventDescriptor* e = FindEvent(box, name);
  EXPECT_NE(e, nullptr) << name;
  static const EventDescriptor kMissing{};
  return e != nullptr ? *e : kMissing;
}

TEST(EventCatalogTest, ImcCasCount) {
  const EventDescriptor& e = MustFind(BoxType::kImc, "CAS_COUNT");
  EXPECT_EQ(e.code, 0x04);
  EXPECT_FALSE(e.extended);
  EXPECT_EQ(e.counter_mask, 0xF);
  ASSERT_NE(e.FindUmask("RD"), nullptr);
  EXPECT_EQ(e.FindUmask("RD")->value, 0x03);
  ASSERT_NE(e.FindUmask("WR"), nullptr);
  EXPECT_EQ(e.FindUmask("WR")->value, 0x0C);
  EXPECT_EQ(e.sources, kFromManual | kFromPerfmon);
}

TEST(EventCatalogTest, CboLlcVictims) {
  const EventDescriptor& e = MustFind(BoxType::kCbo, "LLC_VICTIMS");
  EXPECT_EQ(e.code, 0x37);
  const UmaskDescriptor* m = e.FindUmask("M_STATE");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->value, 0x01);
  EXPECT_TRUE(FiltersOf(e, m).empty());
  const UmaskDescriptor* nid = e.FindUmask("NID");
  ASSERT_NE(nid, nullptr);
  EXPECT_EQ(FiltersOf(e, nid), std::set<std::string>{"filter_nid"});
}

TEST(EventCatalogTest, CboLlcLookupNeedsStateFilter) {
  const EventDescriptor& e = MustFind(BoxType::kCbo, "LLC_LOOKUP");
  EXPECT_EQ(e.code, 0x34);
  // Every unit mask needs the state filter, so the event carries it.
  EXPECT_EQ(Strings(e.filters), std::vector<std::string>{"filter_state"});
  const UmaskDescriptor* u = e.FindUmask("DATA_READ");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->value, 0x03);
  EXPECT_EQ(FiltersOf(e, u), std::set<std::string>{"filter_state"});
  // Umask 0x41 matches on the node id too (allow-listed: both lists omit it).
  const UmaskDescriptor* nid = e.FindUmask("NID");
  ASSERT_NE(nid, nullptr);
  EXPECT_EQ(FiltersOf(e, nid),
            (std::set<std::string>{"filter_state", "filter_nid"}));
}

TEST(EventCatalogTest, CboTorNeedsOpcodeFilter) {
  for (std::string_view name : {"TOR_INSERTS", "TOR_OCCUPANCY"}) {
    const EventDescriptor& e = MustFind(BoxType::kCbo, name);
    const UmaskDescriptor* u = e.FindUmask("MISS_OPCODE");
    ASSERT_NE(u, nullptr) << name;
    EXPECT_EQ(u->value, 0x03);
    EXPECT_EQ(FiltersOf(e, u), std::set<std::string>{"filter_opc"});
    const UmaskDescriptor* nid_opc = e.FindUmask("NID_OPCODE");
    ASSERT_NE(nid_opc, nullptr);
    EXPECT_EQ(FiltersOf(e, nid_opc),
              (std::set<std::string>{"filter_opc", "filter_nid"}));
    const UmaskDescriptor* all = e.FindUmask("ALL");
    ASSERT_NE(all, nullptr);
    EXPECT_TRUE(FiltersOf(e, all).empty());
  }
  EXPECT_EQ(MustFind(BoxType::kCbo, "TOR_INSERTS").code, 0x35);
  EXPECT_EQ(MustFind(BoxType::kCbo, "TOR_OCCUPANCY").counter_mask, 0x1);
}

TEST(EventCatalogTest, QpiCtoCountIsExtended) {
  const EventDescriptor& e = MustFind(BoxType::kQpi, "CTO_COUNT");
  EXPECT_EQ(e.code, 0x38);
  EXPECT_TRUE(e.extended);
  EXPECT_EQ(e.max_increment, 2);
  EXPECT_EQ(Strings(e.filters),
            (std::vector<std::string>{"match0", "match1", "mask0", "mask1"}));
  EXPECT_EQ(FindEventByCode(BoxType::kQpi, 0x38, /*extended=*/true), &e);
  EXPECT_EQ(FindEventByCode(BoxType::kQpi, 0x38, /*extended=*/false), nullptr);
}

TEST(EventCatalogTest, PcuSameCodeWithAndWithoutExtraSelect) {
  const EventDescriptor* demotions =
      FindEventByCode(BoxType::kPcu, 0x1E, /*extended=*/false);
  const EventDescriptor* abort7 =
      FindEventByCode(BoxType::kPcu, 0x1E, /*extended=*/true);
  ASSERT_NE(demotions, nullptr);
  ASSERT_NE(abort7, nullptr);
  EXPECT_EQ(demotions->name, "DEMOTIONS_CORE0");
  EXPECT_EQ(abort7->name, "DELAYED_C_STATE_ABORT_CORE7");
  EXPECT_EQ(FindEvent(BoxType::kPcu, "DEMOTIONS_CORE0"), demotions);
  EXPECT_EQ(FindEvent(BoxType::kPcu, "DELAYED_C_STATE_ABORT_CORE7"), abort7);
  EXPECT_EQ(Strings(demotions->filters),
            std::vector<std::string>{"filter_band0"});
}

TEST(EventCatalogTest, PcuFrequencyBandsUseTheirOwnBand) {
  const std::array<std::pair<std::string_view, std::string_view>, 4> bands = {
      {{"FREQ_BAND0_CYCLES", "filter_band0"},
       {"FREQ_BAND1_CYCLES", "filter_band1"},
       {"FREQ_BAND2_CYCLES", "filter_band2"},
       {"FREQ_BAND3_CYCLES", "filter_band3"}}};
  uint8_t code = 0x0B;
  for (const auto& [name, field] : bands) {
    const EventDescriptor& e = MustFind(BoxType::kPcu, name);
    EXPECT_EQ(e.code, code++);
    EXPECT_EQ(Strings(e.filters), std::vector<std::string>{std::string(field)});
  }
}

TEST(EventCatalogTest, CounterConstraints) {
  EXPECT_EQ(MustFind(BoxType::kCbo, "RxR_OCCUPANCY").counter_mask, 0x1);
  EXPECT_EQ(MustFind(BoxType::kCbo, "RxR_OCCUPANCY").max_increment, 20);
  EXPECT_EQ(MustFind(BoxType::kCbo, "COUNTER0_OCCUPANCY").counter_mask, 0xE);
  for (std::string_view ring :
       {"RING_AD_USED", "RING_AK_USED", "RING_BL_USED", "RING_IV_USED"}) {
    EXPECT_EQ(MustFind(BoxType::kCbo, ring).counter_mask, 0xC) << ring;
  }
  EXPECT_EQ(MustFind(BoxType::kR3qpi, "CLOCKTICKS").counter_mask, 0x7);
  EXPECT_EQ(MustFind(BoxType::kHa, "BT_OCCUPANCY").max_increment, 512);
}

TEST(EventCatalogTest, LookupIgnoresCase) {
  const EventDescriptor* e = FindEvent(BoxType::kImc, "cas_count");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "CAS_COUNT");
  EXPECT_EQ(FindEvent(BoxType::kCbo, "txr_inserts"),
            FindEvent(BoxType::kCbo, "TxR_INSERTS"));
  ASSERT_NE(e->FindUmask("rd"), nullptr);
  EXPECT_EQ(e->FindUmask("rd")->name, "RD");
  EXPECT_EQ(e->FindUmask("Wr"), e->FindUmask("WR"));
}

TEST(EventCatalogTest, MissingNamesAndCodes) {
  EXPECT_EQ(FindEvent(BoxType::kImc, "CAS_CONT"), nullptr);
  EXPECT_EQ(FindEvent(BoxType::kCbo, "CAS_COUNT"), nullptr);  // wrong box
  EXPECT_EQ(FindEvent(BoxType::kImc, ""), nullptr);
  EXPECT_EQ(MustFind(BoxType::kImc, "CAS_COUNT").FindUmask("RDX"), nullptr);
  EXPECT_EQ(MustFind(BoxType::kImc, "CAS_COUNT").FindUmask(""), nullptr);
  EXPECT_EQ(FindEventByCode(BoxType::kCbo, 0x01, false), nullptr);
  EXPECT_EQ(FindEventByCode(BoxType::kR3qpi, 0xFF, false), nullptr);
}

TEST(EventCatalogTest, AliasesFromTheManualsMetrics) {
  const EventDescriptor& inserts = MustFind(BoxType::kCbo, "RxR_INSERTS");
  ASSERT_NE(inserts.FindUmask("IRQ_REJECTED"), nullptr);
  EXPECT_EQ(inserts.FindUmask("IRQ_REJECTED"), inserts.FindUmask("IRQ_REJ"));
  EXPECT_EQ(inserts.FindUmask("irq_rejected")->value, 0x02);
  for (std::string_view tor : {"TOR_INSERTS", "TOR_OCCUPANCY"}) {
    const EventDescriptor& e = MustFind(BoxType::kCbo, tor);
    ASSERT_NE(e.FindUmask("MISS_OPC_MATCH"), nullptr) << tor;
    EXPECT_EQ(e.FindUmask("MISS_OPC_MATCH")->name, "MISS_OPCODE");
  }
  EXPECT_EQ(FindEvent(BoxType::kCbo, "OCCUPANCY_COUNTER0"),
            FindEvent(BoxType::kCbo, "COUNTER0_OCCUPANCY"));
  EXPECT_NE(FindEvent(BoxType::kCbo, "OCCUPANCY_COUNTER0"), nullptr);
  const EventDescriptor& d2c = MustFind(BoxType::kQpi, "DIRECT2CORE");
  ASSERT_NE(d2c.FindUmask("SUCCESS"), nullptr);
  EXPECT_EQ(d2c.FindUmask("SUCCESS")->name, "SUCCESS_RBT_HIT");
}

TEST(EventCatalogTest, PerfmonSpellingsAreAliases) {
  EXPECT_EQ(FindEvent(BoxType::kHa, "IGR_AD_QPI2_ACCUMULATOR"),
            FindEvent(BoxType::kHa, "IGR_CREDITS_AD_QPI2"));
  EXPECT_EQ(FindEvent(BoxType::kR3qpi, "RxR_BYPASSED"),
            FindEvent(BoxType::kR3qpi, "RxR_AD_BYPASSED"));
  const EventDescriptor& occupancy = MustFind(BoxType::kCbo, "RxR_OCCUPANCY");
  EXPECT_EQ(occupancy.FindUmask("IRQ_REJ"),
            occupancy.FindUmask("IRQ_REJECTED"));
  const EventDescriptor& irp = MustFind(BoxType::kIrp, "TRANSACTIONS");
  ASSERT_NE(irp.FindUmask("PD_PREFETCHES"), nullptr);
  EXPECT_EQ(irp.FindUmask("PD_PREFETCHES")->name, "RD_PREFETCHES");
}

TEST(EventCatalogTest, FixedCountersAreNotCatalogEvents) {
  // The box descriptors model ubox/UCLK and imc/DCLK.
  EXPECT_EQ(FindEvent(BoxType::kUbox, "UCLK"), nullptr);
  EXPECT_EQ(FindEvent(BoxType::kImc, "DCLK"), nullptr);
  EXPECT_EQ(FindEventByCode(BoxType::kUbox, 0x00, false), nullptr);
  // iMC's general-counter DRAM clock event is a catalog event.
  EXPECT_EQ(MustFind(BoxType::kImc, "DCLOCKTICKS").code, 0x00);
}

TEST(EventCatalogTest, ManualEncodingWinsForFreqMinPerfP) {
  const EventDescriptor& e = MustFind(BoxType::kPcu, "FREQ_MIN_PERF_P_CYCLES");
  EXPECT_EQ(e.code, 0x02);
  EXPECT_TRUE(e.extended);
  EXPECT_EQ(e.sources, kFromManual);
  EXPECT_EQ(FindEventByCode(BoxType::kPcu, 0x62, false), nullptr);
}

TEST(EventCatalogTest, SortedByKeyAndKeysUnique) {
  const std::span<const EventDescriptor> all = AllEvents();
  ASSERT_FALSE(all.empty());
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_LT(
        std::make_tuple(all[i - 1].box, all[i - 1].code, all[i - 1].extended),
        std::make_tuple(all[i].box, all[i].code, all[i].extended))
        << all[i - 1].name << " / " << all[i].name;
  }
  for (const EventDescriptor& e : all) {
    EXPECT_EQ(FindEventByCode(e.box, e.code, e.extended), &e) << e.name;
    EXPECT_EQ(FindEvent(e.box, e.name), &e) << e.name;
    for (size_t i = 1; i < e.umasks.size(); ++i) {
      EXPECT_LT(e.umasks[i - 1].value, e.umasks[i].value) << e.name;
    }
  }
}

TEST(EventCatalogTest, NamesUniqueIgnoringCase) {
  for (int b = 0; b < kNumBoxTypes; ++b) {
    std::set<std::string> event_names;
    for (const EventDescriptor& e : EventsOf(static_cast<BoxType>(b))) {
      EXPECT_TRUE(event_names.insert(Lower(e.name)).second) << e.name;
      for (const std::string& a : Strings(e.aliases)) {
        EXPECT_TRUE(event_names.insert(Lower(a)).second) << a;
        EXPECT_EQ(FindEvent(e.box, a), &e) << a;
      }
      std::set<std::string> umask_names;
      for (const UmaskDescriptor& u : e.umasks) {
        EXPECT_TRUE(umask_names.insert(Lower(u.name)).second)
            << e.name << "." << u.name;
        EXPECT_EQ(e.FindUmask(u.name), &u);
        for (const std::string& a : Strings(u.aliases)) {
          EXPECT_TRUE(umask_names.insert(Lower(a)).second)
              << e.name << "." << a;
          EXPECT_EQ(e.FindUmask(a), &u) << e.name << "." << a;
        }
      }
    }
  }
}

TEST(EventCatalogTest, EventsOfIsTheBoxSubspan) {
  size_t total = 0;
  for (int b = 0; b < kNumBoxTypes; ++b) {
    const BoxType box = static_cast<BoxType>(b);
    const std::span<const EventDescriptor> events = EventsOf(box);
    EXPECT_FALSE(events.empty());
    for (const EventDescriptor& e : events) EXPECT_EQ(e.box, box);
    total += events.size();
  }
  EXPECT_EQ(total, AllEvents().size());
}

TEST(EventCatalogTest, CountsPerBox) {
  struct Expected {
    BoxType box;
    size_t manual;        // events in the manual's ordered-by-code tables
    size_t perfmon_only;  // events only Intel's list has (allow-listed)
  };
  constexpr Expected kExpected[] = {
      {BoxType::kUbox, 4, 2},   {BoxType::kCbo, 21, 4},
      {BoxType::kHa, 40, 13},   {BoxType::kImc, 45, 0},
      {BoxType::kIrp, 27, 0},   {BoxType::kPcu, 67, 4},
      {BoxType::kQpi, 53, 10},  {BoxType::kR2pcie, 13, 3},
      {BoxType::kR3qpi, 28, 0},
  };
  size_t manual_events = 0;
  size_t manual_umasks = 0;
  size_t umasks = 0;
  for (const Expected& x : kExpected) {
    size_t from_manual = 0;
    size_t perfmon_only = 0;
    for (const EventDescriptor& e : EventsOf(x.box)) {
      EXPECT_NE(e.sources, 0) << e.name;
      if (e.sources & kFromManual) ++from_manual;
      if (e.sources == kFromPerfmon) ++perfmon_only;
      for (const UmaskDescriptor& u : e.umasks) {
        EXPECT_NE(u.sources, 0) << e.name << "." << u.name;
        if (u.sources & kFromManual) ++manual_umasks;
        ++umasks;
      }
    }
    EXPECT_EQ(from_manual, x.manual) << static_cast<int>(x.box);
    EXPECT_EQ(perfmon_only, x.perfmon_only) << static_cast<int>(x.box);
    EXPECT_EQ(EventsOf(x.box).size(), x.manual + x.perfmon_only);
    manual_events += from_manual;
  }
  EXPECT_EQ(manual_events, 298u);
  EXPECT_EQ(manual_umasks, 740u);
  EXPECT_EQ(umasks, 864u);
  EXPECT_EQ(AllEvents().size(), 334u);
}

TEST(EventCatalogTest, FieldsAreKnownToTheBoxDescriptors) {
  // IRP_PmonFilter and the U-Box filter have no documented address, so no
  // box descriptor field: the catalog names them to say the event needs one.
  const std::set<std::string> kUnaddressed = {"irp_filter", "ubox_filter"};
  for (const EventDescriptor& e : AllEvents()) {
    EXPECT_NE(e.counter_mask, 0) << e.name;
    EXPECT_EQ(e.counter_mask >> Box(e.box).num_counters, 0) << e.name;
    EXPECT_GE(e.max_increment, 1) << e.name;
    if (e.extended) {
      EXPECT_TRUE(e.box == BoxType::kPcu || e.box == BoxType::kQpi) << e.name;
    }
    std::vector<const UmaskDescriptor*> rows = {nullptr};
    for (const UmaskDescriptor& u : e.umasks) rows.push_back(&u);
    for (const UmaskDescriptor* u : rows) {
      for (const std::string& f : FiltersOf(e, u)) {
        if (kUnaddressed.count(f) != 0) continue;
        const FieldDescriptor* field = Box(e.box).FindField(f);
        ASSERT_NE(field, nullptr) << e.name << ": " << f;
        EXPECT_EQ(field->reg, FieldRegister::kFilter) << f;
      }
    }
  }
}

}  // namespace
}  // namespace uncore::ivytown

namespace uncore::ivytown {
namespace {

// decisions.md #34: the HA occupancy counts get q_occ_rst.
TEST(EventCatalogTest, HaOccupancyEventsNeedTheQueueOccupancyReset) {
  std::vector<std::string_view> names;
  for (const EventDescriptor& e : AllEvents()) {
    if (NeedsQueueOccupancyReset(e)) names.push_back(e.name);
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre(
                         "TxR_AD_OCCUPANCY", "TxR_AK_OCCUPANCY",
                         "TxR_BL_OCCUPANCY", "BT_OCCUPANCY"));
  EXPECT_FALSE(
      NeedsQueueOccupancyReset(*FindEvent(BoxType::kCbo, "TOR_OCCUPANCY")));
}

}  // namespace
}  // namespace uncore::ivytown
