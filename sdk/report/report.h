// Reports: a session's Results as a human table, as JSON or as CSV, and
// WriteReport(), which sends one of them where UNCORE_OUTPUT asks.
//
//   uncore::Results results = session->Collect();
//   absl::Status s = uncore::report::WriteReport(results, "-");  // stderr
//   s = uncore::report::WriteReport(results, "run.json");         // JSON file
//   std::string csv = uncore::report::FormatCsv(results);
//
// Output destinations (ParseOutput / WriteReport):
//   "-"            the table, written to `stderr_stream` (stderr by default);
//   "NAME.json"    JSON (the suffix is matched ignoring case);
//   "NAME.csv"     CSV;
//   anything else  the table, written to that file ("run.txt").
//
// Every count is socket-wide: a region counts everything its sockets' boxes
// saw while it was open on some thread.  The table says so in its header.
//
// Table (FormatTable), for people:
//   - A header: backend, host, CPU, sockets, run duration and the time the
//     counters were held frozen; when Results::run.simulated, a banner
//     "SIMULATED — every count below is made up by the simulator, not
//     measured" above and below the data.
//   - Regions in tree order (each region right after its parent, siblings in
//     order of first entry), the name indented two spaces per depth; a region
//     whose parent is not in the results shows its full path.
//   - Horizontal layout, one row per region: calls, total wall time (ns, us,
//     ms or s, three significant digits), then one column per event (headed
//     by its canonical spec) with the inclusive total, then one column per
//     metric (headed by its name).  Counts use ',' every three digits; an
//     event with a scale other than 1 shows total * scale with two decimals
//     (three significant digits below 1) and its unit ("1.23 Joules",
//     "0.610 Joules"); a unit without a scale is appended ("1,234 cycles").
//     '~' marks an estimated (multiplexed) count, "-" a missing one.
//     Metrics show three significant digits with an SI prefix (p n u m k M G
//     T P E) before their unit ("1.23 Gbytes/s"); "%", "ratio" and units
//     that already carry a prefix ("MB", "GT/s") get no prefix; an invalid
//     metric shows "n/a".  With more than one socket, a second table ("per
//     socket:") gives each region's inclusive event counts per socket.
//   - Vertical layout, when the horizontal one would be wider than
//     kMaxTableWidth columns: per region a line with calls and wall time
//     (total, min, max), then one line per event (total, then each socket's
//     count) and per metric.
//   - Events requested only because a metric needs them (from_metric) are not
//     shown (the metrics show their effect); a note counts them.  JSON and
//     CSV include them.
//   - Text from the results (names, specs, errors) is printed as is when it
//     is printable UTF-8; '\' becomes "\\", newline/CR/tab "\n"/"\r"/"\t",
//     other control bytes (C1 controls included) and bytes that are not
//     valid UTF-8 "\xNN" per byte, so a name never breaks a line.  Widths count
//     code points.
//   - Errors, then warnings, at the end.
//
// JSON (FormatJson), pretty-printed, keys in this order:
//   schema_version (Results::kSchemaVersion), backend, simulated, host, cpu,
//   sockets [ids], start_unix_ns, duration_ns, frozen_ns, errors [strings],
//   warnings [strings], events [{spec, canonical, encoding, unit, scale,
//   from_metric}], metrics [{name, expression, unit}], regions [{name, path,
//   depth, calls, wall_ns, min_ns, max_ns, events {CANONICAL: {total,
//   per_socket [..], per_instance [{socket, instance, value}],
//   exclusive_total, exclusive_per_socket [..], estimated}}, metrics {NAME:
//   number or null}}].
//   exclusive_total and exclusive_per_socket are null where the region has
//   no exclusive counts.  A metric is null when invalid or not finite.
//   Regions keep Results order.  Counts are exact unsigned integers (they may
//   exceed 2^53) and raw: multiply by the event's scale to get its unit.
//   `estimated` is true when the inclusive or the exclusive count was scaled
//   from a multiplexed count.  Should two events share a canonical spelling
//   (or two metrics a name), the later keys get "#2", "#3"... so keys stay
//   unique.  Strings follow sdk/common/json.h: bytes that are not valid UTF-8
//   come out as \u00XX (the byte read as Latin-1).
//
// CSV (FormatCsv), RFC 4180 with CRLF line ends, header
//   region,path,depth,calls,wall_ns,event,socket,inclusive,exclusive,
//   estimated,unit,scale
//   - Per region and event: one row per socket (`socket` is the socket id
//     from RunInfo::sockets, or "#N" for the N-th entry when that is missing)
//     and one row with socket "all" holding the totals (leave the "all" rows
//     out before summing).  inclusive/exclusive are raw counts; multiply by
//     `scale` to get `unit`.  estimated is 1 or 0.
//   - Per region and metric: one row with event "metric/NAME", socket "all",
//     the value in `inclusive` (empty when invalid), `exclusive` and
//     `estimated` empty, the metric's unit and scale 1.  Metric values and
//     scales are written in the shortest form that reads back exactly.
//   - A missing exclusive count leaves `exclusive` empty.
//   - Fields holding ',', '"', CR or LF are quoted, quotes doubled.  Output is
//     always valid UTF-8: each byte that is not valid UTF-8 becomes U+FFFD
//     (the JSON keeps each byte's value).
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
#include "uncore/results.h"

namespace uncore::report {

enum class ReportFormat { kTable, kJson, kCsv };

// Where and how a report goes.
struct ReportDestination {
  ReportFormat format = ReportFormat::kTable;
  std::string path;  // empty: the stderr stream
};

// Wider than this (in columns), the table switches to the vertical layout.
inline constexpr int kMaxTableWidth = 160;

// "-", "x.json", "x.csv", "x.txt" -> destination; "" is an error.
absl::StatusOr<ReportDestination> ParseOutput(std::string_view output);

std::string FormatTable(const Results& results);
std::string FormatJson(const Results& results);
std::string FormatCsv(const Results& results);
std::string FormatReport(const Results& results, ReportFormat format);

// Formats `results` as `output` asks (see above) and writes it.  Errors name
// the path and the system's reason.
absl::Status WriteReport(const Results& results, std::string_view output,
                         std::FILE* stderr_stream = stderr);

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
// Number of code points `text` takes (after EscapeForTable).
size_t DisplayWidth(std::string_view text);
// One CSV field: UTF-8 repaired, quoted when needed.
std::string CsvField(std::string_view text);

}  // namespace uncore::report

#endif  // UNCORE_SDK_REPORT_REPORT_H_
