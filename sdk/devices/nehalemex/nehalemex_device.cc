#include "sdk/devices/nehalemex/nehalemex_device.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/common/status_macros.h"

namespace uncore::devices {
namespace {

using nehalemex::BoxDescriptor;
using nehalemex::BoxType;
using nehalemex::kGlobalCtl;
using nehalemex::kWFixed;
using nehalemex::Variant;

constexpr uint64_t kCounterMask = (uint64_t{1} << nehalemex::kCounterWidth) - 1;
constexpr uint64_t kLow32 = 0xFFFFFFFF;

absl::Status Annotate(const absl::Status& s, std::string_view context) {
  return absl::Status(s.code(),
                      fmt::format("{}: {}", context, common::StatusMessage(s)));
}

// One event, parsed into the kernel's (config, config1, config2).
struct Encoded {
  int index = 0;
  std::string text;
  const BoxDescriptor* box = nullptr;
  std::vector<int> instances;
  std::array<uint64_t, 3> config{};
  bool fixed = false;  // the W-Box fixed counter
  int b_counter = -1;  // B-Box: the counter the event must use
};

std::string FormatNames(const BoxDescriptor& box) {
  std::string out;
  for (const nehalemex::FormatField& f : box.format) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out + ", config, config1, config2";
}

std::string EventText(const spec::EventSpec& e) {
  if (!e.text.empty()) return e.text;
  std::string terms;
  for (const spec::PerfTerm& t : e.perf_terms) {
    if (!terms.empty()) terms += ",";
    terms += t.value ? fmt::format("{}=0x{:x}", t.name, *t.value) : t.name;
  }
  return fmt::format("{}/{}/", e.pmu, terms);
}

absl::StatusOr<Encoded> Encode(const spec::EventSpec& e, int index,
                               Variant variant) {
  Encoded out;
  out.index = index;
  out.text = EventText(e);
  if (e.kind != spec::EventSpec::Kind::kGenericPerf) {
    return absl::InvalidArgumentError(fmt::format(
        "event {} ('{}'): the {} engine takes kernel nhmex PMU events such as "
        "uncore_cbox/event=0x01,umask=0x03/, not IvyTown box events",
        index, out.text, nehalemex::VariantDisplayName(variant)));
  }
  std::string_view pmu = e.pmu;
  if (pmu.substr(0, 7) == "uncore_") pmu.remove_prefix(7);
  std::string_view base = pmu;
  std::optional<int> instance;
  if (const size_t us = pmu.rfind('_'); us != std::string_view::npos) {
    base = pmu.substr(0, us);
    const std::string_view digits = pmu.substr(us + 1);
    int n = 0;
    bool ok = !digits.empty() && digits.size() < 4;
    for (char c : digits) {
      if (c < '0' || c > '9') ok = false;
      n = n * 10 + (c - '0');
    }
    if (!ok) base = pmu;
    if (ok) instance = n;
  }
  out.box = nehalemex::FindBoxByKernelName(base);
  if (out.box == nullptr) {
    return absl::InvalidArgumentError(fmt::format(
        "event {} ('{}'): unknown PMU '{}'; the {} has uncore_ubox, "
        "uncore_cbox[_N], uncore_bbox[_N], uncore_sbox[_N], uncore_mbox[_N], "
        "uncore_rbox[_N] and uncore_wbox",
        index, out.text, e.pmu, nehalemex::VariantDisplayName(variant)));
  }
  const BoxDescriptor& box = *out.box;
  const int n = box.NumInstances(variant);
  if (instance) {
    if (*instance >= n) {
      return absl::InvalidArgumentError(
          fmt::format("event {} ('{}'): the {} has {} {}{} (uncore_{}_0..{})",
                      index, out.text, nehalemex::VariantDisplayName(variant),
                      n, box.name, n == 1 ? "" : "es", box.kernel_pmu, n - 1));
    }
    out.instances = {*instance};
  } else {
    for (int i = 0; i < n; ++i) out.instances.push_back(i);
  }
  for (const spec::PerfTerm& t : e.perf_terms) {
    const uint64_t value = t.value.value_or(1);
    if (t.name == "config" || t.name == "config1" || t.name == "config2") {
      out.config[t.name == "config" ? 0 : t.name == "config1" ? 1 : 2] = value;
      continue;
    }
    const std::string name = t.name == "thresh8" ? "thresh" : t.name;
    const nehalemex::FormatField* f = box.FindFormat(name);
    if (f == nullptr) {
      return absl::InvalidArgumentError(fmt::format(
          "event {} ('{}'): uncore_{} has no format term '{}'; its terms are: "
          "{}",
          index, out.text, box.kernel_pmu, t.name, FormatNames(box)));
    }
    if (value > f->bits.max_value()) {
      return absl::InvalidArgumentError(
          fmt::format("event {} ('{}'): {}=0x{:x} does not fit its {} bits "
                      "(config{}:{}-{})",
                      index, out.text, t.name, value, f->bits.width,
                      f->word == 0 ? "" : std::to_string(f->word), f->bits.lo,
                      f->bits.hi()));
    }
    out.config[f->word] = f->bits.Insert(out.config[f->word], value);
  }
  if ((out.config[0] & ~box.kernel_event_mask) != 0) {
    return absl::InvalidArgumentError(fmt::format(
        "event {} ('{}'): config bits 0x{:x} are not part of an uncore_{} "
        "event (allowed: 0x{:x})",
        index, out.text, out.config[0] & ~box.kernel_event_mask, box.kernel_pmu,
        box.kernel_event_mask));
  }
  if (box.has_fixed_counter &&
      (out.config[0] & 0xFF) == nehalemex::kWFixed.kernel_event) {
    if (out.config[0] != nehalemex::kWFixed.kernel_event) {
      return absl::InvalidArgumentError(
          fmt::format("event {} ('{}'): event=0xff is the W-Box fixed counter "
                      "(clockticks); it takes no umask or other terms",
                      index, out.text));
    }
    out.fixed = true;
  }
  if (box.type == BoxType::kB) {
    out.b_counter = static_cast<int>(
        box.FindFormat("counter")->bits.Extract(out.config[0]));
  }
  if (box.type == BoxType::kR &&
      box.FieldBits("ev_sel").Extract(out.config[0]) >
          static_cast<uint64_t>(nehalemex::kRboxMaxEventSelect)) {
    return absl::InvalidArgumentError(fmt::format(
        "event {} ('{}'): R-Box event selects stop at 0x{:x} (4 ports x 6 "
        "events)",
        index, out.text, nehalemex::kRboxMaxEventSelect));
  }
  return out;
}

// An extra register bits an event needs (merged with the register's other
// bits when only `mask` is owned).
struct Extra {
  uint32_t msr = 0;
  uint64_t mask = 0;
  uint64_t value = 0;
  int owner = 0;
  std::string name;
};

// A guarded match/mask facility (S-Box, M-Box): MM_CFG, MATCH, MASK.
struct Guarded {
  nehalemex::MatchMaskDescriptor regs;
  bool write_match = false;  // steps b
  uint64_t match = 0;
  uint64_t mask = 0;
  bool enable = false;  // step d
  int owner = 0;
};

struct InstancePlan {
  int socket = 0;
  int cpu = 0;
  const BoxDescriptor* box = nullptr;
  int instance = 0;
  uint32_t used = 0;  // counter bitmap
  bool fixed_used = false;
  std::array<int, nehalemex::kMaxCounters> owner{};  // event per counter
  std::array<uint64_t, nehalemex::kMaxCounters> control{};
  int fixed_owner = 0;
  std::vector<Extra> extras;  // in write order
  std::optional<Guarded> guarded;
};

std::string RegName(Variant v, uint32_t msr) {
  const nehalemex::RegisterInfo* r = nehalemex::FindRegister(v, msr);
  return r == nullptr ? fmt::format("MSR 0x{:x}", msr) : r->name;
}

}  // namespace

// Builds the per-instance plans and the read plan for one request.
class NehalemExDevice::Plan {
 public:
  Plan(Variant v, const std::vector<Encoded>& events)
      : v_(v), events_(events) {}

  absl::Status Place(const Encoded& e, int socket, int cpu, int instance,
                     std::vector<CounterPlacement>* read_plan,
                     std::vector<BoxType>* entry_box) {
    InstancePlan& p = Get(socket, cpu, *e.box, instance);
    const BoxDescriptor& box = *e.box;
    int counter = -1;
    if (e.fixed) {
      if (p.fixed_used) {
        return Taken(e, p, "the W-Box fixed counter",
                     events_[p.fixed_owner].text);
      }
      p.fixed_used = true;
      p.fixed_owner = e.index;
    } else if (e.b_counter >= 0) {
      counter = e.b_counter;
      if ((p.used >> counter) & 1) {
        return Taken(e, p,
                     fmt::format("B-Box counter {} (its events are "
                                 "counter-specific: the `counter` term picks "
                                 "the counter)",
                                 counter),
                     events_[p.owner[counter]].text);
      }
    } else {
      for (int c = 0; c < box.num_counters; ++c) {
        if (((p.used >> c) & 1) == 0) {
          counter = c;
          break;
        }
      }
      if (counter < 0) {
        std::string users;
        for (int c = 0; c < box.num_counters; ++c) {
          users +=
              fmt::format("\n  counter {}: {}", c, events_[p.owner[c]].text);
        }
        return absl::ResourceExhaustedError(fmt::format(
            "event {} ('{}'): {} on socket {} has only {} counters and they "
            "are all taken:{}\nRequest fewer {} events or split them over "
            "runs.",
            e.index, e.text, nehalemex::KernelPmuName(box, instance), socket,
            box.num_counters, users, box.name));
      }
    }
    if (counter >= 0) {
      p.used |= 1u << counter;
      p.owner[counter] = e.index;
      p.control[counter] = Control(e);
    }
    UNCORE_RETURN_IF_ERROR(AddExtras(e, p, counter));
    read_plan->push_back({.event = e.index,
                          .socket = socket,
                          .box = ivytown::BoxType::kUbox,
                          .instance = instance,
                          .counter = e.fixed ? kFixedCounter : counter,
                          .width = nehalemex::kCounterWidth});
    entry_box->push_back(box.type);
    return absl::OkStatus();
  }

  // The plans in write order: by socket, box type, instance.
  std::vector<InstancePlan*> Ordered() {
    std::vector<InstancePlan*> out;
    for (auto& [key, p] : plans_) out.push_back(&p);
    return out;
  }

 private:
  using Key = std::tuple<int, int, int>;

  InstancePlan& Get(int socket, int cpu, const BoxDescriptor& box,
                    int instance) {
    auto [it, inserted] =
        plans_.try_emplace(Key{socket, static_cast<int>(box.type), instance});
    if (inserted) {
      it->second.socket = socket;
      it->second.cpu = cpu;
      it->second.box = &box;
      it->second.instance = instance;
    }
    return it->second;
  }

  absl::Status Taken(const Encoded& e, const InstancePlan& p,
                     std::string_view what, std::string_view other) const {
    return absl::ResourceExhaustedError(fmt::format(
        "event {} ('{}') needs {} of {} on socket {}, which event '{}' "
        "already uses; measure them in separate runs",
        e.index, e.text, what, nehalemex::KernelPmuName(*p.box, p.instance),
        p.socket, other));
  }

  static uint64_t Control(const Encoded& e) {
    const BoxDescriptor& box = *e.box;
    const uint64_t en = box.FieldBits("en").mask();
    switch (box.layout) {
      case nehalemex::ControlLayout::kBbox:
      case nehalemex::ControlLayout::kRbox:
        return en | (e.config[0] & box.FieldBits("ev_sel").mask());
      case nehalemex::ControlLayout::kMbox:
      case nehalemex::ControlLayout::kGeneric:
      case nehalemex::ControlLayout::kUbox:
        return en | (e.config[0] & box.kernel_event_mask);
    }
    return en;
  }

  absl::Status AddExtra(const Encoded& e, InstancePlan& p, uint32_t msr,
                        uint64_t mask, uint64_t value, uint64_t writable) {
    const std::string name = RegName(v_, msr);
    if ((value & ~mask) != 0 || (value & ~writable) != 0) {
      return absl::InvalidArgumentError(fmt::format(
          "event {} ('{}'): value 0x{:x} for {} sets bits outside the ones "
          "this event owns there (0x{:x})",
          e.index, e.text, value, name, mask & writable));
    }
    // DECISION: bits two events need in one extra register must agree; the
    // kernel's rotation to another FVC field or R-Box event pair is not done.
    for (Extra& x : p.extras) {
      if (x.msr != msr) continue;
      const uint64_t overlap = x.mask & mask;
      if (((x.value ^ value) & overlap) != 0) {
        return absl::FailedPreconditionError(fmt::format(
            "event {} ('{}') needs {} = 0x{:x} but event {} ('{}') needs "
            "0x{:x} there (bits 0x{:x}); {} has one such register: measure "
            "them in separate runs",
            e.index, e.text, name, value & overlap, x.owner,
            events_[x.owner].text, x.value & overlap, overlap,
            nehalemex::KernelPmuName(*p.box, p.instance)));
      }
      x.mask |= mask;
      x.value |= value;
      return absl::OkStatus();
    }
    p.extras.push_back({.msr = msr,
                        .mask = mask,
                        .value = value,
                        .owner = e.index,
                        .name = name});
    return absl::OkStatus();
  }

  absl::Status SetGuarded(const Encoded& e, InstancePlan& p, Guarded g) {
    g.regs = p.box->match_mask[p.instance];
    g.owner = e.index;
    if (p.guarded) {
      const Guarded& o = *p.guarded;
      if (o.write_match != g.write_match || o.match != g.match ||
          o.mask != g.mask || o.enable != g.enable) {
        return absl::FailedPreconditionError(fmt::format(
            "event {} ('{}') and event {} ('{}') need different match/mask "
            "settings of {}, which has one match/mask pair: measure them in "
            "separate runs",
            e.index, e.text, o.owner, events_[o.owner].text,
            nehalemex::KernelPmuName(*p.box, p.instance)));
      }
      return absl::OkStatus();
    }
    p.guarded = g;
    return absl::OkStatus();
  }

  absl::Status AddExtras(const Encoded& e, InstancePlan& p, int counter) {
    const BoxDescriptor& box = *e.box;
    const uint64_t c0 = e.config[0];
    const uint64_t c1 = e.config[1];
    const uint64_t c2 = e.config[2];
    switch (box.type) {
      case BoxType::kS:
        // Only TO_R_PROG_EV counts match/mask hits.
        if ((c0 & 0xFF) == nehalemex::kSboxToRProgEv) {
          return SetGuarded(e, p,
                            Guarded{.regs = {},
                                    .write_match = true,
                                    .match = c1,
                                    .mask = c2,
                                    .enable = true,
                                    .owner = 0});
        }
        return absl::OkStatus();
      case BoxType::kB: {
        const uint64_t ev = box.FieldBits("ev_sel").Extract(c0);
        // The kernel's rule for which B-Box events use match/mask.
        const bool uses = (counter == 0 && ev <= 0x3) ||
                          (counter == 1 && ev <= 0x6) ||
                          (counter == 2 && ev == 0x4);
        if (!uses) return absl::OkStatus();
        const nehalemex::MatchMaskDescriptor& mm = box.match_mask[p.instance];
        UNCORE_RETURN_IF_ERROR(
            AddExtra(e, p, mm.match, ~uint64_t{0}, c1, mm.match_writable));
        return AddExtra(e, p, mm.mask, ~uint64_t{0}, c2, mm.mask_writable);
      }
      case BoxType::kM:
        return AddMboxExtras(e, p);
      case BoxType::kR: {
        const int idx = static_cast<int>(box.FieldBits("ev_sel").Extract(c0));
        const int port = idx / nehalemex::kRboxEventsPerPort +
                         p.instance * nehalemex::kRboxPortsPerBox;
        switch (idx % nehalemex::kRboxEventsPerPort) {
          case 0:
            return AddExtra(e, p, nehalemex::RboxIperfCfg0(port), kLow32, c1,
                            nehalemex::kRboxIperfWritable);
          case 1:
            return AddExtra(e, p, nehalemex::RboxIperfCfg1(port), kLow32, c1,
                            nehalemex::kRboxIperfWritable);
          case 2:
          case 3: {
            const uint64_t mask =
                uint64_t{0xFF}
                << ((idx % nehalemex::kRboxEventsPerPort - 2) * 8);
            return AddExtra(e, p, nehalemex::RboxQlxCfg(port), mask, c1 & mask,
                            nehalemex::kRboxQlxWritable);
          }
          default: {
            const int set = idx % nehalemex::kRboxEventsPerPort - 3;
            const uint32_t mm_cfg = nehalemex::RboxXbrMmCfg(port, set);
            // DECISION: MATCH and MASK before MM_CFG (the kernel writes
            // MM_CFG first; this is the guarded order of p. 2-49).
            UNCORE_RETURN_IF_ERROR(
                AddExtra(e, p, mm_cfg + 1, ~uint64_t{0}, c1, ~uint64_t{0}));
            UNCORE_RETURN_IF_ERROR(
                AddExtra(e, p, mm_cfg + 2, ~uint64_t{0}, c2, ~uint64_t{0}));
            return AddExtra(e, p, mm_cfg, kLow32, c0 >> 32,
                            nehalemex::kRboxXbrMmCfgWritable);
          }
        }
      }
      case BoxType::kU:
      case BoxType::kC:
      case BoxType::kW:
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  absl::Status AddMboxExtras(const Encoded& e, InstancePlan& p) {
    using nehalemex::MboxSubRegister;
    const BoxDescriptor& box = *e.box;
    const uint64_t c0 = e.config[0];
    const bool flag_mode = box.FieldBits("flag_mode").Extract(c0) != 0;
    const int inc_sel = static_cast<int>(box.FieldBits("inc_sel").Extract(c0));
    const int set_flag =
        static_cast<int>(box.FieldBits("set_flag_sel").Extract(c0));
    // The kernel's extra-register table.
    std::vector<MboxSubRegister> subs;
    if (!flag_mode) {
      switch (inc_sel) {
        case 0x0:
          subs = {MboxSubRegister::kDsp};
          break;
        case 0x4:
        case 0x5:
          subs = {MboxSubRegister::kMscThr};
          break;
        case 0x9:
          subs = {MboxSubRegister::kIss};
          break;
        case 0xA:
          subs = {MboxSubRegister::kIss, MboxSubRegister::kPld};
          break;
        case 0xB:
          subs = {MboxSubRegister::kPld};
          break;
        case 0xD:
        case 0xE:
        case 0xF:
        case 0x10:
          subs = {MboxSubRegister::kZdpCtlFvc};
          break;
        case 0x16:
          subs = {MboxSubRegister::kPgt};
          break;
        default:
          break;
      }
    } else {
      switch (set_flag) {
        case 0x0:
          subs = {MboxSubRegister::kDsp};
          break;
        case 0x1:
          subs = {MboxSubRegister::kIss};
          break;
        case 0x5:
          subs = {MboxSubRegister::kPgt};
          break;
        case 0x6:
          subs = {MboxSubRegister::kMap};
          break;
        default:
          break;
      }
    }
    const uint32_t base = box.GlobalCtlAddress(p.instance);
    for (MboxSubRegister s : subs) {
      const nehalemex::SubRegisterDescriptor& d =
          nehalemex::kMboxSubRegisters[static_cast<int>(s)];
      const uint64_t writable =
          v_ == Variant::kNehalemEx ? d.writable_nhm : d.writable_wsm;
      // PLD always rides in config1 63:32, the others in 31:0.
      const uint64_t value =
          s == MboxSubRegister::kPld ? e.config[1] >> 32 : e.config[1] & kLow32;
      uint64_t mask = kLow32;
      if (s == MboxSubRegister::kZdpCtlFvc) {
        const nehalemex::FvcLayout& fvc = nehalemex::Fvc(v_);
        mask = fvc.shared_mask |
               fvc.EventField(inc_sel - nehalemex::kMboxIncSelFvcFirst).mask();
      }
      UNCORE_RETURN_IF_ERROR(
          AddExtra(e, p, base + d.offset, mask, value, writable));
    }
    if (subs.size() == 2) {
      // Address matching (PLD events): MM_CFG, ADDR_MATCH, ADDR_MASK.
      const uint64_t c2 = e.config[2];
      Guarded g;
      if (nehalemex::kMmCfgEnable.Extract(c2) != 0) {
        g.write_match = true;
        g.match = c2 & nehalemex::kMboxAddrMatchWritable;
        g.mask = (c2 >> nehalemex::kMboxAddrMaskShift) &
                 nehalemex::kMboxAddrMaskWritable;
        g.enable = true;
      }
      return SetGuarded(e, p, g);
    }
    return absl::OkStatus();
  }

  Variant v_;
  const std::vector<Encoded>& events_;
  std::map<Key, InstancePlan> plans_;
};

NehalemExDevice::NehalemExDevice(registers::RegisterSpace* space,
                                 Variant variant,
                                 std::vector<SocketCpu> sockets)
    : space_(space), variant_(variant), socket_cpus_(std::move(sockets)) {}

NehalemExDevice::~NehalemExDevice() { Release().IgnoreError(); }

std::vector<NehalemExDevice::SocketCpu> NehalemExDevice::ConsecutiveSockets(
    int sockets, int cpus_per_socket) {
  std::vector<SocketCpu> out;
  out.reserve(sockets > 0 ? sockets : 0);
  for (int s = 0; s < sockets; ++s) {
    out.push_back({.socket = s, .cpu = s * cpus_per_socket});
  }
  return out;
}

std::string NehalemExDevice::EntryName(size_t entry) const {
  if (entry >= read_plan_.size()) return "";
  return nehalemex::KernelPmuName(nehalemex::Box(entry_box_[entry]),
                                  read_plan_[entry].instance);
}

nehalemex::BoxType NehalemExDevice::EntryBox(size_t entry) const {
  return entry < entry_box_.size() ? entry_box_[entry] : BoxType::kU;
}

absl::Status NehalemExDevice::Program(const ProgramRequest& request) {
  if (programmed_) {
    return absl::FailedPreconditionError(
        "the nehalemex device is already programmed: Release() it first");
  }
  if (request.events.empty()) {
    return absl::InvalidArgumentError("no events to program");
  }
  // Sockets.
  std::vector<SocketCpu> sockets;
  if (request.sockets.empty()) {
    sockets = socket_cpus_;
  } else {
    for (int s : request.sockets) {
      auto it =
          std::find_if(socket_cpus_.begin(), socket_cpus_.end(),
                       [s](const SocketCpu& sc) { return sc.socket == s; });
      if (it == socket_cpus_.end()) {
        return absl::InvalidArgumentError(
            fmt::format("socket {} is not one of this device's {} sockets", s,
                        socket_cpus_.size()));
      }
      sockets.push_back(*it);
    }
  }
  // Encode and place.
  std::vector<Encoded> events;
  for (size_t i = 0; i < request.events.size(); ++i) {
    UNCORE_ASSIGN_OR_RETURN(
        Encoded e, Encode(request.events[i], static_cast<int>(i), variant_));
    events.push_back(std::move(e));
  }
  Plan plan(variant_, events);
  std::vector<CounterPlacement> read_plan;
  std::vector<BoxType> entry_box;
  for (const Encoded& e : events) {
    for (const SocketCpu& sc : sockets) {
      for (int instance : e.instances) {
        UNCORE_RETURN_IF_ERROR(
            plan.Place(e, sc.socket, sc.cpu, instance, &read_plan, &entry_box));
      }
    }
  }
  std::vector<InstancePlan*> instances = plan.Ordered();

  // Read pass: save every register the writes will touch.
  saved_.clear();
  absl::flat_hash_map<std::pair<int, uint32_t>, size_t> index;
  std::string in_use;
  auto save = [&](const SocketCpu& sc, uint32_t msr) -> absl::Status {
    if (index.contains({sc.socket, msr})) return absl::OkStatus();
    uint64_t v = 0;
    absl::Status s = space_->ReadMsr(sc.cpu, msr, &v);
    const std::string name = RegName(variant_, msr);
    if (!s.ok()) {
      return Annotate(s, fmt::format("reading {} (0x{:x}) on socket {} (CPU "
                                     "{}) to save it",
                                     name, msr, sc.socket, sc.cpu));
    }
    index[{sc.socket, msr}] = saved_.size();
    saved_.push_back({.socket = sc.socket,
                      .cpu = sc.cpu,
                      .msr = msr,
                      .original = v,
                      .name = name});
    return absl::OkStatus();
  };
  for (const SocketCpu& sc : sockets) {
    UNCORE_RETURN_IF_ERROR(save(sc, kGlobalCtl.address));
    saved_.back().global = true;
    for (InstancePlan* p : instances) {
      if (p->socket != sc.socket) continue;
      const BoxDescriptor& box = *p->box;
      if (box.type != BoxType::kU) {
        UNCORE_RETURN_IF_ERROR(save(sc, box.GlobalCtlAddress(p->instance)));
      }
      for (int c = 0; c < box.num_counters; ++c) {
        if (((p->used >> c) & 1) == 0) continue;
        const uint32_t ctl = box.ControlAddress(p->instance, c);
        UNCORE_RETURN_IF_ERROR(save(sc, ctl));
        const uint64_t v = saved_[index[{sc.socket, ctl}]].original;
        if (box.FieldBits("en").Extract(v) != 0) {
          in_use += fmt::format("\n  {} on socket {} = 0x{:x} (en is set)",
                                RegName(variant_, ctl), sc.socket, v);
        }
        UNCORE_RETURN_IF_ERROR(save(sc, box.CounterAddress(p->instance, c)));
      }
      if (p->fixed_used) {
        UNCORE_RETURN_IF_ERROR(save(sc, kWFixed.control));
        const uint64_t v = saved_[index[{sc.socket, kWFixed.control}]].original;
        if (kWFixed.en.Extract(v) != 0) {
          in_use += fmt::format(
              "\n  W_MSR_PMON_FIXED_CTR_CTL on socket {} = "
              "0x{:x} (en is set)",
              sc.socket, v);
        }
        UNCORE_RETURN_IF_ERROR(save(sc, kWFixed.counter));
      }
      for (const Extra& x : p->extras) {
        UNCORE_RETURN_IF_ERROR(save(sc, x.msr));
      }
      if (p->guarded) {
        UNCORE_RETURN_IF_ERROR(save(sc, p->guarded->regs.mm_cfg));
        saved_.back().guard = true;
        if (p->guarded->write_match) {
          UNCORE_RETURN_IF_ERROR(save(sc, p->guarded->regs.match));
          UNCORE_RETURN_IF_ERROR(save(sc, p->guarded->regs.mask));
        }
      }
    }
  }
  if (!in_use.empty() && !request.force) {
    saved_.clear();
    return absl::FailedPreconditionError(fmt::format(
        "the uncore counters are in use by another agent (their enable bits "
        "are set):{}\nStop the other tool, or pass force to take them over.",
        in_use));
  }

  // Write pass.
  program_writes_.clear();
  std::vector<std::unique_ptr<SocketState>> states;
  auto orig = [&](int socket, uint32_t msr) {
    return saved_[index[{socket, msr}]].original;
  };
  auto write = [&](const SocketCpu& sc, uint32_t msr, uint64_t value,
                   std::string why) -> absl::Status {
    Saved& s = saved_[index[{sc.socket, msr}]];
    s.written = true;  // a failed write may still have landed: restore it
    absl::Status st = space_->WriteMsr(sc.cpu, msr, value);
    if (!st.ok()) {
      return Annotate(st, fmt::format("writing {} (0x{:x}) <- 0x{:x} on socket "
                                      "{} ({})",
                                      s.name, msr, value, sc.socket, why));
    }
    program_writes_.push_back({.socket = sc.socket,
                               .cpu = sc.cpu,
                               .msr = msr,
                               .value = value,
                               .name = s.name,
                               .why = std::move(why)});
    return absl::OkStatus();
  };
  auto run = [&]() -> absl::Status {
    for (const SocketCpu& sc : sockets) {
      const uint64_t g0 =
          orig(sc.socket, kGlobalCtl.address) & ~kGlobalCtl.rst_all.mask();
      UNCORE_RETURN_IF_ERROR(write(sc, kGlobalCtl.address,
                                   kGlobalCtl.en_all.Insert(g0, 0),
                                   "stop counting: clear en_all"));
      bool ubox_used = false;
      for (InstancePlan* p : instances) {
        if (p->socket != sc.socket) continue;
        const BoxDescriptor& box = *p->box;
        const int i = p->instance;
        uint64_t ctr_en = p->used;
        if (p->fixed_used) ctr_en |= kWFixed.global_bit.mask();
        if (box.type == BoxType::kU) {
          ubox_used = true;
        } else {
          UNCORE_RETURN_IF_ERROR(
              write(sc, box.GlobalCtlAddress(i),
                    orig(sc.socket, box.GlobalCtlAddress(i)) & ~ctr_en,
                    "disable the counters being programmed (ctr_en)"));
        }
        for (int c = 0; c < box.num_counters; ++c) {
          if (((p->used >> c) & 1) == 0) continue;
          UNCORE_RETURN_IF_ERROR(
              write(sc, box.ControlAddress(i, c), 0, "disable the counter"));
          UNCORE_RETURN_IF_ERROR(
              write(sc, box.CounterAddress(i, c), 0, "zero the counter"));
        }
        if (p->fixed_used) {
          UNCORE_RETURN_IF_ERROR(
              write(sc, kWFixed.control, 0, "disable the fixed counter"));
          UNCORE_RETURN_IF_ERROR(
              write(sc, kWFixed.counter, 0, "zero the fixed counter"));
        }
        for (const Extra& x : p->extras) {
          UNCORE_RETURN_IF_ERROR(
              write(sc, x.msr, (orig(sc.socket, x.msr) & ~x.mask) | x.value,
                    fmt::format("extra register of event {}", x.owner)));
        }
        if (p->guarded) {
          const Guarded& g = *p->guarded;
          UNCORE_RETURN_IF_ERROR(
              write(sc, g.regs.mm_cfg, 0, "step a: MM_CFG[63] = 0"));
          if (g.write_match) {
            UNCORE_RETURN_IF_ERROR(
                write(sc, g.regs.match, g.match, "step b: program MATCH"));
            UNCORE_RETURN_IF_ERROR(
                write(sc, g.regs.mask, g.mask, "step b: program MASK"));
          }
        }
        for (int c = 0; c < box.num_counters; ++c) {
          if (((p->used >> c) & 1) == 0) continue;
          const bool prog_ev =
              box.type == BoxType::kS && p->guarded &&
              (p->control[c] & 0xFF) == nehalemex::kSboxToRProgEv;
          UNCORE_RETURN_IF_ERROR(write(
              sc, box.ControlAddress(i, c), p->control[c],
              prog_ev
                  ? fmt::format("step c: event select 0x0 (TO_R_PROG_EV) "
                                "for event {}",
                                p->owner[c])
                  : fmt::format("select event {} and set en", p->owner[c])));
        }
        if (p->fixed_used) {
          UNCORE_RETURN_IF_ERROR(write(sc, kWFixed.control, kWFixed.en.mask(),
                                       "enable the fixed counter"));
        }
        if (p->guarded && p->guarded->enable) {
          UNCORE_RETURN_IF_ERROR(
              write(sc, p->guarded->regs.mm_cfg, nehalemex::kMmCfgEnable.mask(),
                    "step d: MM_CFG[63] = 1, start matching"));
        }
        if (box.type != BoxType::kU) {
          UNCORE_RETURN_IF_ERROR(
              write(sc, box.GlobalCtlAddress(i),
                    orig(sc.socket, box.GlobalCtlAddress(i)) | ctr_en,
                    "enable the programmed counters (ctr_en)"));
        }
      }
      uint64_t g1 = kGlobalCtl.en_all.Insert(g0, 1);
      if (ubox_used) g1 = kGlobalCtl.ctr_en.Insert(g1, 1);
      UNCORE_RETURN_IF_ERROR(
          write(sc, kGlobalCtl.address, g1, "start counting: set en_all"));
      auto state = std::make_unique<SocketState>();
      state->socket = sc.socket;
      state->cpu = sc.cpu;
      state->enabled = g1;
      state->disabled = kGlobalCtl.en_all.Insert(g1, 0);
      states.push_back(std::move(state));
    }
    return absl::OkStatus();
  };
  if (absl::Status st = run(); !st.ok()) {
    absl::Status restore = RestoreSaved();
    saved_.clear();
    program_writes_.clear();
    if (!restore.ok()) {
      return Annotate(st, fmt::format("(and the rollback failed too: {})",
                                      common::StatusMessage(restore)));
    }
    return st;
  }

  // Snapshot state.
  read_plan_ = std::move(read_plan);
  entry_box_ = std::move(entry_box);
  counters_.assign(read_plan_.size(), CounterState{});
  for (size_t e = 0; e < read_plan_.size(); ++e) {
    const CounterPlacement& pl = read_plan_[e];
    for (auto& s : states) {
      if (s->socket != pl.socket) continue;
      const BoxDescriptor& box = nehalemex::Box(entry_box_[e]);
      const uint32_t msr = pl.counter == kFixedCounter
                               ? kWFixed.counter
                               : box.CounterAddress(pl.instance, pl.counter);
      registers::MsrRead read;
      read.cpu = s->cpu;
      read.msr = msr;
      s->reads.push_back(read);
      s->entries.push_back(static_cast<int>(e));
    }
  }
  sockets_ = std::move(states);
  programmed_ = true;
  return absl::OkStatus();
}

absl::Status NehalemExDevice::RestoreSaved() {
  absl::Status first;
  auto keep = [&](absl::Status s) {
    if (!s.ok() && first.ok()) first = std::move(s);
  };
  auto put = [&](const Saved& s, uint64_t value) {
    absl::Status st = space_->WriteMsr(s.cpu, s.msr, value);
    if (!st.ok()) {
      keep(Annotate(st, fmt::format("restoring {} (0x{:x}) <- 0x{:x} on "
                                    "socket {}",
                                    s.name, s.msr, value, s.socket)));
    }
  };
  const uint64_t rst = kGlobalCtl.rst_all.mask();
  // Stop counting on every socket whose global control was written.
  for (const Saved& s : saved_) {
    if (s.global && s.written) {
      put(s, kGlobalCtl.en_all.Insert(s.original & ~rst, 0));
    }
  }
  // Step a before any MATCH/MASK write: clear the guards.
  for (const Saved& s : saved_) {
    if (s.guard && s.written) put(s, 0);
  }
  for (size_t i = saved_.size(); i-- > 0;) {
    const Saved& s = saved_[i];
    if (!s.written || s.guard || s.global) continue;
    put(s, s.original);
  }
  for (const Saved& s : saved_) {
    if (s.guard && s.written) put(s, s.original);
  }
  for (const Saved& s : saved_) {
    if (s.global && s.written) put(s, s.original & ~rst);
  }
  for (Saved& s : saved_) s.written = false;
  return first;
}

absl::Status NehalemExDevice::TakeSnapshot(Snapshot* out) {
  if (!programmed_) {
    return absl::FailedPreconditionError(
        "TakeSnapshot before Program: nothing is programmed");
  }
  if (out->values.size() != read_plan_.size()) {
    out->values.assign(read_plan_.size(), 0);
  }
  out->valid = true;
  absl::Status first;
  for (const std::unique_ptr<SocketState>& sp : sockets_) {
    SocketState& s = *sp;
    std::lock_guard<std::mutex> lock(s.mu);
    // DECISION: no box-level freeze on this generation: clear en_all, read
    // every counter of the socket, set en_all (LIKWID freezes the same way).
    const uint64_t t0 = common::MonotonicNowNs();
    absl::Status st = space_->WriteMsr(s.cpu, kGlobalCtl.address, s.disabled);
    absl::Status reads;
    if (st.ok()) reads = space_->ReadMsrBatch(s.reads);
    // Re-enable even when a read failed.
    absl::Status st2 =
        st.ok() ? space_->WriteMsr(s.cpu, kGlobalCtl.address, s.enabled) : st;
    frozen_ns_.fetch_add(common::MonotonicNowNs() - t0,
                         std::memory_order_relaxed);
    if (!st.ok() || !reads.ok() || !st2.ok()) {
      out->valid = false;
      if (first.ok()) {
        first = Annotate(!st.ok()      ? st
                         : !reads.ok() ? reads
                                       : st2,
                         fmt::format("snapshot of socket {}", s.socket));
      }
      continue;
    }
    for (size_t r = 0; r < s.reads.size(); ++r) {
      CounterState& c = counters_[s.entries[r]];
      const uint64_t raw = s.reads[r].value & kCounterMask;
      c.total += WidthAwareDelta(c.last_raw, raw, nehalemex::kCounterWidth);
      c.last_raw = raw;
      out->values[s.entries[r]] = c.total;
    }
  }
  out->timestamp_ns = common::MonotonicNowNs();
  return first;
}

absl::Status NehalemExDevice::Release() {
  if (!programmed_) return absl::OkStatus();
  absl::Status st = RestoreSaved();
  saved_.clear();
  sockets_.clear();
  counters_.clear();
  read_plan_.clear();
  entry_box_.clear();
  programmed_ = false;
  return st;
}

}  // namespace uncore::devices
