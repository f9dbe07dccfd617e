// The human table (docs/report-format.md gives the layout rules), and the
// MPI merged report's (Results::mpi set; docs/mpi.md).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "sdk/common/utf8.h"
#include "sdk/report/report.h"
#include "sdk/report/report_internal.h"
#include "sdk/report/text_table.h"

namespace uncore::report {
namespace {

constexpr std::string_view kSimulatedBanner =
    "SIMULATED — every count below is made up by the simulator, not measured";
constexpr std::string_view kColumnGap = "  ";
// A region's name (or path) wider than this, in terminal columns, is cut in
// the middle: a 300-character name or a Kokkos kernel's demangled
// signature would widen every line of the table.
constexpr size_t kMaxNameColumns = 40;  // as the HTML timeline's labels
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026, 1 column

// A region as the table shows it.
struct Row {
  const RegionResult* region = nullptr;
  std::string label;  // indented, escaped name (or path)
  bool cut = false;   // the name was cut to kMaxNameColumns
};

// `text` (escaped: valid UTF-8) as it is when at most `max` columns wide,
// else its start and its end around an ellipsis, `max` columns in all:
// two thirds for the start, the rest for the end (where names of one
// family, kernels of one template, differ).
std::string CutMiddle(std::string_view text, size_t max, bool* cut) {
  if (DisplayWidth(text) <= max) return std::string(text);
  *cut = true;
  std::vector<std::string_view> chars;
  for (size_t i = 0; i < text.size();) {
    const size_t len = std::max<size_t>(common::ValidUtf8Length(text, i), 1);
    chars.push_back(text.substr(i, len));
    i += len;
  }
  const size_t head_columns = (max - 1) * 2 / 3;
  const size_t tail_columns = max - 1 - head_columns;
  std::string head;
  size_t columns = 0;
  size_t k = 0;
  for (; k < chars.size(); ++k) {
    const size_t w = DisplayWidth(chars[k]);
    if (columns + w > head_columns) break;
    columns += w;
    head += chars[k];
  }
  size_t tail_begin = chars.size();
  columns = 0;
  while (tail_begin > k) {
    const size_t w = DisplayWidth(chars[tail_begin - 1]);
    if (columns + w > tail_columns) break;
    columns += w;
    --tail_begin;
  }
  std::string out = head;
  out += kEllipsis;
  for (size_t t = tail_begin; t < chars.size(); ++t) out += chars[t];
  return out;
}

// Regions in tree order: each right after its parent, siblings in Results
// order.  A region's parent is the one whose path is the region's path
// without "/name" and whose depth is one less.
std::vector<Row> TreeOrder(const std::vector<RegionResult>& regions) {
  const size_t n = regions.size();
  std::unordered_map<std::string_view, size_t> by_path;  // first with a path
  for (size_t i = 0; i < n; ++i) by_path.try_emplace(regions[i].path, i);
  std::vector<int> parent(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const RegionResult& r = regions[i];
    const std::optional<std::string_view> parent_path = internal::ParentPath(r);
    if (!parent_path) continue;
    const auto it = by_path.find(*parent_path);
    if (it != by_path.end() && regions[it->second].depth == r.depth - 1) {
      parent[i] = static_cast<int>(it->second);
    }
  }
  std::vector<std::vector<size_t>> children(n);
  std::vector<size_t> roots;
  for (size_t i = 0; i < n; ++i) {
    if (parent[i] < 0) {
      roots.push_back(i);
    } else {
      children[static_cast<size_t>(parent[i])].push_back(i);
    }
  }
  std::vector<Row> rows;
  rows.reserve(n);
  // Depth-first, with an explicit stack: no recursion however deep the nesting.
  std::vector<size_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    const RegionResult& r = regions[i];
    const std::string indent(2 * static_cast<size_t>(std::max(r.depth, 0)),
                             ' ');
    const std::string& shown = parent[i] < 0 && r.depth > 0 ? r.path : r.name;
    bool cut = false;
    std::string label =
        indent + CutMiddle(EscapeForTable(shown), kMaxNameColumns, &cut);
    rows.push_back({&r, std::move(label), cut});
    stack.insert(stack.end(), children[i].rbegin(), children[i].rend());
  }
  return rows;
}

// The report's grids: cells made of escaped pieces, a rule under the
// header.
TextTable NewGrid() {
  return TextTable({.indent = "",
                    .gap = std::string(kColumnGap),
                    .header_rule = true,
                    .cells_escaped = true});
}

std::string Banner() {
  const size_t width = DisplayWidth(kSimulatedBanner) + 8;
  const std::string rule(width, '#');
  return fmt::format("{}\n### {} ###\n{}\n", rule, kSimulatedBanner, rule);
}

std::string ShownOrUnknown(const std::string& text) {
  return text.empty() ? "?" : EscapeForTable(text);
}

std::string SocketsText(const std::vector<int>& sockets) {
  if (sockets.empty()) return "none";
  std::string text;
  for (size_t i = 0; i < sockets.size(); ++i) {
    text += fmt::format("{}{}", i > 0 ? "," : "", sockets[i]);
  }
  return text;
}

std::string EventLabel(const EventInfo& event) {
  return EscapeForTable(event.canonical.empty() ? event.spec : event.canonical);
}

struct Layout {
  const Results& results;
  std::vector<size_t> events;  // shown: not from_metric
  size_t sockets = 0;          // columns of the per-socket breakdown
  bool any_estimated = false;  // some count shows '~'
  bool any_flagged = false;    // some wall time shows '!'
  bool any_open = false;       // some calls show "open"
};

// Socket `s` of the per-socket vectors: its id when known.
std::string SocketName(const Layout& layout, size_t s) {
  const std::vector<int>& ids = layout.results.run.sockets;
  return s < ids.size() ? fmt::format("{}", ids[s]) : fmt::format("#{}", s);
}

const EventCounts* Counts(const RegionResult& region, size_t e) {
  return e < region.inclusive.size() ? &region.inclusive[e] : nullptr;
}

std::string TotalCell(Layout* layout, const RegionResult& region, size_t e) {
  const EventCounts* counts = Counts(region, e);
  if (counts == nullptr) return "-";
  const EventInfo& event = layout->results.events[e];
  const bool estimated = IsEstimated(region, *counts);
  layout->any_estimated |= estimated;
  return FormatEventValue(counts->total, event.scale, event.unit, estimated);
}

std::string SocketCell(Layout* layout, const RegionResult& region, size_t e,
                       size_t s) {
  const EventCounts* counts = Counts(region, e);
  if (counts == nullptr || s >= counts->per_socket.size()) return "-";
  const EventInfo& event = layout->results.events[e];
  const bool estimated = IsEstimated(region, *counts);
  layout->any_estimated |= estimated;
  return FormatEventValue(counts->per_socket[s], event.scale, event.unit,
                          estimated);
}

// "1,000", or "1,000 (100 sampled)" when only some calls were measured.
// "1,000 (1 open)" when calls were still open when the session stopped.
std::string CallsText(Layout* layout, const RegionResult& region) {
  std::string text = GroupDigits(region.calls);
  if (region.threads > 1) {
    absl::StrAppend(&text, " on ", GroupDigits(region.threads), " threads");
  }
  if (IsSampled(region)) {
    absl::StrAppend(&text, " (", GroupDigits(region.sampled_calls),
                    " sampled)");
  }
  if (region.open_calls > 0) {
    layout->any_open = true;
    absl::StrAppend(&text, " (", GroupDigits(region.open_calls), " open)");
  }
  return text;
}

// "600 ms", or "!24% 600 ms" when the measurement took more than
// kOverheadFlagPercent of it.
std::string WallText(Layout* layout, const RegionResult& region) {
  if (!OverheadFlagged(region)) return FormatDuration(region.wall_ns);
  layout->any_flagged = true;
  return absl::StrCat("!",
                      FormatOverheadPercent(region.overhead_ns, region.wall_ns),
                      " ", FormatDuration(region.wall_ns));
}

std::string MetricCell(const Results& results, const RegionResult& region,
                       size_t m) {
  if (m >= region.metrics.size() || !region.metrics[m].valid) return "n/a";
  return FormatMetricValue(region.metrics[m].value, results.metrics[m].unit);
}

TextTable MainGrid(Layout* layout, const std::vector<Row>& rows) {
  const Results& results = layout->results;
  TextTable grid = NewGrid();
  grid.AddColumn("region", Align::kLeft);
  grid.AddColumn("calls", Align::kRight);
  grid.AddColumn("wall", Align::kRight);
  for (size_t e : layout->events) {
    grid.AddColumn(EventLabel(results.events[e]), Align::kRight);
  }
  for (const MetricInfo& metric : results.metrics) {
    grid.AddColumn(EscapeForTable(metric.name), Align::kRight);
  }
  for (const Row& row : rows) {
    const RegionResult& region = *row.region;
    std::vector<std::string> cells = {row.label, CallsText(layout, region),
                                      WallText(layout, region)};
    for (size_t e : layout->events) {
      cells.push_back(TotalCell(layout, region, e));
    }
    for (size_t m = 0; m < results.metrics.size(); ++m) {
      cells.push_back(MetricCell(results, region, m));
    }
    grid.AddRow(std::move(cells));
  }
  return grid;
}

TextTable SocketGrid(Layout* layout, const std::vector<Row>& rows) {
  TextTable grid = NewGrid();
  grid.AddColumn("region", Align::kLeft);
  grid.AddColumn("socket", Align::kRight);
  for (size_t e : layout->events) {
    grid.AddColumn(EventLabel(layout->results.events[e]), Align::kRight);
  }
  for (const Row& row : rows) {
    for (size_t s = 0; s < layout->sockets; ++s) {
      std::vector<std::string> cells = {s == 0 ? row.label : "",
                                        SocketName(*layout, s)};
      for (size_t e : layout->events) {
        cells.push_back(SocketCell(layout, *row.region, e, s));
      }
      grid.AddRow(std::move(cells));
    }
  }
  return grid;
}

// One block per region: a line with calls and times, then one line per event
// (total, then per socket) and per metric, values aligned across regions.
void RenderVertical(Layout* layout, const std::vector<Row>& rows,
                    std::string* out) {
  const Results& results = layout->results;
  struct Line {
    std::string label;
    std::string value;
    std::string breakdown;
  };
  size_t label_width = 0;
  size_t value_width = 0;
  std::vector<std::vector<Line>> blocks;
  for (const Row& row : rows) {
    const RegionResult& region = *row.region;
    std::vector<Line>& lines = blocks.emplace_back();
    for (size_t e : layout->events) {
      Line line{EventLabel(results.events[e]), TotalCell(layout, region, e),
                ""};
      for (size_t s = 0; layout->sockets > 1 && s < layout->sockets; ++s) {
        line.breakdown += fmt::format("{}socket {}: {}", s > 0 ? "; " : "",
                                      SocketName(*layout, s),
                                      SocketCell(layout, region, e, s));
      }
      lines.push_back(std::move(line));
    }
    for (size_t m = 0; m < results.metrics.size(); ++m) {
      lines.push_back({EscapeForTable(results.metrics[m].name),
                       MetricCell(results, region, m), ""});
    }
    for (const Line& line : lines) {
      // Deeper regions indent their lines more: count that in the label.
      label_width = std::max(
          label_width, 2 * static_cast<size_t>(std::max(region.depth, 0)) +
                           DisplayWidth(line.label));
      value_width = std::max(value_width, DisplayWidth(line.value));
    }
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    const RegionResult& region = *rows[r].region;
    *out += fmt::format("{}  calls {}, wall {} (min {}, max {})\n",
                        rows[r].label, CallsText(layout, region),
                        WallText(layout, region), FormatDuration(region.min_ns),
                        FormatDuration(region.max_ns));
    const size_t indent = 2 * static_cast<size_t>(std::max(region.depth, 0));
    for (const Line& line : blocks[r]) {
      std::string text = fmt::format(
          "{}{}{}  {}{}", std::string(indent + 4, ' '), line.label,
          std::string(label_width - indent - DisplayWidth(line.label), ' '),
          std::string(value_width - DisplayWidth(line.value), ' '), line.value);
      if (!line.breakdown.empty()) text += "  (" + line.breakdown + ")";
      *out += text + "\n";
    }
  }
}

void RenderMessages(std::string_view title,
                    const std::vector<std::string>& messages,
                    std::string* out) {
  if (messages.empty()) return;
  *out += fmt::format("{} ({}):\n", title, messages.size());
  for (const std::string& message : messages) {
    *out += fmt::format("  - {}\n", EscapeForTable(message));
  }
}

// A note when some region's name was cut (CutMiddle), else "".
std::string CutNote(const std::vector<Row>& rows) {
  if (std::none_of(rows.begin(), rows.end(),
                   [](const Row& row) { return row.cut; })) {
    return "";
  }
  return fmt::format(
      "{}: region names longer than {} columns are cut in the middle; the "
      "JSON and CSV reports have them whole\n",
      kEllipsis, kMaxNameColumns);
}

// ---- The MPI merged report (Results::mpi; docs/mpi.md)

// The merged fields of `region` (one of results.regions), or none.
const MpiResults::Region& MergedRegion(const Results& results,
                                       const RegionResult& region) {
  static const MpiResults::Region kNone;
  const auto i = static_cast<size_t>(&region - results.regions.data());
  return i < results.mpi->regions.size() ? results.mpi->regions[i] : kNone;
}

std::string MergedHeader(const Results& results) {
  const RunInfo& run = results.run;
  const MpiResults& mpi = *results.mpi;
  std::string out = fmt::format(
      "uncore MPI report: {} rank{} on {} node{}, platform {}, backend {}, "
      "CPU {}\n",
      mpi.ranks, mpi.ranks == 1 ? "" : "s", mpi.nodes.size(),
      mpi.nodes.size() == 1 ? "" : "s",
      ShownOrUnknown(internal::PlatformText(run.platform)),
      ShownOrUnknown(run.backend), ShownOrUnknown(run.cpu));
  for (size_t n = 0; n < mpi.nodes.size(); ++n) {
    const MpiResults::Node& node = mpi.nodes[n];
    std::string sockets;
    for (const MpiResults::Socket& s : node.sockets) {
      sockets += fmt::format("{}socket {} led by rank {} (read by {})",
                             sockets.empty() ? "" : "; ", s.socket, s.leader,
                             s.ranks.size());
    }
    out += fmt::format("node {} ({}): ranks {}; {}\n", n,
                       EscapeForTable(node.host), fmt::join(node.ranks, ","),
                       sockets.empty() ? "no socket counted" : sockets);
  }
  out +=
      "calls: summed over ranks; wall: the time at least one rank was "
      "inside (the node union; across nodes the longest node's), rank wall: "
      "each rank's own, mean [min, max]; counts: each socket of each node "
      "once, while at least one of its ranks was inside (the node union; "
      "else its leader's view)\n";
  return out;
}

// One row per region: its ranks, calls and times, each event's total.
TextTable MergedMainGrid(const Results& results, const std::vector<Row>& rows) {
  TextTable grid = NewGrid();
  grid.AddColumn("region", Align::kLeft);
  for (const char* header :
       {"ranks", "calls", "wall", "rank wall", "min", "max"}) {
    grid.AddColumn(header, Align::kRight);
  }
  for (const EventInfo& event : results.events) {
    if (!event.from_metric) grid.AddColumn(EventLabel(event), Align::kRight);
  }
  for (const Row& row : rows) {
    const RegionResult& region = *row.region;
    const MpiResults::Region& merged = MergedRegion(results, region);
    std::vector<std::string> cells = {
        row.label,
        fmt::format("{}", merged.ranks),
        GroupDigits(region.calls),
        absl::StrCat(merged.wall_node_union ? "" : "~",
                     FormatDuration(region.wall_ns)),
        FormatDuration(merged.rank_mean_wall_ns),
        FormatDuration(merged.rank_wall_min_ns),
        FormatDuration(merged.rank_wall_max_ns)};
    for (size_t e = 0; e < results.events.size(); ++e) {
      const EventInfo& event = results.events[e];
      if (event.from_metric) continue;
      const EventCounts* counts = Counts(region, e);
      cells.push_back(counts == nullptr
                          ? "-"
                          : FormatEventValue(counts->total, event.scale,
                                             event.unit, counts->estimated));
    }
    grid.AddRow(std::move(cells));
  }
  return grid;
}

// One row per region, event and (node, socket): the count the merge chose
// and the spread of the ranks' own views, in counts.
TextTable MergedSocketGrid(const Results& results) {
  TextTable grid = NewGrid();
  grid.AddColumn("region", Align::kLeft);
  for (const char* header : {"event", "node", "socket", "count", "from rank",
                             "ranks", "min", "max"}) {
    grid.AddColumn(header, Align::kRight);
  }
  for (const RegionResult& region : results.regions) {
    const MpiResults::Region& merged = MergedRegion(results, region);
    for (size_t e = 0; e < results.events.size() && e < merged.events.size();
         ++e) {
      for (const MpiResults::SocketCount& s : merged.events[e].per_socket) {
        grid.AddRow({EscapeForTable(region.path), EventLabel(results.events[e]),
                     fmt::format("{}", s.node), fmt::format("{}", s.socket),
                     absl::StrCat(s.estimated ? "~" : "", GroupDigits(s.value)),
                     s.node_union ? std::string("union")
                                  : fmt::format("{}", s.from_rank),
                     fmt::format("{}", s.ranks), GroupDigits(s.min),
                     GroupDigits(s.max)});
      }
    }
  }
  return grid;
}

// One row per region and metric: the merged value, the ranks' own spread.
TextTable MergedMetricGrid(const Results& results) {
  TextTable grid = NewGrid();
  grid.AddColumn("region", Align::kLeft);
  for (const char* header :
       {"metric", "value", "rank mean", "min", "max", "ranks"}) {
    grid.AddColumn(header, Align::kRight);
  }
  for (const RegionResult& region : results.regions) {
    const MpiResults::Region& merged = MergedRegion(results, region);
    for (size_t k = 0; k < results.metrics.size(); ++k) {
      const std::string& unit = results.metrics[k].unit;
      const MpiResults::Metric spread =
          k < merged.metrics.size() ? merged.metrics[k] : MpiResults::Metric{};
      std::vector<std::string> cells = {EscapeForTable(region.path),
                                        EscapeForTable(results.metrics[k].name),
                                        MetricCell(results, region, k)};
      if (spread.ranks == 0) {
        cells.insert(cells.end(), {"n/a", "", "", "0"});
      } else {
        cells.insert(cells.end(), {FormatMetricValue(spread.rank_mean, unit),
                                   FormatMetricValue(spread.rank_min, unit),
                                   FormatMetricValue(spread.rank_max, unit),
                                   fmt::format("{}", spread.ranks)});
      }
      grid.AddRow(std::move(cells));
    }
  }
  return grid;
}

// The merged report's table: its nodes, a row per region, the per-socket
// views and the metrics with the ranks' spread, errors and warnings.
std::string FormatMergedTable(const Results& results) {
  std::string out = MergedHeader(results);
  if (results.run.simulated) out += Banner();
  out += "\n";
  const std::vector<Row> rows = TreeOrder(results.regions);
  MergedMainGrid(results, rows).Render(&out);
  if (!results.events.empty() && !results.regions.empty()) {
    out +=
        "\nper socket (the count: the node union, or one rank's view; and "
        "the spread of the socket's ranks' own views):\n";
    MergedSocketGrid(results).Render(&out);
  }
  if (!results.metrics.empty() && !results.regions.empty()) {
    out +=
        "\nmetrics (value: of the counts above over the wall; and each "
        "rank's own value: mean [min, max] over ranks):\n";
    MergedMetricGrid(results).Render(&out);
  }
  const std::string cut = CutNote(rows);
  if (!cut.empty()) out += "\n" + cut;
  if (results.run.simulated) absl::StrAppend(&out, "\n", Banner());
  if (!results.run.errors.empty() || !results.run.warnings.empty()) {
    out += "\n";
  }
  RenderMessages("errors", results.run.errors, &out);
  RenderMessages("warnings", results.run.warnings, &out);
  return out;
}

}  // namespace

std::string FormatTable(const Results& results) {
  if (results.mpi) return FormatMergedTable(results);
  const RunInfo& run = results.run;
  std::string out;
  out += fmt::format(
      "uncore report: platform {}, backend {}, host {}, CPU {}, sockets {}\n",
      ShownOrUnknown(internal::PlatformText(run.platform)),
      ShownOrUnknown(run.backend), ShownOrUnknown(run.host),
      ShownOrUnknown(run.cpu), SocketsText(run.sockets));
  if (!run.last_check.empty()) {
    out +=
        fmt::format("last uncore check of this machine: {}\n", run.last_check);
  }
  out += fmt::format("duration {}, time frozen {}",
                     FormatDuration(run.duration_ns),
                     FormatDuration(run.frozen_ns));
  if (run.duration_ns > 0) {
    out += fmt::format(" ({:.2g}% of the run)",
                       100.0 * static_cast<double>(run.frozen_ns) /
                           static_cast<double>(run.duration_ns));
  }
  if (run.reads_per_snapshot > 0) {
    out += fmt::format(", {} reads per snapshot", run.reads_per_snapshot);
  }
  out += "\n";
  out +=
      "counts are socket-wide (everything the sockets' boxes saw while a "
      "region was open) and include child regions\n";
  if (run.simulated) out += Banner();

  Layout layout{results, {}, 0, false};
  size_t hidden = 0;
  for (size_t e = 0; e < results.events.size(); ++e) {
    if (results.events[e].from_metric) {
      ++hidden;
    } else {
      layout.events.push_back(e);
    }
  }
  layout.sockets = run.sockets.size();
  for (const RegionResult& region : results.regions) {
    for (const EventCounts& counts : region.inclusive) {
      layout.sockets = std::max(layout.sockets, counts.per_socket.size());
    }
  }

  const std::vector<Row> rows = TreeOrder(results.regions);
  out += "\n";
  if (rows.empty()) {
    out += "(no regions were recorded)\n";
  } else {
    const TextTable main = MainGrid(&layout, rows);
    if (main.Width() <= static_cast<size_t>(kMaxTableWidth)) {
      main.Render(&out);
      if (layout.sockets > 1 && !layout.events.empty()) {
        out += "\nper socket:\n";
        SocketGrid(&layout, rows).Render(&out);
      }
    } else {
      RenderVertical(&layout, rows, &out);
    }
  }

  std::string notes;
  if (layout.any_estimated) {
    notes +=
        "~ estimated: scaled up from a partial count, multiplexed by the "
        "kernel or sampled (UNCORE_SAMPLE: only some calls measured)\n";
  }
  if (layout.any_flagged) {
    notes += fmt::format(
        "!P% before a wall time: the counter reads took P% of this region's "
        "time (more than {}%): read-latency dominated;\n  its rates use the "
        "counters' own window (counted_ns) and stay exact, its counts "
        "include the reads' own traffic;\n  measure a coarser region or "
        "sample it with UNCORE_SAMPLE=N\n",
        kOverheadFlagPercent);
  }
  if (layout.any_open) {
    notes +=
        "(N open): calls still open when the session stopped (an "
        "interrupted run), counted up to then\n";
  }
  notes += CutNote(rows);
  if (hidden > 0) {
    notes += fmt::format(
        "{} event{} needed only by metrics not shown (see the JSON or CSV "
        "report)\n",
        hidden, hidden == 1 ? "" : "s");
  }
  if (!notes.empty()) out += "\n" + notes;
  if (run.simulated) absl::StrAppend(&out, "\n", Banner());
  if (!run.errors.empty() || !run.warnings.empty()) out += "\n";
  RenderMessages("errors", run.errors, &out);
  RenderMessages("warnings", run.warnings, &out);
  return out;
}

}  // namespace uncore::report
