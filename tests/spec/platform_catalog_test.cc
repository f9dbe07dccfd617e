#include "sdk/spec/platform_catalog.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"

namespace uncore::spec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const perfmon::Platform& Must(std::string_view name) {
  const perfmon::Platform* p = FindPlatform(name);
  EXPECT_NE(p, nullptr) << name;
  static const perfmon::Platform kEmpty{};
  return p != nullptr ? *p : kEmpty;
}

// "pmu event umask terms" for each event `text` resolves to.
std::vector<std::string> Encodings(std::string_view platform,
                                   std::string_view text) {
  absl::StatusOr<Resolution> r = ResolveOnPlatform(Must(platform), text);
  EXPECT_TRUE(r.ok()) << platform << " " << text << ": " << r.status();
  std::vector<std::string> out;
  if (!r.ok()) return out;
  for (const ResolvedEvent& e : r->events) out.push_back(e.pmu + " " + e.terms);
  return out;
}

TEST(PlatformCatalogTest, ListsEveryPlatformOnce) {
  std::set<std::string> names;
  for (const perfmon::Platform* p : perfmon::AllPlatforms()) {
    EXPECT_TRUE(names.insert(std::string(p->name)).second) << p->name;
    EXPECT_FALSE(p->events.empty()) << p->name;
    EXPECT_FALSE(p->cpus.empty()) << p->name;
  }
  for (const char* want :
       {"haswellx", "broadwellx", "skylakex", "cascadelakex", "icelakex",
        "sapphirerapids", "emeraldrapids", "graniterapids", "sierraforest",
        "amdzen2", "amdzen3", "amdzen4", "amdzen5"}) {
    EXPECT_TRUE(names.contains(want)) << want;
  }
}

TEST(PlatformCatalogTest, FindsByNameAliasAndCpu) {
  EXPECT_EQ(FindPlatform("SPR"), FindPlatform("sapphirerapids"));
  EXPECT_EQ(FindPlatform("zen4"), FindPlatform("amdzen4"));
  EXPECT_EQ(FindPlatform("ivytown"), nullptr);
  absl::StatusOr<const perfmon::Platform*> bad = LookupPlatform("skylake");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("skylakex"));

  auto name = [](const perfmon::Platform* p) {
    return p == nullptr ? std::string("none") : std::string(p->name);
  };
  // Model 0x55 is Skylake-SP up to stepping 4, Cascade Lake from 5.
  EXPECT_EQ(name(PlatformForCpu("GenuineIntel", 6, 0x55, 4)), "skylakex");
  EXPECT_EQ(name(PlatformForCpu("GenuineIntel", 6, 0x55, 7)), "cascadelakex");
  EXPECT_EQ(name(PlatformForCpu("GenuineIntel", 6, 0x8f, 8)), "sapphirerapids");
  EXPECT_EQ(name(PlatformForCpu("GenuineIntel", 6, 0xcf, 2)), "emeraldrapids");
  EXPECT_EQ(name(PlatformForCpu("GenuineIntel", 6, 0xad, 1)), "graniterapids");
  EXPECT_EQ(name(PlatformForCpu("GenuineIntel", 6, 0x6a, 6)), "icelakex");
  EXPECT_EQ(name(PlatformForCpu("AuthenticAMD", 0x19, 0x11, 1)), "amdzen4");
  EXPECT_EQ(name(PlatformForCpu("AuthenticAMD", 0x19, 0x01, 1)), "amdzen3");
  EXPECT_EQ(name(PlatformForCpu("AuthenticAMD", 0x1a, 0x02, 0)), "amdzen5");
  EXPECT_EQ(name(PlatformForCpu("AuthenticAMD", 0x17, 0x31, 0)), "amdzen2");
  // Strict: the IvyTown model and another vendor do not match.
  EXPECT_EQ(PlatformForCpu("GenuineIntel", 6, 0x3e, 4), nullptr);
  EXPECT_EQ(PlatformForCpu("AuthenticAMD", 6, 0x55, 4), nullptr);
}

TEST(PlatformCatalogTest, PlatformsForModelIgnoresTheStepping) {
  std::vector<std::string> names;
  for (const perfmon::Platform* p :
       PlatformsForModel("GenuineIntel", 6, 0x55)) {
    names.emplace_back(p->name);
  }
  EXPECT_THAT(names, ElementsAre("skylakex", "cascadelakex"));
  EXPECT_TRUE(PlatformsForModel("GenuineIntel", 6, 0x3e).empty());
}

TEST(PlatformCatalogTest, ShortNames) {
  EXPECT_EQ(ShortName("UNC_M_CAS_COUNT.RD"), "CAS_COUNT.RD");
  EXPECT_EQ(ShortName("UNC_CHA_TOR_INSERTS.IA_MISS"), "TOR_INSERTS.IA_MISS");
  EXPECT_EQ(ShortName("umc_cas_cmd.rd"), "umc_cas_cmd.rd");
  EXPECT_EQ(BoxName("uncore_imc"), "imc");
  EXPECT_EQ(BoxName("amd_umc"), "umc");
}

// The table of DRAM CAS encodings.
TEST(PlatformCatalogTest, CasCountEncodingsPerGeneration) {
  for (const char* p : {"skylakex", "cascadelakex", "haswellx"}) {
    EXPECT_THAT(Encodings(p, "imc/CAS_COUNT.RD"),
                ElementsAre("uncore_imc event=0x04,umask=0x03"))
        << p;
    EXPECT_THAT(Encodings(p, "UNC_M_CAS_COUNT.WR"),
                ElementsAre("uncore_imc event=0x04,umask=0x0c"))
        << p;
  }
  EXPECT_THAT(Encodings("icelakex", "imc/CAS_COUNT.RD"),
              ElementsAre("uncore_imc event=0x04,umask=0x0f"));
  EXPECT_THAT(Encodings("icelakex", "imc/CAS_COUNT.WR"),
              ElementsAre("uncore_imc event=0x04,umask=0x30"));
  for (const char* p : {"sapphirerapids", "emeraldrapids"}) {
    EXPECT_THAT(Encodings(p, "unc_m_cas_count.rd"),
                ElementsAre("uncore_imc event=0x05,umask=0xcf"))
        << p;
    EXPECT_THAT(Encodings(p, "imc/CAS_COUNT.WR"),
                ElementsAre("uncore_imc event=0x05,umask=0xf0"))
        << p;
    EXPECT_THAT(Encodings(p, "metric/MEM_BW_READS"),
                ElementsAre("uncore_imc event=0x05,umask=0xcf"))
        << p;
  }
  for (const char* p : {"graniterapids", "sierraforest"}) {
    EXPECT_THAT(Encodings(p, "imc/CAS_COUNT.RD"),
                ElementsAre("uncore_imc event=0x05,umask=0xcf",
                            "uncore_imc event=0x06,umask=0xcf"))
        << p;
    EXPECT_THAT(Encodings(p, "metric/MEM_BW_READS"),
                ElementsAre("uncore_imc event=0x05,umask=0xcf",
                            "uncore_imc event=0x06,umask=0xcf"))
        << p;
    EXPECT_THAT(Encodings(p, "UNC_M_CAS_COUNT.WR"),
                ElementsAre("uncore_imc event=0x05,umask=0xf0",
                            "uncore_imc event=0x06,umask=0xf0"))
        << p;
  }
  EXPECT_THAT(Encodings("amdzen4", "metric/MEM_BW_TOTAL"),
              ElementsAre("amd_umc event=0x0a,rdwrmask=0x1",
                          "amd_umc event=0x0a,rdwrmask=0x2"));
  EXPECT_THAT(Encodings("amdzen5", "umc/umc_cas_cmd.rd"),
              ElementsAre("amd_umc event=0x0a,rdwrmask=0x1"));
}

TEST(PlatformCatalogTest, KernelSyntaxMatchesTheTable) {
  absl::StatusOr<Resolution> r = ResolveOnPlatform(
      Must("sapphirerapids"), "uncore_imc_2/event=0x5,umask=0xcf/");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->events.size(), 1u);
  EXPECT_EQ(r->name, "UNC_M_CAS_COUNT.RD");
  EXPECT_EQ(r->events[0].instance, 2);
  EXPECT_EQ(r->events[0].PerfSpelling(), "uncore_imc_2/event=0x05,umask=0xcf/");
  // Terms that are no listed event still resolve, as raw terms.
  r = ResolveOnPlatform(Must("sapphirerapids"), "imc/event=0x77,umask=0x1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->events[0].event, nullptr);
  EXPECT_EQ(r->events[0].PerfSpelling(), "uncore_imc_N/event=0x77,umask=0x01/");
  r = ResolveOnPlatform(Must("sapphirerapids"), "imc/umask=0x1");
  EXPECT_FALSE(r.ok());
}

TEST(PlatformCatalogTest, MetricsSayWhatTheyRead) {
  const perfmon::Platform& skx = Must("skylakex");
  absl::StatusOr<Resolution> r =
      ResolveOnPlatform(skx, "memory_bandwidth_total");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Resolution::Kind::kMetric);
  EXPECT_EQ(r->events.size(), 2u);
  EXPECT_TRUE(r->metric->core_events.empty());
  // A metric that reads core events says so.
  bool some_needs_core = false;
  for (const perfmon::Metric& m : skx.metrics) {
    if (!m.core_events.empty()) some_needs_core = true;
  }
  EXPECT_TRUE(some_needs_core);
  for (const perfmon::Platform* p : perfmon::AllPlatforms()) {
    EXPECT_NE(FindMetric(*p, "MEM_BW_TOTAL"), nullptr) << p->name;
    EXPECT_TRUE(ResolveOnPlatform(*p, "metric/MEM_BW_TOTAL").ok()) << p->name;
  }
}

TEST(PlatformCatalogTest, UnknownNamesNameThePlatformAndNeighbours) {
  absl::StatusOr<Resolution> r =
      ResolveOnPlatform(Must("icelakex"), "imc/CAS_CONT.RD");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("icelakex"));
  EXPECT_THAT(r.status().message(), HasSubstr("imc/CAS_COUNT.RD"));
  r = ResolveOnPlatform(Must("icelakex"), "UNC_M_CAS_CONT.WR");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("UNC_M_CAS_COUNT.WR"));
  r = ResolveOnPlatform(Must("icelakex"), "imx/CAS_COUNT.RD");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("imc"));
  r = ResolveOnPlatform(Must("amdzen2"), "metric/MEM_BW_READS");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("MEM_BW_TOTAL"));
}

}  // namespace
}  // namespace uncore::spec

namespace uncore::spec {
namespace {

TEST(PlatformCatalogTermsTest, NamedEventsTakeTheUsersTerms) {
  const perfmon::Platform* p = FindPlatform("nehalemex");
  ASSERT_NE(p, nullptr);
  // By name, with terms after ':'.
  absl::StatusOr<Resolution> r =
      ResolveOnPlatform(*p, "sbox/TO_R_PROG_EV:match=0x1,mask=0x3");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->name, "TO_R_PROG_EV");
  ASSERT_EQ(r->events.size(), 1u);
  EXPECT_EQ(r->events[0].terms, "event=0x00,match=0x1,mask=0x3");
  // In the kernel's syntax, the listed event is still found by its own
  // terms; the user's stay.
  r = ResolveOnPlatform(*p, "uncore_sbox_1/event=0x0,match=0x1,mask=0x3/");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->name, "TO_R_PROG_EV");
  EXPECT_EQ(r->events[0].PerfSpelling(),
            "uncore_sbox_1/event=0x00,match=0x1,mask=0x3/");
  // Terms go with one event only.
  r = ResolveOnPlatform(*p, "metric/MEM_BW_TOTAL:x=1");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace uncore::spec

namespace uncore::spec {
namespace {

TEST(PlatformCatalogTermsTest, OtherPmusInTheKernelsSyntax) {
  std::optional<EventSpec> e = KernelSyntaxEvent(" msr/tsc/ ");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventSpec::Kind::kGenericPerf);
  EXPECT_EQ(e->pmu, "msr");
  ASSERT_EQ(e->perf_terms.size(), 1u);
  EXPECT_EQ(e->perf_terms[0].name, "tsc");
  EXPECT_FALSE(e->perf_terms[0].value.has_value());
  e = KernelSyntaxEvent("uncore_imc_0/event=0x5,umask=207/");
  ASSERT_TRUE(e.has_value());
  ASSERT_EQ(e->perf_terms.size(), 2u);
  EXPECT_EQ(e->perf_terms[0].value, 0x5u);
  EXPECT_EQ(e->perf_terms[1].value, 207u);
  // Not the kernel's syntax: no trailing slash, no PMU, a value that is not
  // a number.
  EXPECT_FALSE(KernelSyntaxEvent("imc/CAS_COUNT.RD").has_value());
  EXPECT_FALSE(KernelSyntaxEvent("/event=0x5/").has_value());
  EXPECT_FALSE(KernelSyntaxEvent("msr/event=zz/").has_value());
  // Metrics by name, with or without metric/.
  const perfmon::Platform* spr = FindPlatform("spr");
  ASSERT_NE(spr, nullptr);
  absl::StatusOr<Resolution> m = ResolveMetricOnPlatform(*spr, "MEM_BW_TOTAL");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->kind, Resolution::Kind::kMetric);
  EXPECT_TRUE(ResolveMetricOnPlatform(*spr, "metric/MEM_BW_TOTAL").ok());
  EXPECT_FALSE(ResolveMetricOnPlatform(*spr, "imc/CAS_COUNT.RD").ok());
}

}  // namespace
}  // namespace uncore::spec
