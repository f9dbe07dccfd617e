// Reports: a session's Results as a human table, as JSON, as CSV (tidy:
// one row per value), as a self-contained HTML page or as a Hatchet
// literal tree, and WriteReport(), which sends one of them where
// UNCORE_OUTPUT asks.
//
//   uncore::Results results = session->Collect();
//   absl::Status s = uncore::report::WriteReport(results, "-");  // stderr
//   s = uncore::report::WriteReport(results, "run.json");         // JSON file
//   std::string csv = uncore::report::FormatCsv(results);
//   const uncore::report::Timeline* timeline = ...;  // or nullptr
//   std::string page = uncore::report::FormatHtml(results, timeline);
//   s = uncore::report::WriteReport(results, "run.html", stderr, timeline);
//
// Output destinations (ParseOutput / WriteReport; suffixes are matched
// ignoring case):
//   "-"                 the table, written to `stderr_stream` (stderr by
//                       default);
//   "NAME.hatchet.json" the Hatchet literal tree (checked before ".json");
//   "NAME.json"         JSON;
//   "NAME.csv"          CSV;
//   "NAME.html", "NAME.htm"  the HTML page (with `timeline` when given);
//   anything else       the table, written to that file ("run.txt").
// A file is replaced only once the new report is complete (written to a
// temporary file and renamed; sdk/report/output.h), so an existing report
// is never left truncated.  `output` is taken as is: placeholders such as
// %p are expanded before (ExpandOutput, PrepareOutput in output.h).
//
// Every count is socket-wide.  The formats, and exactly how each one
// escapes, orders and rounds: docs/report-format.md.
//
// Guarantees: the Format* functions are pure (no I/O) and accept any
// Results, including inconsistent ones (vectors shorter than
// Results::events/metrics show "-" / "n/a" or are left out); WriteReport
// prints nothing but the report and never exits.
#ifndef UNCORE_SDK_REPORT_REPORT_H_
#define UNCORE_SDK_REPORT_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/report/timeline.h"
#include "uncore/results.h"

namespace uncore::report {

enum class ReportFormat { kTable, kJson, kCsv, kHtml, kHatchet };

// Where and how a report goes.
struct ReportDestination {
  ReportFormat format = ReportFormat::kTable;
  std::string path;  // empty: the stderr stream
};

// Wider than this (in columns), the table switches to the vertical layout.
inline constexpr int kMaxTableWidth = 160;

// The reports mark a region whose counter reads (RegionResult::overhead_ns)
// took more than this percentage of its wall time: read-latency dominated
// (the table's "!P%", JSON's and CSV's read_latency_dominated).  Its rates
// stay exact (they use counted_ns); its wall time and the counters' window
// differ by up to a read.
inline constexpr int kOverheadFlagPercent = 1;

// "-", "x.json", "x.hatchet.json", "x.csv", "x.html", "x.txt" ->
// destination; "" is an error.
absl::StatusOr<ReportDestination> ParseOutput(std::string_view output);

std::string FormatTable(const Results& results);
std::string FormatJson(const Results& results);
// Tidy long form: one row per value (docs/report-format.md, "CSV").
std::string FormatCsv(const Results& results);
// One self-contained HTML5 page (no external resource): the run's header,
// the region table, the timeline of `timeline` (nullptr or empty: the page
// says none was recorded) and per-region bars, as inline SVG; every region
// appears in the SVG as an element with data-region="PATH".
std::string FormatHtml(const Results& results, const Timeline* timeline);
// Hatchet's literal format: a JSON array of root nodes {"frame": {"name",
// "type": "region"}, "metrics": {...}, "children": [...]} following the
// region paths; one "(no regions)" root when there are none.
std::string FormatHatchet(const Results& results);
// `timeline` is used by kHtml only.
std::string FormatReport(const Results& results, ReportFormat format,
                         const Timeline* timeline = nullptr);

// Formats `results` as `output` asks (see above) and writes it.  Errors name
// the path and the system's reason.  `timeline` goes to the HTML page.
absl::Status WriteReport(const Results& results, std::string_view output,
                         std::FILE* stderr_stream = stderr,
                         const Timeline* timeline = nullptr);

// Building blocks, shared by the formats and tested on their own.

// 1234567 -> "1,234,567".
std::string GroupDigits(uint64_t value);
// 999 -> "999 ns", 1500 -> "1.50 us", 2500000000 -> "2.50 s".
std::string FormatDuration(uint64_t ns);
// An event count for the table: scale and unit applied, '~' when estimated.
std::string FormatEventValue(uint64_t count, double scale,
                             std::string_view unit, bool estimated);
// A metric value with SI prefix and unit: (1.234e9, "bytes/s") ->
// "1.23 Gbytes/s"; (12.345, "%") -> "12.3 %".
std::string FormatMetricValue(double value, std::string_view unit);
// Text made safe for one table line (see "Table" above).
std::string EscapeForTable(std::string_view text);
// Terminal columns `text` takes (after EscapeForTable): wide characters
// and emoji 2, combining marks 0 (common::DisplayColumns).
size_t DisplayWidth(std::string_view text);
// `text` with each byte that is not part of valid UTF-8 replaced by U+FFFD.
std::string RepairUtf8(std::string_view text);
// One CSV field: UTF-8 repaired, quoted when needed.
std::string CsvField(std::string_view text);
// Text for HTML (element content and quoted attribute values): UTF-8
// repaired; & < > " ' as character references; control characters other
// than tab, LF and CR as U+FFFD.
std::string EscapeHtml(std::string_view text);

// True when only some of the region's calls were measured
// (0 < sampled_calls < calls): its counts are scaled up, estimates.  A
// sampled_calls of 0 means "not recorded" (Results built before sampling
// existed, or by hand), not "none measured".
bool IsSampled(const RegionResult& region);
// A count of `region` is shown and written as estimated when it was scaled
// up: multiplexed (counts.estimated) or sampled (IsSampled).
bool IsEstimated(const RegionResult& region, const EventCounts& counts);
// True when the measurement cost more than kOverheadFlagPercent of the
// region's wall time: overhead_ns > wall_ns * 5 / 100, exactly.
bool OverheadFlagged(const RegionResult& region);
// overhead_ns as a percentage of wall_ns, for the table's flag: one decimal
// below 10, rounded up so that a flagged region never reads "5.0%"
// ("5.1%", "24%", "310%"); "inf%" when wall_ns is 0.
std::string FormatOverheadPercent(uint64_t overhead_ns, uint64_t wall_ns);

}  // namespace uncore::report

#endif  // UNCORE_SDK_REPORT_REPORT_H_
