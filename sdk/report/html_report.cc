// The HTML report (docs/report-format.md, "HTML"): one self-contained page,
// inline CSS, SVG and a small script it does not need to render; its
// Content-Security-Policy forbids every external resource.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "sdk/common/json.h"
#include "sdk/report/report.h"
#include "sdk/report/report_internal.h"
#include "sdk/report/timeline.h"

namespace uncore::report {
namespace {

// The SVG's geometry, in CSS pixels.
constexpr double kSvgWidth = 1100;
constexpr double kPlotLeft = 150;  // thread names, chart labels
constexpr double kPlotWidth = kSvgWidth - kPlotLeft - 20;
constexpr double kAxisHeight = 24;
constexpr double kCallRow = 16;  // one nesting level of a lane
constexpr double kLaneGap = 8;
constexpr int kMaxLaneDepth = 63;
constexpr double kMinCallWidth = 0.5;  // a call too short to see still shows
constexpr double kChartHeight = 44;
constexpr double kChartGap = 26;  // its title above it
constexpr double kBarRow = 18;
constexpr double kBarLabelWidth = 320;
constexpr double kBarWidth = 560;
constexpr size_t kMaxSvgLabel = 40;  // code points of a label in the SVG
constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

constexpr std::string_view kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#202124;max-width:1200px}
h1{font-size:1.5em;margin:0 0 .4em}h2{font-size:1.2em;margin:1.6em 0 .5em;border-bottom:1px solid #ddd}
h3{font-size:1em;margin:1em 0 .3em}
.banner{padding:.5em 1em;font-weight:600;border-radius:4px;margin:.5em 0 1em}
.simulated{background:#fce8e6;color:#a50e0e;border:2px solid #d93025}
.measured{background:#e6f4ea;color:#0d652d;border:1px solid #34a853}
.unmeasured{background:#fef7e0;color:#7a4b00;border:1px solid #f9ab00}
dl.run{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;margin:0}
dl.run dt{font-weight:600}dl.run dd{margin:0}
ul.errors li{color:#a50e0e}ul.warnings li{color:#7a4b00}
table{border-collapse:collapse;margin:.3em 0}
th,td{padding:2px 9px;border-bottom:1px solid #e0e0e0;text-align:right;white-space:nowrap;vertical-align:top}
th{background:#f1f3f4;font-weight:600}th.name,td.name{text-align:left}
td.name{white-space:normal;overflow-wrap:anywhere;min-width:12em;max-width:40em}
td.name .sw{margin-right:.4em}
tr.hl td{background:#fff8c5}
.note{color:#5f6368;font-size:.92em;margin:.3em 0}
.scroll{overflow-x:auto;max-width:100%}
svg{display:block;margin:.3em 0}svg text{font:11px system-ui,sans-serif;fill:#3c4043}
svg .axis{stroke:#9aa0a6;stroke-width:1}svg .grid{stroke:#e8eaed;stroke-width:1}
svg .lane{fill:#f8f9fa}svg .rate{fill:none;stroke:#1a73e8;stroke-width:1.5}
svg .hl{stroke:#202124;stroke-width:1.5}svg .hidden{display:none}
ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.2em 1.2em}
ul.legend li{overflow-wrap:anywhere;max-width:100%;cursor:pointer}ul.legend li.off{opacity:.35}
.sw{display:inline-block;width:.9em;height:.9em;border-radius:2px;vertical-align:-.1em}
)";

// Hover: every element of a region is highlighted; a click on the legend
// hides or shows the region's calls.  The page is complete without it.
// Region paths are the user's names: they key a Map, never a plain object,
// where "toString" or "__proto__" would find Object.prototype's members.
constexpr std::string_view kScript = R"(
(function () {
  var byRegion = new Map();
  document.querySelectorAll('[data-region]').forEach(function (el) {
    var key = el.getAttribute('data-region');
    var list = byRegion.get(key);
    if (!list) byRegion.set(key, list = []);
    list.push(el);
  });
  function elementsOf(el) {
    return byRegion.get(el.getAttribute('data-region')) || [];
  }
  function regionOf(target) {
    return target && target.closest ? target.closest('[data-region]') : null;
  }
  function mark(event, on) {
    var el = regionOf(event.target);
    if (!el) return;
    elementsOf(el).forEach(function (x) {
      x.classList.toggle('hl', on);
    });
  }
  document.addEventListener('mouseover', function (e) { mark(e, true); });
  document.addEventListener('mouseout', function (e) { mark(e, false); });
  document.querySelectorAll('ul.legend li[data-region]').forEach(function (li) {
    li.addEventListener('click', function () {
      var off = !li.classList.contains('off');
      li.classList.toggle('off', off);
      elementsOf(li).forEach(function (x) {
        if (x.closest('svg.timeline')) x.classList.toggle('hidden', off);
      });
    });
  });
  document.documentElement.setAttribute('data-script', 'ready');
})();
)";

void Append(std::string* out, std::string_view text) { out->append(text); }

template <typename... Args>
void AppendF(std::string* out, fmt::format_string<Args...> format,
             Args&&... args) {
  fmt::format_to(std::back_inserter(*out), format, std::forward<Args>(args)...);
}

// At most `max` code points of valid UTF-8 `text`, "…" when cut.
std::string Clip(std::string_view text, size_t max) {
  size_t points = 0;
  for (size_t i = 0; i < text.size();) {
    if (points == max) return std::string(text.substr(0, i)) + "\xE2\x80\xA6";
    i += std::max<size_t>(common::ValidUtf8Length(text, i), 1);
    ++points;
  }
  return std::string(text);
}

// A label for SVG text: repaired, clipped, escaped.
std::string SvgLabel(std::string_view text) {
  return EscapeHtml(Clip(RepairUtf8(text), kMaxSvgLabel));
}

// A colour per region, far apart for neighbours (golden angle).
std::string RegionColour(size_t i) {
  const double hue = std::fmod(static_cast<double>(i) * 137.508 + 210, 360);
  return fmt::format("hsl({:.0f},62%,{}%)", hue, i % 2 == 0 ? 52 : 62);
}

bool IsBytesUnit(std::string_view unit) {
  return unit.find("byte") != std::string_view::npos ||
         unit.find("B/s") != std::string_view::npos;
}

std::string StartText(uint64_t start_unix_ns) {
  if (start_unix_ns == 0) return "unknown";
  const std::time_t seconds =
      static_cast<std::time_t>(start_unix_ns / 1000000000);
  std::tm utc{};
  if (gmtime_r(&seconds, &utc) == nullptr) return "unknown";
  char text[64];
  const size_t n =
      std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return n == 0 ? "unknown" : std::string(text, n);
}

// What the page draws, worked out once.
struct Page {
  const Results& results;
  const Timeline* timeline;
  internal::RegionTree tree;
  std::vector<std::string> paths;    // escaped, for data-region
  std::vector<size_t> shown_events;  // not from_metric
  uint64_t end_ns = 1;               // the time axis: 0 to end_ns
};

// ---- header

void AppendHeader(const Page& page, std::string* out) {
  const RunInfo& run = page.results.run;
  Append(out, "<header>\n<h1>uncore report</h1>\n");
  if (run.simulated) {
    Append(
        out,
        "<p class=\"banner simulated\" id=\"counts-origin\">SIMULATED &mdash; "
        "every count on this page is made up by the simulator, not "
        "measured.</p>\n");
  } else if (run.backend.empty() || run.backend == "off") {
    Append(out,
           "<p class=\"banner unmeasured\" id=\"counts-origin\">NOT MEASURED "
           "&mdash; no counter was read (backend off): regions and times "
           "only.</p>\n");
  } else {
    AppendF(
        out,
        "<p class=\"banner measured\" id=\"counts-origin\">MEASURED &mdash; "
        "counts read from the hardware by the {} backend.</p>\n",
        EscapeHtml(run.backend));
  }
  std::string sockets;
  for (const int socket : run.sockets) {
    absl::StrAppend(&sockets, sockets.empty() ? "" : ", ", socket);
  }
  auto item = [&](std::string_view name, const std::string& value) {
    AppendF(out, "<dt>{}</dt><dd>{}</dd>\n", name, value.empty() ? "?" : value);
  };
  Append(out, "<dl class=\"run\">\n");
  item("Backend", EscapeHtml(run.backend));
  item("Platform", EscapeHtml(internal::PlatformText(run.platform)));
  item("Counts", run.simulated ? "simulated" : "measured");
  item("Host", EscapeHtml(run.host));
  item("CPU", EscapeHtml(run.cpu));
  if (!run.last_check.empty()) {
    item("Last check", EscapeHtml(run.last_check));
  }
  item("Sockets", sockets.empty() ? "none" : sockets);
  item("Started", StartText(run.start_unix_ns));
  item("Duration", FormatDuration(run.duration_ns));
  if (run.frozen_ns > 0) item("Counters frozen", FormatDuration(run.frozen_ns));
  if (run.reads_per_snapshot > 0) {
    item("Reads per snapshot", fmt::format("{}", run.reads_per_snapshot));
  }
  Append(out, "</dl>\n");
  Append(out,
         "<p class=\"note\">Every count is socket-wide: a region counts "
         "everything its sockets' boxes saw while at least one thread was "
         "inside it.</p>\n");
  auto messages = [&](std::string_view title, std::string_view css,
                      const std::vector<std::string>& list) {
    if (list.empty()) return;
    AppendF(out, "<h3>{} ({})</h3>\n<ul class=\"{}\">\n", title, list.size(),
            css);
    for (const std::string& message : list) {
      AppendF(out, "<li>{}</li>\n", EscapeHtml(message));
    }
    Append(out, "</ul>\n");
  };
  messages("Errors", "errors", run.errors);
  messages("Warnings", "warnings", run.warnings);
  Append(out, "</header>\n");
}

// ---- the region table

std::string CallsCell(const RegionResult& region) {
  std::string text = GroupDigits(region.calls);
  if (IsSampled(region)) {
    absl::StrAppend(&text, " (", GroupDigits(region.sampled_calls),
                    " sampled)");
  }
  if (region.open_calls > 0) {
    absl::StrAppend(&text, " (", GroupDigits(region.open_calls), " open)");
  }
  return text;
}

std::string WallCell(const RegionResult& region) {
  if (!OverheadFlagged(region)) return FormatDuration(region.wall_ns);
  return absl::StrCat(
      "<span title=\"the counter reads took this share of the region's wall "
      "time: read-latency dominated\">!",
      FormatOverheadPercent(region.overhead_ns, region.wall_ns), "</span> ",
      FormatDuration(region.wall_ns));
}

// The inclusive total, with the exclusive count and the sockets' counts in
// its tooltip.
std::string EventCell(const Page& page, const RegionResult& region, size_t e,
                      bool* any_estimated) {
  if (e >= region.inclusive.size()) return "-";
  const EventInfo& event = page.results.events[e];
  const EventCounts& counts = region.inclusive[e];
  const bool estimated = IsEstimated(region, counts);
  *any_estimated = *any_estimated || estimated;
  std::string tip;
  if (e < region.exclusive.size()) {
    tip = "exclusive " + FormatEventValue(region.exclusive[e].total,
                                          event.scale, event.unit, false);
  }
  for (size_t s = 0; s < counts.per_socket.size(); ++s) {
    absl::StrAppend(
        &tip, tip.empty() ? "" : "; ", "socket ",
        internal::SocketLabel(page.results.run.sockets, s), " ",
        FormatEventValue(counts.per_socket[s], event.scale, event.unit, false));
  }
  return absl::StrCat("<span title=\"", EscapeHtml(tip), "\">",
                      EscapeHtml(FormatEventValue(counts.total, event.scale,
                                                  event.unit, estimated)),
                      "</span>");
}

void AppendRegionTable(const Page& page, std::string* out) {
  const Results& results = page.results;
  Append(out, "<section id=\"regions\">\n<h2>Regions</h2>\n");
  if (results.regions.empty()) {
    Append(out, "<p>No region was recorded.</p>\n</section>\n");
    return;
  }
  Append(out,
         "<div class=\"scroll\"><table class=\"regions\">\n<thead><tr>"
         "<th class=\"name\">region</th><th>calls</th><th>threads</th>"
         "<th>wall</th><th>min call</th><th>max call</th>");
  for (const size_t e : page.shown_events) {
    AppendF(out, "<th>{}</th>",
            EscapeHtml(internal::EventName(results.events[e])));
  }
  for (const MetricInfo& metric : results.metrics) {
    AppendF(out, "<th title=\"{}\">{}</th>", EscapeHtml(metric.expression),
            EscapeHtml(metric.name));
  }
  Append(out, "</tr></thead>\n<tbody>\n");
  bool any_estimated = false;
  bool any_flagged = false;
  for (const size_t i : page.tree.order) {
    const RegionResult& region = results.regions[i];
    any_flagged = any_flagged || OverheadFlagged(region);
    const bool orphan = page.tree.parent[i] < 0 && region.depth > 0;
    AppendF(out,
            "<tr data-region=\"{}\"><td class=\"name\" "
            "style=\"padding-left:{:.1f}em\"><span class=\"sw c{}\"></span>{}"
            "</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            page.paths[i], 0.6 + 1.2 * std::clamp(region.depth, 0, 40), i,
            EscapeHtml(orphan ? region.path : region.name), CallsCell(region),
            GroupDigits(region.threads), WallCell(region),
            FormatDuration(region.min_ns), FormatDuration(region.max_ns));
    for (const size_t e : page.shown_events) {
      AppendF(out, "<td>{}</td>", EventCell(page, region, e, &any_estimated));
    }
    for (size_t m = 0; m < results.metrics.size(); ++m) {
      const bool valid = m < region.metrics.size() && region.metrics[m].valid;
      AppendF(out, "<td>{}</td>",
              valid ? EscapeHtml(FormatMetricValue(region.metrics[m].value,
                                                   results.metrics[m].unit))
                    : "n/a");
    }
    Append(out, "</tr>\n");
  }
  Append(out, "</tbody></table></div>\n");
  if (any_estimated) {
    Append(out,
           "<p class=\"note\">~ estimated: scaled up from a partial count, "
           "multiplexed by the kernel or sampled (UNCORE_SAMPLE: only some "
           "calls measured).</p>\n");
  }
  if (any_flagged) {
    AppendF(out,
            "<p class=\"note\">!P% before a wall time: the counter reads took "
            "P% of the region's time (more than {}%): read-latency dominated; "
            "its rates use the counters' own window (counted_ns) and stay "
            "exact, its counts include the reads' own traffic; measure a "
            "coarser region or sample it with UNCORE_SAMPLE=N.</p>\n",
            kOverheadFlagPercent);
  }
  const size_t hidden = results.events.size() - page.shown_events.size();
  if (hidden > 0) {
    AppendF(out,
            "<p class=\"note\">{} event{} needed only by the metrics {} not "
            "shown (the CSV and JSON reports have {}).</p>\n",
            hidden, hidden == 1 ? "" : "s", hidden == 1 ? "is" : "are",
            hidden == 1 ? "it" : "them");
  }
  Append(out, "</section>\n");
}

// ---- the timeline

double X(const Page& page, uint64_t ns) {
  return kPlotLeft + static_cast<double>(ns) /
                         static_cast<double>(page.end_ns) * kPlotWidth;
}

// Ticks at 1, 2 or 5 times a power of ten nanoseconds, at most ten.
uint64_t TickStep(uint64_t end_ns) {
  uint64_t step = 1;
  for (;;) {
    for (const uint64_t factor : {uint64_t{1}, uint64_t{2}, uint64_t{5}}) {
      if (end_ns / (step * factor) <= 10) return step * factor;
    }
    if (step > UINT64_MAX / 100) return step * 10;
    step *= 10;
  }
}

// The time axis: a line at `y`, ticks and their labels above it, grid
// lines down to `bottom`.
void AppendTimeAxis(const Page& page, double y, double bottom,
                    std::string* out) {
  const uint64_t step = TickStep(page.end_ns);
  for (uint64_t t = 0; t <= page.end_ns; t += step) {
    const double x = X(page, t);
    AppendF(out,
            "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" "
            "y2=\"{2:.1f}\"/><text x=\"{0:.1f}\" y=\"{3:.1f}\" "
            "text-anchor=\"middle\">{4}</text>\n",
            x, y, bottom, y - 6, FormatDuration(t));
    if (page.end_ns - t < step) break;
  }
  AppendF(out,
          "<line class=\"axis\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" "
          "y2=\"{:.1f}\"/>\n",
          kPlotLeft, y, kPlotLeft + kPlotWidth, y);
}

struct Lane {
  std::string label;
  int depth = 0;  // deepest level drawn in it
  double top = 0;
};

void AppendCalls(const Page& page, std::string* out) {
  const Timeline& timeline = *page.timeline;
  const std::vector<RegionResult>& regions = page.results.regions;
  // One lane per thread, and one for calls of a thread not listed.
  std::vector<Lane> lanes(timeline.threads.size() + 1);
  for (size_t t = 0; t < timeline.threads.size(); ++t) {
    const TimelineThread& thread = timeline.threads[t];
    lanes[t].label =
        SvgLabel(thread.name.empty() ? fmt::format("thread {}", thread.tid)
                                     : thread.name);
  }
  lanes.back().label = "other threads";
  auto lane_of = [&](const TimelineCall& call) -> Lane& {
    return call.thread >= 0 &&
                   static_cast<size_t>(call.thread) < timeline.threads.size()
               ? lanes[static_cast<size_t>(call.thread)]
               : lanes.back();
  };
  auto depth_of = [&](const TimelineCall& call) {
    return std::clamp(regions[static_cast<size_t>(call.region)].depth, 0,
                      kMaxLaneDepth);
  };
  auto known = [&](const TimelineCall& call) {
    return call.region >= 0 &&
           static_cast<size_t>(call.region) < regions.size();
  };
  std::vector<bool> used(lanes.size(), false);
  uint64_t unknown = 0;
  for (const TimelineCall& call : timeline.calls) {
    if (!known(call)) {
      ++unknown;
      continue;
    }
    Lane& lane = lane_of(call);
    used[static_cast<size_t>(&lane - lanes.data())] = true;
    lane.depth = std::max(lane.depth, depth_of(call));
  }
  double y = kAxisHeight;
  for (size_t l = 0; l < lanes.size(); ++l) {
    if (!used[l] && l + 1 == lanes.size()) continue;  // no stray calls
    lanes[l].top = y;
    y += (lanes[l].depth + 1) * kCallRow + kLaneGap;
  }
  const double height = y + 4;
  AppendF(out,
          "<div class=\"scroll\"><svg class=\"timeline\" "
          "width=\"{:.0f}\" "
          "height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" role=\"img\" "
          "aria-label=\"region calls per thread over time\">\n",
          kSvgWidth, height, kSvgWidth, height);
  AppendTimeAxis(page, kAxisHeight - 2, height, out);
  for (size_t l = 0; l < lanes.size(); ++l) {
    if (!used[l] && l + 1 == lanes.size()) continue;
    const Lane& lane = lanes[l];
    const double lane_height = (lane.depth + 1) * kCallRow;
    AppendF(out,
            "<rect class=\"lane\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
            "height=\"{:.1f}\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
            "text-anchor=\"end\">{}</text>\n",
            kPlotLeft, lane.top, kPlotWidth, lane_height, kPlotLeft - 6,
            lane.top + 12, lane.label);
  }
  for (const TimelineCall& call : timeline.calls) {
    if (!known(call)) continue;
    const size_t r = static_cast<size_t>(call.region);
    const Lane& lane = lane_of(call);
    const uint64_t end = std::max(call.end_ns, call.begin_ns);
    const double x = X(page, call.begin_ns);
    const double width = std::max(X(page, end) - x, kMinCallWidth);
    AppendF(out,
            "<rect class=\"call c{}\" data-region=\"{}\" x=\"{:.2f}\" "
            "y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\"><title>{} "
            "&#8212; {} (from {})</title></rect>\n",
            r, page.paths[r], x, lane.top + depth_of(call) * kCallRow, width,
            kCallRow - 2, page.paths[r], FormatDuration(end - call.begin_ns),
            FormatDuration(call.begin_ns));
  }
  Append(out, "</svg></div>\n");
  if (unknown > 0) {
    AppendF(out,
            "<p class=\"note\">{} call{} of regions not in the results are "
            "not drawn.</p>\n",
            GroupDigits(unknown), unknown == 1 ? "" : "s");
  }
  // The legend: regions with calls drawn, in tree order.
  std::vector<bool> drawn(regions.size(), false);
  for (const TimelineCall& call : timeline.calls) {
    if (known(call)) drawn[static_cast<size_t>(call.region)] = true;
  }
  Append(out, "<ul class=\"legend\">\n");
  for (const size_t i : page.tree.order) {
    if (!drawn[i]) continue;
    AppendF(out,
            "<li data-region=\"{0}\" title=\"click to hide or show\"><span "
            "class=\"sw c{1}\"></span>{0}</li>\n",
            page.paths[i], i);
  }
  Append(out, "</ul>\n");
}

// One chart: a title, the value axis (0 and the largest value, with SI
// units) and the values as steps over their stretches.
struct Series {
  std::string title;  // escaped
  std::string unit;
  std::vector<double> values;  // per rate sample; NaN: none
};

void AppendChart(const Page& page, const Series& series, double top,
                 std::string* out) {
  const std::vector<TimelineRates>& rates = page.timeline->rates;
  double max = 0;
  for (const double v : series.values) {
    if (std::isfinite(v)) max = std::max(max, v);
  }
  const double bottom = top + kChartHeight;
  AppendF(out,
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"600\">{}</text>\n"
          "<line class=\"axis\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" "
          "y2=\"{:.1f}\"/><line class=\"axis\" x1=\"{:.1f}\" y1=\"{:.1f}\" "
          "x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n"
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>"
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
          kPlotLeft, top - 6, series.title, kPlotLeft, top, kPlotLeft, bottom,
          kPlotLeft, bottom, kPlotLeft + kPlotWidth, bottom, kPlotLeft - 6,
          top + 10, EscapeHtml(FormatMetricValue(max, series.unit)),
          kPlotLeft - 6, bottom, "0");
  auto y_of = [&](double v) {
    // Below zero (a metric may be): drawn on the axis.
    return max > 0 ? bottom - std::max(v, 0.0) / max * kChartHeight : bottom;
  };
  std::string path;
  bool pen_down = false;
  for (size_t k = 0; k < rates.size() && k < series.values.size(); ++k) {
    const double v = series.values[k];
    if (!std::isfinite(v)) {
      pen_down = false;
      continue;
    }
    const double y = y_of(v);
    AppendF(&path, "{}{:.1f},{:.1f}L{:.1f},{:.1f}", pen_down ? "L" : "M",
            X(page, rates[k].begin_ns), y,
            X(page, std::max(rates[k].end_ns, rates[k].begin_ns)), y);
    pen_down = true;
  }
  if (!path.empty()) {
    AppendF(out, "<path class=\"rate\" d=\"{}\"><title>{}</title></path>\n",
            path, series.title);
  }
}

void AppendRates(const Page& page, std::string* out) {
  const Results& results = page.results;
  const std::vector<TimelineRates>& rates = page.timeline->rates;
  size_t sockets = 0;
  for (const TimelineRates& r : rates) {
    sockets = std::max({sockets, r.event_rates.size(), r.metrics.size()});
  }
  if (sockets == 0) return;
  Append(out,
         "<h3>Counter rates per socket</h3>\n<p class=\"note\">Each event's "
         "count per second between two snapshots of the counters, and each "
         "metric over the same stretch, on the time axis of the calls "
         "above.</p>\n");
  for (size_t s = 0; s < sockets; ++s) {
    std::vector<Series> charts;
    for (const size_t e : page.shown_events) {
      const EventInfo& event = results.events[e];
      Series& series = charts.emplace_back();
      series.title = EscapeHtml(internal::EventName(event)) + " per second";
      series.unit = (event.unit.empty() ? "" : event.unit) + "/s";
      for (const TimelineRates& r : rates) {
        series.values.push_back(s < r.event_rates.size() &&
                                        e < r.event_rates[s].size()
                                    ? r.event_rates[s][e]
                                    : kNoValue);
      }
    }
    for (size_t m = 0; m < results.metrics.size(); ++m) {
      Series& series = charts.emplace_back();
      series.title = EscapeHtml(results.metrics[m].name);
      series.unit = results.metrics[m].unit;
      for (const TimelineRates& r : rates) {
        const bool valid = s < r.metrics.size() && m < r.metrics[s].size() &&
                           r.metrics[s][m].valid;
        series.values.push_back(valid ? r.metrics[s][m].value : kNoValue);
      }
    }
    if (charts.empty()) continue;
    const double height =
        kAxisHeight +
        static_cast<double>(charts.size()) * (kChartHeight + kChartGap) + 4;
    const std::string socket = internal::SocketLabel(results.run.sockets, s);
    AppendF(out,
            "<div class=\"scroll\"><svg class=\"rates\" data-socket=\"{0}\" "
            "width=\"{1:.0f}\" "
            "height=\"{2:.0f}\" viewBox=\"0 0 {1:.0f} {2:.0f}\" role=\"img\" "
            "aria-label=\"counter rates of socket {0}\">\n"
            "<text x=\"0\" y=\"14\" font-weight=\"600\">socket {0}</text>\n",
            socket, kSvgWidth, height);
    AppendTimeAxis(page, kAxisHeight - 2, kAxisHeight, out);
    double top = kAxisHeight + kChartGap;
    for (const Series& series : charts) {
      AppendChart(page, series, top, out);
      top += kChartHeight + kChartGap;
    }
    Append(out, "</svg></div>\n");
  }
}

void AppendTimeline(const Page& page, std::string* out) {
  Append(out, "<section id=\"timeline\">\n<h2>Timeline</h2>\n");
  const Timeline* timeline = page.timeline;
  if (timeline == nullptr ||
      (timeline->calls.empty() && timeline->rates.empty())) {
    Append(out,
           "<p id=\"no-timeline\">No timeline was recorded for this run: "
           "the table above and the bars below hold everything "
           "measured.</p>\n</section>\n");
    return;
  }
  AppendF(out,
          "<p class=\"note\">Region calls per thread, nested calls stacked "
          "by depth, from the session's start (0) to {}.  Hover over a call "
          "for its region and duration.</p>\n",
          FormatDuration(page.end_ns));
  if (timeline->calls.empty()) {
    Append(out, "<p>No region call was recorded.</p>\n");
  } else {
    AppendCalls(page, out);
  }
  if (timeline->dropped_calls > 0 || timeline->dropped_rates > 0) {
    AppendF(out,
            "<p class=\"note\">Not shown: {} call{} and {} rate sample{} the "
            "collector did not keep (its memory limit).</p>\n",
            GroupDigits(timeline->dropped_calls),
            timeline->dropped_calls == 1 ? "" : "s",
            GroupDigits(timeline->dropped_rates),
            timeline->dropped_rates == 1 ? "" : "s");
  }
  AppendRates(page, out);
  Append(out, "</section>\n");
}

// ---- bars

// The metrics the bars show: bandwidths (per second, in bytes), else any
// per-second metric; none: the bars show wall time.
std::vector<size_t> BarMetrics(const Results& results) {
  std::vector<size_t> bytes;
  std::vector<size_t> per_second;
  for (size_t m = 0; m < results.metrics.size(); ++m) {
    const MetricInfo& metric = results.metrics[m];
    if (!metric.per_second) continue;
    per_second.push_back(m);
    if (IsBytesUnit(metric.unit)) bytes.push_back(m);
  }
  return bytes.empty() ? per_second : bytes;
}

struct Bar {
  double value = kNoValue;  // NaN: not available
  std::string text;         // escaped
};

void AppendBarChart(const Page& page, std::string_view title,
                    const std::vector<Bar>& bars, std::string* out) {
  const std::vector<RegionResult>& regions = page.results.regions;
  double max = 0;
  for (const Bar& bar : bars) {
    if (std::isfinite(bar.value)) max = std::max(max, bar.value);
  }
  const double height = static_cast<double>(regions.size()) * kBarRow + 8;
  const double width = kBarLabelWidth + kBarWidth + 130;
  AppendF(out,
          "<h3>{0}</h3>\n<div class=\"scroll\"><svg class=\"bars\" "
          "width=\"{1:.0f}\" "
          "height=\"{2:.0f}\" viewBox=\"0 0 {1:.0f} {2:.0f}\" role=\"img\" "
          "aria-label=\"{0} per region\">\n",
          title, width, height);
  double y = 4;
  for (const size_t i : page.tree.order) {
    const RegionResult& region = regions[i];
    const Bar& bar = bars[i];
    const bool orphan = page.tree.parent[i] < 0 && region.depth > 0;
    const double indent = 12.0 * std::clamp(region.depth, 0, 12);
    const double length = std::isfinite(bar.value) && max > 0
                              ? std::max(bar.value / max * kBarWidth, 1.0)
                              : 0;
    AppendF(out,
            "<g class=\"bar\" data-region=\"{}\"><title>{}: {}</title>"
            "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
            page.paths[i], page.paths[i], bar.text, 4 + indent, y + 12,
            SvgLabel(orphan ? region.path : region.name));
    if (length > 0) {
      AppendF(out,
              "<rect class=\"c{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
              "height=\"{:.0f}\"/>",
              i, kBarLabelWidth, y + 2, length, kBarRow - 4);
    }
    AppendF(out, "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text></g>\n",
            kBarLabelWidth + length + 6, y + 12, bar.text);
    y += kBarRow;
  }
  Append(out, "</svg></div>\n");
}

void AppendBars(const Page& page, std::string* out) {
  const Results& results = page.results;
  const std::vector<RegionResult>& regions = results.regions;
  Append(out, "<section id=\"bars\">\n<h2>Per region</h2>\n");
  if (regions.empty()) {
    Append(out, "<p>No region was recorded.</p>\n</section>\n");
    return;
  }
  const std::vector<size_t> metrics = BarMetrics(results);
  if (metrics.empty()) {
    Append(out,
           "<p class=\"note\">No per-second metric was measured: the bars "
           "show each region's wall time (the time at least one thread was "
           "inside it).</p>\n");
    std::vector<Bar> bars;
    bars.reserve(regions.size());
    for (const RegionResult& region : regions) {
      bars.push_back({static_cast<double>(region.wall_ns),
                      FormatDuration(region.wall_ns)});
    }
    AppendBarChart(page, "wall time", bars, out);
  }
  for (const size_t m : metrics) {
    const MetricInfo& metric = results.metrics[m];
    std::vector<Bar> bars;
    bars.reserve(regions.size());
    for (const RegionResult& region : regions) {
      const bool valid = m < region.metrics.size() && region.metrics[m].valid &&
                         std::isfinite(region.metrics[m].value);
      bars.push_back(valid ? Bar{region.metrics[m].value,
                                 EscapeHtml(FormatMetricValue(
                                     region.metrics[m].value, metric.unit))}
                           : Bar{kNoValue, "n/a"});
    }
    AppendBarChart(page, EscapeHtml(metric.name), bars, out);
  }
  Append(out, "</section>\n");
}

}  // namespace

std::string EscapeHtml(std::string_view text) {
  const std::string repaired = RepairUtf8(text);
  std::string out;
  out.reserve(repaired.size());
  for (size_t i = 0; i < repaired.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(repaired[i]);
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&#39;";
        continue;
      case '\t':
      case '\n':
      case '\r':
        out.push_back(static_cast<char>(c));
        continue;
      default:
        break;
    }
    // C0 controls and DEL; C1 controls (U+0080-U+009F: C2 80-C2 9F).
    const bool c1 = c == 0xC2 && i + 1 < repaired.size() &&
                    static_cast<unsigned char>(repaired[i + 1]) < 0xA0;
    if (c < 0x20 || c == 0x7F || c1) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      if (c1) ++i;
      continue;
    }
    out.push_back(static_cast<char>(c));
  }
  return out;
}

std::string FormatHtml(const Results& results, const Timeline* timeline) {
  Page page{.results = results,
            .timeline = timeline,
            .tree = internal::BuildRegionTree(results.regions),
            .paths = {},
            .shown_events = {},
            .end_ns = std::max<uint64_t>(results.run.duration_ns, 1)};
  page.paths.reserve(results.regions.size());
  for (const RegionResult& region : results.regions) {
    page.paths.push_back(EscapeHtml(region.path));
  }
  for (size_t e = 0; e < results.events.size(); ++e) {
    if (!results.events[e].from_metric) page.shown_events.push_back(e);
  }
  if (timeline != nullptr) {
    for (const TimelineCall& call : timeline->calls) {
      page.end_ns = std::max({page.end_ns, call.end_ns, call.begin_ns});
    }
    for (const TimelineRates& r : timeline->rates) {
      page.end_ns = std::max({page.end_ns, r.end_ns, r.begin_ns});
    }
  }

  std::string out;
  out.reserve(16384 + (timeline != nullptr ? timeline->calls.size() * 256 : 0));
  const RunInfo& run = results.run;
  AppendF(&out,
          "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
          "charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" "
          "content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "script-src 'unsafe-inline'\">\n<meta name=\"viewport\" "
          "content=\"width=device-width, initial-scale=1\">\n<meta "
          "name=\"generator\" content=\"uncore-sdk\">\n<title>uncore report"
          "{}{}</title>\n<style>{}",
          run.simulated ? " (SIMULATED)" : "",
          run.host.empty() ? "" : ": " + EscapeHtml(run.host), kStyle);
  for (size_t i = 0; i < results.regions.size(); ++i) {
    const std::string colour = RegionColour(i);
    AppendF(&out, ".c{0}{{fill:{1};background:{1}}}\n", i, colour);
  }
  Append(&out, "</style>\n</head>\n<body>\n");
  AppendHeader(page, &out);
  AppendRegionTable(page, &out);
  AppendTimeline(page, &out);
  AppendBars(page, &out);
  AppendF(&out, "<script>{}</script>\n</body>\n</html>\n", kScript);
  return out;
}

}  // namespace uncore::report
