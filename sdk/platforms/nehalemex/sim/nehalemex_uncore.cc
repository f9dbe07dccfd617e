#include "sdk/platforms/nehalemex/sim/nehalemex_uncore.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sdk/common/clock.h"

namespace uncore::sim {
namespace {

using nehalemex::BoxDescriptor;
using nehalemex::kCounterWidth;
using nehalemex::kGlobalCtl;
using nehalemex::kWFixed;

constexpr std::string_view kGpPrefix = "general-protection fault";
constexpr uint64_t kCounterMask = (uint64_t{1} << kCounterWidth) - 1;
constexpr double kLineBytes = 64.0;
// The B-Box's IMT_INSERTS_RD / _WR / _ALL: ev_sel on counter 1 (the
// kernel's `counter=0x1` term).
constexpr int kImtInsertsCounter = 1;
constexpr uint64_t kImtInsertsRd = 0x1D;
constexpr uint64_t kImtInsertsWr = 0x0C;
constexpr uint64_t kImtInsertsAll = 0x07;

// The instance's match/mask facility if `msr` is its guarded MATCH or MASK.
const nehalemex::MatchMaskDescriptor* GuardedMatchMask(const BoxDescriptor& box,
                                                       int instance,
                                                       uint32_t msr) {
  if (instance >= 2) return nullptr;
  const nehalemex::MatchMaskDescriptor& mm = box.match_mask[instance];
  if (!mm.present() || mm.mm_cfg == 0) return nullptr;
  if (msr == mm.match || msr == mm.mask) return &mm;
  return nullptr;
}

bool IsMmCfg(const BoxDescriptor& box, int instance, uint32_t msr) {
  return instance < 2 && box.match_mask[instance].mm_cfg != 0 &&
         box.match_mask[instance].mm_cfg == msr;
}

}  // namespace

std::unique_ptr<NehalemExUncore> NehalemExUncore::Create(Variant variant,
                                                         int sockets) {
  return Create(variant, sockets, Options{});
}

std::unique_ptr<NehalemExUncore> NehalemExUncore::Create(Variant variant,
                                                         int sockets,
                                                         Options options) {
  return std::make_unique<NehalemExUncore>(variant, sockets,
                                           std::move(options));
}

NehalemExUncore::NehalemExUncore(Variant variant, int sockets, Options options)
    : variant_(variant),
      options_(std::move(options)),
      sockets_(sockets < 1 ? 1 : sockets) {
  if (options_.cpus_per_socket < 1) options_.cpus_per_socket = 1;
  const uint64_t now = Now();
  for (Socket& s : sockets_) s.last_advance_ns = now;
}

uint64_t NehalemExUncore::Now() const {
  return options_.clock ? options_.clock() : common::MonotonicNowNs();
}

uint64_t NehalemExUncore::EventKey(BoxType box, uint64_t control) {
  const BoxDescriptor& d = nehalemex::Box(box);
  switch (d.layout) {
    case nehalemex::ControlLayout::kUbox:
      return control & d.FieldBits("ev_sel").mask();
    case nehalemex::ControlLayout::kGeneric:
      return control &
             (d.FieldBits("ev_sel").mask() | d.FieldBits("umask").mask());
    case nehalemex::ControlLayout::kBbox:
    case nehalemex::ControlLayout::kRbox:
      return control & d.FieldBits("ev_sel").mask();
    case nehalemex::ControlLayout::kMbox:
      return control &
             (d.FieldBits("inc_sel").mask() | d.FieldBits("flag_mode").mask() |
              d.FieldBits("set_flag_sel").mask());
  }
  return 0;
}

bool NehalemExUncore::IsGeneralProtectionFault(const absl::Status& s) {
  if (s.ok()) return false;
  const std::string_view message(s.message().data(), s.message().size());
  return message.substr(0, kGpPrefix.size()) == kGpPrefix;
}

absl::Status NehalemExUncore::SocketOf(int cpu, int* socket) const {
  const int total =
      static_cast<int>(sockets_.size()) * options_.cpus_per_socket;
  if (cpu < 0 || cpu >= total) {
    return absl::NotFoundError(fmt::format(
        "CPU {} does not exist in the simulated {} ({} sockets, CPUs 0-{})",
        cpu, nehalemex::VariantDisplayName(variant_), sockets_.size(),
        total - 1));
  }
  *socket = cpu / options_.cpus_per_socket;
  return absl::OkStatus();
}

absl::Status NehalemExUncore::Fault(std::string what) {
  ++gp_faults_;
  return absl::FailedPreconditionError(fmt::format("{}: {}", kGpPrefix, what));
}

uint64_t NehalemExUncore::Get(const Socket& s, uint32_t msr) const {
  auto it = s.regs.find(msr);
  return it == s.regs.end() ? 0 : it->second;
}

bool NehalemExUncore::Counting(const Socket& s, const BoxDescriptor& box,
                               int instance, int counter) const {
  if (kGlobalCtl.en_all.Extract(Get(s, kGlobalCtl.address)) == 0) {
    return false;
  }
  if (((Get(s, box.GlobalCtlAddress(instance)) >> counter) & 1) == 0) {
    return false;
  }
  return box.FieldBits("en").Extract(
             Get(s, box.ControlAddress(instance, counter))) != 0;
}

bool NehalemExUncore::FixedCounting(const Socket& s) const {
  return kGlobalCtl.en_all.Extract(Get(s, kGlobalCtl.address)) != 0 &&
         kWFixed.global_bit.Extract(
             Get(s, nehalemex::kWbox.GlobalCtlAddress(0))) != 0 &&
         kWFixed.en.Extract(Get(s, kWFixed.control)) != 0;
}

void NehalemExUncore::Increment(Socket& s, const BoxDescriptor& box,
                                int instance, int counter, uint64_t count) {
  const bool fixed = counter < 0;
  const uint32_t ctr =
      fixed ? kWFixed.counter : box.CounterAddress(instance, counter);
  const uint64_t before = Get(s, ctr);
  const uint64_t sum = before + count;
  s.regs[ctr] = sum & kCounterMask;
  if (sum <= kCounterMask) return;
  // A carry out of bit 47: the counter wraps and its ov bit is set.
  // DECISION: every box sets its ov bit (p. 2-14 says so for the C-Box;
  // every box has the same GLOBAL_STATUS in LIKWID's list), and counting
  // goes on after the wrap (p. 2-49).
  const uint64_t ov_bit =
      fixed ? kWFixed.global_bit.mask() : (uint64_t{1} << counter);
  s.regs[box.StatusAddress(instance)] |= ov_bit;
  // Freeze on PMI.
  const bool pmi =
      !fixed && box.FieldBits("pmi_en").Extract(
                    Get(s, box.ControlAddress(instance, counter))) != 0;
  uint64_t& global = s.regs[kGlobalCtl.address];
  if (pmi && kGlobalCtl.frz_all.Extract(global) != 0) {
    global = kGlobalCtl.en_all.Insert(global, 0);
  }
}

// DECISION: the memory events of demo mode are the kernel's bbox_cmds_read /
// bbox_cmds_write M-Box events (inc_sel 0xD..0x10 with that ZDP_CTL_FVC
// event field and shared bits) and the B-Box's IMT_INSERTS_RD / _WR / _ALL
// (counter 1), one count per 64 bytes, split over the M-Boxes or B-Boxes;
// everything else counts at the fixed other_events_per_s
// (notes/decisions-xeon7500.md 19).
double NehalemExUncore::DemoRate(const Socket& s, const BoxDescriptor& box,
                                 int instance, int counter) const {
  if (box.type == BoxType::kB && counter == kImtInsertsCounter) {
    const uint64_t ev_sel = box.FieldBits("ev_sel").Extract(
        Get(s, box.ControlAddress(instance, counter)));
    const double lines = 1.0 / kLineBytes / box.NumInstances(variant_);
    if (ev_sel == kImtInsertsRd) return options_.rates.read_bytes_per_s * lines;
    if (ev_sel == kImtInsertsWr) {
      return options_.rates.write_bytes_per_s * lines;
    }
    if (ev_sel == kImtInsertsAll) {
      return (options_.rates.read_bytes_per_s +
              options_.rates.write_bytes_per_s) *
             lines;
    }
  }
  if (box.type == BoxType::kM) {
    const uint64_t ctl = Get(s, box.ControlAddress(instance, counter));
    const uint64_t inc_sel = box.FieldBits("inc_sel").Extract(ctl);
    const bool flag_mode = box.FieldBits("flag_mode").Extract(ctl) != 0;
    const int n = static_cast<int>(inc_sel) - nehalemex::kMboxIncSelFvcFirst;
    if (!flag_mode && n >= 0 && n < 4) {
      const uint64_t fvc = Get(
          s, box.GlobalCtlAddress(instance) +
                 nehalemex::kMboxSubRegisters
                     [static_cast<int>(nehalemex::MboxSubRegister::kZdpCtlFvc)]
                         .offset);
      const nehalemex::FvcLayout& layout = nehalemex::Fvc(variant_);
      const nehalemex::MboxMemoryEvents mem =
          nehalemex::MemoryEventFvc(variant_);
      auto is = [&](uint64_t want) {
        return (fvc & layout.shared_mask) == (want & layout.shared_mask) &&
               layout.EventField(n).Extract(fvc) ==
                   layout.EventField(0).Extract(want);
      };
      const int mboxes = nehalemex::kMbox.NumInstances(variant_);
      if (is(mem.write_fvc)) {
        return options_.rates.write_bytes_per_s / kLineBytes / mboxes;
      }
      if (is(mem.read_fvc)) {
        return options_.rates.read_bytes_per_s / kLineBytes / mboxes;
      }
    }
  }
  return options_.rates.other_events_per_s;
}

void NehalemExUncore::Advance(Socket& s) {
  const uint64_t now = Now();
  const uint64_t last = s.last_advance_ns;
  s.last_advance_ns = now;
  if (!options_.demo || now <= last) return;
  const double seconds = static_cast<double>(now - last) * 1e-9;
  auto add = [&](const BoxDescriptor& box, int instance, int counter,
                 uint32_t ctr, double rate) {
    double& carry = s.carry[ctr];
    const double total = carry + rate * seconds;
    const double whole = std::floor(total);
    carry = total - whole;
    if (whole >= 1.0) {
      Increment(s, box, instance, counter, static_cast<uint64_t>(whole));
    }
  };
  for (const BoxDescriptor* box : nehalemex::kBoxes) {
    for (int i = 0; i < box->NumInstances(variant_); ++i) {
      for (int c = 0; c < box->num_counters; ++c) {
        if (!Counting(s, *box, i, c)) continue;
        add(*box, i, c, box->CounterAddress(i, c), DemoRate(s, *box, i, c));
      }
    }
  }
  if (FixedCounting(s)) {
    add(nehalemex::kWbox, 0, -1, kWFixed.counter,
        options_.rates.uncore_clock_hz);
  }
}

absl::StatusOr<const nehalemex::RegisterInfo*> NehalemExUncore::Lookup(
    std::string_view op, int cpu, uint32_t msr) {
  const nehalemex::RegisterInfo* reg = nehalemex::FindRegister(variant_, msr);
  if (reg == nullptr) {
    return Fault(fmt::format("{} 0x{:x} on CPU {}: {} has no such MSR", op, msr,
                             cpu, nehalemex::VariantDisplayName(variant_)));
  }
  return reg;
}

absl::Status NehalemExUncore::ReadMsr(int cpu, uint32_t msr, uint64_t* value) {
  int socket = 0;
  absl::Status st = SocketOf(cpu, &socket);
  if (!st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<const nehalemex::RegisterInfo*> found =
      Lookup("rdmsr", cpu, msr);
  if (!found.ok()) return found.status();
  const nehalemex::RegisterInfo* reg = *found;
  Socket& s = sockets_[socket];
  const BoxDescriptor& box = nehalemex::Box(reg->box);
  const bool is_counter =
      msr == kWFixed.counter ||
      (msr >= box.CounterAddress(reg->instance, 0) &&
       msr <= box.CounterAddress(reg->instance, box.num_counters - 1) &&
       (msr - box.CounterAddress(reg->instance, 0)) % 2 == 0);
  if (is_counter) Advance(s);
  *value = msr == box.OvfCtlAddress(reg->instance) ? 0 : Get(s, msr);
  return absl::OkStatus();
}

absl::Status NehalemExUncore::WriteMsr(int cpu, uint32_t msr, uint64_t value) {
  int socket = 0;
  absl::Status st = SocketOf(cpu, &socket);
  if (!st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<const nehalemex::RegisterInfo*> found =
      Lookup("wrmsr", cpu, msr);
  if (!found.ok()) return found.status();
  const nehalemex::RegisterInfo* reg = *found;
  Socket& s = sockets_[socket];
  const BoxDescriptor& box = nehalemex::Box(reg->box);
  const int inst = reg->instance;
  if (msr == box.StatusAddress(inst)) {
    return Fault(
        fmt::format("wrmsr {} (0x{:x}) <- 0x{:x}: the register is "
                    "read-only (clear ov bits through GLOBAL_OVF_CTL)",
                    reg->name, msr, value));
  }
  if ((value & ~reg->writable) != 0) {
    return Fault(fmt::format(
        "wrmsr {} (0x{:x}) <- 0x{:x} sets reserved bits 0x{:x} (writable: "
        "0x{:x})",
        reg->name, msr, value, value & ~reg->writable, reg->writable));
  }
  if (const nehalemex::MatchMaskDescriptor* mm =
          GuardedMatchMask(box, inst, msr);
      mm != nullptr &&
      nehalemex::kMmCfgEnable.Extract(Get(s, mm->mm_cfg)) != 0) {
    return Fault(fmt::format(
        "wrmsr {} (0x{:x}) while {}{}_MSR_MM_CFG (0x{:x}) bit 63 is 1: clear "
        "MM_CFG[63] first (Xeon 7500 guide p. 2-49, step a)",
        reg->name, msr, box.letter, inst, mm->mm_cfg));
  }
  // Advance demo counts under the old configuration first.
  Advance(s);
  if (IsMmCfg(box, inst, msr)) {
    // Bits 62:0 read zero; writes to them are ignored.
    s.regs[msr] = value & nehalemex::kMmCfgEnable.mask();
    return absl::OkStatus();
  }
  if (msr == box.OvfCtlAddress(inst)) {
    s.regs[box.StatusAddress(inst)] &= ~value;
    return absl::OkStatus();
  }
  if (msr == kGlobalCtl.address) {
    if (kGlobalCtl.rst_all.Extract(value) != 0) {
      for (const BoxDescriptor* b : nehalemex::kBoxes) {
        for (int i = 0; i < b->NumInstances(variant_); ++i) {
          for (int c = 0; c < b->num_counters; ++c) {
            s.regs[b->CounterAddress(i, c)] = 0;
          }
          s.regs[b->StatusAddress(i)] = 0;
        }
      }
      s.regs[kWFixed.counter] = 0;
      s.carry.clear();
      value = kGlobalCtl.rst_all.Insert(value, 0);
    }
  }
  s.regs[msr] = value;
  return absl::OkStatus();
}

absl::Status NehalemExUncore::ReadPci(const registers::PciAddress& fn,
                                      uint32_t offset, uint32_t* /*value*/) {
  return absl::UnimplementedError(fmt::format(
      "PCI config read {}+0x{:x}: the simulated {} has only MSR PMON boxes",
      fn.ToString(), offset, nehalemex::VariantDisplayName(variant_)));
}

absl::Status NehalemExUncore::WritePci(const registers::PciAddress& fn,
                                       uint32_t offset, uint32_t /*value*/) {
  return absl::UnimplementedError(fmt::format(
      "PCI config write {}+0x{:x}: the simulated {} has only MSR PMON boxes",
      fn.ToString(), offset, nehalemex::VariantDisplayName(variant_)));
}

absl::Status NehalemExUncore::AddEvents(int socket, BoxType box_type,
                                        int instance, uint64_t event_key,
                                        uint64_t count) {
  const BoxDescriptor& box = nehalemex::Box(box_type);
  if (socket < 0 || socket >= sockets() || instance < 0 ||
      instance >= box.NumInstances(variant_)) {
    return absl::InvalidArgumentError(fmt::format(
        "no {} instance {} on socket {} of the simulated {}", box.name,
        instance, socket, nehalemex::VariantDisplayName(variant_)));
  }
  std::lock_guard<std::mutex> lock(mu_);
  Socket& s = sockets_[socket];
  Advance(s);
  // DECISION: threshold, edge, invert and match/mask filters do not change
  // what is added: the injected count is the count of the selected event.
  for (int c = 0; c < box.num_counters; ++c) {
    if (!Counting(s, box, instance, c)) continue;
    if (EventKey(box_type, Get(s, box.ControlAddress(instance, c))) !=
        event_key) {
      continue;
    }
    Increment(s, box, instance, c, count);
  }
  return absl::OkStatus();
}

absl::Status NehalemExUncore::AddFixedCounts(int socket, uint64_t count) {
  if (socket < 0 || socket >= sockets()) {
    return absl::InvalidArgumentError(
        fmt::format("no socket {} in the simulation", socket));
  }
  std::lock_guard<std::mutex> lock(mu_);
  Socket& s = sockets_[socket];
  Advance(s);
  if (FixedCounting(s)) Increment(s, nehalemex::kWbox, 0, -1, count);
  return absl::OkStatus();
}

void NehalemExUncore::SetDemo(bool on, DemoRates rates) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t now = Now();
  for (Socket& s : sockets_) {
    Advance(s);
    s.last_advance_ns = now;
  }
  options_.demo = on;
  options_.rates = rates;
}

NehalemExUncore::DemoRates NehalemExUncore::demo_rates() const {
  std::lock_guard<std::mutex> lock(mu_);
  return options_.rates;
}

absl::Status NehalemExUncore::SetMemoryActivity(double bytes_per_second) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Socket& s : sockets_) Advance(s);  // at the previous rates
  const double rate = std::max(bytes_per_second, 0.0);
  options_.demo = true;
  options_.rates.read_bytes_per_s = rate * SimulatedActivity::kReadShare;
  options_.rates.write_bytes_per_s = rate - options_.rates.read_bytes_per_s;
  return absl::OkStatus();
}

absl::Status NehalemExUncore::AdvanceToNow() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Socket& s : sockets_) Advance(s);
  return absl::OkStatus();
}

uint64_t NehalemExUncore::Peek(int socket, uint32_t msr) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (socket < 0 || socket >= sockets()) return 0;
  return Get(sockets_[socket], msr);
}

void NehalemExUncore::Poke(int socket, uint32_t msr, uint64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (socket < 0 || socket >= sockets()) return;
  sockets_[socket].regs[msr] = value;
}

int NehalemExUncore::gp_faults() const {
  std::lock_guard<std::mutex> lock(mu_);
  return gp_faults_;
}

}  // namespace uncore::sim
