// The generated tables against the kernel's format attributes (issue 23
// item 3): every event the generator calls openable encodes on the sysfs
// fixture trees made from the kernel's attribute arrays
// (tests/platforms/perfmon_fixtures/SOURCES.md), every event it marks
// unopenable is refused there with the encoder's own message, and the
// count of unopenable events per platform is pinned.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/devices/perf/perfmon_plan.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/spec/platform_catalog.h"

namespace uncore::devices::perf {
namespace {

using ::testing::HasSubstr;

PmuCatalog Fixture(const std::string& name) {
  absl::StatusOr<PmuCatalog> c =
      DiscoverPmus(std::string(UNCORE_PERFMON_FIXTURES) + "/" + name);
  EXPECT_TRUE(c.ok()) << name << ": " << c.status();
  return c.ok() ? *std::move(c) : PmuCatalog{};
}

absl::StatusOr<PerfmonPlan> PlanEvent(const perfmon::Platform& p,
                                      const perfmon::Event& e,
                                      const PmuCatalog& pmus) {
  absl::StatusOr<spec::Resolution> r = spec::ResolveOnPlatform(p, e.name);
  EXPECT_TRUE(r.ok()) << e.name << ": " << r.status();
  if (!r.ok()) return r.status();
  return PlanPerfmon({*r}, pmus, p.name);
}

TEST(PerfmonKernelFormatsTest, UnopenableCountsPerPlatform) {
  // Recounted after the fixes of issue 23 item 3 (before them: HSX 3,
  // BDX 3, ICX 2, SPR 16, EMR 16, GNR 81, SRF 81).
  const std::map<std::string, int> want = {
      {"haswellx", 0},      {"broadwellx", 0},     {"skylakex", 0},
      {"cascadelakex", 0},  {"icelakex", 2},       {"sapphirerapids", 7},
      {"emeraldrapids", 7}, {"graniterapids", 31}, {"sierraforest", 31},
      {"amdzen2", 0},       {"amdzen3", 0},        {"amdzen4", 0},
      {"amdzen5", 0},
  };
  int total = 0;
  for (const perfmon::Platform* p : perfmon::AllPlatforms()) {
    int n = 0;
    for (const perfmon::Event& e : p->events) {
      if (!e.unopenable.empty()) ++n;
    }
    total += n;
    auto it = want.find(std::string(p->name));
    if (it == want.end()) {
      // The hand tables (Xeon 7500 / E7) are not checked.
      EXPECT_EQ(n, 0) << p->name;
      continue;
    }
    EXPECT_EQ(n, it->second) << p->name;
  }
  EXPECT_EQ(total, 78);
}

// The kernel's PMU type names per platform, copied by hand from the type
// tables of arch/x86/events/intel/uncore_snbep.c (hswep_/bdx_/skx_/icx_
// msr, pci and mmio uncores; spr_uncores; gnr_uncores, which names mdf_sbo,
// ignores UPI and B2UPI and leaves B2HOT, CXLCM, CXLDP and CHACMS unnamed)
// and amd/uncore.c: independent of the generator's own table, so a PMU it
// names wrongly is caught here.  An event on any other PMU must be marked.
TEST(PerfmonKernelFormatsTest, EveryOpenableEventIsOnAPmuTheKernelNames) {
  const std::vector<std::string> hsx = {
      "uncore_ubox",   "uncore_cbox", "uncore_sbox", "uncore_pcu",
      "uncore_ha",     "uncore_imc",  "uncore_irp",  "uncore_qpi",
      "uncore_r2pcie", "uncore_r3qpi"};
  const std::vector<std::string> skx = {
      "uncore_ubox",   "uncore_cha",  "uncore_iio", "uncore_irp",
      "uncore_pcu",    "uncore_imc",  "uncore_m2m", "uncore_upi",
      "uncore_m2pcie", "uncore_m3upi"};
  const std::vector<std::string> spr = {
      "uncore_cha",   "uncore_iio", "uncore_irp",   "uncore_m2pcie",
      "uncore_pcu",   "uncore_imc", "uncore_m2m",   "uncore_upi",
      "uncore_m3upi", "uncore_mdf", "uncore_cxlcm", "uncore_cxldp",
      "uncore_hbm"};
  const std::vector<std::string> gnr = {
      "uncore_cha",   "uncore_iio",   "uncore_irp",
      "uncore_pcu",   "uncore_ubox",  "uncore_imc",
      "uncore_b2cmi", "uncore_b2cxl", "uncore_mdf_sbo"};
  const std::vector<std::string> zen = {"amd_df", "amd_l3", "amd_umc"};
  const std::map<std::string, std::vector<std::string>> kernel = {
      {"haswellx", hsx},      {"broadwellx", hsx},    {"skylakex", skx},
      {"cascadelakex", skx},  {"icelakex", skx},      {"sapphirerapids", spr},
      {"emeraldrapids", spr}, {"graniterapids", gnr}, {"sierraforest", gnr},
      {"amdzen2", zen},       {"amdzen3", zen},       {"amdzen4", zen},
      {"amdzen5", zen},
  };
  for (const perfmon::Platform* p : perfmon::AllPlatforms()) {
    auto it = kernel.find(std::string(p->name));
    if (it == kernel.end()) continue;  // the hand tables
    for (const perfmon::Event& e : p->events) {
      const bool named = std::find(it->second.begin(), it->second.end(),
                                   std::string(e.pmu)) != it->second.end();
      if (!named) {
        EXPECT_FALSE(e.unopenable.empty())
            << p->name << " " << e.name << " on " << e.pmu;
      } else {
        EXPECT_THAT(std::string(e.unopenable),
                    ::testing::Not(HasSubstr(" PMU")))
            << p->name << " " << e.name;
      }
    }
  }
}

TEST(PerfmonKernelFormatsTest, TheMarkAgreesWithTheKernelFixtures) {
  const std::map<std::string, std::string> fixtures = {
      {"haswellx", "hsx2s"},      {"skylakex", "skx2s"},
      {"cascadelakex", "skx2s"},  {"sapphirerapids", "spr2s"},
      {"emeraldrapids", "spr2s"}, {"graniterapids", "gnr1s"},
      {"sierraforest", "gnr1s"},  {"amdzen4", "zen4"},
      {"amdzen5", "zen4"},
  };
  for (const auto& [name, tree] : fixtures) {
    const perfmon::Platform* p = spec::FindPlatform(name);
    ASSERT_NE(p, nullptr) << name;
    PmuCatalog pmus = Fixture(tree);
    int opened = 0;
    int refused = 0;
    for (const perfmon::Event& e : p->events) {
      if (PmuInstances(pmus, e.pmu, std::nullopt).empty()) continue;
      absl::StatusOr<PerfmonPlan> plan = PlanEvent(*p, e, pmus);
      if (e.unopenable.empty()) {
        EXPECT_TRUE(plan.ok())
            << name << " " << e.name << ": " << plan.status();
        ++opened;
      } else {
        EXPECT_FALSE(plan.ok()) << name << " " << e.name;
        if (!plan.ok()) {
          EXPECT_THAT(std::string(plan.status().message()),
                      HasSubstr("does not fit"))
              << name << " " << e.name;
        }
        ++refused;
      }
    }
    EXPECT_GT(opened, 0) << name;
    (void)refused;
  }
}

TEST(PerfmonKernelFormatsTest, SkylakeChaFiltersLandInConfig1HighHalf) {
  PmuCatalog pmus = Fixture("skx2s");
  for (const char* name : {"skylakex", "cascadelakex"}) {
    const perfmon::Platform* p = spec::FindPlatform(name);
    ASSERT_NE(p, nullptr);
    int filtered = 0;
    for (const perfmon::Event& e : p->events) {
      if (e.pmu != "uncore_cha" ||
          e.terms.find("config1=") == std::string_view::npos) {
        continue;
      }
      absl::StatusOr<PerfmonPlan> plan = PlanEvent(*p, e, pmus);
      ASSERT_TRUE(plan.ok()) << e.name << ": " << plan.status();
      const uint64_t config1 = plan->counters[0].config.config1;
      // Every bit Intel's FILTER_VALUE sets is one of the kernel's skx CHA
      // filter fields of config1's high half (filter_rem .. filter_isoc).
      EXPECT_EQ(config1 & 0xffffffffu, 0u) << e.name;
      EXPECT_NE(config1, 0u) << e.name;
      ++filtered;
    }
    EXPECT_EQ(filtered, 24) << name;  // 48 over the two platforms
  }
  const perfmon::Platform* skx = spec::FindPlatform("skylakex");
  for (const perfmon::Metric& m : skx->metrics) {
    EXPECT_THAT(std::string(m.uncore_events),
                ::testing::Not(
                    ::testing::ContainsRegex("config1=0x[0-9a-f]{1,8}( |$)")))
        << m.name;
  }
}

TEST(PerfmonKernelFormatsTest, HaswellPcuOccupancySelectsWithOccSel) {
  const perfmon::Platform* p = spec::FindPlatform("haswellx");
  ASSERT_NE(p, nullptr);
  absl::StatusOr<spec::Resolution> r =
      spec::ResolveOnPlatform(*p, "UNC_P_POWER_STATE_OCCUPANCY.CORES_C6");
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<PerfmonPlan> plan = PlanPerfmon({*r}, Fixture("hsx2s"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  // event 0x80, occ_sel 3 at config:14-15.
  EXPECT_EQ(plan->counters[0].config.config, 0xc080u);
}

TEST(PerfmonKernelFormatsTest, IioPortAndFcMasksLeaveTheUnitMask) {
  const perfmon::Platform* p = spec::FindPlatform("sapphirerapids");
  ASSERT_NE(p, nullptr);
  absl::StatusOr<spec::Resolution> r =
      spec::ResolveOnPlatform(*p, "UNC_IIO_DATA_REQ_BY_CPU.MEM_READ.PART0");
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<PerfmonPlan> plan = PlanPerfmon({*r}, Fixture("spr2s"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  // event 0xc0, umask 0x04, ch_mask 1 at config:36-47, fc_mask 7 at 48-50.
  EXPECT_EQ(plan->counters[0].config.config,
            0xc0u | 0x04u << 8 | uint64_t{1} << 36 | uint64_t{7} << 48);
}

TEST(PerfmonKernelFormatsTest, SapphireRapidsHbmIsTheKernelsHbmPmu) {
  const perfmon::Platform* p = spec::FindPlatform("sapphirerapids");
  ASSERT_NE(p, nullptr);
  absl::StatusOr<spec::Resolution> r =
      spec::ResolveOnPlatform(*p, "UNC_MCHBM_CLOCKTICKS");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->events[0].pmu, "uncore_hbm");
  absl::StatusOr<PerfmonPlan> plan = PlanPerfmon({*r}, Fixture("spr2s"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->pmus.size(), 32u);
}

}  // namespace
}  // namespace uncore::devices::perf
