#include "sdk/platforms/nehalemex/device/nehalemex_device.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"

namespace uncore::devices {
namespace {

using nehalemex::BoxDescriptor;
using nehalemex::BoxType;
using nehalemex::kGlobalCtl;
using nehalemex::kWFixed;
using nehalemex::Variant;

// DECISION: the sources give no largest increment per clock for the
// 7500's events.  The engine assumes 255, the largest value the 8-bit
// threshold field compares a clock's increment with, so the background
// extender reads every 48-bit counter at least once a minute (at the
// engine's assumed 5 GHz) and no wrap goes unseen.
constexpr double kAssumedMaxIncrementPerCycle = 255;
constexpr uint64_t kLow32 = 0xFFFFFFFF;

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

// Two M-Box FVC events that disagree on ZDP_CTL_FVC's shared fields (on
// Westmere-EX: B-Box reads and writes, notes/decisions-xeon7500.md 24).
constexpr std::string_view kFvcSharedHint =
    " (an M-Box's four FVC events share ZDP_CTL_FVC's FVID, B-Box command "
    "and response fields, so it counts B-Box reads or writes, never both at "
    "once: for memory bandwidth use MEM_BW_TOTAL, M-Box reads plus the "
    "B-Box's IMT_INSERTS_WR, or MEM_BW_READS and MEM_BW_WRITES in separate "
    "runs)";

bool IsZdpCtlFvc(const nehalemex::BoxDescriptor& box, int instance,
                 uint32_t msr) {
  return box.type == nehalemex::BoxType::kM &&
         msr ==
             box.GlobalCtlAddress(instance) +
                 nehalemex::kMboxSubRegisters
                     [static_cast<int>(nehalemex::MboxSubRegister::kZdpCtlFvc)]
                         .offset;
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

// Builds the per-instance plans and the read plan for one request.
class Placement {
 public:
  Placement(Variant v, const std::vector<Encoded>& events)
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
                          .unit = nehalemex::KernelPmuName(box, instance),
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
            "them in separate runs{}",
            e.index, e.text, name, value & overlap, x.owner,
            events_[x.owner].text, x.value & overlap, overlap,
            nehalemex::KernelPmuName(*p.box, p.instance),
            IsZdpCtlFvc(*p.box, p.instance, msr) ? kFvcSharedHint : ""));
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

}  // namespace

NehalemExDevice::NehalemExDevice(registers::RegisterSpace* space,
                                 Variant variant,
                                 std::vector<SocketCpu> sockets)
    : NehalemExDevice(space, variant, std::move(sockets), Options{}) {}

NehalemExDevice::NehalemExDevice(registers::RegisterSpace* space,
                                 Variant variant,
                                 std::vector<SocketCpu> sockets,
                                 Options options)
    : RegisterEngine(space, options),
      variant_(variant),
      socket_cpus_(std::move(sockets)) {}

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
  if (entry >= read_plan().size() || entry >= entry_box_.size()) return "";
  return nehalemex::KernelPmuName(nehalemex::Box(entry_box_[entry]),
                                  read_plan()[entry].instance);
}

nehalemex::BoxType NehalemExDevice::EntryBox(size_t entry) const {
  return entry < entry_box_.size() ? entry_box_[entry] : BoxType::kU;
}

absl::StatusOr<engine::RegisterProgram> NehalemExDevice::Plan(
    const ProgramRequest& request) {
  if (request.events.empty()) {
    return absl::InvalidArgumentError("no events to program");
  }
  // Sockets.
  std::vector<SocketCpu> sockets;
  if (request.sockets.empty()) {
    sockets = socket_cpus_;
  } else {
    std::vector<int> ids = request.sockets;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (int s : ids) {
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
  Placement placement(variant_, events);
  engine::RegisterProgram program;
  std::vector<BoxType> entry_box;
  for (const Encoded& e : events) {
    for (const SocketCpu& sc : sockets) {
      for (int instance : e.instances) {
        UNCORE_RETURN_IF_ERROR(placement.Place(e, sc.socket, sc.cpu, instance,
                                               &program.read_plan, &entry_box));
      }
    }
  }
  const std::vector<InstancePlan*> instances = placement.Ordered();

  int next_group = 0;
  const uint64_t rst = kGlobalCtl.rst_all.mask();
  const uint64_t en_all = kGlobalCtl.en_all.mask();
  for (const SocketCpu& sc : sockets) {
    engine::SocketProgram& sp = program.sockets.emplace_back();
    sp.socket = sc.socket;
    sp.cpu = sc.cpu;
    // Saved: every register a write touches, each its own restore group
    // (only what was written is put back).
    std::vector<int> guards;  // saved indices of MM_CFG registers
    auto save = [&](uint32_t msr, uint64_t in_use_bits = 0,
                    std::string owner = "") {
      const engine::RegisterRef reg = engine::Msr(sc.socket, sc.cpu, msr);
      if (const int k = sp.FindSaved(reg); k >= 0) return k;
      const std::string name = RegName(variant_, msr);
      return sp.Save({.reg = reg,
                      .name = name,
                      .group = next_group++,
                      .restore_mask = ~uint64_t{0},
                      .in_use_bits = in_use_bits,
                      .in_use_reason = "en is set",
                      .owner = owner.empty()
                                   ? fmt::format("socket {}", sc.socket)
                                   : std::move(owner)});
    };
    const int global = save(kGlobalCtl.address);
    // The global control never writes rst_all back (a write-one trigger).
    sp.saved[global].restore_mask = ~rst;
    for (InstancePlan* p : instances) {
      if (p->socket != sc.socket) continue;
      const BoxDescriptor& box = *p->box;
      const std::string owner =
          fmt::format("{} on socket {}",
                      nehalemex::KernelPmuName(box, p->instance), sc.socket);
      if (box.type != BoxType::kU) save(box.GlobalCtlAddress(p->instance));
      for (int c = 0; c < box.num_counters; ++c) {
        if (((p->used >> c) & 1) == 0) continue;
        save(box.ControlAddress(p->instance, c), box.FieldBits("en").mask(),
             owner);
        save(box.CounterAddress(p->instance, c));
      }
      if (p->fixed_used) {
        save(kWFixed.control, kWFixed.en.mask(), owner);
        save(kWFixed.counter);
      }
      for (const Extra& x : p->extras) save(x.msr);
      if (p->guarded) {
        guards.push_back(save(p->guarded->regs.mm_cfg));
        if (p->guarded->write_match) {
          save(p->guarded->regs.match);
          save(p->guarded->regs.mask);
        }
      }
    }

    // Setup.
    auto write = [&](uint32_t msr, uint64_t set, uint64_t keep,
                     std::string why) {
      const engine::RegisterRef reg = engine::Msr(sc.socket, sc.cpu, msr);
      int k = sp.FindSaved(reg);
      if (k < 0) k = save(msr);  // every write's register is saved above
      const engine::SavedRegister& r = sp.saved[k];
      sp.setup.push_back({.reg = reg,
                          .set = set,
                          .keep = keep,
                          .name = r.name,
                          .why = std::move(why),
                          .group = r.group});
    };
    write(kGlobalCtl.address, 0, ~(rst | en_all),
          "stop counting: clear en_all");
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
        write(box.GlobalCtlAddress(i), 0, ~ctr_en,
              "disable the counters being programmed (ctr_en)");
      }
      for (int c = 0; c < box.num_counters; ++c) {
        if (((p->used >> c) & 1) == 0) continue;
        write(box.ControlAddress(i, c), 0, 0, "disable the counter");
        write(box.CounterAddress(i, c), 0, 0, "zero the counter");
      }
      if (p->fixed_used) {
        write(kWFixed.control, 0, 0, "disable the fixed counter");
        write(kWFixed.counter, 0, 0, "zero the fixed counter");
      }
      for (const Extra& x : p->extras) {
        write(x.msr, x.value, ~x.mask,
              fmt::format("extra register of event {}", x.owner));
      }
      if (p->guarded) {
        const Guarded& g = *p->guarded;
        write(g.regs.mm_cfg, 0, 0, "step a: MM_CFG[63] = 0");
        if (g.write_match) {
          write(g.regs.match, g.match, 0, "step b: program MATCH");
          write(g.regs.mask, g.mask, 0, "step b: program MASK");
        }
      }
      for (int c = 0; c < box.num_counters; ++c) {
        if (((p->used >> c) & 1) == 0) continue;
        const bool prog_ev =
            box.type == BoxType::kS && p->guarded &&
            (p->control[c] & 0xFF) == nehalemex::kSboxToRProgEv;
        write(box.ControlAddress(i, c), p->control[c], 0,
              prog_ev ? fmt::format("step c: event select 0x0 (TO_R_PROG_EV) "
                                    "for event {}",
                                    p->owner[c])
                      : fmt::format("select event {} and set en", p->owner[c]));
      }
      if (p->fixed_used) {
        write(kWFixed.control, kWFixed.en.mask(), 0,
              "enable the fixed counter");
      }
      if (p->guarded && p->guarded->enable) {
        write(p->guarded->regs.mm_cfg, nehalemex::kMmCfgEnable.mask(), 0,
              "step d: MM_CFG[63] = 1, start matching");
      }
      if (box.type != BoxType::kU) {
        write(box.GlobalCtlAddress(i), ctr_en, ~uint64_t{0},
              "enable the programmed counters (ctr_en)");
      }
    }
    const uint64_t ubox_en = ubox_used ? kGlobalCtl.ctr_en.mask() : 0;
    write(kGlobalCtl.address, en_all | ubox_en, ~rst,
          "start counting: set en_all");

    // DECISION: no box-level freeze on this generation: a snapshot clears
    // en_all, reads every counter of the socket, sets en_all (LIKWID
    // freezes the same way).
    const engine::ProgramWrite& start = sp.setup.back();
    sp.open_window = start;
    sp.open_window.set = ubox_en;
    sp.open_window.keep = ~(rst | en_all);
    sp.open_window.why = "snapshot: clear en_all";
    sp.close_window = start;
    sp.close_window.why = "snapshot: set en_all";

    // Release: stop counting, clear the guards (step a) before any MATCH or
    // MASK is written, put back everything else (last saved first), then
    // the guards, then the global control.
    sp.ReleaseWrite({.reg = sp.saved[global].reg,
                     .set = 0,
                     .keep = ~(rst | en_all),
                     .name = sp.saved[global].name,
                     .why = "stop counting",
                     .group = sp.saved[global].group});
    for (int k : guards) {
      sp.ReleaseWrite({.reg = sp.saved[k].reg,
                       .set = 0,
                       .keep = 0,
                       .name = sp.saved[k].name,
                       .why = "step a: MM_CFG[63] = 0 before MATCH/MASK",
                       .group = sp.saved[k].group});
    }
    for (size_t k = sp.saved.size(); k-- > 0;) {
      const int ki = static_cast<int>(k);
      if (ki == global ||
          std::find(guards.begin(), guards.end(), ki) != guards.end()) {
        continue;
      }
      sp.Restore(ki);
    }
    for (int k : guards) sp.Restore(k);
    sp.Restore(global);
  }

  // The counters a snapshot reads.
  for (size_t e = 0; e < program.read_plan.size(); ++e) {
    const CounterPlacement& pl = program.read_plan[e];
    const BoxDescriptor& box = nehalemex::Box(entry_box[e]);
    for (engine::SocketProgram& sp : program.sockets) {
      if (sp.socket != pl.socket) continue;
      const uint32_t msr = pl.counter == kFixedCounter
                               ? kWFixed.counter
                               : box.CounterAddress(pl.instance, pl.counter);
      sp.reads.push_back(
          {.entry = static_cast<int>(e),
           .reg = engine::Msr(sp.socket, sp.cpu, msr),
           .width = nehalemex::kCounterWidth,
           .initial = 0,
           .max_increment_per_cycle = kAssumedMaxIncrementPerCycle});
    }
  }
  entry_box_ = std::move(entry_box);
  return program;
}

}  // namespace uncore::devices
