#include "sdk/platforms/ivytown/device/program_plan.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/device/counter_assignment.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"
#include "sdk/spec/encoder.h"

namespace uncore::devices::direct {

using ::uncore::platforms::BitRange;
namespace {

using engine::Msr;
using engine::Pci;
using ivytown::AccessSpace;
using ivytown::BoxDescriptor;
using ivytown::BoxType;
using ivytown::kGlobal;

std::string Hex(uint64_t v) { return fmt::format("0x{:x}", v); }

std::string CounterMaskText(uint8_t mask, int num_counters) {
  std::vector<std::string> ids;
  for (int c = 0; c < num_counters; ++c) {
    if (mask & (1u << c)) ids.push_back(std::to_string(c));
  }
  if (ids.empty()) return "no counter";
  return (ids.size() == 1 ? "counter " : "counters ") + common::Join(ids, ",");
}

uint64_t WidthMask(uint8_t width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// The instances of `spec` on `socket`.
absl::StatusOr<std::vector<int>> SelectedInstances(
    const spec::EventSpec& spec, const machine::SocketTopology& socket) {
  const BoxDescriptor& box = *spec.box;
  std::vector<int> out;
  if (spec.instances.all()) {
    for (int i = 0; i < box.num_instances(); ++i) {
      if (socket.HasInstance(box.type, i)) out.push_back(i);
    }
    if (out.empty()) {
      return absl::InvalidArgumentError(fmt::format(
          "'{}': socket {} has no {} box", spec.text, socket.socket, box.name));
    }
    return out;
  }
  for (int i : spec.instances.ids) {
    if (i < 0 || i >= box.num_instances()) {
      return absl::InvalidArgumentError(
          fmt::format("'{}': {} has instances 0-{}, not {}", spec.text,
                      box.name, box.num_instances() - 1, i));
    }
    if (!socket.HasInstance(box.type, i)) {
      return absl::InvalidArgumentError(
          fmt::format("'{}': {} is not present on socket {}", spec.text,
                      box.instances[i].name, socket.socket));
    }
    out.push_back(i);
  }
  return out;
}

struct EventInfo {
  const spec::EventSpec* spec = nullptr;
  spec::Encoding enc;
  std::optional<uint64_t> interval;  // sampled
};

// One (box type, instance) of one socket, with the events it counts.
struct Group {
  std::vector<int> events;  // request order
};

absl::Status PlanInstance(const std::vector<EventInfo>& events,
                          const machine::SocketTopology& socket, BoxType type,
                          int instance, const std::vector<int>& event_ids,
                          PlannedInstance* out) {
  const BoxDescriptor& box = ivytown::Box(type);
  out->socket = socket.socket;
  out->cpu = socket.msr_cpu;
  out->box = &box;
  out->instance = instance;
  if (box.space == AccessSpace::kPci) {
    const machine::SocketTopology::PciInstance* pci =
        socket.FindPci(type, instance);
    if (pci == nullptr || !pci->pmon) {
      return absl::InvalidArgumentError(
          fmt::format("{} on socket {}: its PCI function was not found",
                      box.instances[instance].name, socket.socket));
    }
    out->pmon = pci->pmon;
    out->aux = pci->aux;
  }
  const std::string where = fmt::format(
      "{} on socket {}", box.instances[instance].name, socket.socket);

  // General counters: maximum bipartite matching.
  std::vector<int> general;
  std::vector<int> fixed;
  for (int e : event_ids) {
    (events[e].enc.fixed_counter ? fixed : general).push_back(e);
  }
  std::vector<uint8_t> masks;
  masks.reserve(general.size());
  const uint8_t all = static_cast<uint8_t>((1u << box.num_counters) - 1);
  for (int e : general) {
    masks.push_back(static_cast<uint8_t>(events[e].enc.counter_mask & all));
  }
  std::optional<std::vector<int>> assigned =
      AssignCounters(masks, box.num_counters);
  if (!assigned) {
    std::string list;
    for (size_t i = 0; i < general.size(); ++i) {
      list += fmt::format("\n  [{}] {} may use {}", general[i],
                          events[general[i]].spec->Canonical(),
                          CounterMaskText(masks[i], box.num_counters));
    }
    return absl::InvalidArgumentError(fmt::format(
        "too many events for {} ({} counters): no assignment gives each of "
        "these {} events its own allowed counter:{}\ncount some of them in "
        "another run, or on other instances",
        where, box.num_counters, general.size(), list));
  }
  for (size_t i = 0; i < general.size(); ++i) {
    const EventInfo& info = events[general[i]];
    PlannedCounter c;
    c.event = general[i];
    c.counter = (*assigned)[i];
    c.control = info.enc.control;
    // decisions.md #34: L684 "when measuring an Occupancy count, it will be
    // necessary to set the .q_occ_rst bit to 1 in each control register".
    if (const ivytown::FieldDescriptor* q =
            box.FindRole(ivytown::FieldRole::kQueueOccupancyReset);
        q != nullptr && info.spec->event != nullptr &&
        ivytown::NeedsQueueOccupancyReset(*info.spec->event)) {
      c.control = q->bits.Insert(c.control, 1);
    }
    c.width = box.counter_width;
    c.max_increment_per_cycle = box.max_increment_per_cycle;
    if (info.spec->event != nullptr) {
      c.max_increment_per_cycle = std::max<double>(
          c.max_increment_per_cycle, info.spec->event->max_increment);
    }
    if (info.interval) {
      c.sampled = true;
      c.control = box.FindRole(ivytown::FieldRole::kOverflowEnable)
                      ->bits.Insert(c.control, 1);
      c.initial =
          (WidthMask(c.width) - *info.interval + 1) & WidthMask(c.width);
    }
    out->counters.push_back(c);
  }
  std::sort(out->counters.begin(), out->counters.end(),
            [](const PlannedCounter& a, const PlannedCounter& b) {
              return a.counter < b.counter;
            });
  if (fixed.size() > 1) {
    std::string list;
    for (int e : fixed) {
      list += fmt::format("\n  [{}] {}", e, events[e].spec->Canonical());
    }
    return absl::InvalidArgumentError(fmt::format(
        "too many events for {}: its one fixed counter ({}) can count one "
        "event, {} ask for it:{}",
        where, box.fixed_counter->name, fixed.size(), list));
  }
  for (int e : fixed) {
    const EventInfo& info = events[e];
    PlannedCounter c;
    c.event = e;
    c.counter = kFixedCounter;
    c.control = info.enc.control;
    c.width = box.fixed_counter->width;
    if (info.interval) {
      c.sampled = true;
      c.control = box.fixed_counter->ov_en.Insert(c.control, 1);
      c.initial =
          (WidthMask(c.width) - *info.interval + 1) & WidthMask(c.width);
    }
    out->counters.push_back(c);
  }

  // Filters: one register per box instance, shared by all its counters.
  struct Merged {
    uint64_t value = 0;
    uint64_t mask = 0;
    std::vector<int> owners;  // events, in order
  };
  std::vector<Merged> merged(box.filters.size());
  for (int e : event_ids) {
    for (const spec::FilterValue& fv : events[e].enc.filters) {
      Merged& m = merged[fv.filter];
      const uint64_t overlap = m.mask & fv.mask;
      if ((m.value & overlap) != (fv.value & overlap)) {
        int other = m.owners.front();
        for (int o : m.owners) {
          const std::vector<spec::FilterValue>& of = events[o].enc.filters;
          auto it = std::find_if(of.begin(), of.end(), [&](const auto& v) {
            return v.filter == fv.filter;
          });
          if (it != of.end() &&
              ((it->value ^ fv.value) & it->mask & fv.mask) != 0) {
            other = o;
            break;
          }
        }
        return absl::InvalidArgumentError(fmt::format(
            "filter conflict on {}: [{}] {} and [{}] {} both need bits {} of "
            "{}, set differently ({} vs {}); a box instance has one {} for "
            "all its counters: count these events in separate runs or on "
            "different instances",
            where, other, events[other].spec->Canonical(), e,
            events[e].spec->Canonical(), Hex(overlap),
            box.filters[fv.filter].name, Hex(m.value & overlap),
            Hex(fv.value & overlap), box.filters[fv.filter].name));
      }
      m.value |= fv.value;
      m.mask |= fv.mask;
      m.owners.push_back(e);
    }
  }
  for (size_t f = 0; f < box.filters.size(); ++f) {
    const bool reachable = !box.filters[f].in_aux_function || out->aux;
    if (!reachable) {
      if (merged[f].mask != 0) {
        return absl::InvalidArgumentError(fmt::format(
            "'{}' needs {} of {}, but the topology has no function for it "
            "(its PCI device id is unknown, notes/decisions.md #14); use "
            "another instance",
            events[merged[f].owners.front()].spec->Canonical(),
            box.filters[f].name, where));
      }
      continue;
    }
    out->filters.push_back({static_cast<int>(f), merged[f].value});
  }
  return absl::OkStatus();
}

// A GLOBAL_STATUS bit number; -1 (stored as int8_t) means none.
int StatusBit(int8_t bit) { return bit < 0 ? -1 : static_cast<uint8_t>(bit); }

std::string GlobalName(int socket, std::string_view reg) {
  return fmt::format("U_MSR_PMON_GLOBAL_{} (socket {})", reg, socket);
}

// Whether `control` sets the box's q_occ_rst (HA occupancy, #34).
bool QueueOccupancyReset(const BoxDescriptor& box, uint64_t control) {
  const ivytown::FieldDescriptor* q =
      box.FindRole(ivytown::FieldRole::kQueueOccupancyReset);
  return q != nullptr && q->bits.Extract(control) != 0;
}

}  // namespace

std::string_view RegisterPrefix(BoxType box) {
  return ivytown::Box(box).register_prefix;
}

std::string PlannedInstance::InstanceName() const {
  return std::string(box->instances[instance].name);
}

std::string PlannedInstance::RegisterName(std::string_view what) const {
  return fmt::format("{}{} ({})", RegisterPrefix(box->type), what,
                     InstanceName());
}

std::optional<RegisterRef> PlannedInstance::BoxControl() const {
  std::optional<uint32_t> a = box->BoxControlAddress(instance);
  if (!a) return std::nullopt;
  return box->space == AccessSpace::kMsr ? Msr(socket, cpu, *a)
                                         : Pci(socket, *pmon, *a);
}

std::optional<RegisterRef> PlannedInstance::BoxStatus() const {
  std::optional<uint32_t> a = box->BoxStatusAddress(instance);
  if (!a) return std::nullopt;
  return box->space == AccessSpace::kMsr ? Msr(socket, cpu, *a)
                                         : Pci(socket, *pmon, *a);
}

RegisterRef PlannedInstance::CounterControl(int counter) const {
  const uint32_t a =
      counter == kFixedCounter
          ? box->RegisterAddress(instance, box->fixed_counter->control_offset)
          : box->CounterControlAddress(instance, counter);
  return box->space == AccessSpace::kMsr ? Msr(socket, cpu, a)
                                         : Pci(socket, *pmon, a);
}

std::vector<RegisterRef> PlannedInstance::CounterData(int counter) const {
  const uint32_t a =
      counter == kFixedCounter
          ? box->RegisterAddress(instance, box->fixed_counter->counter_offset)
          : box->CounterAddress(instance, counter);
  if (box->space == AccessSpace::kMsr) return {Msr(socket, cpu, a)};
  return {Pci(socket, *pmon, a), Pci(socket, *pmon, a + 4)};
}

RegisterRef PlannedInstance::FilterRegister(int filter) const {
  const ivytown::FilterRegisterDescriptor& f = box->filters[filter];
  const uint32_t a = box->FilterAddress(instance, filter);
  if (box->space == AccessSpace::kMsr) return Msr(socket, cpu, a);
  return Pci(socket, f.in_aux_function ? *aux : *pmon, a);
}

uint64_t GlobalKeepBits(uint64_t global_control) {
  return global_control &
         (kGlobal.pmi_core_sel.mask() | kGlobal.wk_on_pmi.mask());
}

RegisterRef GlobalControl(int socket, int cpu) {
  return Msr(socket, cpu, kGlobal.global_control);
}

RegisterRef GlobalStatus(int socket, int cpu) {
  return Msr(socket, cpu, kGlobal.global_status);
}

absl::StatusOr<ProgramPlan> BuildProgramPlan(
    const ProgramRequest& request, const ProgramOptions& options,
    const machine::Topology& topology) {
  if (request.events.empty()) {
    return absl::InvalidArgumentError("no events to program");
  }
  // Events.
  std::vector<EventInfo> events(request.events.size());
  for (size_t i = 0; i < request.events.size(); ++i) {
    const spec::EventSpec& e = request.events[i];
    if (e.kind == spec::EventSpec::Kind::kGenericPerf) {
      return absl::InvalidArgumentError(fmt::format(
          "'{}' is a perf event (PMU '{}'): the direct backend programs "
          "IvyTown uncore box events and fixed counters only; use the perf "
          "backend (UNCORE_BACKEND=perf) for it",
          e.text, e.pmu));
    }
    if (e.box == nullptr) {
      return absl::InvalidArgumentError(
          fmt::format("'{}' names no IvyTown box", e.text));
    }
    absl::StatusOr<spec::Encoding> enc = spec::EncodeEvent(e);
    if (!enc.ok()) return enc.status();
    events[i].spec = &e;
    events[i].enc = *std::move(enc);
  }
  for (const SampleInterval& s : options.samples) {
    if (s.event < 0 || s.event >= static_cast<int>(events.size())) {
      return absl::InvalidArgumentError(
          fmt::format("sample interval for event {}: there are {} events",
                      s.event, events.size()));
    }
    EventInfo& info = events[s.event];
    const BoxDescriptor& box = *info.spec->box;
    const bool has_ov_en =
        info.enc.fixed_counter
            ? !box.fixed_counter->ov_en.empty()
            : box.FindRole(ivytown::FieldRole::kOverflowEnable) != nullptr;
    if (!has_ov_en) {
      return absl::InvalidArgumentError(fmt::format(
          "'{}' cannot be sampled: {} counter controls have no ov_en, so an "
          "overflow cannot freeze the counters",
          info.spec->text, box.name));
    }
    const uint8_t width =
        info.enc.fixed_counter ? box.fixed_counter->width : box.counter_width;
    // decisions.md #37: with the width unknown (44 or 48 bits), a preload of
    // 2^44 - interval on 48-bit hardware would overflow 2^48 - 2^44 events
    // late, i.e. never in practice.
    if (info.enc.fixed_counter ? box.fixed_counter->width_disputed
                               : box.counter_width_disputed) {
      return absl::InvalidArgumentError(fmt::format(
          "'{}' cannot be sampled: the manual gives its counter as both 44 "
          "and 48 bits wide, so the 2^width - interval preload cannot be "
          "placed (on 48-bit hardware a 44-bit preload overflows 2^48 - 2^44 "
          "events late); sample another event, such as imc/DCLK or a box's "
          "CLOCKTICKS",
          info.spec->text));
    }
    if (s.interval == 0 ||
        (width < 64 && s.interval > (uint64_t{1} << width))) {
      return absl::InvalidArgumentError(
          fmt::format("'{}': a sample interval must be 1..2^{}, not {}",
                      info.spec->text, width, s.interval));
    }
    info.interval = s.interval;
  }

  // Sockets.
  ProgramPlan plan;
  std::vector<const machine::SocketTopology*> sockets;
  if (request.sockets.empty()) {
    for (const machine::SocketTopology& s : topology.sockets) {
      sockets.push_back(&s);
    }
  } else {
    std::vector<int> ids = request.sockets;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (int id : ids) {
      auto it = std::find_if(
          topology.sockets.begin(), topology.sockets.end(),
          [&](const machine::SocketTopology& s) { return s.socket == id; });
      if (it == topology.sockets.end()) {
        return absl::InvalidArgumentError(
            fmt::format("socket {} does not exist (this machine has {} "
                        "socket{})",
                        id, topology.sockets.size(),
                        topology.sockets.size() == 1 ? "" : "s"));
      }
      sockets.push_back(&*it);
    }
  }
  if (sockets.empty()) {
    return absl::InvalidArgumentError("the topology has no socket");
  }

  // Per socket, per (box type, instance): the events it counts.
  // placements[event][socket index] = instances.
  std::vector<std::vector<std::vector<int>>> selected(
      events.size(), std::vector<std::vector<int>>(sockets.size()));
  for (size_t si = 0; si < sockets.size(); ++si) {
    const machine::SocketTopology& socket = *sockets[si];
    plan.sockets.push_back({socket.socket, socket.msr_cpu});
    std::map<std::pair<int, int>, Group> groups;
    for (size_t e = 0; e < events.size(); ++e) {
      UNCORE_ASSIGN_OR_RETURN(std::vector<int> ids,
                              SelectedInstances(*events[e].spec, socket));
      for (int i : ids) {
        groups[{static_cast<int>(events[e].spec->box->type), i}]
            .events.push_back(static_cast<int>(e));
      }
      selected[e][si] = std::move(ids);
    }
    for (const auto& [key, group] : groups) {
      PlannedInstance inst;
      UNCORE_RETURN_IF_ERROR(PlanInstance(events, socket,
                                          static_cast<BoxType>(key.first),
                                          key.second, group.events, &inst));
      plan.instances.push_back(std::move(inst));
    }
  }

  // The read plan, event-major.
  for (size_t e = 0; e < events.size(); ++e) {
    for (size_t si = 0; si < sockets.size(); ++si) {
      for (int i : selected[e][si]) {
        for (size_t g = 0; g < plan.instances.size(); ++g) {
          const PlannedInstance& inst = plan.instances[g];
          if (inst.socket != sockets[si]->socket ||
              inst.box->type != events[e].spec->box->type ||
              inst.instance != i) {
            continue;
          }
          for (size_t c = 0; c < inst.counters.size(); ++c) {
            if (inst.counters[c].event != static_cast<int>(e)) continue;
            plan.read_plan.push_back(CounterPlacement{
                .event = static_cast<int>(e),
                .socket = inst.socket,
                .unit = std::string(inst.box->instances[inst.instance].name),
                .instance = inst.instance,
                .counter = inst.counters[c].counter,
                .width = inst.counters[c].width});
            plan.read_source.emplace_back(static_cast<int>(g),
                                          static_cast<int>(c));
          }
        }
      }
    }
  }
  return plan;
}

engine::RegisterProgram ToRegisterProgram(const ProgramPlan& plan) {
  engine::RegisterProgram program;
  program.read_plan = plan.read_plan;
  const uint64_t keep_mask =
      kGlobal.pmi_core_sel.mask() | kGlobal.wk_on_pmi.mask();
  for (const ProgramPlan::Socket& socket : plan.sockets) {
    engine::SocketProgram& sp = program.sockets.emplace_back();
    sp.socket = socket.socket;
    sp.cpu = socket.cpu;
    std::vector<int> groups;
    for (size_t g = 0; g < plan.instances.size(); ++g) {
      if (plan.instances[g].socket == socket.socket) {
        groups.push_back(static_cast<int>(g));
      }
    }
    const RegisterRef global = GlobalControl(socket.socket, socket.cpu);
    const std::string global_name = GlobalName(socket.socket, "CTL");
    auto global_write = [&](const BitRange& trigger, std::string why) {
      return engine::ProgramWrite{.reg = global,
                                  .set = trigger.Insert(0, 1),
                                  .keep = keep_mask,
                                  .name = global_name,
                                  .why = std::move(why),
                                  .group = -1};
    };
    auto add = [&](const RegisterRef& reg, uint64_t value, std::string name,
                   std::string why, int group) {
      sp.setup.push_back(engine::ProgramWrite{.reg = reg,
                                              .set = value,
                                              .keep = 0,
                                              .name = std::move(name),
                                              .why = std::move(why),
                                              .group = group});
    };

    // Saved: the global control (its kept bits), then per instance, in
    // restore order: data, counter controls, fixed control, filters, box
    // control (the box control last, so a frozen box is frozen again last).
    sp.Save({.reg = global,
             .name = global_name,
             .group = -1,
             .restore_mask = ~uint64_t{0},
             .in_use_bits = 0,
             .in_use_reason = "",
             .owner = ""});
    std::vector<std::vector<int>> saved_of(plan.instances.size());
    for (int g : groups) {
      const PlannedInstance& inst = plan.instances[g];
      const BoxDescriptor& box = *inst.box;
      const std::string owner = fmt::format("{} {} on socket {}", box.name,
                                            inst.InstanceName(), inst.socket);
      auto save = [&](const RegisterRef& reg, std::string name,
                      uint64_t in_use_bits = 0, std::string reason = "",
                      uint64_t restore_mask = ~uint64_t{0}) {
        saved_of[g].push_back(sp.Save({.reg = reg,
                                       .name = std::move(name),
                                       .group = g,
                                       .restore_mask = restore_mask,
                                       .in_use_bits = in_use_bits,
                                       .in_use_reason = std::move(reason),
                                       .owner = owner}));
      };
      const int fixed = box.fixed_counter ? 1 : 0;
      for (int c = 0; c < box.num_counters + fixed; ++c) {
        const int counter = c < box.num_counters ? c : kFixedCounter;
        const std::vector<RegisterRef> regs = inst.CounterData(counter);
        const std::string base =
            counter == kFixedCounter
                ? fmt::format("{} ({})", box.fixed_counter->manual_counter_name,
                              inst.InstanceName())
                : inst.RegisterName(fmt::format("CTR{}", c));
        for (size_t h = 0; h < regs.size(); ++h) {
          save(regs[h],
               regs.size() == 1
                   ? base
                   : fmt::format("{} {}", base, h == 0 ? "low" : "high"));
        }
      }
      const ivytown::FieldDescriptor* en =
          box.FindRole(ivytown::FieldRole::kEnable);
      for (int c = 0; c < box.num_counters + fixed; ++c) {
        const int counter = c < box.num_counters ? c : kFixedCounter;
        const BitRange en_bits =
            counter == kFixedCounter ? box.fixed_counter->en : en->bits;
        save(
            inst.CounterControl(counter),
            counter == kFixedCounter
                ? fmt::format("{} ({})", box.fixed_counter->manual_control_name,
                              inst.InstanceName())
                : inst.RegisterName(fmt::format("CTL{}", c)),
            en_bits.mask(), "en is set");
      }
      for (const PlannedInstance::Filter& f : inst.filters) {
        save(inst.FilterRegister(f.filter),
             fmt::format("{} ({})", box.filters[f.filter].name,
                         inst.InstanceName()));
      }
      if (std::optional<RegisterRef> ref = inst.BoxControl()) {
        // rst_ctrl and rst_ctrs are write-only triggers: never written back.
        const ivytown::BoxControlLayout& l = box.box_control;
        save(*ref, inst.RegisterName("BOX_CTL"), l.frz.mask(),
             "frz is set (the box is frozen)",
             ~(l.rst_ctrl.mask() | l.rst_ctrs.mask()));
      }
    }

    // (a) freeze.
    sp.setup.push_back(global_write(
        kGlobal.frz_all,
        "a: frz_all, freeze every box of the socket while programming"));
    // (d) box resets, first.
    for (int g : groups) {
      const PlannedInstance& inst = plan.instances[g];
      std::optional<RegisterRef> box_ctl = inst.BoxControl();
      if (!box_ctl) continue;
      const ivytown::BoxControlLayout& l = inst.box->box_control;
      add(*box_ctl,
          l.rst_ctrl.Insert(0, 1) | l.rst_ctrs.Insert(0, 1) | l.must_write_one,
          inst.RegisterName("BOX_CTL"),
          "d: rst_ctrl|rst_ctrs (+ must-write-1 bits): reset the box's "
          "controls and counters; done before b/c, which it would erase",
          g);
    }
    // (c) filters.
    for (int g : groups) {
      const PlannedInstance& inst = plan.instances[g];
      for (const PlannedInstance::Filter& f : inst.filters) {
        add(inst.FilterRegister(f.filter), f.value,
            fmt::format("{} ({})", inst.box->filters[f.filter].name,
                        inst.InstanceName()),
            f.value == 0 ? "c: filter register, cleared (no event of this "
                           "box sets it)"
                         : "c: filter register shared by the box's counters",
            g);
      }
    }
    // (b/c) counter controls.
    for (int g : groups) {
      const PlannedInstance& inst = plan.instances[g];
      for (const PlannedCounter& c : inst.counters) {
        const bool fixed = c.counter == kFixedCounter;
        add(inst.CounterControl(c.counter), c.control,
            fixed ? fmt::format("{} ({})",
                                inst.box->fixed_counter->manual_control_name,
                                inst.InstanceName())
                  : inst.RegisterName(fmt::format("CTL{}", c.counter)),
            fmt::format("b/c: event [{}]{}{}{}", c.event,
                        fixed ? ", fixed counter en" : ", en + event select",
                        c.sampled ? " + ov_en (sampling)" : "",
                        QueueOccupancyReset(*inst.box, c.control)
                            ? " + q_occ_rst (clears the queue occupancy "
                              "counter, as the manual asks for HA occupancy)"
                            : ""),
            g);
      }
    }
    // (e) counter data: 0 or the sampling preload.
    for (int g : groups) {
      const PlannedInstance& inst = plan.instances[g];
      for (const PlannedCounter& c : inst.counters) {
        const bool fixed = c.counter == kFixedCounter;
        const std::string base =
            fixed ? std::string(inst.box->fixed_counter->manual_counter_name)
                  : fmt::format("{}CTR{}", RegisterPrefix(inst.box->type),
                                c.counter);
        std::string why =
            c.sampled
                ? fmt::format("e: preload 2^{} - interval (sampling)", c.width)
                : std::string(inst.BoxControl()
                                  ? "e: counter data = 0"
                                  : "d/e: counter data = 0 (the "
                                    "U-Box's reset: it has no box "
                                    "control)");
        const std::vector<RegisterRef> regs = inst.CounterData(c.counter);
        if (regs.size() == 1) {
          add(regs[0], c.initial,
              fmt::format("{} ({})", base, inst.InstanceName()), why, g);
        } else {
          add(regs[0], c.initial & 0xFFFFFFFFu,
              fmt::format("{} low ({})", base, inst.InstanceName()),
              why + ", low dword", g);
          add(regs[1], c.initial >> 32,
              fmt::format("{} high ({})", base, inst.InstanceName()),
              why + ", high dword", g);
        }
      }
    }
    // (e) sampling: clear stale overflow bits so the overflow can freeze.
    uint64_t global_status_bits = 0;
    for (int g : groups) {
      const PlannedInstance& inst = plan.instances[g];
      uint64_t box_bits = 0;
      for (const PlannedCounter& c : inst.counters) {
        if (!c.sampled) continue;
        const bool fixed = c.counter == kFixedCounter;
        const uint8_t bit = fixed ? inst.box->fixed_counter->box_status_bit
                                  : inst.box->counter_status_bits[c.counter];
        if (bit != ivytown::kNoStatusBit) box_bits |= uint64_t{1} << bit;
        int global_bit =
            StatusBit(inst.box->instances[inst.instance].global_status_bit);
        const int fixed_global_bit =
            fixed ? StatusBit(inst.box->fixed_counter->global_status_bit) : -1;
        if (fixed_global_bit >= 0) global_bit = fixed_global_bit;
        if (global_bit >= 0) global_status_bits |= uint64_t{1} << global_bit;
      }
      std::optional<RegisterRef> status = inst.BoxStatus();
      if (box_bits != 0 && status) {
        add(*status, box_bits, inst.RegisterName("BOX_STATUS"),
            "e: clear the sampled counters' overflow bits (write 1 to clear)",
            g);
      }
    }
    if (global_status_bits != 0) {
      add(GlobalStatus(socket.socket, socket.cpu), global_status_bits,
          GlobalName(socket.socket, "STATUS"),
          "e: clear the sampled boxes' overflow bits (write 1 to clear)", -1);
    }
    // (f) unfreeze.
    sp.setup.push_back(
        global_write(kGlobal.unfrz_all,
                     "f: unfrz_all, counting starts on every box at once"));

    // A snapshot: one freeze window.
    sp.open_window = global_write(kGlobal.frz_all, "snapshot: frz_all");
    sp.close_window = global_write(kGlobal.unfrz_all, "snapshot: unfrz_all");

    // Release: freeze, every touched instance back (last planned first),
    // unfreeze.
    sp.ReleaseWrite(global_write(kGlobal.frz_all, "freeze"));
    for (size_t k = groups.size(); k-- > 0;) {
      for (int saved : saved_of[groups[k]]) sp.Restore(saved);
    }
    sp.ReleaseWrite(global_write(kGlobal.unfrz_all, "restore"));
  }

  // The counters a snapshot reads.
  for (size_t i = 0; i < plan.read_plan.size(); ++i) {
    const auto [g, c] = plan.read_source[i];
    const PlannedInstance& inst = plan.instances[g];
    const PlannedCounter& pc = inst.counters[c];
    for (engine::SocketProgram& sp : program.sockets) {
      if (sp.socket != inst.socket) continue;
      sp.reads.push_back(
          {.entry = static_cast<int>(i),
           .reg = inst.CounterData(pc.counter)[0],
           .width = pc.width,
           .initial = pc.initial,
           .max_increment_per_cycle = pc.max_increment_per_cycle});
    }
  }
  return program;
}

std::vector<RegisterWrite> ProgramWrites(const ProgramPlan& plan,
                                         std::span<const uint64_t> keep) {
  // Only the global control keeps bits: resolve against its kept bits.
  return engine::ResolveSetup(ToRegisterProgram(plan),
                              [&](size_t socket, size_t) -> uint64_t {
                                return socket < keep.size() ? keep[socket] : 0;
                              });
}

absl::StatusOr<engine::RegisterProgram> BuildRegisterProgram(
    const ProgramRequest& request, const ProgramOptions& options,
    const machine::Topology& topology) {
  UNCORE_ASSIGN_OR_RETURN(ProgramPlan plan,
                          BuildProgramPlan(request, options, topology));
  return ToRegisterProgram(plan);
}

absl::StatusOr<std::vector<RegisterWrite>> PlanWrites(
    const ProgramRequest& request, const machine::Topology& topology,
    const ProgramOptions& options) {
  UNCORE_ASSIGN_OR_RETURN(ProgramPlan plan,
                          BuildProgramPlan(request, options, topology));
  return ProgramWrites(plan, {});
}

}  // namespace uncore::devices::direct
