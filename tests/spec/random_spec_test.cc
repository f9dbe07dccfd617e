// Malformed and random specs never crash and always come back as a Status.
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"

namespace uncore::spec {
namespace {

// Parses, and when that works encodes or compiles: whatever the input, the
// result is a Status (ok or not) and, when ok, a self-consistent one.
// Returns whether the text made it through (parsed, and encoded or
// compiled).
bool Exercise(const std::string& text) {
  absl::StatusOr<Spec> spec = ParseSpec(text);
  if (!spec.ok()) {
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_FALSE(spec.status().message().empty());
    return false;
  }
  if (spec->is_metric()) {
    absl::StatusOr<CompiledMetric> m =
        CompileMetric(std::get<MetricSpec>(spec->value));
    if (!m.ok()) {
      EXPECT_FALSE(m.status().message().empty()) << text;
    }
    return m.ok();
  }
  const EventSpec& e = std::get<EventSpec>(spec->value);
  absl::StatusOr<Encoding> enc = EncodeEvent(e);
  if (!enc.ok()) {
    EXPECT_FALSE(enc.status().message().empty()) << text;
    return false;
  }
  EXPECT_EQ(enc->control & ~enc->box->control_writable_mask, 0u) << text;
  for (const FilterValue& fv : enc->filters) {
    EXPECT_EQ(fv.value & ~enc->box->filters[fv.filter].writable_mask, 0u)
        << text;
  }
  return true;
}

TEST(RandomSpecTest, HandWrittenMalformedSpecs) {
  const std::vector<std::string> cases = {
      "",
      "/",
      "//",
      "///",
      "cbo",
      "cbo/",
      "cbo//",
      "cbo[",
      "cbo[]/X",
      "cbo[-1]/X",
      "cbo[0-]/X",
      "cbo[99999999999999999999]/X",
      "cbo[0,,1]/X",
      "cbo/.",
      "cbo/LLC_LOOKUP.",
      "cbo/LLC_LOOKUP..DATA_READ",
      "cbo/LLC_LOOKUP.|",
      "cbo/LLC_LOOKUP.DATA_READ:",
      "cbo/LLC_LOOKUP.DATA_READ:=",
      "cbo/X:y=",
      "imc/event=",
      "imc/event=0x",
      "imc/event=0xzz",
      "imc/umask=1/",
      "imc/event=1,,umask=2/",
      "imc/event=1/extra",
      "metric/",
      "metric/.",
      "metric/MEM_BW_READS:",
      "metric/MEM_BW_READS:x",
      "metric/a.b.c",
      "msr/",
      "msr//",
      "msr/tsc",
      "msr/tsc=/",
      std::string(1, '\0'),
      std::string("imc/CAS_COUNT.RD\0", 17),
      "\xff\xfe/\x80",
      "cbo/\xc3\xa9",
      std::string(10000, 'a'),
      "cbo[" + std::string(5000, '1') + "]/X",
      "imc/CAS_COUNT.RD:thresh=0b",
      "imc/CAS_COUNT.RD:thresh=0b102",
      "qpi/CTO_COUNT:match0=0xffffffffffffffff",
  };
  // Every one of them is refused, with a message, at some step.
  for (const std::string& text : cases) {
    EXPECT_FALSE(Exercise(text)) << "accepted: \"" << text << "\"";
  }
}

TEST(RandomSpecTest, RandomTokenSoup) {
  const std::vector<std::string> tokens = {"cbo",
                                           "imc",
                                           "ha",
                                           "qpi",
                                           "pcu",
                                           "ubox",
                                           "r2pcie",
                                           "r3qpi",
                                           "irp",
                                           "uncore_imc",
                                           "uncore_cbox_3",
                                           "metric",
                                           "msr",
                                           "/",
                                           "[",
                                           "]",
                                           "0",
                                           "1",
                                           "-",
                                           ",",
                                           ":",
                                           ".",
                                           "|",
                                           "=",
                                           "0x1f",
                                           "0x182",
                                           "0xffffffffff",
                                           "CAS_COUNT",
                                           "RD",
                                           "WR",
                                           "LLC_LOOKUP",
                                           "DATA_READ",
                                           "TOR_INSERTS",
                                           "MISS_OPCODE",
                                           "event",
                                           "umask",
                                           "thresh",
                                           "edge",
                                           "inv",
                                           "filter_opc",
                                           "filter_state",
                                           "match0",
                                           "mask0",
                                           "DCLK",
                                           "UCLK",
                                           "MEM_BW_READS",
                                           "x",
                                           "tsc",
                                           " ",
                                           "{",
                                           "}",
                                           "$x"};
  std::mt19937 rng(12345);
  std::uniform_int_distribution<size_t> pick(0, tokens.size() - 1);
  std::uniform_int_distribution<int> length(1, 12);
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const int n = length(rng);
    for (int k = 0; k < n; ++k) text += tokens[pick(rng)];
    Exercise(text);
  }
}

TEST(RandomSpecTest, RandomBytes) {
  std::mt19937 rng(777);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 64);
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const int n = length(rng);
    for (int k = 0; k < n; ++k) text += static_cast<char>(byte(rng));
    Exercise(text);
  }
}

TEST(RandomSpecTest, RandomMetricExpressions) {
  const std::vector<std::string> tokens = {"{imc/CAS_COUNT.RD}",
                                           "{cbo/CLOCKTICKS}",
                                           "MEM_BW_READS",
                                           "(",
                                           ")",
                                           "+",
                                           "-",
                                           "*",
                                           "/",
                                           "1",
                                           "0",
                                           "1e9",
                                           "0x10",
                                           "round(",
                                           "ELAPSED_SECONDS",
                                           "{",
                                           "}",
                                           "$x",
                                           " "};
  std::mt19937 rng(99);
  std::uniform_int_distribution<size_t> pick(0, tokens.size() - 1);
  for (int i = 0; i < 5000; ++i) {
    std::string text;
    for (int k = 0; k < 8; ++k) text += tokens[pick(rng)];
    absl::StatusOr<CompiledMetric> m =
        CompileExpression(text, ivytown::BoxType::kImc, {{"x", 1}});
    if (m.ok()) {
      std::vector<double> values(m->events.size(), 3.0);
      (void)m->Evaluate(values, 0.5);
    }
  }
}

}  // namespace
}  // namespace uncore::spec
