#include "sdk/spec/encoder.h"

#include <algorithm>
#include <span>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"

namespace uncore::spec {
namespace {

using ivytown::BoxDescriptor;
using ivytown::FieldDescriptor;
using ivytown::FieldRegister;
using ivytown::FieldRole;
using ivytown::FieldUse;

std::string Hex(uint64_t v) { return fmt::format("0x{:x}", v); }

absl::Status SetControlField(const BoxDescriptor& box, FieldRole role,
                             uint64_t value, uint64_t* control) {
  const FieldDescriptor* field = box.FindRole(role);
  if (field == nullptr || field->reg != FieldRegister::kControl) {
    return absl::InvalidArgumentError(
        fmt::format("{} counter control has no {} field", box.name,
                    role == FieldRole::kUmask ? "unit-mask" : "event-select"));
  }
  if (value > field->bits.max_value()) {
    return absl::InvalidArgumentError(
        fmt::format("{}={} does not fit in {} ({} bits)", field->name,
                    Hex(value), field->manual_name, field->bits.width));
  }
  *control = field->bits.Insert(*control, value);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Encoding> EncodeEvent(const EventSpec& spec) {
  if (spec.kind == EventSpec::Kind::kGenericPerf) {
    return absl::FailedPreconditionError(
        fmt::format("'{}' is a perf event of PMU '{}': only the perf backend "
                    "can encode it",
                    spec.text, spec.pmu));
  }
  const BoxDescriptor& box = *spec.box;
  Encoding enc;
  enc.box = &box;
  if (spec.kind == EventSpec::Kind::kFixedCounter) {
    enc.fixed_counter = true;
    enc.control = box.fixed_counter->en.Insert(0, 1);
    return enc;
  }
  const std::string name = spec.Canonical();
  uint64_t control = 0;
  if (absl::Status s =
          SetControlField(box, FieldRole::kEventSelect, spec.code, &control);
      !s.ok()) {
    return s;
  }
  if (spec.extended) {
    const FieldDescriptor* ext = box.FindRole(FieldRole::kExtendedSelect);
    if (ext == nullptr) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: {} has no extended event-select bit", name, box.name));
    }
    control = ext->bits.Insert(control, 1);
  }
  if (spec.umask != 0) {
    if (absl::Status s =
            SetControlField(box, FieldRole::kUmask, spec.umask, &control);
        !s.ok()) {
      return s;
    }
  }
  control = box.FindRole(FieldRole::kEnable)->bits.Insert(control, 1);

  std::vector<FilterValue> filters;
  for (const FieldSetting& m : spec.modifiers) {
    const FieldDescriptor& f = *m.field;
    if (f.reg == FieldRegister::kControl) {
      control = f.bits.Insert(control, m.value);
      continue;
    }
    auto it = std::find_if(
        filters.begin(), filters.end(),
        [&](const FilterValue& v) { return v.filter == f.filter; });
    if (it == filters.end()) {
      filters.push_back({f.filter, 0, 0});
      it = filters.end() - 1;
    }
    const uint64_t bits = f.bits.Insert(0, m.value);
    const uint64_t overlap = it->mask & f.bits.mask();
    if ((it->value & overlap) != (bits & overlap)) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: '{}' disagrees with another field of {} on bits {}; give the "
          "register once, either whole or by its fields",
          name, f.name, box.filters[f.filter].name, Hex(overlap)));
    }
    it->value |= bits;
    it->mask |= f.bits.mask();
  }
  for (const FilterValue& fv : filters) {
    const ivytown::FilterRegisterDescriptor& reg = box.filters[fv.filter];
    if ((fv.value & ~reg.writable_mask) != 0) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: the value sets reserved bits {} of {} (writable bits {}); "
          "reserved bits must stay 0",
          name, Hex(fv.value & ~reg.writable_mask), reg.name,
          Hex(reg.writable_mask)));
    }
  }
  std::sort(filters.begin(), filters.end(),
            [](const FilterValue& a, const FilterValue& b) {
              return a.filter < b.filter;
            });

  // The manual's rules on the conditioning bits (section 1.4).
  const FieldDescriptor* edge = box.FindRole(FieldRole::kEdge);
  const FieldDescriptor* thresh = box.FindRole(FieldRole::kThreshold);
  if (edge != nullptr && thresh != nullptr && edge->bits.Extract(control) &&
      thresh->bits.Extract(control) == 0) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: edge detection sits after the threshold compare, so thresh must "
        "be non-zero; add thresh=1 to count 0-to-1 transitions",
        name));
  }
  // The value of the modifier with `role`, or 0 when not given.
  auto modifier = [&](FieldRole role) -> uint64_t {
    for (const FieldSetting& m : spec.modifiers) {
      if (m.field->role == role) return m.value;
    }
    return 0;
  };
  auto given = [&](FieldRole role) {
    return std::any_of(
        spec.modifiers.begin(), spec.modifiers.end(),
        [&](const FieldSetting& m) { return m.field->role == role; });
  };
  const FieldDescriptor* tid_en = box.FindRole(FieldRole::kTidEnable);
  const FieldDescriptor* tid = box.FindRole(FieldRole::kThreadFilter);
  if (tid_en != nullptr && tid != nullptr && given(FieldRole::kThreadFilter) &&
      !tid_en->bits.Extract(control)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} only applies when {} is set; add {}", name,
                    tid->name, tid_en->name, tid_en->name));
  }

  // notes/decisions.md #36: the PCU's occ_invert and occ_edge act on the
  // occupancy events only (occ_sel != 0); elsewhere they would be ignored.
  if (const FieldDescriptor* occ_sel =
          box.FindRole(FieldRole::kOccupancySelect);
      occ_sel != nullptr && occ_sel->bits.Extract(control) == 0) {
    for (FieldRole role :
         {FieldRole::kOccupancyInvert, FieldRole::kOccupancyEdge}) {
      if (modifier(role) != 0) {
        const std::string_view occ = box.FindRole(role)->name;
        return absl::InvalidArgumentError(fmt::format(
            "{}: {} acts only on the PCU's occupancy events (occ_sel != 0: "
            "POWER_STATE_OCCUPANCY.CORES_C0, CORES_C3 or CORES_C6) and would "
            "be ignored here; use edge for edge detection (this event has no "
            "invert)",
            name, occ));
      }
    }
  }

  enc.control = control;
  enc.counter_mask = spec.event != nullptr
                         ? spec.event->counter_mask
                         : static_cast<uint8_t>((1u << box.num_counters) - 1);
  enc.filters = std::move(filters);
  if (spec.event == nullptr) {
    enc.notes.push_back(fmt::format(
        "event code {}{} is not in the catalog: counting it as a raw code on "
        "any {} counter",
        Hex(spec.code), spec.extended ? " (extended)" : "", box.name));
  } else {
    auto note_unprogrammable = [&](std::span<const std::string_view> list) {
      for (std::string_view f : list) {
        if (box.FindField(f) == nullptr) {
          enc.notes.push_back(fmt::format(
              "{} depends on '{}', a filter register whose address the manual "
              "does not give: it counts unfiltered",
              name, f));
        }
      }
    };
    note_unprogrammable(spec.event->filters);
    for (const auto* u : spec.umasks) note_unprogrammable(u->filters);
  }
  return enc;
}

absl::StatusOr<EventSpec> DecodeEvent(const BoxDescriptor& box,
                                      bool fixed_counter, uint64_t control,
                                      const std::vector<FilterValue>& filters) {
  EventSpec spec;
  spec.box = &box;
  if (fixed_counter) {
    if (!box.fixed_counter) {
      return absl::InvalidArgumentError(
          fmt::format("{} has no fixed counter", box.name));
    }
    if (control != box.fixed_counter->en.Insert(0, 1)) {
      return absl::InvalidArgumentError(
          fmt::format("fixed control {} is not 'enabled only'", Hex(control)));
    }
    spec.kind = EventSpec::Kind::kFixedCounter;
    spec.text = spec.Canonical();
    return spec;
  }
  if ((control & ~box.control_writable_mask) != 0) {
    return absl::InvalidArgumentError(
        fmt::format("control {} sets reserved bits {} of {}", Hex(control),
                    Hex(control & ~box.control_writable_mask), box.name));
  }
  for (const FieldDescriptor& f : box.fields) {
    if (f.reg != FieldRegister::kControl) continue;
    const uint64_t v = f.bits.Extract(control);
    if (f.role == FieldRole::kEventSelect) {
      spec.code = static_cast<uint8_t>(v);
    } else if (f.role == FieldRole::kExtendedSelect) {
      spec.extended = v != 0;
    } else if (f.role == FieldRole::kUmask) {
      spec.umask = static_cast<uint8_t>(v);
    } else if (f.role == FieldRole::kEnable) {
      if (v == 0) {
        return absl::InvalidArgumentError(fmt::format(
            "control {} does not set the enable bit", Hex(control)));
      }
    } else if (f.use == FieldUse::kModifier && v != 0) {
      // Overlapping aliases (e.g. PCU occ_sel inside umask) are reported by
      // the umask; only independent modifiers are decoded.
      bool inside_umask = false;
      if (const FieldDescriptor* um = box.FindRole(FieldRole::kUmask)) {
        inside_umask = (um->bits.mask() & f.bits.mask()) != 0;
      }
      if (!inside_umask) spec.modifiers.push_back({&f, v});
    } else if (f.use == FieldUse::kEngine && v != 0) {
      return absl::InvalidArgumentError(fmt::format(
          "control {} sets the engine-owned bit '{}'", Hex(control), f.name));
    }
  }
  for (const FilterValue& fv : filters) {
    // Prefer sub-fields; fall back to the whole-register field for bits no
    // sub-field covers.
    uint64_t covered = 0;
    for (const FieldDescriptor& f : box.fields) {
      if (f.reg != FieldRegister::kFilter || f.filter != fv.filter) continue;
      if (f.bits.width >= 32) continue;
      if ((fv.mask & f.bits.mask()) != f.bits.mask()) continue;
      spec.modifiers.push_back({&f, f.bits.Extract(fv.value)});
      covered |= f.bits.mask();
    }
    if ((fv.mask & ~covered) != 0) {
      for (const FieldDescriptor& f : box.fields) {
        if (f.reg == FieldRegister::kFilter && f.filter == fv.filter &&
            f.bits.width >= 32) {
          spec.modifiers.erase(
              std::remove_if(spec.modifiers.begin(), spec.modifiers.end(),
                             [&](const FieldSetting& s) {
                               return s.field->reg == FieldRegister::kFilter &&
                                      s.field->filter == fv.filter;
                             }),
              spec.modifiers.end());
          spec.modifiers.push_back({&f, f.bits.Extract(fv.value)});
          break;
        }
      }
    }
  }
  spec.event = ivytown::FindEventByCode(box.type, spec.code, spec.extended);
  if (spec.event != nullptr) {
    for (const auto& u : spec.event->umasks) {
      if (u.value == spec.umask) {
        spec.umasks.push_back(&u);
        break;
      }
    }
  }
  spec.text = spec.Canonical();
  return spec;
}

}  // namespace uncore::spec
