#include "sdk/devices/direct/direct_device.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/common/quiet_thread.h"
#include "sdk/common/status_macros.h"
#include "sdk/platforms/ivytown/box_descriptors.h"

namespace uncore::devices {
namespace {

using direct::PlannedCounter;
using direct::PlannedInstance;
using direct::RegisterRef;
using ivytown::AccessSpace;
using ivytown::kGlobal;

absl::Status Annotate(const absl::Status& s, std::string_view context) {
  return absl::Status(s.code(),
                      fmt::format("{}: {}", context, common::StatusMessage(s)));
}

uint64_t WidthMask(uint8_t width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

}  // namespace

DirectDevice::DirectDevice(registers::RegisterSpace* space,
                           machine::Topology topology)
    : DirectDevice(space, std::move(topology), Options{}) {}

DirectDevice::DirectDevice(registers::RegisterSpace* space,
                           machine::Topology topology, Options options)
    : space_(space), topology_(std::move(topology)), options_(options) {}

DirectDevice::~DirectDevice() { Release().IgnoreError(); }

absl::StatusOr<std::vector<RegisterWrite>> DirectDevice::PlanWrites(
    const ProgramRequest& request, const ProgramOptions& options) const {
  return direct::PlanWrites(request, topology_, options);
}

absl::Status DirectDevice::Read(const RegisterRef& ref, uint64_t* value) {
  if (ref.space == AccessSpace::kMsr) {
    return space_->ReadMsr(ref.cpu, ref.address, value);
  }
  uint32_t v = 0;
  absl::Status s = space_->ReadPci(ref.pci, ref.address, &v);
  *value = v;
  return s;
}

absl::Status DirectDevice::Write(const RegisterRef& ref, uint64_t value) {
  if (ref.space == AccessSpace::kMsr) {
    return space_->WriteMsr(ref.cpu, ref.address, value);
  }
  if (value > 0xFFFFFFFFu) {
    return absl::InternalError(
        fmt::format("0x{:x} does not fit a 32-bit PCI register", value));
  }
  return space_->WritePci(ref.pci, ref.address, static_cast<uint32_t>(value));
}

absl::Status DirectDevice::WriteLogged(const RegisterWrite& w) {
  absl::Status s = Write(w.reg, w.value);
  if (s.ok()) return s;
  return Annotate(s, fmt::format("writing {} at {} <- 0x{:08x}", w.name,
                                 w.reg.Location(), w.value));
}

absl::Status DirectDevice::SaveInstance(int g, std::string* in_use) {
  const PlannedInstance& inst = plan_.instances[g];
  const ivytown::BoxDescriptor& box = *inst.box;
  SavedInstance& saved = saved_[g];
  auto save = [&](const RegisterRef& ref, std::string name,
                  uint64_t* value_out) -> absl::Status {
    uint64_t v = 0;
    absl::Status s = Read(ref, &v);
    if (!s.ok()) {
      return Annotate(
          s, fmt::format("reading {} at {} to save it", name, ref.Location()));
    }
    saved.regs.push_back({ref, v, std::move(name)});
    if (value_out != nullptr) *value_out = v;
    return absl::OkStatus();
  };
  auto note_in_use = [&](const std::string& name, const RegisterRef& ref,
                         uint64_t v, std::string_view what) {
    *in_use += fmt::format("\n  {} {} on socket {}: {} at {} = 0x{:08x}, {}",
                           inst.box->name, inst.InstanceName(), inst.socket,
                           name, ref.Location(), v, what);
  };

  // Restore order: data, counter controls, fixed control, filters, box
  // control (the box control last, so a frozen box is frozen again last).
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
      UNCORE_RETURN_IF_ERROR(
          save(regs[h],
               regs.size() == 1
                   ? base
                   : fmt::format("{} {}", base, h == 0 ? "low" : "high"),
               nullptr));
    }
  }
  const ivytown::FieldDescriptor* en =
      box.FindRole(ivytown::FieldRole::kEnable);
  for (int c = 0; c < box.num_counters + fixed; ++c) {
    const int counter = c < box.num_counters ? c : kFixedCounter;
    const RegisterRef ref = inst.CounterControl(counter);
    const std::string name =
        counter == kFixedCounter
            ? fmt::format("{} ({})", box.fixed_counter->manual_control_name,
                          inst.InstanceName())
            : inst.RegisterName(fmt::format("CTL{}", c));
    uint64_t v = 0;
    UNCORE_RETURN_IF_ERROR(save(ref, name, &v));
    const ivytown::BitRange en_bits =
        counter == kFixedCounter ? box.fixed_counter->en : en->bits;
    if (en_bits.Extract(v) != 0) note_in_use(name, ref, v, "en is set");
  }
  for (const PlannedInstance::Filter& f : inst.filters) {
    UNCORE_RETURN_IF_ERROR(save(
        inst.FilterRegister(f.filter),
        fmt::format("{} ({})", box.filters[f.filter].name, inst.InstanceName()),
        nullptr));
  }
  if (std::optional<RegisterRef> ref = inst.BoxControl()) {
    const std::string name = inst.RegisterName("BOX_CTL");
    uint64_t v = 0;
    UNCORE_RETURN_IF_ERROR(save(*ref, name, &v));
    // rst_ctrl and rst_ctrs are write-only triggers: never write them back.
    const ivytown::BoxControlLayout& l = box.box_control;
    saved.regs.back().value &= ~(l.rst_ctrl.mask() | l.rst_ctrs.mask());
    if (l.frz.Extract(v) != 0) {
      note_in_use(name, *ref, v, "frz is set (the box is frozen)");
    }
  }
  return absl::OkStatus();
}

absl::Status DirectDevice::Restore(const std::vector<bool>& sockets,
                                   const std::vector<bool>& groups) {
  absl::Status first;
  auto keep_first = [&](absl::Status s) {
    if (!s.ok() && first.ok()) first = std::move(s);
  };
  for (size_t si = 0; si < plan_.sockets.size(); ++si) {
    if (!sockets[si]) continue;
    const direct::ProgramPlan::Socket& socket = plan_.sockets[si];
    const RegisterRef global = direct::GlobalControl(socket.socket, socket.cpu);
    const std::string global_name =
        fmt::format("U_MSR_PMON_GLOBAL_CTL (socket {})", socket.socket);
    keep_first(WriteLogged({.reg = global,
                            .value = keep_[si] | kGlobal.frz_all.Insert(0, 1),
                            .name = global_name,
                            .why = "freeze",
                            .group = -1}));
    for (size_t g = plan_.instances.size(); g-- > 0;) {
      if (!groups[g] || plan_.instances[g].socket != socket.socket) continue;
      for (const SavedRegister& r : saved_[g].regs) {
        keep_first(WriteLogged({.reg = r.ref,
                                .value = r.value,
                                .name = r.name,
                                .why = "restore"}));
      }
    }
    keep_first(WriteLogged({.reg = global,
                            .value = keep_[si] | kGlobal.unfrz_all.Insert(0, 1),
                            .name = global_name,
                            .why = "restore",
                            .group = -1}));
  }
  return first;
}

absl::Status DirectDevice::Program(const ProgramRequest& request) {
  return Program(request, ProgramOptions{});
}

absl::Status DirectDevice::Program(const ProgramRequest& request,
                                   const ProgramOptions& options) {
  if (programmed_) {
    return absl::FailedPreconditionError(
        "the direct device is already programmed: Release it first");
  }
  if (space_ == nullptr) {
    return absl::FailedPreconditionError("the direct device has no registers");
  }
  UNCORE_ASSIGN_OR_RETURN(
      direct::ProgramPlan plan,
      direct::BuildProgramPlan(request, options, topology_));
  plan_ = std::move(plan);
  auto fail = [&](absl::Status s) {
    plan_ = {};
    keep_.clear();
    saved_global_.clear();
    saved_.clear();
    return s;
  };

  // Save every register we will change, and look for another agent.
  keep_.assign(plan_.sockets.size(), 0);
  saved_global_.assign(plan_.sockets.size(), 0);
  for (size_t si = 0; si < plan_.sockets.size(); ++si) {
    const RegisterRef ref =
        direct::GlobalControl(plan_.sockets[si].socket, plan_.sockets[si].cpu);
    uint64_t v = 0;
    if (absl::Status s = Read(ref, &v); !s.ok()) {
      return fail(Annotate(
          s, fmt::format("reading U_MSR_PMON_GLOBAL_CTL (socket {}) to save it",
                         plan_.sockets[si].socket)));
    }
    saved_global_[si] = v;
    keep_[si] = direct::GlobalKeepBits(v);
  }
  saved_.assign(plan_.instances.size(), SavedInstance{});
  std::string in_use;
  for (size_t g = 0; g < plan_.instances.size(); ++g) {
    if (absl::Status s = SaveInstance(static_cast<int>(g), &in_use); !s.ok()) {
      return fail(s);
    }
  }
  if (!in_use.empty() && !request.force) {
    return fail(absl::FailedPreconditionError(fmt::format(
        "the uncore counters appear to be in use by another agent (perf's "
        "uncore driver, another tool): stop it or pass force:{}",
        in_use)));
  }

  // Program; on failure, put back everything touched so far.
  std::vector<RegisterWrite> writes = direct::ProgramWrites(plan_, keep_);
  std::vector<bool> touched_sockets(plan_.sockets.size(), false);
  std::vector<bool> touched_groups(plan_.instances.size(), false);
  for (size_t k = 0; k < writes.size(); ++k) {
    const RegisterWrite& w = writes[k];
    if (absl::Status s = WriteLogged(w); !s.ok()) {
      absl::Status r = Restore(touched_sockets, touched_groups);
      const std::string restored =
          r.ok() ? "every register written so far was restored"
                 : fmt::format("restoring the registers failed too: {}",
                               common::StatusMessage(r));
      return fail(absl::Status(
          s.code(),
          fmt::format("programming step {} of {} failed: {}; {}", k + 1,
                      writes.size(), common::StatusMessage(s), restored)));
    }
    for (size_t si = 0; si < plan_.sockets.size(); ++si) {
      if (plan_.sockets[si].socket == w.reg.socket) touched_sockets[si] = true;
    }
    if (w.group >= 0) touched_groups[w.group] = true;
  }
  program_writes_ = std::move(writes);

  // Snapshot state.
  sockets_.clear();
  counters_.assign(plan_.read_plan.size(), CounterState{});
  for (size_t si = 0; si < plan_.sockets.size(); ++si) {
    auto s = std::make_unique<SocketState>();
    s->socket = plan_.sockets[si].socket;
    s->cpu = plan_.sockets[si].cpu;
    s->freeze = keep_[si] | kGlobal.frz_all.Insert(0, 1);
    s->unfreeze = keep_[si] | kGlobal.unfrz_all.Insert(0, 1);
    sockets_.push_back(std::move(s));
  }
  double min_wrap_s = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < plan_.read_plan.size(); ++i) {
    const auto [g, c] = plan_.read_source[i];
    const PlannedInstance& inst = plan_.instances[g];
    const PlannedCounter& pc = inst.counters[c];
    counters_[i] = {.last_raw = pc.initial & WidthMask(pc.width),
                    .total = 0,
                    .width = pc.width};
    auto it = std::find_if(sockets_.begin(), sockets_.end(),
                           [&](auto& s) { return s->socket == inst.socket; });
    SocketState& s = **it;
    s.entries.push_back(static_cast<int>(i));
    const std::vector<RegisterRef> data = inst.CounterData(pc.counter);
    if (data.size() == 1) {
      registers::MsrRead read;
      read.cpu = data[0].cpu;
      read.msr = data[0].address;
      s.msr_reads.push_back(read);
      s.msr_entries.push_back(static_cast<int>(i));
    } else {
      s.pci.push_back({data[0].pci, data[0].address, static_cast<int>(i)});
    }
    // Wrap time at the largest increment per cycle and the assumed clock.
    double max_inc = 1;
    if (pc.counter != kFixedCounter) {
      max_inc = inst.box->max_increment_per_cycle;
      const spec::EventSpec& e = request.events[pc.event];
      if (e.event != nullptr) {
        max_inc = std::max<double>(max_inc, e.event->max_increment);
      }
    }
    const double wrap_s =
        std::ldexp(1.0, pc.width) / (max_inc * options_.assumed_max_clock_hz);
    min_wrap_s = std::min(min_wrap_s, wrap_s);
  }
  const double period_s = std::max(1e-3, min_wrap_s * options_.wrap_fraction);
  period_ = std::chrono::nanoseconds(static_cast<int64_t>(period_s * 1e9));
  programmed_ = true;
  if (options_.background_extender) StartExtender();
  return absl::OkStatus();
}

absl::Status DirectDevice::SampleSocket(SocketState& s, Snapshot* out) {
  std::lock_guard<std::mutex> lock(s.mu);
  const uint64_t t0 = common::MonotonicNowNs();
  absl::Status freeze =
      space_->WriteMsr(s.cpu, kGlobal.global_control, s.freeze);
  if (!freeze.ok()) {
    frozen_ns_.fetch_add(common::MonotonicNowNs() - t0,
                         std::memory_order_relaxed);
    return Annotate(freeze, fmt::format("snapshot of socket {}: writing "
                                        "U_MSR_PMON_GLOBAL_CTL.frz_all",
                                        s.socket));
  }
  // MSR counters: one read each, batched.
  absl::Status msr_status;
  if (s.msr_reads.size() == 1) {
    registers::MsrRead& r = s.msr_reads[0];
    r.status = space_->ReadMsr(r.cpu, r.msr, &r.value);
    msr_status = r.status;
  } else if (!s.msr_reads.empty()) {
    msr_status = space_->ReadMsrBatch(
        std::span<registers::MsrRead>(s.msr_reads.data(), s.msr_reads.size()));
  }
  // PCI counters: low dword, then high dword, while frozen.
  absl::Status pci_status;
  int pci_failed = -1;
  for (size_t k = 0; k < s.pci.size(); ++k) {
    const PciCounter& p = s.pci[k];
    s.pci[k].ok = false;
    uint32_t lo = 0;
    uint32_t hi = 0;
    absl::Status r = space_->ReadPci(p.fn, p.offset, &lo);
    if (r.ok()) r = space_->ReadPci(p.fn, p.offset + 4, &hi);
    if (!r.ok()) {
      if (pci_status.ok()) {
        pci_status = r;
        pci_failed = static_cast<int>(k);
      }
      continue;
    }
    s.pci[k].raw = (uint64_t{hi} << 32) | uint64_t{lo};
    s.pci[k].ok = true;
  }
  absl::Status unfreeze =
      space_->WriteMsr(s.cpu, kGlobal.global_control, s.unfreeze);
  frozen_ns_.fetch_add(common::MonotonicNowNs() - t0,
                       std::memory_order_relaxed);

  // Fold the raw values into the totals after the unfreeze (the window
  // stays short).  A failed MSR batch trusts none of its values.
  if (msr_status.ok()) {
    for (size_t k = 0; k < s.msr_reads.size(); ++k) {
      CounterState& c = counters_[s.msr_entries[k]];
      const uint64_t raw = s.msr_reads[k].value & WidthMask(c.width);
      c.total += WidthAwareDelta(c.last_raw, raw, c.width);
      c.last_raw = raw;
    }
  }
  for (const PciCounter& p : s.pci) {
    if (!p.ok) continue;
    CounterState& c = counters_[p.entry];
    const uint64_t raw = p.raw & WidthMask(c.width);
    c.total += WidthAwareDelta(c.last_raw, raw, c.width);
    c.last_raw = raw;
  }
  if (!msr_status.ok() || !pci_status.ok() || !unfreeze.ok()) {
    // The error path may allocate.
    if (!msr_status.ok()) {
      int failed = 0;
      for (size_t k = 0; k < s.msr_reads.size(); ++k) {
        if (!s.msr_reads[k].status.ok()) {
          failed = static_cast<int>(k);
          break;
        }
      }
      return Annotate(msr_status,
                      fmt::format("snapshot of socket {}: reading MSR 0x{:04x}",
                                  s.socket, s.msr_reads[failed].msr));
    }
    if (!pci_status.ok()) {
      const PciCounter& p = s.pci[pci_failed];
      return Annotate(
          pci_status,
          fmt::format("snapshot of socket {}: reading PCI {} +0x{:x}", s.socket,
                      p.fn.ToString(), p.offset));
    }
    return Annotate(unfreeze, fmt::format("snapshot of socket {}: writing "
                                          "U_MSR_PMON_GLOBAL_CTL.unfrz_all",
                                          s.socket));
  }
  if (out != nullptr) {
    for (int e : s.entries) out->values[e] = counters_[e].total;
  }
  return absl::OkStatus();
}

absl::Status DirectDevice::TakeSnapshot(Snapshot* out) {
  out->valid = false;
  if (!programmed_) {
    return absl::FailedPreconditionError(
        "TakeSnapshot before Program: nothing is programmed");
  }
  if (out->values.size() != plan_.read_plan.size()) {
    out->values.assign(plan_.read_plan.size(), 0);
  }
  out->timestamp_ns = common::MonotonicNowNs();
  for (const std::unique_ptr<SocketState>& s : sockets_) {
    absl::Status st = SampleSocket(*s, out);
    if (!st.ok()) {
      std::fill(out->values.begin(), out->values.end(), 0);
      return st;
    }
  }
  out->valid = true;
  return absl::OkStatus();
}

absl::Status DirectDevice::ExtendNow() {
  if (!programmed_) {
    return absl::FailedPreconditionError("ExtendNow before Program");
  }
  absl::Status first;
  for (const std::unique_ptr<SocketState>& s : sockets_) {
    absl::Status st = SampleSocket(*s, nullptr);
    if (!st.ok() && first.ok()) first = std::move(st);
  }
  return first;
}

absl::Status DirectDevice::Release() {
  if (!programmed_) return absl::OkStatus();
  StopExtender();
  absl::Status s = Restore(std::vector<bool>(plan_.sockets.size(), true),
                           std::vector<bool>(plan_.instances.size(), true));
  programmed_ = false;
  plan_ = {};
  keep_.clear();
  saved_global_.clear();
  saved_.clear();
  sockets_.clear();
  counters_.clear();
  period_ = std::chrono::nanoseconds(0);
  if (!s.ok()) return Annotate(s, "release");
  return s;
}

absl::Status DirectDevice::extender_status() const {
  std::lock_guard<std::mutex> lock(extender_mu_);
  return extender_status_;
}

void DirectDevice::StartExtender() {
  {
    std::lock_guard<std::mutex> lock(extender_mu_);
    extender_stop_ = false;
    extender_status_ = absl::OkStatus();
  }
  extender_ = common::StartQuietThread([this] { ExtenderLoop(); });
}

void DirectDevice::StopExtender() {
  {
    std::lock_guard<std::mutex> lock(extender_mu_);
    extender_stop_ = true;
  }
  extender_cv_.notify_all();
  if (extender_.joinable()) extender_.join();
}

void DirectDevice::ExtenderLoop() {
  std::unique_lock<std::mutex> lock(extender_mu_);
  while (!extender_cv_.wait_for(lock, period_,
                                [this] { return extender_stop_; })) {
    lock.unlock();
    absl::Status s = ExtendNow();
    lock.lock();
    if (!s.ok() && extender_status_.ok()) extender_status_ = std::move(s);
  }
}

}  // namespace uncore::devices
