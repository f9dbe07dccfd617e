// The Xeon 7500 (Nehalem-EX) and Xeon E7 (Westmere-EX) perf tables
// (tools/perfmon_hand/xeon7500.json -> sdk/platforms/perfmon/generated/):
// encodings pinned against the sources (LIKWID's event list and MEM groups,
// the kernel's uncore_nhmex driver, Intel's Xeon 7500 uncore guide) and
// name resolution over them.  No hardware: tables and resolution only.
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/spec/platform_catalog.h"

namespace uncore::perfmon {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

const Platform& Must(std::string_view name) {
  const Platform* p = spec::FindPlatform(name);
  EXPECT_NE(p, nullptr) << name;
  static const Platform kEmpty{};
  return p != nullptr ? *p : kEmpty;
}

const Event& EventOf(const Platform& p, std::string_view name) {
  for (const Event& e : p.events) {
    if (e.name == name) return e;
  }
  ADD_FAILURE() << name << " not on " << p.name;
  static const Event kNone{};
  return kNone;
}

std::set<std::string> Pmus(const Platform& p) {
  std::set<std::string> out;
  for (const Event& e : p.events) out.emplace(e.pmu);
  return out;
}

TEST(NehalemExTablesTest, CpuIdentityPicksThePlatform) {
  const Platform& nhm = Must("nehalemex");
  const Platform& wsm = Must("westmereex");
  EXPECT_EQ(spec::FindPlatform("xeon7500"), &nhm);
  EXPECT_EQ(spec::FindPlatform("NHMEX"), &nhm);
  EXPECT_EQ(spec::FindPlatform("wsmex"), &wsm);
  for (int stepping : {0, 6, 15}) {
    EXPECT_EQ(spec::PlatformForCpu("GenuineIntel", 6, 0x2E, stepping), &nhm);
    EXPECT_EQ(spec::PlatformForCpu("GenuineIntel", 6, 0x2F, stepping), &wsm);
  }
  EXPECT_THAT(spec::PlatformsForModel("GenuineIntel", 6, 0x2E),
              ElementsAre(&nhm));
  EXPECT_THAT(spec::PlatformsForModel("GenuineIntel", 6, 0x2F),
              ElementsAre(&wsm));
  // Nehalem-EP (0x1A) and Westmere-EP (0x2C) are not these uncores.
  EXPECT_EQ(spec::PlatformForCpu("GenuineIntel", 6, 0x1A, 5), nullptr);
  EXPECT_EQ(spec::PlatformForCpu("GenuineIntel", 6, 0x2C, 2), nullptr);
  EXPECT_EQ(spec::PlatformForCpu("AuthenticAMD", 6, 0x2E, 6), nullptr);
}

TEST(NehalemExTablesTest, SevenBoxesUnderTheKernelsPmuNames) {
  for (std::string_view name : {"nehalemex", "westmereex"}) {
    EXPECT_THAT(Pmus(Must(name)),
                UnorderedElementsAre(
                    "uncore_ubox", "uncore_cbox", "uncore_bbox", "uncore_sbox",
                    "uncore_mbox", "uncore_rbox", "uncore_wbox"))
        << name;
  }
}

TEST(NehalemExTablesTest, NamesAreUniqueAndSorted) {
  for (std::string_view name : {"nehalemex", "westmereex"}) {
    const Platform& p = Must(name);
    std::set<std::string> upper;
    for (size_t i = 0; i < p.events.size(); ++i) {
      std::string u(p.events[i].name);
      for (char& c : u) c = static_cast<char>(std::toupper(c));
      EXPECT_TRUE(upper.insert(u).second) << p.events[i].name;
      if (i > 0) {
        EXPECT_LT(p.events[i - 1].name, p.events[i].name);
      }
    }
  }
}

// Every selector fits the kernel's format field: event (config:0-7) on the
// U/C/S/W-Boxes, event5 (config:1-5) on the B/R-Boxes, inc_sel
// (config:9-13) or set_flag_sel (config:19-21) on the M-Box.
TEST(NehalemExTablesTest, SelectorsFitTheKernelsFormatFields) {
  for (std::string_view name : {"nehalemex", "westmereex"}) {
    for (const Event& e : Must(name).events) {
      SCOPED_TRACE(std::string(e.name));
      EXPECT_LE(e.umask, 0xffu);
      if (e.pmu == "uncore_mbox") {
        EXPECT_EQ(e.umask, 0u);
        if (e.event_term == "set_flag_sel") {
          EXPECT_LE(e.event, 0x7u);
          EXPECT_EQ(e.terms, "flag_mode=0x1");
        } else {
          EXPECT_EQ(e.event_term, "inc_sel");
          EXPECT_LE(e.event, 0x1fu);
        }
        continue;
      }
      EXPECT_EQ(e.event_term, "event");
      if (e.pmu == "uncore_bbox" || e.pmu == "uncore_rbox") {
        EXPECT_LE(e.event, 0x1fu);
        EXPECT_EQ(e.umask, 0u);
      } else {
        EXPECT_LE(e.event, 0xffu);
      }
      if (e.pmu == "uncore_ubox") {
        EXPECT_EQ(e.umask, 0u);
      }
    }
  }
}

// The guide: TO_R_PROG_EV is event select 0x0 and counts what the S-Box
// match/mask registers select; the kernel loads config1/config2 (its
// `match` and `mask` terms) into them for event 0 only.
TEST(NehalemExTablesTest, SBoxProgrammableEvent) {
  const Event& e = EventOf(Must("nehalemex"), "TO_R_PROG_EV");
  EXPECT_EQ(e.pmu, "uncore_sbox");
  EXPECT_EQ(e.unit, "S-Box");
  EXPECT_EQ(e.event, 0x0u);
  EXPECT_EQ(e.umask, 0x0u);
  EXPECT_EQ(e.terms, "");  // match= and mask= are the user's
  EXPECT_EQ(spec::PerfTerms(e), "event=0x00");
  // No other S-Box event sits on select 0 (the kernel keys on it).
  for (const Event& other : Must("nehalemex").events) {
    if (other.pmu == "uncore_sbox" && other.name != "TO_R_PROG_EV") {
      EXPECT_NE(other.event, 0u) << other.name;
    }
  }
}

// The kernel: the W-Box fixed counter is clockticks = event=0xff,umask=0.
TEST(NehalemExTablesTest, WBoxFixedCounter) {
  for (std::string_view name : {"nehalemex", "westmereex"}) {
    const Event& e = EventOf(Must(name), "UNCORE_CLOCK");
    EXPECT_EQ(e.pmu, "uncore_wbox");
    EXPECT_EQ(e.kind, CounterKind::kFixed);
    EXPECT_EQ(e.counters, "FIXED");
    EXPECT_EQ(e.event, 0xffu);
    EXPECT_EQ(e.umask, 0x0u);
  }
  absl::StatusOr<spec::Resolution> r = spec::ResolveOnPlatform(
      Must("nehalemex"), "uncore_wbox/event=0xff,umask=0x0/");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->name, "UNCORE_CLOCK");
}

// LIKWID: LLC_MISSES 0x14 / ALL 0x07, LLC_HITS 0x15 / ALL 0x0F, on every
// C-Box counter.
TEST(NehalemExTablesTest, CBoxEvents) {
  const Platform& p = Must("nehalemex");
  const Event& miss = EventOf(p, "LLC_MISSES_ALL");
  EXPECT_EQ(miss.pmu, "uncore_cbox");
  EXPECT_EQ(spec::PerfTerms(miss), "event=0x14,umask=0x07");
  EXPECT_EQ(miss.counters, "0,1,2,3,4,5");
  EXPECT_EQ(spec::PerfTerms(EventOf(p, "LLC_HITS_ALL")),
            "event=0x15,umask=0x0f");
  EXPECT_EQ(spec::PerfTerms(EventOf(p, "SNP_HITS_REMOTE_HITM")),
            "event=0x28,umask=0x11");
  absl::StatusOr<spec::Resolution> r =
      spec::ResolveOnPlatform(p, "cbox_7/LLC_HITS_ALL");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->events.size(), 1u);
  EXPECT_EQ(r->events[0].PerfSpelling(),
            "uncore_cbox_7/event=0x15,umask=0x0f/");
}

// The kernel's bbox_cmds_read / bbox_cmds_write: inc_sel=0xd with
// fvc=0x2800 / 0x2820 on Nehalem-EX and fvc=0x5000 / 0x5040 on
// Westmere-EX (the FVC fields sit one bit higher there).
TEST(NehalemExTablesTest, MBoxFvcLayoutDiffersBetweenNhmExAndWsmEx) {
  const Platform& nhm = Must("nehalemex");
  const Platform& wsm = Must("westmereex");
  const Event& nr = EventOf(nhm, "FVC_EV0_BBOX_CMDS_READS");
  EXPECT_EQ(nr.pmu, "uncore_mbox");
  EXPECT_EQ(nr.event_term, "inc_sel");
  EXPECT_EQ(nr.event, 0xdu);
  EXPECT_EQ(nr.terms, "fvc=0x2800");
  EXPECT_EQ(EventOf(nhm, "FVC_EV0_BBOX_CMDS_WRITES").terms, "fvc=0x2820");
  EXPECT_EQ(EventOf(wsm, "FVC_EV0_BBOX_CMDS_READS").terms, "fvc=0x5000");
  EXPECT_EQ(EventOf(wsm, "FVC_EV0_BBOX_CMDS_WRITES").terms, "fvc=0x5040");
  // Slot 1 (inc_sel 0xe) holds its sub-event three bits higher.
  const Event& slot1 = EventOf(nhm, "FVC_EV1_BBOX_CMDS_READS");
  EXPECT_EQ(slot1.event, 0xeu);
  EXPECT_EQ(slot1.terms, "fvc=0x14000");
  EXPECT_EQ(EventOf(wsm, "FVC_EV1_BBOX_CMDS_READS").terms, "fvc=0x28000");
  // Events without an extra register are the same on both.
  EXPECT_EQ(EventOf(nhm, "MBOX_CLOCKTICKS").event, 0x1bu);
  EXPECT_EQ(EventOf(wsm, "MBOX_CLOCKTICKS").event, 0x1bu);
  const Event& flag = EventOf(nhm, "CYCLES_RETRYQ_STARVED");
  EXPECT_EQ(flag.event_term, "set_flag_sel");
  EXPECT_EQ(flag.event, 0x4u);
  // Among the M-Box events both have, only the FVC ones differ: every
  // sub-event in all four slots but SMI_CRC_ERR (sub-event 0).
  size_t differ = 0;
  for (const Event& e : nhm.events) {
    if (e.pmu != "uncore_mbox") {
      continue;
    }
    for (const Event& w : wsm.events) {
      if (w.name != e.name) continue;
      if (w.terms != e.terms || w.event != e.event) {
        ++differ;
        EXPECT_TRUE(std::string_view(e.name).starts_with("FVC_EV")) << e.name;
      }
    }
  }
  EXPECT_EQ(differ, 4u * 8u);
}

// Where LIKWID's two lists differ, each platform follows its own
// (notes/decisions-xeon7500-events.md).
TEST(NehalemExTablesTest, WestmereExFollowsItsOwnList) {
  const Platform& nhm = Must("nehalemex");
  const Platform& wsm = Must("westmereex");
  EXPECT_EQ(EventOf(nhm, "LLC_VICTIMS_ALL").umask, 0x1fu);
  EXPECT_EQ(EventOf(wsm, "LLC_VICTIMS_ALL").umask, 0x0fu);
  EXPECT_EQ(EventOf(nhm, "TO_RING_B2S_MSGQ_CYCLES_FULL").event, 0x2bu);
  EXPECT_EQ(EventOf(wsm, "TO_RING_B2S_MSGQ_CYCLES_FULL").event, 0x2du);
  // Ten C-Boxes on Westmere-EX: the S-Box queue masks grow a fifth bit.
  EXPECT_EQ(EventOf(nhm, "TO_R_DRS_MSGQ_OCCUPANCY_ALL").umask, 0x0fu);
  EXPECT_EQ(EventOf(wsm, "TO_R_DRS_MSGQ_OCCUPANCY_ALL").umask, 0x1fu);
  EXPECT_EQ(EventOf(wsm, "TO_R_DRS_MSGQ_OCCUPANCY_CBOX4_9").umask, 0x10u);
  EXPECT_EQ(EventOf(nhm, "BOUNCES_P2C_AD_ALL").event, 0x01u);
  EXPECT_EQ(EventOf(wsm, "BOUNCES_C2P_AD_ALL").event, 0x01u);
  EXPECT_EQ(EventOf(wsm, "SPOOF_CRD_EMPTY").event, 0x35u);
  // Left out where Westmere-EX's list contradicts itself.
  for (std::string_view name :
       {"CYCLES_MFULL", "IMT_FULL", "COHQ_IMT_ALLOC_WAIT", "PAGE_EMPTY"}) {
    EXPECT_TRUE(spec::ResolveOnPlatform(nhm, name).ok()) << name;
    EXPECT_FALSE(spec::ResolveOnPlatform(wsm, name).ok()) << name;
  }
}

// The kernel applies the B-Box match/mask registers to counter 0 events
// 0x1-0x3, counter 1 events 0x1-0x6 and counter 2 event 0x4: exactly
// LIKWID's *_MATCH events, each on the counter LIKWID gives it.
TEST(NehalemExTablesTest, BBoxCountersAndMatchEventsAgreeWithTheKernel) {
  const Platform& p = Must("nehalemex");
  const Event& wr = EventOf(p, "IMT_INSERTS_WR");
  EXPECT_EQ(wr.pmu, "uncore_bbox");
  EXPECT_EQ(spec::PerfTerms(wr), "event=0x0c,counter=0x1");
  EXPECT_EQ(wr.counters, "1");
  int match_events = 0;
  for (const Event& e : p.events) {
    if (e.pmu != "uncore_bbox") continue;
    ASSERT_TRUE(e.terms.starts_with("counter=0x")) << e.name;
    const int ctr = e.terms.back() - '0';
    EXPECT_EQ(e.counters, std::string(1, static_cast<char>('0' + ctr)));
    const bool kernel_matches = (ctr == 0 && e.event <= 3) ||
                                (ctr == 1 && e.event <= 6) ||
                                (ctr == 2 && e.event == 4);
    const bool named_match = std::string_view(e.name).ends_with("MATCH");
    EXPECT_EQ(kernel_matches, named_match) << e.name;
    if (named_match) ++match_events;
  }
  EXPECT_EQ(match_events, 10);
}

TEST(NehalemExTablesTest, ResolvesVendorShortAndKernelSpellings) {
  const Platform& p = Must("nehalemex");
  for (std::string_view text :
       {"TO_R_PROG_EV", "to_r_prog_ev", "sbox/TO_R_PROG_EV",
        "uncore_sbox/TO_R_PROG_EV"}) {
    absl::StatusOr<spec::Resolution> r = spec::ResolveOnPlatform(p, text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.status();
    ASSERT_EQ(r->events.size(), 1u);
    EXPECT_EQ(r->name, "TO_R_PROG_EV");
    EXPECT_EQ(r->events[0].pmu, "uncore_sbox");
    EXPECT_EQ(r->events[0].terms, "event=0x00");
  }
  absl::StatusOr<spec::Resolution> r =
      spec::ResolveOnPlatform(p, "sbox_1/TO_R_PROG_EV");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->events[0].instance, 1);

  // The kernel's syntax with the user's match/mask.
  r = spec::ResolveOnPlatform(p, "uncore_sbox_1/event=0x0,match=0x1,mask=0x1/");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, spec::Resolution::Kind::kEvent);
  ASSERT_EQ(r->events.size(), 1u);
  EXPECT_EQ(r->events[0].pmu, "uncore_sbox");
  EXPECT_EQ(r->events[0].instance, 1);
  EXPECT_EQ(r->events[0].terms, "event=0x00,match=0x1,mask=0x1");
  EXPECT_EQ(r->events[0].PerfSpelling(),
            "uncore_sbox_1/event=0x00,match=0x1,mask=0x1/");

  // Kernel syntax that names a table event finds it.
  r = spec::ResolveOnPlatform(p, "uncore_cbox_3/event=0x14,umask=0x7/");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->name, "LLC_MISSES_ALL");
  EXPECT_EQ(r->events[0].instance, 3);

  // A box this platform lacks is refused with its seven boxes listed.
  r = spec::ResolveOnPlatform(p, "imc/CAS_COUNT.RD");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("mbox"));
}

// LIKWID's MEM groups: Nehalem-EX reads = M-Box FVC_EV0_BBOX_CMDS_READS,
// writes = B-Box IMT_INSERTS_WR; Westmere-EX reads and writes both from
// the M-Box FVC commands; bytes = lines * 64.
TEST(NehalemExTablesTest, MemoryBandwidthMetrics) {
  struct Want {
    std::string_view platform;
    std::vector<std::string> pmus;
    std::vector<std::string> names;
    std::string_view expr;
  };
  const Want wants[] = {
      {"nehalemex",
       {"uncore_mbox", "uncore_bbox"},
       {"FVC_EV0_BBOX_CMDS_READS", "IMT_INSERTS_WR"},
       "(FVC_EV0_BBOX_CMDS_READS + IMT_INSERTS_WR) * 64"},
      // Not M-Box reads + M-Box writes: one M-Box counts one command type
      // (notes/decisions-xeon7500.md 24).
      {"westmereex",
       {"uncore_mbox", "uncore_bbox"},
       {"FVC_EV0_BBOX_CMDS_READS", "IMT_INSERTS_WR"},
       "(FVC_EV0_BBOX_CMDS_READS + IMT_INSERTS_WR) * 64"},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(std::string(w.platform));
    const Platform& p = Must(w.platform);
    const Metric* total = spec::FindMetric(p, "MEM_BW_TOTAL");
    ASSERT_NE(total, nullptr);
    EXPECT_TRUE(total->sdk_defined);
    EXPECT_EQ(total->scale_unit, "1B");
    EXPECT_EQ(total->expr, w.expr);
    EXPECT_EQ(total->core_events, "");
    absl::StatusOr<spec::Resolution> r =
        spec::ResolveOnPlatform(p, "metric/MEM_BW_TOTAL");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->kind, spec::Resolution::Kind::kMetric);
    std::vector<std::string> pmus;
    std::vector<std::string> names;
    for (const spec::ResolvedEvent& e : r->events) {
      pmus.push_back(e.pmu);
      names.emplace_back(e.event->name);
    }
    EXPECT_EQ(pmus, w.pmus);
    EXPECT_EQ(names, w.names);
    for (std::string_view m :
         {"MEM_BW_READS", "MEM_BW_WRITES", "memory_bandwidth_read",
          "memory_bandwidth_write", "memory_bandwidth_total",
          "llc_miss_ratio"}) {
      EXPECT_TRUE(spec::ResolveOnPlatform(p, m).ok()) << m;
    }
  }
}

}  // namespace
}  // namespace uncore::perfmon
