#include "sdk/spec/metric_expression.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/spec/encoder.h"

namespace uncore::spec {
namespace {

using ivytown::BoxType;
using ::testing::HasSubstr;

CompiledMetric MustCompile(std::string_view text) {
  absl::StatusOr<Spec> spec = ParseSpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  if (!spec.ok()) return {};
  absl::StatusOr<CompiledMetric> m =
      CompileMetric(std::get<MetricSpec>(spec->value));
  EXPECT_TRUE(m.ok()) << text << ": " << m.status();
  return m.ok() ? *std::move(m) : CompiledMetric{};
}

TEST(MetricExpressionTest, MemoryBandwidth) {
  CompiledMetric reads = MustCompile("metric/MEM_BW_READS");
  ASSERT_EQ(reads.events.size(), 1u);
  EXPECT_EQ(reads.events[0].Canonical(), "imc/CAS_COUNT.RD");
  EXPECT_EQ(reads.unit, "bytes");
  EXPECT_DOUBLE_EQ(reads.Evaluate(std::vector<double>{1000.0}, 1.0), 64000.0);

  CompiledMetric total = MustCompile("MEM_BW_TOTAL");
  ASSERT_EQ(total.events.size(), 2u);
  EXPECT_EQ(total.events[0].Canonical(), "imc/CAS_COUNT.RD");
  EXPECT_EQ(total.events[1].Canonical(), "imc/CAS_COUNT.WR");
  EXPECT_DOUBLE_EQ(total.Evaluate(std::vector<double>{10.0, 5.0}, 1.0),
                   15.0 * 64);
}

TEST(MetricExpressionTest, DivisionByZeroIsNan) {
  CompiledMetric m = MustCompile("metric/imc.PCT_RD_REQUESTS");
  std::vector<double> zeros(m.events.size(), 0.0);
  EXPECT_TRUE(std::isnan(m.Evaluate(zeros, 1.0)));
}

TEST(MetricExpressionTest, ParametersAreSubstituted) {
  CompiledMetric rank3 = MustCompile("metric/PCT_CYCLES_DRAM_RANKx_IN_CKE:x=3");
  bool found_rank3 = false;
  for (const EventSpec& e : rank3.events) {
    found_rank3 =
        found_rank3 || e.Canonical().find("RANK3") != std::string::npos;
  }
  EXPECT_TRUE(found_rank3) << rank3.expression;
}

TEST(MetricExpressionTest, AdHocExpressions) {
  absl::StatusOr<CompiledMetric> m = CompileExpression(
      "({imc/CAS_COUNT.RD} + {imc/CAS_COUNT.WR}) * 64 / ELAPSED_SECONDS / 1e9",
      BoxType::kImc);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->Evaluate(std::vector<double>{1e9, 1e9}, 2.0), 64.0);
  absl::StatusOr<CompiledMetric> r =
      CompileExpression("round(-{ubox/UCLK} / 3) + 0x10", BoxType::kUbox);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->Evaluate(std::vector<double>{10.0}, 1.0), -3.0 + 16.0);
  // The same event twice is counted once.
  absl::StatusOr<CompiledMetric> d = CompileExpression(
      "{imc/CAS_COUNT.RD} / {IMC/cas_count.rd}", BoxType::kImc);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->events.size(), 1u);
}

TEST(MetricExpressionTest, Errors) {
  EXPECT_THAT(CompileExpression("{imc/NOPE}", BoxType::kImc).status().message(),
              HasSubstr("unknown imc event"));
  EXPECT_THAT(CompileExpression("1 +", BoxType::kImc).status().message(),
              HasSubstr("expected"));
  EXPECT_THAT(CompileExpression("(1", BoxType::kImc).status().message(),
              HasSubstr("')'"));
  EXPECT_THAT(
      CompileExpression("{imc/CAS_COUNT.RD", BoxType::kImc).status().message(),
      HasSubstr("closing"));
  EXPECT_THAT(CompileExpression("FOO * 2", BoxType::kImc).status().message(),
              HasSubstr("unknown name 'FOO'"));
  EXPECT_THAT(CompileExpression("$y", BoxType::kImc).status().message(),
              HasSubstr("$y"));
}

// Found by fuzzing (tests/fuzz/spec_parser_fuzzer.cc, with long inputs):
// each '(' recursed, and an expression of 4,000 of them overflowed the
// stack.  Nesting is bounded now.
TEST(MetricExpressionTest, DeepNestingIsAnErrorNotAStackOverflow) {
  const std::string deep =
      std::string(100000, '(') + "1" + std::string(100000, ')');
  EXPECT_THAT(CompileExpression(deep, BoxType::kImc).status().message(),
              HasSubstr("nested more than 128 deep"));
  EXPECT_FALSE(
      CompileExpression(std::string(100000, '-') + "1", BoxType::kImc).ok());
  std::string rounds;
  for (int i = 0; i < 100000; ++i) rounds += "round(";
  EXPECT_FALSE(CompileExpression(rounds + "1", BoxType::kImc).ok());
  absl::StatusOr<CompiledMetric> fine = CompileExpression(
      std::string(100, '(') + "2" + std::string(100, ')') + " * 3",
      BoxType::kImc);
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(fine->Evaluate({}, 1.0), 6.0);
}

// Every one of the manual's 93 metrics compiles with its default parameters,
// and every event it needs encodes (or is a perf event).
TEST(MetricExpressionTest, AllMetricsCompileAndEncode) {
  int count = 0;
  for (const ivytown::MetricDescriptor& m : ivytown::AllMetrics()) {
    MetricSpec spec;
    spec.metric = &m;
    absl::StatusOr<CompiledMetric> compiled = CompileMetric(spec);
    ASSERT_TRUE(compiled.ok()) << m.name << ": " << compiled.status();
    EXPECT_FALSE(compiled->events.empty()) << m.name;
    for (const EventSpec& e : compiled->events) {
      if (e.kind == EventSpec::Kind::kGenericPerf) continue;
      absl::StatusOr<Encoding> enc = EncodeEvent(e);
      EXPECT_TRUE(enc.ok())
          << m.name << ": " << e.Canonical() << ": " << enc.status();
    }
    std::vector<double> ones(compiled->events.size(), 1.0);
    (void)compiled->Evaluate(ones, 1.0);
    ++count;
  }
  EXPECT_EQ(count, 93);
}

}  // namespace
}  // namespace uncore::spec
