#include "sdk/devices/perf/kernel_ivbep.h"

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
#include "sdk/platforms/ivytown/box_descriptors.h"
#include "sdk/platforms/ivytown/event_catalog.h"

namespace uncore::devices::perf {
namespace {

using ivytown::BoxType;

// ---------------------------------------------------------------------------
// The CBo extra-register table (ivbep_uncore_cbox_extra_regs): an event
// whose config matches `value` under `mask` gets the filter fields `fields`
// programmed; no match, no filter.

enum CboFilterFields : uint8_t {
  kTid = 0x1,    // filter_tid
  kLink = 0x2,   // filter_link (not in the manual's FILTER0; not modelled)
  kState = 0x4,  // filter_state
  kNid = 0x8,    // filter_nid
  kOpc = 0x10,   // filter_opc, filter_nc, filter_isoc (and filter_c6)
};

struct CboExtraReg {
  uint64_t value;
  uint64_t mask;
  uint8_t fields;
};

constexpr uint64_t kTidEnBit = uint64_t{1} << 19;

constexpr CboExtraReg kCboExtraRegs[] = {
    {kTidEnBit, kTidEnBit, kTid},    {0x1031, 0x10ff, kLink},
    {0x1134, 0xffff, kState},        {0x4134, 0xffff, kState | kNid},
    {0x5134, 0xffff, kState | kNid}, {0x0334, 0xffff, kState},
    {0x4334, 0xffff, kState | kNid}, {0x0534, 0xffff, kState},
    {0x4534, 0xffff, kState | kNid}, {0x0934, 0xffff, kState},
    {0x4934, 0xffff, kState | kNid}, {0x0135, 0xffff, kOpc},
    {0x0335, 0xffff, kOpc},          {0x2135, 0xffff, kOpc},
    {0x2335, 0xffff, kOpc},          {0x4135, 0xffff, kOpc | kNid},
    {0x4335, 0xffff, kOpc | kNid},   {0x4435, 0xffff, kNid},
    {0x4835, 0xffff, kNid},          {0x4a35, 0xffff, kNid},
    {0x5035, 0xffff, kNid},          {0x8135, 0xffff, kOpc},
    {0x8335, 0xffff, kOpc},          {0x0136, 0xffff, kOpc},
    {0x0336, 0xffff, kOpc},          {0x2136, 0xffff, kOpc},
    {0x2336, 0xffff, kOpc},          {0x4136, 0xffff, kOpc | kNid},
    {0x4336, 0xffff, kOpc | kNid},   {0x4436, 0xffff, kNid},
    {0x4836, 0xffff, kNid},          {0x4a36, 0xffff, kNid},
    {0x5036, 0xffff, kNid},          {0x8136, 0xffff, kOpc},
    {0x8336, 0xffff, kOpc},          {0x4037, 0x40ff, kNid},
};

uint8_t CboFieldGroup(std::string_view field) {
  if (field == "filter_tid") return kTid;
  if (field == "filter_state") return kState;
  if (field == "filter_nid") return kNid;
  if (field == "filter_opc" || field == "filter_nc" || field == "filter_isoc") {
    return kOpc;
  }
  return 0;
}

std::string_view CboGroupRule(uint8_t group) {
  switch (group) {
    case kTid:
      return "only with tid_en";
    case kState:
      return "only for LLC_LOOKUP with unit mask 0x03, 0x05, 0x09, 0x11, "
             "0x41, 0x43, 0x45, 0x49 or 0x51";
    case kNid:
      return "only for the NID unit masks of LLC_LOOKUP, TOR_INSERTS, "
             "TOR_OCCUPANCY and LLC_VICTIMS";
    default:
      return "only for the OPCODE unit masks of TOR_INSERTS and "
             "TOR_OCCUPANCY (0x01, 0x03, 0x21, 0x23, 0x41, 0x43, 0x81, 0x83)";
  }
}

// ---------------------------------------------------------------------------
// Event constraints (snbep_uncore_{cbox,r2pcie,r3qpi}_constraints, which the
// ivbep types use): event code -> counter mask.

struct Constraint {
  uint8_t code;
  uint8_t mask;
};

constexpr Constraint kCboConstraints[] = {
    {0x01, 0x1}, {0x02, 0x3}, {0x04, 0x3}, {0x05, 0x3}, {0x07, 0x3},
    {0x09, 0x3}, {0x11, 0x1}, {0x12, 0x3}, {0x13, 0x3}, {0x1b, 0xc},
    {0x1c, 0xc}, {0x1d, 0xc}, {0x1e, 0xc}, {0x1f, 0xe}, {0x21, 0x3},
    {0x23, 0x3}, {0x31, 0x3}, {0x32, 0x3}, {0x33, 0x3}, {0x34, 0x3},
    {0x35, 0x3}, {0x36, 0x1}, {0x37, 0x3}, {0x38, 0x3}, {0x39, 0x3},
    {0x3b, 0x1},
};

constexpr Constraint kR2pcieConstraints[] = {
    {0x10, 0x3}, {0x11, 0x3}, {0x12, 0x1}, {0x23, 0x3}, {0x24, 0x3},
    {0x25, 0x3}, {0x26, 0x3}, {0x32, 0x3}, {0x33, 0x3}, {0x34, 0x3},
};

constexpr Constraint kR3qpiConstraints[] = {
    {0x10, 0x3}, {0x11, 0x3}, {0x12, 0x3}, {0x13, 0x1}, {0x20, 0x3},
    {0x21, 0x3}, {0x22, 0x3}, {0x23, 0x3}, {0x24, 0x3}, {0x25, 0x3},
    {0x26, 0x3}, {0x28, 0x3}, {0x29, 0x3}, {0x2a, 0x3}, {0x2b, 0x3},
    {0x2c, 0x3}, {0x2d, 0x3}, {0x2e, 0x3}, {0x2f, 0x3}, {0x30, 0x3},
    {0x31, 0x3}, {0x32, 0x3}, {0x33, 0x3}, {0x34, 0x3}, {0x36, 0x3},
    {0x37, 0x3}, {0x38, 0x3}, {0x39, 0x3},
};

std::span<const Constraint> ConstraintsOf(BoxType box) {
  switch (box) {
    case BoxType::kCbo:
      return kCboConstraints;
    case BoxType::kR2pcie:
      return kR2pcieConstraints;
    case BoxType::kR3qpi:
      return kR3qpiConstraints;
    default:
      return {};
  }
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
  const uint8_t code = static_cast<uint8_t>(config & 0xff);
  uint8_t cbo_kept = 0;
  if (spec.box->type == BoxType::kCbo) {
    for (const CboExtraReg& r : kCboExtraRegs) {
      if ((config & r.mask) == r.value) cbo_kept |= r.fields;
    }
  }
  for (const spec::FieldSetting& m : spec.modifiers) {
    if (m.field->reg != ivytown::FieldRegister::kFilter || m.value == 0) {
      continue;
    }
    const std::string_view name = m.field->name;
    switch (spec.box->type) {
      case BoxType::kCbo: {
        const uint8_t group = CboFieldGroup(name);
        if ((cbo_kept & group) == 0) {
          drop(fmt::format("the driver programs it {}", CboGroupRule(group)),
               name);
        }
        break;
      }
      case BoxType::kPcu: {
        // snbep_pcu_hw_config: events 0x0b-0x0e, byte (event - 0x0b).
        const int band = code >= 0x0b && code <= 0x0e ? code - 0x0b : -1;
        if (band < 0 || name != fmt::format("filter_band{}", band)) {
          drop(
              "the driver programs the band filter only for "
              "FREQ_BAND0..3_CYCLES, events 0x0b-0x0e, each with its own "
              "byte: filter_band0 for 0x0b ... filter_band3 for 0x0e",
              name);
        }
        break;
      }
      case BoxType::kQpi:
        // snbep_qpi_hw_config: match/mask only for event select 0x38.
        if (code != 0x38) {
          drop(
              "the driver programs the packet match/mask only for "
              "CTO_COUNT, event 0x38",
              name);
        }
        break;
      default:
        break;  // no filter reaches perf at all: refused by the caller
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
  for (const Constraint& c : ConstraintsOf(box)) {
    if (c.code == code) return c.mask;
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
