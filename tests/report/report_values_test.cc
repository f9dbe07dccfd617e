// Tests of the building blocks of sdk/report: number, duration and value
// formatting, table and CSV escaping of names, and ParseOutput.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "sdk/report/report.h"

namespace uncore::report {
namespace {

TEST(ReportHelpersTest, GroupDigits) {
  EXPECT_EQ(GroupDigits(0), "0");
  EXPECT_EQ(GroupDigits(999), "999");
  EXPECT_EQ(GroupDigits(1000), "1,000");
  EXPECT_EQ(GroupDigits(1234567), "1,234,567");
  EXPECT_EQ(GroupDigits(std::numeric_limits<uint64_t>::max()),
            "18,446,744,073,709,551,615");
}

TEST(ReportHelpersTest, FormatDurationPicksAUnit) {
  EXPECT_EQ(FormatDuration(0), "0 ns");
  EXPECT_EQ(FormatDuration(999), "999 ns");
  EXPECT_EQ(FormatDuration(1000), "1.00 us");
  EXPECT_EQ(FormatDuration(12'345), "12.3 us");
  EXPECT_EQ(FormatDuration(999'999), "1.00 ms");  // rounds up a unit
  EXPECT_EQ(FormatDuration(45'600'000), "45.6 ms");
  EXPECT_EQ(FormatDuration(1'500'000'000), "1.50 s");
  EXPECT_EQ(FormatDuration(123'400'000'000), "123 s");
  EXPECT_EQ(FormatDuration(12'345'600'000'000), "12,346 s");
}

TEST(ReportHelpersTest, FormatEventValueAppliesScaleUnitAndEstimate) {
  EXPECT_EQ(FormatEventValue(1234567, 1.0, "", false), "1,234,567");
  EXPECT_EQ(FormatEventValue(1234567, 1.0, "", true), "~1,234,567");
  EXPECT_EQ(FormatEventValue(4200, 1.0, "cycles", false), "4,200 cycles");
  // 20165 * 2^-14 J = 1.2307... J
  EXPECT_EQ(FormatEventValue(20165, 6.103515625e-05, "Joules", false),
            "1.23 Joules");
  EXPECT_EQ(FormatEventValue(20'000'000, 6.103515625e-05, "Joules", true),
            "~1,220.70 Joules");
  EXPECT_EQ(FormatEventValue(1, 6.103515625e-05, "Joules", false),
            "6.10e-05 Joules");
  EXPECT_EQ(FormatEventValue(10000, 6.103515625e-05, "Joules", false),
            "0.610 Joules");
  EXPECT_EQ(FormatEventValue(0, 6.103515625e-05, "Joules", false),
            "0.00 Joules");
}

TEST(ReportHelpersTest, FormatMetricValueUsesSiPrefixes) {
  EXPECT_EQ(FormatMetricValue(1.234e9, "bytes/s"), "1.23 Gbytes/s");
  EXPECT_EQ(FormatMetricValue(999.96, "bytes"), "1.00 kbytes");
  EXPECT_EQ(FormatMetricValue(0, "bytes"), "0 bytes");
  EXPECT_EQ(FormatMetricValue(-2.5e-6, "cycles"), "-2.50 ucycles");
  EXPECT_EQ(FormatMetricValue(12.345, "%"), "12.3 %");
  EXPECT_EQ(FormatMetricValue(0.5, "ratio"), "0.500 ratio");
  EXPECT_EQ(FormatMetricValue(1e-15, "bytes"), "0.00100 pbytes");
  EXPECT_EQ(FormatMetricValue(12'345.6, "MB"), "12,346 MB");  // has a prefix
  EXPECT_EQ(FormatMetricValue(7.2, "GT/s"), "7.20 GT/s");
  EXPECT_EQ(FormatMetricValue(4.5e6, ""), "4.50 M");
  EXPECT_EQ(FormatMetricValue(42, ""), "42.0");
  EXPECT_EQ(FormatMetricValue(std::nan(""), "bytes"), "n/a");
  EXPECT_EQ(FormatMetricValue(1e30, "bytes"), "1000000000000 Ebytes");
}

TEST(ReportHelpersTest, EscapeForTableKeepsOneLine) {
  EXPECT_EQ(EscapeForTable("plain name"), "plain name");
  EXPECT_EQ(EscapeForTable("a\nb\rc\td"), R"(a\nb\rc\td)");
  EXPECT_EQ(EscapeForTable("back\\slash"), R"(back\\slash)");
  EXPECT_EQ(EscapeForTable(std::string("nul\0bell\a", 9)),
            R"(nul\x00bell\x07)");
  EXPECT_EQ(EscapeForTable("\x7f"), R"(\x7f)");
  EXPECT_EQ(EscapeForTable("\xff\xfe"), R"(\xff\xfe)");
  EXPECT_EQ(EscapeForTable("caf\xC3\xA9"), "caf\xC3\xA9");       // valid UTF-8
  EXPECT_EQ(EscapeForTable("\xC2\x85"), R"(\xc2\x85)");          // C1 control
  EXPECT_EQ(EscapeForTable("\xC0\x80"), R"(\xc0\x80)");          // overlong NUL
  EXPECT_EQ(EscapeForTable("\xED\xA0\x80"), R"(\xed\xa0\x80)");  // surrogate
  EXPECT_EQ(EscapeForTable("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(DisplayWidth("caf\xC3\xA9"), 4u);
}

TEST(ReportHelpersTest, RepairUtf8ReplacesEachBadByte) {
  EXPECT_EQ(RepairUtf8(""), "");
  EXPECT_EQ(RepairUtf8("caf\xC3\xA9 \xE2\x98\x95"), "caf\xC3\xA9 \xE2\x98\x95");
  EXPECT_EQ(RepairUtf8("x\xff\xfey"), "x\xEF\xBF\xBD\xEF\xBF\xBDy");
  EXPECT_EQ(RepairUtf8("\xC3"), "\xEF\xBF\xBD");  // truncated
  EXPECT_EQ(RepairUtf8("\xED\xA0\x80"),           // a surrogate
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(RepairUtf8("a\nb\x01"), "a\nb\x01");  // controls are valid UTF-8
}

TEST(ReportHelpersTest, EscapeHtmlForTextAndAttributes) {
  EXPECT_EQ(EscapeHtml("plain"), "plain");
  EXPECT_EQ(EscapeHtml("<b>&amp;</b>"), "&lt;b&gt;&amp;amp;&lt;/b&gt;");
  EXPECT_EQ(EscapeHtml("say \"hi\" 'x'"), "say &quot;hi&quot; &#39;x&#39;");
  EXPECT_EQ(EscapeHtml("caf\xC3\xA9 \xE2\x98\x95"), "caf\xC3\xA9 \xE2\x98\x95");
  EXPECT_EQ(EscapeHtml("x\xffy"), "x\xEF\xBF\xBDy");
  EXPECT_EQ(EscapeHtml("tab\tlf\ncr\r"), "tab\tlf\ncr\r");
  // Other controls, DEL and C1 controls (U+0085) become U+FFFD.
  EXPECT_EQ(EscapeHtml("a\x01\x7f\xC2\x85"
                       "b"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(EscapeHtml("\xC2\xA0"), "\xC2\xA0");  // NBSP is not a control
}

TEST(ReportHelpersTest, CsvFieldQuotesAndRepairs) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  EXPECT_EQ(CsvField("x\xffy"), "x\xEF\xBF\xBDy");
  EXPECT_EQ(CsvField("caf\xC3\xA9"), "caf\xC3\xA9");
}

RegionResult Costing(uint64_t calls, uint64_t wall_ns, uint64_t overhead_ns,
                     uint64_t sampled_calls) {
  RegionResult region;
  region.calls = calls;
  region.wall_ns = wall_ns;
  region.overhead_ns = overhead_ns;
  region.sampled_calls = sampled_calls;
  return region;
}

TEST(ReportHelpersTest, OverheadFlaggedAboveOnePercentExactly) {
  EXPECT_FALSE(OverheadFlagged(Costing(1, 1'000, 10, 1)));  // 1%
  EXPECT_TRUE(OverheadFlagged(Costing(1, 1'000, 11, 1)));
  EXPECT_FALSE(OverheadFlagged(Costing(1, 1'000, 0, 1)));
  // 999 * 1% = 9.99: 9 is below, 10 above.
  EXPECT_FALSE(OverheadFlagged(Costing(1, 999, 9, 1)));
  EXPECT_TRUE(OverheadFlagged(Costing(1, 999, 10, 1)));
  EXPECT_FALSE(OverheadFlagged(Costing(0, 0, 0, 0)));
  EXPECT_TRUE(OverheadFlagged(Costing(1, 0, 1, 1)));
  EXPECT_FALSE(OverheadFlagged(Costing(1, 99, 0, 1)));  // 0.99 ns allowed
  EXPECT_TRUE(OverheadFlagged(Costing(1, 99, 1, 1)));
  // No overflow at the top of the range: 1% of 2^64 - 1 is
  // 184,467,440,737,095,516.15.
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  EXPECT_FALSE(OverheadFlagged(Costing(1, kMax, 184'467'440'737'095'516, 1)));
  EXPECT_TRUE(OverheadFlagged(Costing(1, kMax, 184'467'440'737'095'517, 1)));
  EXPECT_TRUE(OverheadFlagged(Costing(1, 1, kMax, 1)));
}

TEST(ReportHelpersTest, FormatOverheadPercentRoundsUpBelowTen) {
  EXPECT_EQ(FormatOverheadPercent(50, 1'000), "5.0%");
  EXPECT_EQ(FormatOverheadPercent(51, 1'000), "5.1%");
  EXPECT_EQ(FormatOverheadPercent(50'001, 1'000'000), "5.1%");  // 5.0001%
  EXPECT_EQ(FormatOverheadPercent(50, 999), "5.1%");            // 5.005%
  EXPECT_EQ(FormatOverheadPercent(99, 1'000), "9.9%");
  EXPECT_EQ(FormatOverheadPercent(100, 1'000), "10%");
  EXPECT_EQ(FormatOverheadPercent(300, 1'234), "24%");  // 24.3%
  EXPECT_EQ(FormatOverheadPercent(3'100, 1'000), "310%");
  EXPECT_EQ(FormatOverheadPercent(0, 1'000), "0.0%");
  EXPECT_EQ(FormatOverheadPercent(0, 0), "0%");
  EXPECT_EQ(FormatOverheadPercent(1, 0), "inf%");
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(FormatOverheadPercent(kMax, kMax), "100%");
  EXPECT_EQ(FormatOverheadPercent(kMax / 2, kMax), "50%");
}

TEST(ReportHelpersTest, SampledRegionsAreEstimates) {
  EXPECT_TRUE(IsSampled(Costing(1'000, 1, 0, 100)));
  EXPECT_TRUE(IsSampled(Costing(2, 1, 0, 1)));
  EXPECT_FALSE(IsSampled(Costing(1'000, 1, 0, 1'000)));  // every call
  EXPECT_FALSE(IsSampled(Costing(1'000, 1, 0, 0)));      // not recorded
  EXPECT_FALSE(IsSampled(Costing(0, 0, 0, 0)));
  EventCounts exact;
  EventCounts multiplexed;
  multiplexed.estimated = true;
  EXPECT_TRUE(IsEstimated(Costing(1'000, 1, 0, 100), exact));
  EXPECT_FALSE(IsEstimated(Costing(1'000, 1, 0, 1'000), exact));
  EXPECT_TRUE(IsEstimated(Costing(1'000, 1, 0, 1'000), multiplexed));
}

TEST(ReportHelpersTest, ParseOutputChoosesFormat) {
  auto parse = [](std::string_view text) {
    absl::StatusOr<ReportDestination> d = ParseOutput(text);
    EXPECT_TRUE(d.ok()) << text << ": " << d.status();
    return d.ok() ? *d : ReportDestination{};
  };
  EXPECT_EQ(parse("-").format, ReportFormat::kTable);
  EXPECT_EQ(parse("-").path, "");
  EXPECT_EQ(parse("out/run.json").format, ReportFormat::kJson);
  EXPECT_EQ(parse("out/run.json").path, "out/run.json");
  EXPECT_EQ(parse("RUN.JSON").format, ReportFormat::kJson);
  EXPECT_EQ(parse("run.csv").format, ReportFormat::kCsv);
  EXPECT_EQ(parse("run.html").format, ReportFormat::kHtml);
  EXPECT_EQ(parse("RUN.HTM").format, ReportFormat::kHtml);
  EXPECT_EQ(parse("run.hatchet.json").format, ReportFormat::kHatchet);
  EXPECT_EQ(parse("run.Hatchet.JSON").format, ReportFormat::kHatchet);
  EXPECT_EQ(parse("run.hatchet.json").path, "run.hatchet.json");
  EXPECT_EQ(parse("hatchet.json").format, ReportFormat::kJson);  // no ".h..."
  EXPECT_EQ(parse("run.hatchet").format, ReportFormat::kTable);
  EXPECT_EQ(parse("html").format, ReportFormat::kTable);
  EXPECT_EQ(parse("run.txt").format, ReportFormat::kTable);
  EXPECT_EQ(parse("run.txt").path, "run.txt");
  EXPECT_EQ(parse("json").format, ReportFormat::kTable);
  const absl::StatusOr<ReportDestination> empty = ParseOutput("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace uncore::report
