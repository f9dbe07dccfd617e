#include "tools/cli/describe.h"

#include <vector>

#include "fmt/format.h"
#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/device/kernel_ivbep.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"
#include "sdk/report/text_table.h"

namespace uncore::cli {

using ivytown::AccessSpace;
using ivytown::BoxDescriptor;
using ivytown::FieldRegister;

namespace {

std::vector<int> SelectedInstances(const spec::EventSpec& spec) {
  std::vector<int> ids;
  for (int i = 0; i < spec.box->num_instances(); ++i) {
    if (spec.instances.Contains(i)) ids.push_back(i);
  }
  return ids;
}

// The filter fields of `filter` set in `value` (within `mask`).
std::string FilterFields(const BoxDescriptor& box, int filter, uint64_t value,
                         uint64_t mask) {
  std::vector<std::string> parts;
  uint64_t covered = 0;
  for (const auto& f : box.fields) {
    if (f.reg != FieldRegister::kFilter || f.filter != filter) continue;
    if ((mask & f.bits.mask()) != f.bits.mask() || f.bits.width >= 32) continue;
    parts.push_back(fmt::format("{}=0x{:x}", f.name, f.bits.Extract(value)));
    covered |= f.bits.mask();
  }
  if ((value & mask & ~covered) != 0) {
    parts.push_back(fmt::format("bits 0x{:x}=0x{:x}", mask & ~covered,
                                value & mask & ~covered));
  }
  return common::Join(parts, " ");
}

struct PlannedWrite {
  int instance;
  std::string role;           // "CTL0", "filter", "fixed control"
  std::string register_name;  // empty for the candidate counter controls
  uint32_t offset;
  bool aux_function;
  std::string location;
  uint64_t value;
};

// "MSR 0xd10|0xd11" or "PCI D8:F2 +0xd8|+0xdc (8086:0e32)": the candidate
// control registers of one instance on one line.
std::string CompactLocations(const BoxDescriptor& box, int instance,
                             const std::vector<uint32_t>& offsets) {
  std::vector<std::string> addresses;
  addresses.reserve(offsets.size());
  for (uint32_t offset : offsets) {
    addresses.push_back(
        box.space == AccessSpace::kMsr
            ? fmt::format("0x{:x}", box.RegisterAddress(instance, offset))
            : fmt::format("+0x{:x}", offset));
  }
  if (box.space == AccessSpace::kMsr) {
    return "MSR " + common::Join(addresses, "|");
  }
  const ivytown::PciFunction& fn = box.instances[instance].pmon;
  return fmt::format("PCI D{}:F{} {} (8086:{:04x})", fn.device, fn.function,
                     common::Join(addresses, "|"), fn.device_id);
}

std::vector<PlannedWrite> RegistersFor(const spec::EventSpec& spec,
                                       const spec::Encoding& enc) {
  const BoxDescriptor& box = *spec.box;
  std::vector<PlannedWrite> writes;
  for (int i : SelectedInstances(spec)) {
    if (enc.fixed_counter) {
      const auto& fixed = *box.fixed_counter;
      writes.push_back(
          {i, "fixed control", std::string(fixed.manual_control_name),
           fixed.control_offset, false,
           RegisterLocation(box, i, fixed.control_offset, false), enc.control});
      continue;
    }
    for (int c = 0; c < box.num_counters; ++c) {
      if ((enc.counter_mask & (1u << c)) == 0) continue;
      writes.push_back({i, fmt::format("CTL{}", c), "", box.control_offsets[c],
                        false,
                        RegisterLocation(box, i, box.control_offsets[c], false),
                        enc.control});
    }
    for (const spec::FilterValue& fv : enc.filters) {
      const auto& reg = box.filters[fv.filter];
      writes.push_back(
          {i, "filter", std::string(reg.name), reg.offset, reg.in_aux_function,
           RegisterLocation(box, i, reg.offset, reg.in_aux_function),
           fv.value});
    }
  }
  return writes;
}

}  // namespace

std::string RegisterLocation(const BoxDescriptor& box, int instance,
                             uint32_t offset, bool aux_function) {
  if (box.space == AccessSpace::kMsr) {
    return fmt::format("MSR 0x{:x}", box.RegisterAddress(instance, offset));
  }
  const ivytown::PciFunction& fn =
      aux_function ? box.instances[instance].aux : box.instances[instance].pmon;
  return fmt::format("PCI D{}:F{} +0x{:x} ({})", fn.device, fn.function, offset,
                     fn.present() ? fmt::format("8086:{:04x}", fn.device_id)
                                  : std::string("device id not documented"));
}

std::string ControlFields(const BoxDescriptor& box, uint64_t control) {
  std::vector<std::string> parts;
  for (const auto& f : box.fields) {
    if (f.reg != FieldRegister::kControl) continue;
    const uint64_t v = f.bits.Extract(control);
    if (v == 0) continue;
    // Skip aliases nested in a wider field already shown (PCU occ_sel).
    bool nested = false;
    for (const auto& g : box.fields) {
      if (&g != &f && g.reg == FieldRegister::kControl &&
          g.bits.width > f.bits.width &&
          (g.bits.mask() & f.bits.mask()) == f.bits.mask() &&
          g.bits.Extract(control) != 0) {
        nested = true;
      }
    }
    if (!nested) parts.push_back(fmt::format("{}=0x{:x}", f.name, v));
  }
  return common::Join(parts, " ");
}

std::string CounterList(uint8_t mask) {
  std::vector<std::string> parts;
  int i = 0;
  while (i < 8) {
    if ((mask & (1u << i)) == 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < 8 && (mask & (1u << (j + 1)))) ++j;
    parts.push_back(j == i ? fmt::format("{}", i) : fmt::format("{}-{}", i, j));
    i = j + 1;
  }
  return parts.empty() ? "none" : common::Join(parts, ",");
}

void DescribeEventText(const spec::EventSpec& spec, const spec::Encoding& enc,
                       std::string* out) {
  const BoxDescriptor& box = *spec.box;
  const std::vector<int> ids = SelectedInstances(spec);
  *out += fmt::format("spec       {}\n", spec.text);
  *out += fmt::format("canonical  {}\n", spec.Canonical());
  *out += fmt::format(
      "box        {} ({}), {} space, instances {} of {}, counts in {}, "
      "registers {}*\n",
      box.name, box.manual_name,
      box.space == AccessSpace::kMsr ? "MSR" : "PCI-config",
      spec.instances.ToString(), box.num_instances(),
      ivytown::ClockDomainName(box.clock), box.register_prefix);
  if (enc.fixed_counter) {
    const auto& fixed = *box.fixed_counter;
    *out += fmt::format("event      {} (fixed counter, {} bits)\n", fixed.name,
                        fixed.width);
    *out += fmt::format("control    0x{:08x}  {} ({})\n", enc.control, "en=1",
                        fixed.manual_control_name);
  } else {
    if (spec.event != nullptr) {
      *out += fmt::format("event      {} code 0x{:02x}{}", spec.event->name,
                          spec.code, spec.extended ? " (extended select)" : "");
    } else {
      *out += fmt::format("event      raw code 0x{:02x}{}", spec.code,
                          spec.extended ? " (extended select)" : "");
    }
    if (!spec.umasks.empty()) {
      std::vector<std::string> names;
      for (const auto* u : spec.umasks) names.emplace_back(u->name);
      *out += fmt::format(", unit mask {} (0x{:02x})", common::Join(names, "|"),
                          spec.umask);
    } else if (spec.umask != 0) {
      *out += fmt::format(", umask 0x{:02x}", spec.umask);
    }
    *out += "\n";
    *out += fmt::format("control    0x{:08x}  {}\n", enc.control,
                        ControlFields(box, enc.control));
    *out += fmt::format("counters   {} (of {} x {}-bit)\n",
                        CounterList(enc.counter_mask), box.num_counters,
                        box.counter_width);
    for (const spec::FilterValue& fv : enc.filters) {
      *out += fmt::format("filter     {} = 0x{:08x}  {}\n",
                          box.filters[fv.filter].name, fv.value,
                          FilterFields(box, fv.filter, fv.value, fv.mask));
    }
    if (spec.event != nullptr) {
      *out +=
          fmt::format("max inc    {} per cycle\n", spec.event->max_increment);
    }
  }
  for (const std::string& note : enc.notes) {
    *out += fmt::format("note       {}\n", note);
  }
  if (const ivytown::FieldDescriptor* q =
          box.FindRole(ivytown::FieldRole::kQueueOccupancyReset);
      q != nullptr && spec.event != nullptr && !enc.fixed_counter &&
      ivytown::NeedsQueueOccupancyReset(*spec.event)) {
    *out += fmt::format(
        "direct     writes the control as 0x{:08x}, with q_occ_rst, which "
        "clears the queue occupancy counter as the manual asks for HA "
        "occupancy counts\n",
        q->bits.Insert(enc.control, 1));
  }
  for (const std::string& caveat : devices::perf::PerfCaveats(spec, enc)) {
    *out += fmt::format("perf       {}\n", caveat);
  }
  *out += enc.fixed_counter
              ? "registers  per instance\n"
              : "registers  per instance; the control value goes to one of the "
                "listed CTLs (the counter is chosen when programming)\n";
  const std::vector<PlannedWrite> writes = RegistersFor(spec, enc);
  report::TextTable table({.indent = "  ", .gap = " "});
  table.AddColumn("", report::Align::kLeft, 16);
  table.AddColumn("", report::Align::kLeft);
  for (size_t i = 0; i < writes.size();) {
    // One line per instance: its candidate controls, then its filters.
    const int instance = writes[i].instance;
    std::vector<uint32_t> controls;
    std::vector<std::string> parts;
    for (; i < writes.size() && writes[i].instance == instance; ++i) {
      const PlannedWrite& w = writes[i];
      if (w.register_name.empty()) {
        controls.push_back(w.offset);
      } else {
        parts.push_back(fmt::format("{} {} <- 0x{:08x}", w.register_name,
                                    w.location, w.value));
      }
    }
    if (!controls.empty()) {
      parts.insert(
          parts.begin(),
          fmt::format("CTL {} <- 0x{:08x}",
                      CompactLocations(box, instance, controls), enc.control));
    }
    table.AddRow(
        {std::string(box.instances[instance].name), common::Join(parts, "; ")});
  }
  table.Render(out);
}

void DescribeEventJson(const spec::EventSpec& spec, const spec::Encoding& enc,
                       common::JsonWriter* json, bool close) {
  const BoxDescriptor& box = *spec.box;
  json->BeginObject();
  json->Key("spec");
  json->String(spec.text);
  json->Key("canonical");
  json->String(spec.Canonical());
  json->Key("kind");
  json->String(enc.fixed_counter ? "fixed" : "event");
  json->Key("box");
  json->String(box.name);
  json->Key("instances");
  json->BeginArray();
  for (int i : SelectedInstances(spec)) json->Int(i);
  json->EndArray();
  json->Key("event");
  if (enc.fixed_counter) {
    json->String(box.fixed_counter->name);
  } else if (spec.event != nullptr) {
    json->String(spec.event->name);
  } else {
    json->Null();
  }
  json->Key("umasks");
  json->BeginArray();
  for (const auto* u : spec.umasks) json->String(u->name);
  json->EndArray();
  json->Key("code");
  json->Uint(spec.code);
  json->Key("extended");
  json->Bool(spec.extended);
  json->Key("umask_value");
  json->Uint(spec.umask);
  json->Key("control");
  json->Uint(enc.control);
  json->Key("control_hex");
  json->String(fmt::format("0x{:08x}", enc.control));
  json->Key("counters");
  json->BeginArray();
  for (int c = 0; c < 8; ++c) {
    if (enc.counter_mask & (1u << c)) json->Int(c);
  }
  json->EndArray();
  json->Key("filters");
  json->BeginArray();
  for (const spec::FilterValue& fv : enc.filters) {
    json->BeginObject();
    json->Key("register");
    json->String(box.filters[fv.filter].name);
    json->Key("value");
    json->Uint(fv.value);
    json->Key("mask");
    json->Uint(fv.mask);
    json->EndObject();
  }
  json->EndArray();
  json->Key("registers");
  json->BeginArray();
  for (const PlannedWrite& w : RegistersFor(spec, enc)) {
    json->BeginObject();
    json->Key("instance");
    json->Int(w.instance);
    json->Key("role");
    json->String(w.role);
    json->Key("name");
    json->String(w.register_name);
    json->Key("location");
    json->String(w.location);
    json->Key("value");
    json->Uint(w.value);
    json->EndObject();
  }
  json->EndArray();
  json->Key("notes");
  json->BeginArray();
  for (const std::string& n : enc.notes) json->String(n);
  json->EndArray();
  json->Key("perf_caveats");
  json->BeginArray();
  for (const std::string& c : devices::perf::PerfCaveats(spec, enc)) {
    json->String(c);
  }
  json->EndArray();
  if (close) json->EndObject();
}

void DescribeGenericPerfText(const spec::EventSpec& spec, std::string* out) {
  *out += fmt::format("spec       {}\n", spec.text);
  *out += fmt::format("canonical  {}\n", spec.Canonical());
  *out += fmt::format(
      "pmu        {} (not an IvyTown box: the perf backend resolves it "
      "from /sys/bus/event_source/devices/{})\n",
      spec.pmu, spec.pmu);
}

}  // namespace uncore::cli
