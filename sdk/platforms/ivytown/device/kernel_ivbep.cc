#include "sdk/platforms/ivytown/device/kernel_ivbep.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "fmt/format.h"
#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"

namespace uncore::devices::perf {
namespace {

using ivytown::BoxType;

// The group of the box's kernel view that `field` belongs to, or -1.
int KernelGroupOf(const ivytown::KernelView& k,
                  const ivytown::FieldDescriptor& field) {
  for (size_t g = 0; g < k.groups.size(); ++g) {
    if (k.groups[g].filter == field.filter &&
        (k.groups[g].bits & field.bits.mask()) != 0) {
      return static_cast<int>(g);
    }
  }
  return -1;
}

// The groups (bit g: KernelView::groups[g]) the driver programs for an
// event with perf config `config`.
uint32_t KeptGroups(const ivytown::KernelView& k, uint64_t config) {
  const uint8_t code = static_cast<uint8_t>(config & 0xff);
  uint32_t kept = 0;
  switch (k.gate) {
    case ivytown::KernelFilterGate::kNever:
      break;
    case ivytown::KernelFilterGate::kExtraRegs:
      for (const ivytown::KernelExtraReg& r : k.extra_regs) {
        if ((config & r.mask) == r.value) kept |= r.groups;
      }
      break;
    case ivytown::KernelFilterGate::kGroupPerCode:
      if (code >= k.gate_code &&
          static_cast<size_t>(code - k.gate_code) < k.groups.size()) {
        kept = 1u << (code - k.gate_code);
      }
      break;
    case ivytown::KernelFilterGate::kEventCode:
      if (code == k.gate_code) kept = (1u << k.groups.size()) - 1;
      break;
  }
  return kept;
}

// "counter 0", "counters 0-1".
std::string Counters(uint8_t mask) {
  return fmt::format("{} {}", std::popcount(mask) == 1 ? "counter" : "counters",
                     CounterMaskText(mask));
}

// decisions.md #34: the manual asks for q_occ_rst on HA occupancy counts,
// and the driver's HA event mask drops bit 16.
constexpr std::string_view kNoQueueOccupancyReset =
    "the manual asks for q_occ_rst when the HA measures an occupancy count "
    "(L684), and Linux's ivbep driver never sets it (its HA event mask drops "
    "bit 16): the queue occupancy counter is not cleared at the start";

bool NeedsReset(const spec::EventSpec& spec) {
  return spec.event != nullptr &&
         ivytown::NeedsQueueOccupancyReset(*spec.event);
}

}  // namespace

std::vector<std::string> DroppedFilters(const spec::EventSpec& spec,
                                        uint64_t config) {
  // (rule, fields it drops), in the order first seen.
  std::vector<std::pair<std::string, std::vector<std::string>>> dropped;
  auto drop = [&](const std::string& rule, std::string_view field) {
    for (auto& [r, fields] : dropped) {
      if (r == rule) {
        fields.emplace_back(field);
        return;
      }
    }
    dropped.push_back({rule, {std::string(field)}});
  };
  if (spec.box == nullptr) return {};
  const ivytown::KernelView& k = spec.box->kernel;
  if (k.gate == ivytown::KernelFilterGate::kNever) return {};
  const uint32_t kept = KeptGroups(k, config);
  for (const spec::FieldSetting& m : spec.modifiers) {
    if (m.field->reg != ivytown::FieldRegister::kFilter || m.value == 0) {
      continue;
    }
    const int group = KernelGroupOf(k, *m.field);
    if (group < 0) {
      drop("the driver does not program it", m.field->name);
    } else if ((kept & (1u << group)) == 0) {
      drop(std::string(k.groups[group].rule), m.field->name);
    }
  }
  std::vector<std::string> out;
  out.reserve(dropped.size());
  for (const auto& [rule, fields] : dropped) {
    out.push_back(fmt::format("{} ({})", common::Join(fields, ", "), rule));
  }
  return out;
}

uint8_t KernelCounterMask(BoxType box, uint64_t config, int counters) {
  const uint8_t code = static_cast<uint8_t>(config & 0xff);
  for (const ivytown::KernelConstraint& c :
       ivytown::Box(box).kernel.constraints) {
    if (c.code == code) return c.counters;
  }
  return static_cast<uint8_t>((1u << counters) - 1);
}

std::vector<int> PredictKernelCounters(std::span<const uint8_t> masks) {
  std::vector<int> out(masks.size(), -1);
  uint8_t used = 0;
  for (int weight = 1; weight <= 8; ++weight) {
    for (size_t i = 0; i < masks.size(); ++i) {
      if (std::popcount(masks[i]) != weight) continue;
      const uint8_t free = masks[i] & static_cast<uint8_t>(~used);
      if (free == 0) continue;
      out[i] = std::countr_zero(free);
      used |= static_cast<uint8_t>(1u << out[i]);
    }
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ReviewKernelPlacement(
    const ProgramRequest& request, std::span<const PerfCounter> counters) {
  // Groups as PerfDevice::Program forms them.
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < counters.size(); ++i) {
    std::vector<size_t>* group = nullptr;
    if (!request.allow_multiplexing) {
      for (std::vector<size_t>& g : groups) {
        const PerfCounter& first = counters[g.front()];
        if (first.pmu == counters[i].pmu && first.cpu == counters[i].cpu) {
          group = &g;
        }
      }
    }
    if (group == nullptr) group = &groups.emplace_back();
    group->push_back(i);
  }
  std::vector<std::string> warnings;
  absl::flat_hash_set<int> warned;            // q_occ_rst
  absl::flat_hash_set<int> placement_warned;  // counter restrictions
  for (const std::vector<size_t>& g : groups) {
    std::vector<uint8_t> masks;
    masks.reserve(g.size());
    for (size_t i : g) masks.push_back(counters[i].kernel_counter_mask);
    const std::vector<int> placed = PredictKernelCounters(masks);
    for (size_t k = 0; k < g.size(); ++k) {
      const PerfCounter& c = counters[g[k]];
      const uint8_t manual = c.manual_counter_mask;
      const std::string& text = request.events[c.event].text;
      if (NeedsReset(request.events[c.event]) &&
          warned.insert(c.event).second) {
        warnings.push_back(fmt::format(
            "{}: {}; compare with UNCORE_BACKEND=direct, which sets it", text,
            kNoQueueOccupancyReset));
      }
      if (manual == 0 || (c.kernel_counter_mask & ~manual) == 0) continue;
      if (placed[k] >= 0 && (manual & (1u << placed[k])) == 0 &&
          !request.allow_multiplexing) {
        const int alone = std::countr_zero(c.kernel_counter_mask);
        return absl::InvalidArgumentError(fmt::format(
            "{}: the manual allows only {} for this event, but Linux's ivbep "
            "driver does not know that and, with the other events of {} in "
            "this group, would place it on counter {}, where the count is "
            "not what was asked; {}use the direct backend "
            "(UNCORE_BACKEND=direct), which honours the restriction",
            text, Counters(manual), c.pmu->name, placed[k],
            (manual & (1u << alone)) != 0
                ? fmt::format("count fewer events of that box at once (alone "
                              "it gets counter {}), or ",
                              alone)
                : std::string()));
      }
      if (!placement_warned.insert(c.event).second) continue;
      warnings.push_back(fmt::format(
          "{}: the manual allows only {} for this event and Linux's ivbep "
          "driver may use {}; {}: compare with UNCORE_BACKEND=direct if the "
          "count looks wrong",
          text, Counters(manual), Counters(c.kernel_counter_mask),
          request.allow_multiplexing
              ? std::string("with multiplexing, the counter it gets cannot be "
                            "predicted")
              : fmt::format("in this group it goes on counter {}, which is "
                            "allowed, but another perf user of the same PMU "
                            "could move it",
                            placed[k])));
    }
  }
  return warnings;
}

uint64_t EngineBits(const ivytown::BoxDescriptor& box) {
  uint64_t bits = 0;
  for (const ivytown::FieldDescriptor& f : box.fields) {
    if (f.reg == ivytown::FieldRegister::kControl &&
        f.use == ivytown::FieldUse::kEngine) {
      bits |= f.bits.mask();
    }
  }
  return bits;
}

std::string CounterMaskText(uint8_t mask) {
  std::vector<std::string> parts;
  int c = 0;
  while (c < 8) {
    if ((mask & (1u << c)) == 0) {
      ++c;
      continue;
    }
    int end = c;
    while (end + 1 < 8 && (mask & (1u << (end + 1))) != 0) ++end;
    parts.push_back(end == c ? fmt::format("{}", c)
                             : fmt::format("{}-{}", c, end));
    c = end + 1;
  }
  return parts.empty() ? std::string("none") : common::Join(parts, ",");
}

std::vector<std::string> PerfCaveats(const spec::EventSpec& spec,
                                     const spec::Encoding& enc) {
  std::vector<std::string> out;
  if (spec.box == nullptr) return out;
  const ivytown::BoxDescriptor& box = *spec.box;
  // decisions.md #37: UCLK and the IRP counters are 44 or 48 bits.
  if (enc.fixed_counter ? box.fixed_counter->width_disputed
                        : box.counter_width_disputed) {
    out.emplace_back(
        "the manual gives this counter as both 44 and 48 bits wide and "
        "Linux's ivbep driver assumes 48: should the hardware have 44, each "
        "wrap (every 2^44 increments) adds a bogus 2^48 - 2^44 to the perf "
        "count; the direct backend extends at 44 bits, which is exact on "
        "either");
  }
  if (enc.fixed_counter) return out;
  const uint64_t config = enc.control & ~EngineBits(box);
  for (const std::string& lost : DroppedFilters(spec, config)) {
    out.push_back(fmt::format(
        "perf would lose {}: the perf backend refuses this event; the direct "
        "backend programs the filter",
        lost));
  }
  if (NeedsReset(spec)) {
    out.push_back(
        fmt::format("{}; the direct backend sets it", kNoQueueOccupancyReset));
  }
  const uint8_t kernel = KernelCounterMask(box.type, config, box.num_counters);
  if ((kernel & ~enc.counter_mask) != 0) {
    out.push_back(fmt::format(
        "the manual allows only {} for this event, but Linux's ivbep "
        "driver may schedule it on {}: the perf backend refuses a group "
        "that would place it there and warns otherwise; the direct backend "
        "honours the restriction",
        Counters(enc.counter_mask), Counters(kernel)));
  }
  return out;
}

}  // namespace uncore::devices::perf
