// The formulas of the generated platforms: perf's metric language compiled
// into the SDK's evaluator, against values worked out by hand.
#include "sdk/spec/perf_metric.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/spec/platform_catalog.h"

namespace uncore::spec {
namespace {

using ::testing::HasSubstr;

Resolution Resolve(std::string_view platform, std::string_view name) {
  const perfmon::Platform* p = FindPlatform(platform);
  EXPECT_NE(p, nullptr) << platform;
  absl::StatusOr<Resolution> r = ResolveOnPlatform(*p, name);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

TEST(PerfMetricTest, ScaleUnits) {
  EXPECT_EQ(ParseScaleUnit("1MB/s").scale, 1.0);
  EXPECT_EQ(ParseScaleUnit("1MB/s").unit, "MB/s");
  EXPECT_EQ(ParseScaleUnit("100%").scale, 100.0);
  EXPECT_EQ(ParseScaleUnit("100%").unit, "%");
  EXPECT_EQ(ParseScaleUnit("1B").unit, "bytes");
  EXPECT_EQ(ParseScaleUnit("1e9Hz").scale, 1e9);
  EXPECT_EQ(ParseScaleUnit("").unit, "");
}

TEST(PerfMetricTest, MemoryBandwidthReadOnSapphireRapids) {
  // ( UNC_M_CAS_COUNT.RD * 64 / 1000000 ) / duration_time, in MB/s.
  absl::StatusOr<CompiledMetric> m =
      CompileResolution(Resolve("spr", "memory_bandwidth_read"), {});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->events.size(), 1u);
  EXPECT_EQ(m->events[0].pmu, "uncore_imc");
  EXPECT_EQ(m->unit, "MB/s");
  EXPECT_FALSE(m->per_second);
  EXPECT_DOUBLE_EQ(m->Evaluate(std::vector<double>{1e6}, 0.5),
                   1e6 * 64 / 1e6 / 0.5);
}

TEST(PerfMetricTest, ConstantsAndSourceCount) {
  // uncore_frequency: clockticks / (source_count * #num_packages) / 1e9 /
  // duration_time.
  PerfMetricContext context;
  context.num_packages = 2;
  context.source_count = [](size_t) { return 60; };
  absl::StatusOr<CompiledMetric> m =
      CompileResolution(Resolve("spr", "uncore_frequency"), context);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->unit, "GHz");
  EXPECT_DOUBLE_EQ(m->Evaluate(std::vector<double>{240e9}, 1.0),
                   240e9 / 120 / 1e9);
}

TEST(PerfMetricTest, EventsWithExtraTermsKeepThem) {
  // Skylake-SP's latency metrics read cha@EVENT\,config1\=0x...@.
  const Resolution r =
      Resolve("skx", "llc_data_read_demand_plus_prefetch_miss_latency");
  absl::StatusOr<CompiledMetric> m = CompileResolution(r, {});
  ASSERT_TRUE(m.ok()) << m.status();
  bool config1 = false;
  for (const EventSpec& e : m->events) {
    for (const PerfTerm& t : e.perf_terms) config1 |= t.name == "config1";
  }
  EXPECT_TRUE(config1);
  EXPECT_EQ(m->unit, "ns");
}

TEST(PerfMetricTest, TheSdkBandwidthIsBytesPerSecond) {
  absl::StatusOr<CompiledMetric> m =
      CompileResolution(Resolve("amdzen4", "metric/MEM_BW_TOTAL"), {});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(m->per_second);
  EXPECT_EQ(m->unit, "bytes");
  ASSERT_EQ(m->events.size(), 2u);
  EXPECT_EQ(m->events[0].pmu, "amd_umc");
  EXPECT_DOUBLE_EQ(m->Evaluate(std::vector<double>{10, 5}, 1.0), 15 * 64);
}

TEST(PerfMetricTest, CompositesAreSums) {
  absl::StatusOr<CompiledMetric> m =
      CompileResolution(Resolve("gnr", "imc/CAS_COUNT.RD"), {});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->events.size(), 2u);
  EXPECT_DOUBLE_EQ(m->Evaluate(std::vector<double>{3, 4}, 1.0), 7);
}

TEST(PerfMetricTest, RefusesWhatItCannotCount) {
  absl::StatusOr<CompiledMetric> m = CompileResolution(
      Resolve("spr", "llc_data_read_mpi_demand_plus_prefetch"), {});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("core events"));
  m = CompileResolution(Resolve("spr", "imc/CAS_COUNT.RD"), {});
  ASSERT_FALSE(m.ok());  // one event: nothing to compile
}

// Found by tests/fuzz/perf_metric_fuzzer.cc: each '(' recursed, and a
// formula of 4,000 of them overflowed the stack.  Nesting is bounded now.
TEST(PerfMetricTest, DeepNestingIsAnErrorNotAStackOverflow) {
  Resolution r = Resolve("spr", "memory_bandwidth_read");
  perfmon::Metric metric = *r.metric;
  const std::string deep = std::string(100000, '(') + "UNC_M_CAS_COUNT.RD" +
                           std::string(100000, ')');
  metric.expr = deep;
  r.metric = &metric;
  absl::StatusOr<CompiledMetric> m = CompileResolution(r, {});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("nested more than 128 deep"));
  const std::string negated = std::string(100000, '-') + "UNC_M_CAS_COUNT.RD";
  metric.expr = negated;
  EXPECT_FALSE(CompileResolution(r, {}).ok());
  // 100 levels are fine.
  const std::string nested = std::string(100, '(') + "UNC_M_CAS_COUNT.RD" +
                             std::string(100, ')') + " / duration_time";
  metric.expr = nested;
  m = CompileResolution(r, {});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->Evaluate(std::vector<double>{8}, 2.0), 4.0);
}

TEST(PerfMetricTest, EveryUncoreMetricOfEveryPlatformCompiles) {
  int compiled = 0;
  for (const perfmon::Platform* p : perfmon::AllPlatforms()) {
    for (const perfmon::Metric& metric : p->metrics) {
      if (!metric.core_events.empty()) continue;
      absl::StatusOr<Resolution> r =
          ResolveOnPlatform(*p, fmt::format("metric/{}", metric.name));
      ASSERT_TRUE(r.ok()) << p->name << " " << metric.name << ": "
                          << r.status();
      absl::StatusOr<CompiledMetric> m = CompileResolution(*r, {});
      ASSERT_TRUE(m.ok()) << p->name << " " << metric.name << ": "
                          << m.status();
      ++compiled;
    }
  }
  EXPECT_GT(compiled, 100);
}

}  // namespace
}  // namespace uncore::spec
