// Tests of the HTML report (FormatHtml): escaping of every text, every
// region in the SVG, nothing outside the page, the header, the timeline and
// its absence, the bars, and speed with 20,000 calls.  Headless Chromium
// renders the page in report_html_chromium_test (report_views_test.py).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/report/report.h"
#include "sdk/report/timeline.h"
#include "tests/report/report_test_util.h"
#include "tests/testing/sanitized.h"

namespace uncore::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The values of attribute `name` inside <svg>...</svg> elements.
std::multiset<std::string> SvgAttributes(const std::string& page,
                                         std::string_view name) {
  std::multiset<std::string> values;
  const std::string needle = std::string(name) + "=\"";
  size_t svg = 0;
  while ((svg = page.find("<svg", svg)) != std::string::npos) {
    const size_t end = page.find("</svg>", svg);
    if (end == std::string::npos) break;
    const std::string_view body(page.data() + svg, end - svg);
    for (size_t at = body.find(needle); at != std::string_view::npos;
         at = body.find(needle, at + 1)) {
      const size_t begin = at + needle.size();
      values.insert(
          std::string(body.substr(begin, body.find('"', begin) - begin)));
    }
    svg = end;
  }
  return values;
}

size_t Count(const std::string& text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

// A timeline of MakeResults' regions: one call of each on thread 0, the
// first two also on thread 1, and rates on both sockets.
Timeline MakeTimeline(const Results& results) {
  Timeline t;
  t.threads = {{100, "main"}, {101, "worker <1> & \"co\""}};
  for (size_t r = 0; r < results.regions.size(); ++r) {
    const uint64_t begin = r * 100'000'000;
    t.calls.push_back({static_cast<int>(r), 0, begin, begin + 50'000'000});
    if (r < 2) {
      t.calls.push_back({static_cast<int>(r), 1, begin, begin + 20'000'000});
    }
  }
  for (uint64_t k = 0; k < 10; ++k) {
    TimelineRates rates;
    rates.begin_ns = k * 200'000'000;
    rates.end_ns = rates.begin_ns + 200'000'000;
    const double v = static_cast<double>(k + 1);
    rates.event_rates = {{v * 1e6, v, v * 2e3, v}, {v * 5e5, v, v, v}};
    rates.metrics = {{{v * 64e6, true}, {50, true}},
                     {{v * 32e6, true}, {0, k != 3}}};
    t.rates.push_back(rates);
  }
  return t;
}

std::set<std::string> EscapedPaths(const Results& results) {
  std::set<std::string> paths;
  for (const RegionResult& region : results.regions) {
    paths.insert(EscapeHtml(region.path));
  }
  return paths;
}

TEST(HtmlReportTest, EveryRegionInTheSvgWithOrWithoutTimeline) {
  const Results results = MakeResults(false);
  const Timeline timeline = MakeTimeline(results);
  for (const Timeline* t : {&timeline, static_cast<const Timeline*>(nullptr)}) {
    const std::string page = FormatHtml(results, t);
    const std::multiset<std::string> regions =
        SvgAttributes(page, "data-region");
    const std::set<std::string> distinct(regions.begin(), regions.end());
    EXPECT_EQ(distinct, EscapedPaths(results));
  }
}

TEST(HtmlReportTest, EscapesNamesAndKeepsUtf8Valid) {
  Results results = MakeResults(false);
  results.regions[1].name =
      "<script>alert('x')</script> & \"caf\xC3\xA9 \xE2\x98\x95\"";
  results.regions[1].path = "main/" + results.regions[1].name;
  results.regions[2].path =  // the child of the renamed region, still nested
      results.regions[1].path + "/" + results.regions[2].name;
  results.run.host = "<host>";
  results.run.errors = {"bad </li><li>injected"};
  results.events[0].canonical = "imc/<CAS>";
  results.metrics[0].name = "BW\"<";
  const Timeline timeline = MakeTimeline(results);
  const std::string page = FormatHtml(results, &timeline);
  EXPECT_TRUE(IsValidUtf8(page));
  EXPECT_THAT(page, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(page, Not(HasSubstr("<host>")));
  EXPECT_THAT(page, Not(HasSubstr("</li><li>injected")));
  EXPECT_THAT(page, Not(HasSubstr("imc/<CAS>")));
  EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; "
                              "&amp; &quot;caf\xC3\xA9 \xE2\x98\x95&quot;"));
  EXPECT_THAT(page, HasSubstr("&lt;host&gt;"));
  EXPECT_THAT(page, HasSubstr("imc/&lt;CAS&gt;"));
  EXPECT_THAT(page, HasSubstr("BW&quot;&lt;"));
  // kWeirdName: its newline kept (harmless in HTML), its invalid bytes
  // U+FFFD, as in the CSV.
  EXPECT_THAT(page, HasSubstr("a &quot;quoted&quot;, comma\nnewline "
                              "\xEF\xBF\xBD\xEF\xBF\xBD"));
  // Exactly one <script> element: the page's own.
  EXPECT_EQ(Count(page, "<script"), 1u);
  EXPECT_EQ(Count(page, "</script>"), 1u);
  const std::multiset<std::string> regions = SvgAttributes(page, "data-region");
  EXPECT_EQ(std::set<std::string>(regions.begin(), regions.end()),
            EscapedPaths(results));
}

// The page's own script, between <script> and </script>.
std::string PageScript(const std::string& page) {
  const size_t open = page.find("<script>");
  const size_t close = page.find("</script>");
  if (open == std::string::npos || close == std::string::npos) return "";
  return page.substr(open + 8, close - open - 8);
}

// Issue 36, R9: regions named as Object.prototype's members broke the
// page's script, which kept the elements of each region in a plain object
// indexed by the name ("toString" found a function, "__proto__" the
// prototype).  The script keeps them in a Map and never indexes a plain
// object; report_html_chromium_test renders such a page.
TEST(HtmlReportTest, PrototypeNamesAreNotObjectKeys) {
  Results results = MakeResults(false);
  const std::vector<std::string> names = {
      "constructor", "__proto__", "toString", "valueOf", "hasOwnProperty"};
  for (size_t i = 0; i < names.size() && i < results.regions.size(); ++i) {
    results.regions[i].name = names[i];
    results.regions[i].path = names[i];
    results.regions[i].depth = 0;
  }
  const Timeline timeline = MakeTimeline(results);
  const std::string page = FormatHtml(results, &timeline);
  for (const std::string& name : names) {
    EXPECT_THAT(page, HasSubstr("data-region=\"" + name + "\""));
  }
  const std::string script = PageScript(page);
  ASSERT_FALSE(script.empty());
  // No object literal used as a map, no Object.prototype lookups by key.
  EXPECT_THAT(script, Not(HasSubstr("= {}")));
  EXPECT_THAT(script, Not(HasSubstr("={}")));
  EXPECT_THAT(script, Not(HasSubstr("byRegion[")));
  EXPECT_THAT(script, HasSubstr("new Map()"));
}

// Issue 36: a 300-character region name widened the page's table past the
// page.  The name column and the legend wrap anywhere, the name kept whole.
TEST(HtmlReportTest, LongNamesWrapAndStayWhole) {
  Results results = MakeResults(false);
  const std::string long_name = "begin_" + std::string(288, 'x') + "_end_1";
  results.regions[0].name = long_name;
  results.regions[0].path = long_name;
  const Timeline timeline = MakeTimeline(results);
  const std::string page = FormatHtml(results, &timeline);
  EXPECT_THAT(page, HasSubstr(">" + long_name + "</td>"));
  EXPECT_THAT(page, HasSubstr("td.name{white-space:normal;"
                              "overflow-wrap:anywhere;"));
  EXPECT_THAT(page, HasSubstr("ul.legend li{overflow-wrap:anywhere;"));
  EXPECT_THAT(page, HasSubstr(".scroll{overflow-x:auto;max-width:100%}"));
}

TEST(HtmlReportTest, NothingOutsideThePage) {
  const Results results = MakeResults(true);
  const Timeline timeline = MakeTimeline(results);
  for (const Timeline* t : {&timeline, static_cast<const Timeline*>(nullptr)}) {
    const std::string page = FormatHtml(results, t);
    EXPECT_TRUE(page.starts_with("<!DOCTYPE html>\n"));
    EXPECT_TRUE(page.ends_with("</html>\n"));
    for (std::string_view forbidden :
         {"http://", "https://", "src=", "href=", "url(", "@import", "//"}) {
      // "//" may appear in the script's comments only: it has none.
      EXPECT_THAT(page, Not(HasSubstr(forbidden))) << forbidden;
    }
    EXPECT_THAT(page, HasSubstr("default-src 'none'"));
  }
}

TEST(HtmlReportTest, HeaderSaysSimulatedOrMeasured) {
  Results results = MakeResults(true);
  std::string page = FormatHtml(results, nullptr);
  EXPECT_THAT(page, HasSubstr("SIMULATED &mdash; every count on this page is "
                              "made up by the simulator"));
  EXPECT_THAT(page, HasSubstr("<title>uncore report (SIMULATED): node17"));
  for (std::string_view part :
       {"<dd>sim</dd>", "<dd>ivytown</dd>", "<dd>node17</dd>",
        "<dd>GenuineIntel family 6 model 0x3e</dd>", "<dd>0, 1</dd>",
        "<dd>2023-11-14 22:13:20 UTC</dd>", "<dd>2.50 s</dd>",
        "<dd>12.3 us</dd>", "Errors (1)", "Warnings (1)",
        "region &quot;io&quot; closed on another thread"}) {
    EXPECT_THAT(page, HasSubstr(part));
  }
  results = MakeResults(false);
  page = FormatHtml(results, nullptr);
  EXPECT_THAT(page, HasSubstr("MEASURED &mdash; counts read from the hardware "
                              "by the direct backend"));
  EXPECT_THAT(page, Not(HasSubstr("SIMULATED")));
  results.run.backend = "off";
  EXPECT_THAT(FormatHtml(results, nullptr), HasSubstr("NOT MEASURED"));
}

TEST(HtmlReportTest, RegionTableInTreeOrderWithMarks) {
  const Results results = MakeCostlyResults();
  const std::string page = FormatHtml(results, nullptr);
  // Tree order: main, main/solve, main/solve/assemble, the weird one,
  // main/late, io.
  std::vector<size_t> at;
  for (std::string_view path :
       {"main", "main/solve", "main/solve/assemble",
        "main/a &quot;quoted&quot;", "main/late", "io"}) {
    at.push_back(page.find("<tr data-region=\"" + std::string(path)));
    EXPECT_NE(at.back(), std::string::npos) << path;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
  EXPECT_THAT(page, HasSubstr("100 (10 sampled)"));
  EXPECT_THAT(page, HasSubstr("(1 open)"));
  EXPECT_THAT(page, HasSubstr("!24%"));
  EXPECT_THAT(page, HasSubstr("~18,000,000"));  // assemble, sampled
  EXPECT_THAT(page, HasSubstr("~ estimated"));
  EXPECT_THAT(page, HasSubstr("1.33 Gbytes/s"));
  EXPECT_THAT(page,
              HasSubstr("1 event needed only by the metrics is not shown"));
  EXPECT_THAT(page, Not(HasSubstr("<th>imc/CAS_COUNT.WR</th>")));
}

TEST(HtmlReportTest, TimelineLanesCallsAndRates) {
  const Results results = MakeResults(false);
  Timeline timeline = MakeTimeline(results);
  timeline.dropped_calls = 12;
  timeline.dropped_rates = 1;
  const std::string page = FormatHtml(results, &timeline);
  EXPECT_EQ(Count(page, "<rect class=\"call "), timeline.calls.size());
  EXPECT_THAT(page, HasSubstr(">worker &lt;1&gt; &amp; &quot;co&quot;</text>"));
  EXPECT_THAT(page, HasSubstr("<title>main/solve &#8212; 50.0 ms (from 100 ms)"
                              "</title>"));
  // One chart SVG per socket, a chart per shown event and per metric.
  EXPECT_EQ(Count(page, "<svg class=\"rates\""), 2u);
  EXPECT_EQ(Count(page, "<path class=\"rate\""), 2u * (3 + 2));
  EXPECT_THAT(page, HasSubstr(">640 Mbytes/s</text>"));  // socket 0's peak
  EXPECT_THAT(page, HasSubstr("Not shown: 12 calls and 1 rate sample"));
  EXPECT_THAT(page, Not(HasSubstr("no-timeline")));
  // The legend lists each region drawn.
  EXPECT_EQ(Count(page, "<li data-region="), results.regions.size());
}

TEST(HtmlReportTest, NoTimelineSaysSo) {
  const Results results = MakeResults(false);
  const Timeline empty;
  for (const Timeline* t : {&empty, static_cast<const Timeline*>(nullptr)}) {
    const std::string page = FormatHtml(results, t);
    EXPECT_THAT(page, HasSubstr("No timeline was recorded for this run"));
    EXPECT_THAT(page, Not(HasSubstr("<svg class=\"timeline\"")));
    EXPECT_THAT(page, HasSubstr("<svg class=\"bars\""));
    EXPECT_THAT(page, HasSubstr("<table class=\"regions\">"));
  }
}

TEST(HtmlReportTest, StrayIndicesAreCountedNotDrawn) {
  const Results results = MakeResults(false);
  Timeline timeline;
  timeline.threads = {{1, ""}};
  timeline.calls = {{0, 0, 0, 10},
                    {-1, 0, 0, 10},
                    {99, 0, 5, 10},
                    {1, 7, 2, 5},
                    {1, -3, 8, 2}};         // end before begin
  timeline.rates = {{0, 10, {{1.0}}, {}}};  // shorter than the events
  const std::string page = FormatHtml(results, &timeline);
  EXPECT_EQ(Count(page, "<rect class=\"call "), 3u);
  EXPECT_THAT(page, HasSubstr("2 calls of regions not in the results"));
  EXPECT_THAT(page, HasSubstr(">other threads</text>"));
  EXPECT_THAT(page, HasSubstr(">thread 1</text>"));  // no name: its tid
}

TEST(HtmlReportTest, BarsShowBandwidthElseWallTime) {
  Results results = MakeResults(false);
  results.metrics[0].per_second = true;  // MEM_BW_READS, bytes/s
  std::string page = FormatHtml(results, nullptr);
  EXPECT_THAT(page, HasSubstr("<h3>MEM_BW_READS</h3>"));
  EXPECT_EQ(Count(page, "<g class=\"bar\""), results.regions.size());
  EXPECT_THAT(page, Not(HasSubstr("<h3>wall time</h3>")));
  // main/late's metric is invalid: its row says so, without a bar.
  EXPECT_THAT(page, HasSubstr("<title>main/late: n/a</title>"));

  results.metrics[0].per_second = false;
  page = FormatHtml(results, nullptr);
  EXPECT_THAT(page, HasSubstr("<h3>wall time</h3>"));
  EXPECT_EQ(Count(page, "<g class=\"bar\""), results.regions.size());
  EXPECT_THAT(page, HasSubstr("<title>main: 2.40 s</title>"));
}

TEST(HtmlReportTest, EmptyResults) {
  const std::string page = FormatHtml(Results{}, nullptr);
  EXPECT_TRUE(IsValidUtf8(page));
  EXPECT_THAT(page, HasSubstr("No region was recorded."));
  EXPECT_THAT(page, HasSubstr("No timeline was recorded"));
  EXPECT_THAT(page, HasSubstr("NOT MEASURED"));
}

TEST(HtmlReportTest, TwentyThousandCallsQuickly) {
  Results results = MakeResults(false);
  Timeline timeline;
  for (int t = 0; t < 8; ++t) timeline.threads.push_back({t, ""});
  for (int k = 0; k < 20'000; ++k) {
    const uint64_t begin = static_cast<uint64_t>(k) * 100'000;
    timeline.calls.push_back({k % static_cast<int>(results.regions.size()),
                              k % 8, begin, begin + 90'000});
  }
  for (int k = 0; k < 2'000; ++k) {
    TimelineRates rates;
    rates.begin_ns = static_cast<uint64_t>(k) * 1'000'000;
    rates.end_ns = rates.begin_ns + 1'000'000;
    rates.event_rates.assign(2, std::vector<double>(4, 1e6 * k));
    rates.metrics.assign(2, std::vector<MetricValue>(2, {1e9, true}));
    timeline.rates.push_back(std::move(rates));
  }
  results.run.duration_ns = 2'000'000'000;
  const auto start = std::chrono::steady_clock::now();
  const std::string page = FormatHtml(results, &timeline);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(Count(page, "<rect class=\"call "), 20'000u);
  // About 0.1 s in a Release build; a sanitizer is ten times slower.
  EXPECT_LT(seconds, test_support::kSanitized ? 20.0 : 2.0);
  EXPECT_LT(page.size(), 20'000u * 400);  // a few MB, not tens
}

}  // namespace
}  // namespace uncore::report
