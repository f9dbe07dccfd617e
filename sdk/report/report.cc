// Output selection, file writing and the formatting helpers the three report
// formats share.
#include "sdk/report/report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "sdk/common/json.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/report/output.h"
#include "uncore/report_file.h"

namespace uncore::report {
namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

bool EndsWithIgnoreCase(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         common::EqualsIgnoreCase(text.substr(text.size() - suffix.size()),
                                  suffix);
}

// `value` rounded to three significant digits: mantissa * 1000^step, with
// min_step <= step <= max_step and, where those bounds allow, 1 <= |mantissa|
// < 1000 after rounding.  Returns the mantissa as text ("1.00", "12.3",
// "123"; "0.00123" below the smallest step, "123456" above the largest).
std::string ThreeDigits(double value, int min_step, int max_step, int* step) {
  *step = 0;
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  int s = static_cast<int>(std::floor(std::log10(magnitude) / 3));
  s = std::clamp(s, min_step, max_step);
  for (;;) {
    const double mantissa = value / std::pow(1000.0, s);
    const double m = std::fabs(mantissa);
    if (m < 1 && s == min_step) {  // below the smallest step
      *step = s;
      return fmt::format("{:#.3g}", mantissa);
    }
    int decimals = m >= 100 ? 0 : m >= 10 ? 1 : 2;
    const double rounded =
        std::round(m * std::pow(10, decimals)) / std::pow(10, decimals);
    if (rounded >= 1000) {
      if (s < max_step) {
        ++s;
        continue;
      }
      *step = s;
      return fmt::format("{:.0f}", mantissa);
    }
    decimals = rounded >= 100 ? 0 : rounded >= 10 ? 1 : 2;
    *step = s;
    return fmt::format("{:.{}f}", mantissa, decimals);
  }
}

// "1234567.891" with grouping of the integer part: "1,234,567.89".
std::string GroupFixed(double value, int decimals) {
  std::string text = fmt::format("{:.{}f}", std::fabs(value), decimals);
  const size_t dot = text.find('.');
  std::string integer = text.substr(0, dot);
  std::string grouped;
  for (size_t i = 0; i < integer.size(); ++i) {
    if (i > 0 && (integer.size() - i) % 3 == 0) grouped.push_back(',');
    grouped.push_back(integer[i]);
  }
  if (dot != std::string::npos) grouped += text.substr(dot);
  const bool negative =
      value < 0 && grouped.find_first_not_of("0.,") != std::string::npos;
  return negative ? "-" + grouped : grouped;
}

// True when `unit` takes no SI prefix: dimensionless fractions, and units
// that already carry one ("MB", "GT/s", "kB").
bool UnitTakesNoPrefix(std::string_view unit) {
  if (unit == "%" || unit == "ratio") return true;
  if (unit.size() >= 2 &&
      std::string_view("kMGTPE").find(unit[0]) != std::string_view::npos) {
    return unit[1] >= 'A' && unit[1] <= 'Z';
  }
  return false;
}

absl::Status WriteAll(std::FILE* file, std::string_view text,
                      std::string_view what) {
  if (!text.empty() &&
      std::fwrite(text.data(), 1, text.size(), file) != text.size()) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        fmt::format("cannot write the report to {}: {}", what,
                                    std::generic_category().message(error)));
  }
  return absl::OkStatus();
}

}  // namespace

std::string GroupDigits(uint64_t value) {
  const std::string digits = fmt::format("{}", value);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string FormatDuration(uint64_t ns) {
  if (ns < 1000) return fmt::format("{} ns", ns);
  static constexpr std::string_view kUnits[] = {"ns", "us", "ms", "s"};
  if (ns >= uint64_t{999'500'000'000}) {  // 1,000 s and more
    return GroupFixed(static_cast<double>(ns) / 1e9, 0) + " s";
  }
  int step = 0;
  const std::string number = ThreeDigits(static_cast<double>(ns), 1, 3, &step);
  return fmt::format("{} {}", number, kUnits[step]);
}

std::string FormatEventValue(uint64_t count, double scale,
                             std::string_view unit, bool estimated) {
  std::string text = estimated ? "~" : "";
  if (scale == 1.0) {
    text += GroupDigits(count);
  } else {
    const double value = static_cast<double>(count) * scale;
    if (!std::isfinite(value)) {
      text += fmt::format("{}", value);
    } else if (value == 0 || std::fabs(value) >= 1) {
      text += GroupFixed(value, 2);
    } else {
      text += fmt::format("{:#.3g}", value);
    }
  }
  if (!unit.empty()) absl::StrAppend(&text, " ", EscapeForTable(unit));
  return text;
}

std::string FormatMetricValue(double value, std::string_view unit) {
  if (!std::isfinite(value)) return "n/a";
  std::string number;
  std::string_view prefix;
  if (UnitTakesNoPrefix(unit)) {
    int step = 0;
    number = std::fabs(value) >= 1000 ? GroupFixed(value, 0)
                                      : ThreeDigits(value, 0, 0, &step);
  } else {
    static constexpr std::string_view kPrefixes[] = {
        "p", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    int step = 0;
    number = ThreeDigits(value, -4, 6, &step);
    prefix = kPrefixes[step + 4];
  }
  const std::string suffix = fmt::format("{}{}", prefix, EscapeForTable(unit));
  return suffix.empty() ? number : number + " " + suffix;
}

std::string EscapeForTable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      const size_t len = common::ValidUtf8Length(text, i);
      // C1 controls (U+0080-U+009F, bytes C2 80-C2 9F) are escaped too.
      const bool c1_control = len == 2 && c == 0xC2 &&
                              static_cast<unsigned char>(text[i + 1]) < 0xA0;
      if (len == 0 || c1_control) {
        const size_t n = len == 0 ? 1 : len;
        for (size_t k = 0; k < n; ++k) {
          out +=
              fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i + k]));
        }
        i += n;
        continue;
      }
      out.append(text.substr(i, len));
      i += len;
      continue;
    }
    ++i;
  }
  return out;
}

size_t DisplayWidth(std::string_view text) {
  return common::DisplayColumns(text);
}

std::string RepairUtf8(std::string_view text) {
  std::string repaired;
  repaired.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t len = common::ValidUtf8Length(text, i);
    if (len == 0) {
      repaired += kReplacementCharacter;
      ++i;
      continue;
    }
    repaired.append(text.substr(i, len));
    i += len;
  }
  return repaired;
}

std::string CsvField(std::string_view text) {
  std::string repaired = RepairUtf8(text);
  if (repaired.find_first_of(",\"\r\n") == std::string::npos) {
    return repaired;
  }
  std::string quoted = "\"";
  for (const char c : repaired) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

bool IsSampled(const RegionResult& region) {
  return region.sampled_calls > 0 && region.sampled_calls < region.calls;
}

bool IsEstimated(const RegionResult& region, const EventCounts& counts) {
  return counts.estimated || IsSampled(region);
}

bool OverheadFlagged(const RegionResult& region) {
  // overhead * 100 > wall * P  <=>  overhead > floor(wall * P / 100), with
  // wall = 100 q + r computed without overflow.
  constexpr uint64_t kPercent = kOverheadFlagPercent;
  const uint64_t limit =
      region.wall_ns / 100 * kPercent + region.wall_ns % 100 * kPercent / 100;
  return region.overhead_ns > limit;
}

std::string FormatOverheadPercent(uint64_t overhead_ns, uint64_t wall_ns) {
  if (wall_ns == 0) return overhead_ns == 0 ? "0%" : "inf%";
  constexpr uint64_t kTenthsPerUnit = 1000;  // tenths of a percent
  if (overhead_ns > std::numeric_limits<uint64_t>::max() / kTenthsPerUnit) {
    return fmt::format("{:.0f}%", 100.0 * static_cast<double>(overhead_ns) /
                                      static_cast<double>(wall_ns));
  }
  const uint64_t scaled = overhead_ns * kTenthsPerUnit;
  const uint64_t tenths = scaled / wall_ns + (scaled % wall_ns != 0 ? 1 : 0);
  if (tenths < 100) return fmt::format("{}.{}%", tenths / 10, tenths % 10);
  return fmt::format("{}%", (tenths + 5) / 10);
}

absl::StatusOr<ReportDestination> ParseOutput(std::string_view output) {
  if (output.empty()) {
    return absl::InvalidArgumentError(
        "empty report output: use \"-\" for a table on stderr, a file name "
        "ending in .json, .hatchet.json, .csv or .html, or any other file "
        "name for a table");
  }
  if (output == "-") return ReportDestination{ReportFormat::kTable, ""};
  ReportDestination destination{ReportFormat::kTable, std::string(output)};
  if (EndsWithIgnoreCase(output, ".hatchet.json")) {
    destination.format = ReportFormat::kHatchet;
  } else if (EndsWithIgnoreCase(output, ".json")) {
    destination.format = ReportFormat::kJson;
  } else if (EndsWithIgnoreCase(output, ".csv")) {
    destination.format = ReportFormat::kCsv;
  } else if (EndsWithIgnoreCase(output, ".html") ||
             EndsWithIgnoreCase(output, ".htm")) {
    destination.format = ReportFormat::kHtml;
  }
  return destination;
}

std::string FormatReport(const Results& results, ReportFormat format,
                         const Timeline* timeline) {
  switch (format) {
    case ReportFormat::kJson:
      return FormatJson(results);
    case ReportFormat::kCsv:
      return FormatCsv(results);
    case ReportFormat::kHtml:
      return FormatHtml(results, timeline);
    case ReportFormat::kHatchet:
      return FormatHatchet(results);
    case ReportFormat::kTable:
      break;
  }
  return FormatTable(results);
}

absl::Status WriteReport(const Results& results, std::string_view output,
                         std::FILE* stderr_stream, const Timeline* timeline) {
  UNCORE_ASSIGN_OR_RETURN(const ReportDestination destination,
                          ParseOutput(output));
  const std::string text = FormatReport(results, destination.format, timeline);
  if (!destination.path.empty()) {
    return WriteReportFile(destination.path, text);
  }
  if (stderr_stream == nullptr) {
    return absl::InvalidArgumentError(
        "report output \"-\" needs a stream, and none was given");
  }
  UNCORE_RETURN_IF_ERROR(WriteAll(stderr_stream, text, "stderr"));
  if (std::fflush(stderr_stream) != 0) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        fmt::format("cannot write the report to stderr: {}",
                                    std::generic_category().message(error)));
  }
  return absl::OkStatus();
}

}  // namespace uncore::report

namespace uncore {

std::string FormatReportText(const Results& results, std::string_view output) {
  const absl::StatusOr<report::ReportDestination> destination =
      report::ParseOutput(output);
  return report::FormatReport(results, destination.ok()
                                           ? destination->format
                                           : report::ReportFormat::kTable);
}

}  // namespace uncore
