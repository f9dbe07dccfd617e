#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "sdk/common/json.h"
#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"
#include "sdk/platforms/ivytown/model/metrics.h"
#include "sdk/report/text_table.h"
#include "sdk/spec/encoder.h"
#include "tools/cli/commands.h"
#include "tools/cli/describe.h"

namespace uncore::cli {
namespace {

using ivytown::BoxDescriptor;
using ivytown::EventDescriptor;
using ivytown::UmaskDescriptor;

// One listed row: an event with one of its unit masks (or none).
struct Row {
  const EventDescriptor* event;
  const UmaskDescriptor* umask;  // nullptr: the event has no unit masks
};

std::string RowName(const Row& row) {
  std::string name =
      fmt::format("{}/{}", ivytown::Box(row.event->box).name, row.event->name);
  if (row.umask != nullptr) name += fmt::format(".{}", row.umask->name);
  return name;
}

// The counter control value of the row's event (enable bit set), from the
// same encoder `describe` uses.
uint64_t DefaultControl(const BoxDescriptor& box, const Row& row) {
  spec::EventSpec spec;
  spec.box = &box;
  spec.event = row.event;
  spec.code = row.event->code;
  spec.extended = row.event->extended;
  if (row.umask != nullptr) {
    spec.umasks.push_back(row.umask);
    spec.umask = row.umask->value;
  }
  absl::StatusOr<spec::Encoding> enc = spec::EncodeEvent(spec);
  return enc.ok() ? enc->control : 0;
}

std::vector<std::string> Strings(std::span<const std::string_view> list) {
  return std::vector<std::string>(list.begin(), list.end());
}

std::vector<std::string> Sources(uint8_t bits) {
  std::vector<std::string> out;
  if (bits & ivytown::kFromManual) out.emplace_back("manual");
  if (bits & ivytown::kFromPerfmon) out.emplace_back("perfmon");
  return out;
}

void WriteRowJson(const Row& row, common::JsonWriter* json) {
  const BoxDescriptor& box = ivytown::Box(row.event->box);
  json->BeginObject();
  json->Key("box");
  json->String(box.name);
  json->Key("event");
  json->String(row.event->name);
  json->Key("umask");
  if (row.umask != nullptr) {
    json->String(row.umask->name);
  } else {
    json->Null();
  }
  json->Key("code");
  json->Uint(row.event->code);
  json->Key("umask_value");
  if (row.umask != nullptr) {
    json->Uint(row.umask->value);
  } else {
    json->Null();
  }
  json->Key("extended");
  json->Bool(row.event->extended);
  json->Key("counters");
  json->BeginArray();
  for (int c = 0; c < 8; ++c) {
    if (row.event->counter_mask & (1u << c)) json->Int(c);
  }
  json->EndArray();
  json->Key("max_increment");
  json->Uint(row.event->max_increment);
  std::vector<std::string> filters = Strings(row.event->filters);
  if (row.umask != nullptr) {
    for (std::string_view f : row.umask->filters) {
      if (std::find(filters.begin(), filters.end(), f) == filters.end()) {
        filters.emplace_back(f);
      }
    }
  }
  json->Key("filters");
  json->StringArray(filters);
  json->Key("aliases");
  json->StringArray(
      Strings(row.umask != nullptr ? row.umask->aliases : row.event->aliases));
  json->Key("event_aliases");
  json->StringArray(Strings(row.event->aliases));
  json->Key("sources");
  json->StringArray(
      Sources(row.umask != nullptr ? row.umask->sources : row.event->sources));
  json->Key("control");
  json->Uint(DefaultControl(box, row));
  json->Key("spec");
  json->String(RowName(row));
  json->EndObject();
}

void WriteMetricJson(const ivytown::MetricDescriptor& m,
                     common::JsonWriter* json) {
  json->BeginObject();
  json->Key("box");
  json->String(ivytown::Box(m.box).name);
  json->Key("metric");
  json->String(m.name);
  json->Key("unit");
  json->String(m.unit);
  json->Key("rate_per_second");
  json->Bool(m.rate_per_second);
  json->Key("expression");
  json->String(m.expression);
  json->Key("description");
  json->String(m.description);
  json->Key("fixed");
  json->Bool(!m.fix.empty());
  json->EndObject();
}

}  // namespace

int RunList(const ListOptions& options, std::FILE* out, std::FILE* err) {
  const bool json_output = options.json;
  const bool metrics_only = options.metrics;
  const std::string_view pattern = options.pattern;
  const BoxDescriptor* pattern_box =
      pattern.empty() ? nullptr : ivytown::FindBox(pattern);
  auto box_selected = [&](const BoxDescriptor& box) {
    return pattern.empty() || pattern_box == &box;
  };

  std::vector<Row> rows;
  for (const EventDescriptor& e : ivytown::AllEvents()) {
    auto keep = [&](const Row& row) {
      return pattern.empty() || pattern_box == &ivytown::Box(e.box) ||
             (pattern_box == nullptr &&
              common::ContainsIgnoreCase(RowName(row), pattern));
    };
    if (!e.has_umasks()) {
      Row row{&e, nullptr};
      if (keep(row)) rows.push_back(row);
    }
    for (const UmaskDescriptor& u : e.umasks) {
      Row row{&e, &u};
      if (keep(row)) rows.push_back(row);
    }
  }
  std::vector<const ivytown::MetricDescriptor*> metrics;
  for (const ivytown::MetricDescriptor& m : ivytown::AllMetrics()) {
    const BoxDescriptor& box = ivytown::Box(m.box);
    if (box_selected(box) ||
        (pattern_box == nullptr &&
         common::ContainsIgnoreCase(fmt::format("{}.{}", box.name, m.name),
                                    pattern))) {
      metrics.push_back(&m);
    }
  }

  if (json_output) {
    common::JsonWriter json(/*pretty=*/false);
    json.BeginArray();
    if (metrics_only) {
      for (const auto* m : metrics) WriteMetricJson(*m, &json);
    } else {
      for (const Row& row : rows) WriteRowJson(row, &json);
    }
    json.EndArray();
    fmt::print(out, "{}\n", json.str());
    return kExitOk;
  }

  std::string text;
  if (!metrics_only) {
    // One table per box, under a line that describes the box.
    const BoxDescriptor* current = nullptr;
    std::optional<report::TextTable> table;
    auto flush = [&] {
      if (table) table->Render(&text);
    };
    for (const Row& row : rows) {
      const BoxDescriptor& box = ivytown::Box(row.event->box);
      if (&box != current) {
        flush();
        current = &box;
        text += fmt::format(
            "\n{} ({}): {} space, {} instance(s), {} x {}-bit counters{}\n",
            box.name, box.manual_name,
            box.space == ivytown::AccessSpace::kMsr ? "MSR" : "PCI-config",
            box.num_instances(), box.num_counters, box.counter_width,
            box.fixed_counter
                ? fmt::format(", fixed counter {}/{} ({}-bit)", box.name,
                              box.fixed_counter->name, box.fixed_counter->width)
                : std::string());
        table.emplace(report::TextTableOptions{.indent = "  "});
        table->AddColumn("EVENT.UMASK", report::Align::kLeft);
        table->AddColumn("code", report::Align::kRight);
        table->AddColumn("umask", report::Align::kRight);
        table->AddColumn("control", report::Align::kRight);
        table->AddColumn("counters", report::Align::kRight);
        table->AddColumn("filters", report::Align::kLeft);
      }
      std::vector<std::string> filter_names = Strings(row.event->filters);
      if (row.umask != nullptr) {
        const std::vector<std::string> more = Strings(row.umask->filters);
        filter_names.insert(filter_names.end(), more.begin(), more.end());
      }
      const std::string filters = common::Join(filter_names, ",");
      table->AddRow({RowName(row).substr(box.name.size() + 1),
                     fmt::format("0x{:02x}{}", row.event->code,
                                 row.event->extended ? "+" : ""),
                     row.umask != nullptr
                         ? fmt::format("0x{:02x}", row.umask->value)
                         : std::string("-"),
                     fmt::format("0x{:08x}", DefaultControl(box, row)),
                     CounterList(row.event->counter_mask), filters});
    }
    flush();
    if (!rows.empty()) {
      text +=
          "\n  code+: needs the extended select bit; control: the counter "
          "control value with en set\n";
    }
  }
  if (!metrics.empty()) {
    text +=
        fmt::format("\nmetrics (uncore describe metric/NAME for details)\n");
    report::TextTable table({.indent = "  "});
    table.AddColumn("", report::Align::kLeft);
    table.AddColumn("", report::Align::kLeft);
    table.AddColumn("", report::Align::kLeft);
    for (const auto* m : metrics) {
      table.AddRow({fmt::format("{}.{}", ivytown::Box(m->box).name, m->name),
                    std::string(m->unit), std::string(m->expression)});
    }
    table.Render(&text);
  }
  if (rows.empty() && metrics.empty()) {
    fmt::print(err, "uncore list: nothing matches '{}'\n", pattern);
    return kExitUsage;
  }
  fmt::print(out, "{}", text);
  return kExitOk;
}

}  // namespace uncore::cli
