// The counting plan of generated platforms against sysfs fixture trees
// (tests/platforms/perfmon_fixtures/make_fixtures.py): which PMU instances
// each name opens, the config words each gets from the PMU's format/ files,
// and how many group reads a snapshot costs.
#include "sdk/devices/perf/perfmon_plan.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/devices/device.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/spec/platform_catalog.h"

namespace uncore::devices::perf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

PmuCatalog Fixture(const std::string& name) {
  absl::StatusOr<PmuCatalog> c =
      DiscoverPmus(std::string(UNCORE_PERFMON_FIXTURES) + "/" + name);
  EXPECT_TRUE(c.ok()) << name << ": " << c.status();
  return c.ok() ? *std::move(c) : PmuCatalog{};
}

absl::StatusOr<PerfmonPlan> Plan(const std::string& platform,
                                 const std::vector<std::string>& specs,
                                 const PmuCatalog& pmus) {
  const perfmon::Platform* p = spec::FindPlatform(platform);
  EXPECT_NE(p, nullptr) << platform;
  std::vector<spec::Resolution> resolved;
  for (const std::string& s : specs) {
    absl::StatusOr<spec::Resolution> r = spec::ResolveOnPlatform(*p, s);
    EXPECT_TRUE(r.ok()) << s << ": " << r.status();
    if (r.ok()) resolved.push_back(*std::move(r));
  }
  return PlanPerfmon(resolved, pmus, p->name);
}

TEST(PerfmonPlanTest, SapphireRapidsCasOpensEveryImcButNotFreeRunning) {
  PmuCatalog pmus = Fixture("spr2s");
  EXPECT_EQ(pmus.num_sockets, 2);
  absl::StatusOr<PerfmonPlan> plan =
      Plan("sapphirerapids", {"imc/CAS_COUNT.RD"}, pmus);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->counters.size(), 12u);
  for (const PlannedCounter& c : plan->counters) {
    EXPECT_EQ(c.config.config, 0xcf05u) << c.pmu->name;
    EXPECT_EQ(c.event_name, "UNC_M_CAS_COUNT.RD");
    EXPECT_THAT(c.pmu->cpus, ElementsAre(0, 4));
  }
  EXPECT_EQ(plan->pmus.front(), "uncore_imc_0");
  EXPECT_EQ(plan->pmus.back(), "uncore_imc_11");
  // 12 iMC PMUs x 2 sockets; the 60 CHAs carry nothing and are not read.
  EXPECT_EQ(plan->group_reads, 24);

  // One named instance opens one PMU.
  plan = Plan("sapphirerapids", {"uncore_imc_3/event=0x5,umask=0xf0/"}, pmus);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->counters.size(), 1u);
  EXPECT_EQ(plan->counters[0].pmu->name, "uncore_imc_3");
  EXPECT_EQ(plan->counters[0].event_name, "UNC_M_CAS_COUNT.WR");
  EXPECT_EQ(plan->group_reads, 2);
}

TEST(PerfmonPlanTest, ExtendedUnitMaskLandsInTheHighConfigBits) {
  PmuCatalog pmus = Fixture("spr2s");
  const perfmon::Platform* spr = spec::FindPlatform("sapphirerapids");
  ASSERT_NE(spr, nullptr);
  // An event whose unit mask carries UMaskExt bits (above bit 7).
  const perfmon::Event* wide = nullptr;
  for (const perfmon::Event& e : spr->events) {
    if (e.pmu == "uncore_cha" && e.umask > 0xff) {
      wide = &e;
      break;
    }
  }
  ASSERT_NE(wide, nullptr);
  absl::StatusOr<PerfmonPlan> plan =
      Plan("sapphirerapids", {std::string(wide->name)}, pmus);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->counters.size(), 60u);
  const uint64_t want =
      wide->event | (wide->umask & 0xff) << 8 | (wide->umask >> 8) << 32;
  EXPECT_EQ(plan->counters[0].config.config, want) << wide->name;
  EXPECT_EQ(plan->group_reads, 120);
}

TEST(PerfmonPlanTest, GraniteRapidsBandwidthReadsBothSchedulers) {
  absl::StatusOr<PerfmonPlan> plan =
      Plan("graniterapids", {"metric/MEM_BW_READS"}, Fixture("gnr1s"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->counters.size(), 24u);
  int sch0 = 0;
  int sch1 = 0;
  for (const PlannedCounter& c : plan->counters) {
    if (c.config.config == 0xcf05) ++sch0;
    if (c.config.config == 0xcf06) ++sch1;
  }
  EXPECT_EQ(sch0, 12);
  EXPECT_EQ(sch1, 12);
  EXPECT_EQ(plan->pmus.size(), 12u);
  EXPECT_EQ(plan->group_reads, 12);  // both events share each PMU's group
}

TEST(PerfmonPlanTest, Zen4UmcAndDataFabric) {
  PmuCatalog pmus = Fixture("zen4");
  absl::StatusOr<PerfmonPlan> plan =
      Plan("amdzen4", {"metric/MEM_BW_TOTAL"}, pmus);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->counters.size(), 24u);
  EXPECT_EQ(plan->counters[0].pmu->name, "amd_umc_0");
  EXPECT_EQ(plan->counters[0].config.config, 0x10au);   // rdwrmask 1
  EXPECT_EQ(plan->counters[12].config.config, 0x20au);  // rdwrmask 2
  // Event 0x11f, umask 0x7fe: event bits 8+ go to config 32+, umask bits
  // 8+ to config 24+ (the kernel's amd_df formats).
  plan = Plan("amdzen4", {"local_processor_read_data_beats_cs4"}, pmus);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->counters.size(), 1u);
  EXPECT_EQ(plan->counters[0].pmu->name, "amd_df");
  EXPECT_EQ(plan->counters[0].config.config, 0x10700fe1fu);
}

TEST(PerfmonPlanTest, MissingPmuAndUnknownFieldAreErrors) {
  absl::StatusOr<PerfmonPlan> plan =
      Plan("amdzen4", {"umc_cas_cmd.rd"}, Fixture("spr2s"));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(plan.status().message(), HasSubstr("amd_umc"));
  EXPECT_THAT(plan.status().message(), HasSubstr("amdzen4"));
  plan = Plan("skylakex", {"imc/event=0x4,rdwrmask=0x1"}, Fixture("skx2s"));
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("rdwrmask"));
  EXPECT_THAT(plan.status().message(), HasSubstr("uncore_imc_0"));
}

// The perf backend's own planner (PerfDevice) opens generated events as
// generic perf events: every instance of the PMU, on each socket's CPU.
TEST(PerfmonPlanTest, PerfDevicePlansGeneratedEvents) {
  PmuCatalog pmus = Fixture("spr2s");
  absl::StatusOr<spec::Resolution> r = spec::ResolveOnPlatform(
      *spec::FindPlatform("sapphirerapids"), "metric/MEM_BW_TOTAL");
  ASSERT_TRUE(r.ok()) << r.status();
  ProgramRequest request;
  request.events = spec::ToPerfEventSpecs(*r);
  ASSERT_EQ(request.events.size(), 2u);
  EXPECT_EQ(request.events[0].text, "UNC_M_CAS_COUNT.RD");
  absl::StatusOr<std::vector<PerfCounter>> counters =
      PlanPerfCounters(request, pmus);
  ASSERT_TRUE(counters.ok()) << counters.status();
  // 2 events x 12 iMCs x 2 sockets.
  ASSERT_EQ(counters->size(), 48u);
  int reads = 0;
  int writes = 0;
  for (const PerfCounter& c : *counters) {
    EXPECT_THAT(c.pmu->name, ::testing::StartsWith("uncore_imc_"));
    EXPECT_THAT(c.pmu->name, ::testing::Not(HasSubstr("free_running")));
    if (c.config.config == 0xcf05) ++reads;
    if (c.config.config == 0xf005) ++writes;
  }
  EXPECT_EQ(reads, 24);
  EXPECT_EQ(writes, 24);

  // AMD Zen 4's UMC on its own fixture.
  r = spec::ResolveOnPlatform(*spec::FindPlatform("amdzen4"),
                              "umc/umc_cas_cmd.wr");
  ASSERT_TRUE(r.ok()) << r.status();
  request.events = spec::ToPerfEventSpecs(*r);
  counters = PlanPerfCounters(request, Fixture("zen4"));
  ASSERT_TRUE(counters.ok()) << counters.status();
  ASSERT_EQ(counters->size(), 12u);
  EXPECT_EQ((*counters)[0].config.config, 0x20au);
}

}  // namespace
}  // namespace uncore::devices::perf
