// Tests for the derived-metric table (sdk/platforms/ivytown/model/metrics.h): counts,
// lookup, golden expressions, documentation of every correction, parameters,
// and a cross-check of every event spec in every expression against the box
// descriptors and the event catalog.
#include "sdk/platforms/ivytown/model/metrics.h"

#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"

namespace uncore::ivytown {
namespace {

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(c));
  return out;
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    out.emplace_back(s.substr(start, end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// The text inside each `{...}` of an expression.
std::vector<std::string> EventSpecs(std::string_view expr) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = expr.find('{', pos)) != std::string_view::npos) {
    const size_t end = expr.find('}', pos);
    if (end == std::string_view::npos) break;
    out.emplace_back(expr.substr(pos + 1, end - pos - 1));
    pos = end + 1;
  }
  return out;
}

// The `$name` parameters an expression uses.
std::set<std::string> ParamsUsed(std::string_view expr) {
  std::set<std::string> out;
  for (size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] != '$') continue;
    size_t j = i + 1;
    while (j < expr.size() && IsIdentChar(expr[j])) ++j;
    out.emplace(expr.substr(i + 1, j - i - 1));
    i = j - 1;
  }
  return out;
}

// The bare names (references to other metrics) outside the braces, without
// numbers, `$params`, ELAPSED_SECONDS and round.
std::vector<std::string> MetricRefs(std::string_view expr) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < expr.size()) {
    const char c = expr[i];
    if (c == '{') {
      const size_t end = expr.find('}', i);
      i = end == std::string_view::npos ? expr.size() : end + 1;
    } else if (c == '$' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i + 1;
      while (j < expr.size() && (IsIdentChar(expr[j]) || expr[j] == '.')) ++j;
      i = j;
    } else if (IsIdentStart(c)) {
      size_t j = i;
      while (j < expr.size() && IsIdentChar(expr[j])) ++j;
      const std::string_view name = expr.substr(i, j - i);
      if (name != "ELAPSED_SECONDS" && name != "round") out.emplace_back(name);
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

// The metric a bare name in `from`'s expression refers to: same box first,
// then any box if unique (the rule of metrics.h).
const MetricDescriptor* Resolve(const MetricDescriptor& from,
                                std::string_view name) {
  const MetricDescriptor* m =
      FindMetric(std::string(Box(from.box).name) + "." + std::string(name));
  return m != nullptr ? m : FindMetric(name);
}

// Parameters used by a metric's expression or by the metrics it refers to.
std::set<std::string> ParamsUsedTransitively(const MetricDescriptor& m,
                                             int depth = 0) {
  std::set<std::string> used = ParamsUsed(m.expression);
  if (depth > 8) return used;
  for (const std::string& ref : MetricRefs(m.expression)) {
    if (const MetricDescriptor* r = Resolve(m, ref); r != nullptr) {
      for (const std::string& p : ParamsUsedTransitively(*r, depth + 1)) {
        used.insert(p);
      }
    }
  }
  return used;
}

// `$name` replaced by the declared default, in decimal (so that `RANK$x`
// names a unit mask).
std::string SubstituteDefaults(const MetricDescriptor& m,
                               std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out += text[i];
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() && IsIdentChar(text[j])) ++j;
    const std::string_view name = text.substr(i + 1, j - i - 1);
    for (const MetricParameter& p : m.params) {
      if (p.present() && p.name == name) {
        out += std::to_string(p.default_value);
      }
    }
    i = j - 1;
  }
  return out;
}

std::optional<uint64_t> ParseInt(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    if (d >= base) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

size_t CountIn(BoxType box) {
  size_t n = 0;
  for (const MetricDescriptor& m : AllMetrics()) n += m.box == box ? 1 : 0;
  return n;
}

const MetricDescriptor& Get(std::string_view qualified) {
  const MetricDescriptor* m = FindMetric(qualified);
  EXPECT_NE(m, nullptr) << qualified;
  static const MetricDescriptor kNone{};
  return m != nullptr ? *m : kNone;
}

TEST(MetricsTest, CountsPerBox) {
  EXPECT_EQ(AllMetrics().size(), 93u);
  EXPECT_EQ(CountIn(BoxType::kUbox), 0u);
  EXPECT_EQ(CountIn(BoxType::kCbo), 37u);
  EXPECT_EQ(CountIn(BoxType::kHa), 4u);
  EXPECT_EQ(CountIn(BoxType::kImc), 14u);
  EXPECT_EQ(CountIn(BoxType::kIrp), 0u);
  EXPECT_EQ(CountIn(BoxType::kPcu), 4u);
  EXPECT_EQ(CountIn(BoxType::kQpi), 26u);
  EXPECT_EQ(CountIn(BoxType::kR2pcie), 8u);
  EXPECT_EQ(CountIn(BoxType::kR3qpi), 0u);
}

TEST(MetricsTest, GroupedInBoxTypeOrder) {
  const auto all = AllMetrics();
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_LE(all[i - 1].box, all[i].box) << all[i].name;
  }
}

TEST(MetricsTest, NamesUniqueWithinBox) {
  std::set<std::pair<BoxType, std::string>> seen;
  for (const MetricDescriptor& m : AllMetrics()) {
    EXPECT_TRUE(seen.emplace(m.box, Upper(m.name)).second)
        << "duplicate " << Box(m.box).name << "." << m.name;
  }
}

TEST(MetricsTest, FindMetricPlain) {
  bool ambiguous = true;
  const MetricDescriptor* m = FindMetric("MEM_BW_READS", &ambiguous);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(ambiguous);
  EXPECT_EQ(m->box, BoxType::kImc);
  EXPECT_EQ(m->name, "MEM_BW_READS");
  EXPECT_EQ(FindMetric("mem_bw_reads"), m);
  EXPECT_EQ(FindMetric("Mem_Bw_Reads"), m);
  const MetricDescriptor* q = FindMetric("QPI_SPEED");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->box, BoxType::kQpi);
}

TEST(MetricsTest, FindMetricQualified) {
  const MetricDescriptor* m = FindMetric("imc.MEM_BW_READS");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m, FindMetric("MEM_BW_READS"));
  EXPECT_EQ(FindMetric("IMC.mem_bw_reads"), m);

  const MetricDescriptor* r2 = FindMetric("r2pcie.CYC_USED_DNEVEN");
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(r2->box, BoxType::kR2pcie);
  const MetricDescriptor* cbo = FindMetric("cbo.cyc_used_dneven");
  ASSERT_NE(cbo, nullptr);
  EXPECT_EQ(cbo->box, BoxType::kCbo);
  EXPECT_NE(r2, cbo);

  const MetricDescriptor* ha = FindMetric("ha.PCT_RD_REQUESTS");
  const MetricDescriptor* imc = FindMetric("imc.PCT_RD_REQUESTS");
  ASSERT_NE(ha, nullptr);
  ASSERT_NE(imc, nullptr);
  EXPECT_EQ(ha->box, BoxType::kHa);
  EXPECT_EQ(imc->box, BoxType::kImc);

  // Every metric is found by its own qualified name.
  for (const MetricDescriptor& d : AllMetrics()) {
    bool ambiguous = true;
    EXPECT_EQ(
        FindMetric(std::string(Box(d.box).name) + "." + std::string(d.name),
                   &ambiguous),
        &d);
    EXPECT_FALSE(ambiguous) << d.name;
  }
}

TEST(MetricsTest, FindMetricAmbiguous) {
  for (std::string_view name :
       {"CYC_USED_DNEVEN", "CYC_USED_UPODD", "RING_THRU_DNODD_BYTES",
        "PCT_RD_REQUESTS", "pct_wr_requests"}) {
    bool ambiguous = false;
    EXPECT_EQ(FindMetric(name, &ambiguous), nullptr) << name;
    EXPECT_TRUE(ambiguous) << name;
    EXPECT_EQ(FindMetric(name), nullptr) << name;  // no out-parameter
  }
}

TEST(MetricsTest, FindMetricUnknown) {
  for (std::string_view name :
       {"NO_SUCH_METRIC", "", "imc.", "qpi.MEM_BW_READS", "nobox.MEM_BW_READS",
        "MEM_BW_READS.imc", "RxL_CRC_CYCLES_IN_LLR"}) {
    bool ambiguous = true;
    EXPECT_EQ(FindMetric(name, &ambiguous), nullptr) << name;
    EXPECT_FALSE(ambiguous) << name;
  }
}

TEST(MetricsTest, GoldenExpressions) {
  const MetricDescriptor& reads = Get("MEM_BW_READS");
  EXPECT_EQ(reads.expression, "{imc/CAS_COUNT.RD} * 64");
  EXPECT_EQ(reads.unit, "bytes");
  EXPECT_TRUE(reads.rate_per_second);
  EXPECT_EQ(Get("MEM_BW_WRITES").expression, "{imc/CAS_COUNT.WR} * 64");
  const MetricDescriptor& total = Get("MEM_BW_TOTAL");
  EXPECT_EQ(total.expression, "MEM_BW_READS + MEM_BW_WRITES");
  EXPECT_EQ(MetricRefs(total.expression),
            (std::vector<std::string>{"MEM_BW_READS", "MEM_BW_WRITES"}));

  // SAMPLE_INTERVAL is the box's own clock; the iMC uses its fixed counter.
  EXPECT_EQ(Get("cbo.AVG_INGRESS_DEPTH").expression,
            "{cbo/RxR_OCCUPANCY.IRQ} / {cbo/CLOCKTICKS}");
  EXPECT_EQ(Get("ha.PCT_CYCLES_BL_FULL").expression,
            "{ha/TxR_BL_CYCLES_FULL.ALL} / {ha/CLOCKTICKS} * 100");
  EXPECT_EQ(Get("imc.PCT_CYCLES_PPD").expression,
            "{imc/POWER_CHANNEL_PPD} / {imc/DCLK} * 100");
  EXPECT_EQ(Get("r2pcie.CYC_USED_DNEVEN").expression,
            "{r2pcie/RING_BL_USED.CCW_VR0_EVEN|CCW_VR1_EVEN} / "
            "{r2pcie/CLOCKTICKS}");
  EXPECT_EQ(
      Get("cbo.CYC_USED_DNEVEN").expression,
      "{cbo/RING_BL_USED.DOWN_VR0_EVEN|DOWN_VR1_EVEN} / {cbo/CLOCKTICKS}");
  // Wall time only where the manual means it: QPI_SPEED, in GT/s.
  const MetricDescriptor& speed = Get("QPI_SPEED");
  EXPECT_EQ(speed.expression,
            "round({qpi/CLOCKTICKS} / ELAPSED_SECONDS / 1e6) * 8 / 1000");
  EXPECT_EQ(speed.unit, "GT/s");
  for (const MetricDescriptor& m : AllMetrics()) {
    if (&m == &speed) continue;
    EXPECT_EQ(std::string_view(m.expression).find("ELAPSED_SECONDS"),
              std::string_view::npos)
        << m.name;
  }
  // Percent scaling turns the manual's "1 - (...)" into "100 - (...)".
  EXPECT_EQ(Get("PCT_REQUESTS_PAGE_HIT").expression,
            "100 - (PCT_REQUESTS_PAGE_EMPTY + PCT_REQUESTS_PAGE_MISS)");
  // Corrections.
  EXPECT_EQ(Get("PCT_CYC_FREQ_THERMAL_LTD").expression,
            "{pcu/FREQ_MAX_LIMIT_THERMAL_CYCLES} / {pcu/CLOCKTICKS} * 100");
  // decisions.md #31: F (RDS 0x1) as the manual's description and formula
  // say; the M count is DRS_M_FROM_QPI, a different metric.
  EXPECT_EQ(Get("DRS_DataC_M_FROM_QPI").expression,
            "{qpi/CTO_COUNT:match0=0x1C00,mask0=0x1FE0,match_rds=0x1,"
            "mask_rds=0xF} * 64");
  EXPECT_NE(Get("DRS_DataC_M_FROM_QPI").expression,
            Get("DRS_M_FROM_QPI").expression);
  EXPECT_EQ(Get("DATA_FROM_QPI_TO_LLC").expression,
            "{qpi/DIRECT2CORE.SUCCESS_RBT_HIT} * 64");
  EXPECT_EQ(Get("INGRESS_REJ_V_INS").expression,
            "{cbo/RxR_INSERTS.IRQ_REJ} / {cbo/RxR_INSERTS.IRQ}");
  EXPECT_EQ(Get("PCT_CYCLES_DRAM_RANKx_IN_CKE").expression,
            "{imc/POWER_CKE_CYCLES.RANK$x} / {imc/DCLK} * 100");
  EXPECT_EQ(Get("LLC_MPI").expression,
            "{cbo/LLC_LOOKUP.ANY:filter_state=0x1} / {cpu/instructions/}");
  // The manual's IO opcodes are kept: an I/O read is a device writing memory.
  EXPECT_NE(std::string_view(Get("IO_READ_BW").expression).find("0x19C"),
            std::string_view::npos);
  EXPECT_NE(std::string_view(Get("IO_READ_BW").expression).find("0x1E6"),
            std::string_view::npos);
  EXPECT_NE(std::string_view(Get("IO_WRITE_BW").expression).find("0x19E"),
            std::string_view::npos);
  EXPECT_NE(std::string_view(Get("IO_WRITE_BW").expression).find("0x1E4"),
            std::string_view::npos);
}

TEST(MetricsTest, EveryEntryDocumented) {
  const std::set<std::string_view> units = {
      "bytes", "MB", "%", "ratio", "cycles", "entries", "count", "GT/s"};
  for (const MetricDescriptor& m : AllMetrics()) {
    SCOPED_TRACE(m.name);
    EXPECT_FALSE(m.name.empty());
    EXPECT_FALSE(m.description.empty());
    EXPECT_FALSE(m.expression.empty());
    EXPECT_TRUE(units.contains(m.unit)) << m.unit;
    EXPECT_FALSE(m.manual_formula.empty());
    ASSERT_GE(m.manual_line.size(), 2u);
    EXPECT_EQ(m.manual_line[0], 'L');
    EXPECT_TRUE(ParseInt(m.manual_line.substr(1)).has_value());
  }
}

TEST(MetricsTest, FixedMetricsSayWhatAndWhy) {
  // The manual's errors (digest section 8, items 20-21) and the ones found
  // while checking every formula.
  const std::vector<std::string> fixed = {
      "cbo.AVG_TOR_DRDS_MISS_WHEN_NE",
      "cbo.AVG_TOR_DRDS_WHEN_NE",
      "cbo.AVG_TOR_DRD_LOC_MISS_LATENCY",
      "cbo.AVG_TOR_DRD_REM_MISS_LATENCY",
      "cbo.CYC_USED_DNEVEN",
      "cbo.CYC_USED_DNODD",
      "cbo.CYC_USED_UPEVEN",
      "cbo.CYC_USED_UPODD",
      "cbo.INGRESS_REJ_V_INS",
      "cbo.LLC_MPI",
      "cbo.RING_THRU_DNEVEN_BYTES",
      "cbo.RING_THRU_DNODD_BYTES",
      "cbo.RING_THRU_UPEVEN_BYTES",
      "cbo.RING_THRU_UPODD_BYTES",
      "imc.PCT_REQUESTS_PAGE_EMPTY",
      "pcu.PCT_CYC_FREQ_THERMAL_LTD",
      "qpi.DATA_FROM_QPI_TO_LLC",
      "qpi.DRS_DataC_M_FROM_QPI",
      "qpi.DRS_FULL_CACHELINE_MSGS_FROM_QPI",
      "qpi.PCT_LINK_CRC_RETRY_CYCLES",
      "r2pcie.CYC_USED_DNEVEN",
      "r2pcie.CYC_USED_DNODD",
      "r2pcie.CYC_USED_UPEVEN",
      "r2pcie.CYC_USED_UPODD",
      "r2pcie.RING_THRU_DNEVEN_BYTES",
      "r2pcie.RING_THRU_DNODD_BYTES",
      "r2pcie.RING_THRU_UPEVEN_BYTES",
      "r2pcie.RING_THRU_UPODD_BYTES"};
  for (const std::string& name : fixed) {
    const MetricDescriptor& m = Get(name);
    EXPECT_FALSE(m.fix.empty()) << name;
    EXPECT_FALSE(m.manual_formula.empty()) << name;
    EXPECT_NE(m.expression, m.manual_formula) << name;
  }
  // opc/nid in "FILTER" (FILTER0) instead of FILTER1 is moot with field
  // names: a notation note.
  for (std::string_view name :
       {"cbo.AVG_TOR_DRD_HIT_LATENCY", "cbo.IO_READ_BW", "cbo.IO_WRITE_BW",
        "cbo.LLC_DRD_RFO_MISS_TO_LOC_MEM", "cbo.LLC_DRD_RFO_MISS_TO_REM_MEM",
        "cbo.PCIE_DATA_BYTES"}) {
    EXPECT_TRUE(std::string_view(Get(name).fix).starts_with("Notation only"))
        << name;
  }
  for (const MetricDescriptor& m : AllMetrics()) {
    if (!m.fix.empty()) {
      EXPECT_FALSE(m.manual_formula.empty()) << m.name;
    }
  }
  // The core event of LLC_MPI is for the perf backend only, and says so.
  EXPECT_NE(std::string_view(Get("LLC_MPI").fix).find("perf backend"),
            std::string_view::npos);
}

TEST(MetricsTest, NoManualMisspellingsLeft) {
  // Names that do not exist, and notation the expression language lacks.
  const std::vector<std::string_view> banned = {"SAMPLE_INTERVAL",
                                                "TSC",
                                                "Cn_MSR",
                                                "FILTER1",
                                                "with:",
                                                "_PCI_PMON_",
                                                "IRQ_REJECTED",
                                                "MISS_OPC_MATCH",
                                                "OCCUPANCY_COUNTER0",
                                                "RxL_CRC_CYCLES_IN_LLR",
                                                "INST_RETIRED",
                                                "edge_det",
                                                "ROUND("};
  const std::set<std::string> bad_umasks = {"DN_EVEN",  "DN_ODD",  "UP_EVEN",
                                            "UP_ODD",   "CW_EVEN", "CW_ODD",
                                            "CCW_EVEN", "CCW_ODD", "SUCCESS"};
  for (const MetricDescriptor& m : AllMetrics()) {
    SCOPED_TRACE(m.name);
    for (std::string_view b : banned) {
      EXPECT_EQ(std::string_view(m.expression).find(b), std::string_view::npos)
          << b;
    }
    for (const std::string& spec : EventSpecs(m.expression)) {
      const size_t dot = spec.find('.');
      if (dot == std::string::npos) continue;
      const std::string umasks = spec.substr(dot + 1, spec.find(':') - dot - 1);
      for (const std::string& u : Split(umasks, '|')) {
        EXPECT_FALSE(bad_umasks.contains(Upper(u))) << spec;
      }
    }
  }
}

TEST(MetricsTest, PercentAndRateConventions) {
  for (const MetricDescriptor& m : AllMetrics()) {
    SCOPED_TRACE(m.name);
    const std::string_view name = m.name;
    const bool pct = name.starts_with("PCT_") || name.ends_with("_PCT");
    EXPECT_EQ(pct, m.unit == "%");
    if (pct) {
      const std::string_view e = m.expression;
      EXPECT_TRUE(e.ends_with(" * 100") || e.starts_with("100 - ")) << e;
    }
    if (m.unit == "bytes" || m.unit == "MB") {
      EXPECT_TRUE(m.rate_per_second);
    }
    if (m.unit == "%" || m.unit == "ratio" || m.unit == "GT/s") {
      EXPECT_FALSE(m.rate_per_second);
    }
  }
}

TEST(MetricsTest, BracesAndParenthesesBalanced) {
  for (const MetricDescriptor& m : AllMetrics()) {
    SCOPED_TRACE(m.name);
    int paren = 0;
    bool in_brace = false;
    for (char c : m.expression) {
      if (c == '{') {
        EXPECT_FALSE(in_brace) << "nested '{'";
        in_brace = true;
      } else if (c == '}') {
        EXPECT_TRUE(in_brace) << "unmatched '}'";
        in_brace = false;
      } else if (!in_brace && c == '(') {
        ++paren;
      } else if (!in_brace && c == ')') {
        --paren;
        EXPECT_GE(paren, 0) << "unmatched ')'";
      } else if (in_brace) {
        EXPECT_TRUE(c != '(' && c != ')' && c != ' ') << "in a spec: " << c;
      }
    }
    EXPECT_FALSE(in_brace) << "unclosed '{'";
    EXPECT_EQ(paren, 0);
  }
}

TEST(MetricsTest, ParamsDeclaredAndUsed) {
  for (const MetricDescriptor& m : AllMetrics()) {
    SCOPED_TRACE(m.name);
    std::set<std::string> declared;
    for (const MetricParameter& p : m.params) {
      if (!p.present()) continue;
      EXPECT_TRUE(declared.emplace(p.name).second) << "twice: " << p.name;
      EXPECT_LE(p.min_value, p.default_value) << p.name;
      EXPECT_LE(p.default_value, p.max_value) << p.name;
      EXPECT_FALSE(p.meaning.empty()) << p.name;
    }
    // Used directly or through a referenced metric (a referenced metric
    // receives the referring metric's values).
    const std::set<std::string> used = ParamsUsedTransitively(m);
    for (const std::string& p : used) {
      EXPECT_TRUE(declared.contains(p)) << "undeclared $" << p;
    }
    for (const std::string& p : declared) {
      EXPECT_TRUE(used.contains(p)) << "unused $" << p;
    }
    // A referenced metric's parameter has the same default and range.
    for (const std::string& ref : MetricRefs(m.expression)) {
      const MetricDescriptor* r = Resolve(m, ref);
      if (r == nullptr) continue;
      for (const MetricParameter& rp : r->params) {
        if (!rp.present()) continue;
        for (const MetricParameter& p : m.params) {
          if (p.name != rp.name) continue;
          EXPECT_EQ(p.default_value, rp.default_value) << ref;
          EXPECT_EQ(p.min_value, rp.min_value) << ref;
          EXPECT_EQ(p.max_value, rp.max_value) << ref;
        }
      }
    }
  }
  // The parameterised metrics the brief names.
  EXPECT_EQ(Get("PCT_CYCLES_DRAM_RANKx_IN_THR").params[0].name, "x");
  EXPECT_EQ(Get("PCT_CYCLES_DRAM_RANKx_IN_THR").params[0].max_value, 7);
  EXPECT_EQ(Get("DATA_FROM_QPI_TO_NODEx").params[0].name, "x");
  EXPECT_EQ(Get("AVG_TOR_DRD_LOC_MISS_LATENCY").params[0].name, "my_node");
  EXPECT_EQ(Get("AVG_TOR_DRD_LOC_MISS_LATENCY").params[0].default_value, 0x1);
  EXPECT_EQ(Get("LLC_DRD_RFO_MISS_TO_REM_MEM").params[0].name, "other_nodes");
  EXPECT_EQ(Get("LLC_DRD_RFO_MISS_TO_REM_MEM").params[0].default_value, 0xE);
}

TEST(MetricsTest, ReferencesResolveWithoutCycles) {
  for (const MetricDescriptor& m : AllMetrics()) {
    SCOPED_TRACE(m.name);
    std::vector<const MetricDescriptor*> stack = {&m};
    std::vector<int> depth = {0};
    while (!stack.empty()) {
      const MetricDescriptor* cur = stack.back();
      const int d = depth.back();
      stack.pop_back();
      depth.pop_back();
      ASSERT_LT(d, 5) << "references nest too deep (a cycle?)";
      for (const std::string& ref : MetricRefs(cur->expression)) {
        const MetricDescriptor* r = Resolve(*cur, ref);
        ASSERT_NE(r, nullptr) << ref;
        EXPECT_EQ(r->box, cur->box) << ref;  // every reference is same-box
        stack.push_back(r);
        depth.push_back(d + 1);
      }
    }
  }
}

// Checks one `{box/EVENT.UMASK|UMASK:mod,...}` of metric `m`: a real box,
// event (manual spelling), unit mask and user-settable field, and every value
// fits.  Counts generic perf events in `*generic`.
void CheckEventSpec(const MetricDescriptor& m, const std::string& raw,
                    int* generic) {
  SCOPED_TRACE(std::string(m.name) + ": {" + raw + "}");
  const std::string spec = SubstituteDefaults(m, raw);
  const size_t slash = spec.find('/');
  ASSERT_NE(slash, std::string::npos);
  const BoxDescriptor* box = FindBox(spec.substr(0, slash));
  if (box == nullptr) {
    // A generic perf event (`pmu/terms/`): only LLC_MPI needs one.
    EXPECT_EQ(m.name, "LLC_MPI");
    EXPECT_EQ(spec.back(), '/');
    ++*generic;
    return;
  }
  EXPECT_EQ(box->name, spec.substr(0, slash)) << "canonical box name";
  EXPECT_EQ(box->type, m.box) << "event of another box";
  std::string body = spec.substr(slash + 1);
  std::string mods;
  if (const size_t colon = body.find(':'); colon != std::string::npos) {
    mods = body.substr(colon + 1);
    body = body.substr(0, colon);
  }
  std::string event_name = body;
  std::vector<std::string> umasks;
  if (const size_t dot = body.find('.'); dot != std::string::npos) {
    event_name = body.substr(0, dot);
    umasks = Split(body.substr(dot + 1), '|');
  }
  if (box->fixed_counter.has_value() &&
      box->fixed_counter->name == event_name) {
    EXPECT_TRUE(umasks.empty());
    EXPECT_TRUE(mods.empty());
    return;
  }
  const EventDescriptor* event = FindEvent(box->type, event_name);
  ASSERT_NE(event, nullptr) << "no event " << event_name;
  EXPECT_EQ(event->name, event_name) << "use the manual's spelling";
  EXPECT_EQ(event->has_umasks(), !umasks.empty())
      << "give a unit mask exactly when the event has them";
  for (const std::string& u : umasks) {
    const UmaskDescriptor* um = event->FindUmask(u);
    EXPECT_NE(um, nullptr) << "no unit mask " << u;
    if (um != nullptr) {
      EXPECT_EQ(um->name, u) << "use the manual's spelling";
    }
  }
  if (mods.empty()) return;
  for (const std::string& mod : Split(mods, ',')) {
    const size_t eq = mod.find('=');
    const std::string field_name = mod.substr(0, eq);
    const FieldDescriptor* field = box->FindField(field_name);
    EXPECT_NE(field, nullptr) << "no field " << field_name;
    if (field == nullptr) continue;
    EXPECT_EQ(field->use, FieldUse::kModifier) << field_name;
    if (eq == std::string::npos) {
      EXPECT_TRUE(field->is_flag) << field_name << " needs a value";
      continue;
    }
    const std::optional<uint64_t> value = ParseInt(mod.substr(eq + 1));
    EXPECT_TRUE(value.has_value()) << mod;
    if (value.has_value()) {
      EXPECT_LE(*value, field->bits.max_value()) << mod << " too wide";
    }
  }
}

TEST(MetricsTest, EventSpecsResolve) {
  int generic = 0;
  for (const MetricDescriptor& m : AllMetrics()) {
    for (const std::string& raw : EventSpecs(m.expression)) {
      CheckEventSpec(m, raw, &generic);
    }
  }
  EXPECT_EQ(generic, 1);
}

// Parameter ranges fit the fields they feed.
TEST(MetricsTest, ParamRangesFitFields) {
  for (const MetricDescriptor& m : AllMetrics()) {
    for (const MetricParameter& p : m.params) {
      if (!p.present()) continue;
      SCOPED_TRACE(std::string(m.name) + " $" + std::string(p.name));
      for (const std::string& raw : EventSpecs(m.expression)) {
        const std::string needle = "=$" + std::string(p.name);
        const size_t at = raw.find(needle);
        if (at == std::string::npos) continue;
        const size_t start = raw.find_last_of(":,", at) + 1;
        const std::string field_name = raw.substr(start, at - start);
        const FieldDescriptor* field = Box(m.box).FindField(field_name);
        ASSERT_NE(field, nullptr) << field_name;
        EXPECT_LE(static_cast<uint64_t>(p.max_value), field->bits.max_value());
        EXPECT_GE(p.min_value, 0);
      }
    }
  }
}

}  // namespace
}  // namespace uncore::ivytown

namespace uncore::ivytown {
namespace {

TEST(PerfMetricNamesTest, IntelsNamesFindTheSameMetrics) {
  EXPECT_EQ(FindMetric("memory_bandwidth_read"), FindMetric("MEM_BW_READS"));
  EXPECT_EQ(FindMetric("MEMORY_BANDWIDTH_WRITE"), FindMetric("MEM_BW_WRITES"));
  EXPECT_EQ(FindMetric("memory_bandwidth_total"), FindMetric("MEM_BW_TOTAL"));
  // Devices reading memory: Intel's io_bandwidth_read, IvyTown's
  // IO_WRITE_BW (disk and network writes).
  EXPECT_EQ(FindMetric("io_bandwidth_read"), FindMetric("IO_WRITE_BW"));
  EXPECT_EQ(FindMetric("io_bandwidth_write"), FindMetric("IO_READ_BW"));
  for (const PerfMetricName& p : PerfMetricNames()) {
    EXPECT_NE(FindMetric(p.perf_name), nullptr) << p.perf_name;
  }
}

}  // namespace
}  // namespace uncore::ivytown
