#include "sdk/devices/engine/register_engine.h"

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

namespace uncore::devices::engine {

using ::uncore::platforms::AccessSpace;
namespace {

absl::Status Annotate(const absl::Status& s, std::string_view context) {
  return absl::Status(s.code(),
                      fmt::format("{}: {}", context, common::StatusMessage(s)));
}

uint64_t WidthMask(uint8_t width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// Whether a write's value can be resolved: a write that keeps bits needs its
// register saved.
bool Resolvable(const SocketProgram& sp, const ProgramWrite& w) {
  return w.keep == 0 || sp.FindSaved(w.reg) >= 0;
}

// The planner's contract (register_program.h), checked before anything is
// read or written: a broken planner gets an error, never out-of-range
// indices or a write to a register nobody saved.
absl::Status CheckProgram(const RegisterProgram& program) {
  auto bad = [](std::string what) {
    return absl::InternalError(
        fmt::format("the platform's planner made a malformed program: {}; "
                    "please report it",
                    what));
  };
  std::vector<bool> read(program.read_plan.size(), false);
  for (const SocketProgram& sp : program.sockets) {
    for (const ProgramWrite& w : sp.setup) {
      if (!Resolvable(sp, w)) {
        return bad(
            fmt::format("setup write {} keeps bits of a register it "
                        "did not save",
                        w.name));
      }
    }
    for (const ReleaseStep& step : sp.release) {
      if (step.kind == ReleaseStep::Kind::kRestore
              ? step.saved < 0 ||
                    step.saved >= static_cast<int>(sp.saved.size())
              : !Resolvable(sp, step.write)) {
        return bad(
            fmt::format("release step of socket {} names no saved "
                        "register",
                        sp.socket));
      }
    }
    if (sp.reads.empty()) continue;
    if (sp.FindSaved(sp.open_window.reg) < 0 ||
        sp.FindSaved(sp.close_window.reg) < 0) {
      return bad(
          fmt::format("socket {} reads counters but its snapshot "
                      "window writes a register it did not save",
                      sp.socket));
    }
    for (const CounterRead& c : sp.reads) {
      if (c.entry < 0 || c.entry >= static_cast<int>(read.size()) ||
          read[c.entry]) {
        return bad(
            fmt::format("read-plan entry {} is out of range or read "
                        "twice",
                        c.entry));
      }
      read[c.entry] = true;
    }
  }
  for (size_t e = 0; e < read.size(); ++e) {
    if (!read[e]) {
      return bad(fmt::format("read-plan entry {} is never read", e));
    }
  }
  return absl::OkStatus();
}

}  // namespace

RegisterEngine::RegisterEngine(registers::RegisterSpace* space, Options options)
    : space_(space), options_(options) {}

RegisterEngine::~RegisterEngine() { Release().IgnoreError(); }

absl::Status RegisterEngine::Read(const RegisterRef& ref, uint64_t* value) {
  if (ref.space == AccessSpace::kMsr) {
    return space_->ReadMsr(ref.cpu, ref.address, value);
  }
  uint32_t v = 0;
  absl::Status s = space_->ReadPci(ref.pci, ref.address, &v);
  *value = v;
  return s;
}

absl::Status RegisterEngine::Write(const RegisterRef& ref, uint64_t value) {
  if (ref.space == AccessSpace::kMsr) {
    return space_->WriteMsr(ref.cpu, ref.address, value);
  }
  if (value > 0xFFFFFFFFu) {
    return absl::InternalError(
        fmt::format("0x{:x} does not fit a 32-bit PCI register", value));
  }
  return space_->WritePci(ref.pci, ref.address, static_cast<uint32_t>(value));
}

absl::Status RegisterEngine::WriteLogged(const RegisterRef& ref, uint64_t value,
                                         const std::string& name,
                                         std::string_view why) {
  absl::Status s = Write(ref, value);
  if (s.ok()) return s;
  return Annotate(s, fmt::format("writing {} at {} <- 0x{:08x} ({})", name,
                                 ref.Location(), value, why));
}

uint64_t RegisterEngine::Resolved(size_t si, const ProgramWrite& w) const {
  const int k = program_.sockets[si].FindSaved(w.reg);
  return w.Resolve(k < 0 ? 0 : saved_values_[si][k]);
}

bool RegisterEngine::GroupTouched(const std::vector<bool>& groups,
                                  int group) const {
  return group >= 0 && group < static_cast<int>(groups.size()) && groups[group];
}

absl::Status RegisterEngine::RunRelease(const std::vector<bool>& sockets,
                                        const std::vector<bool>& groups) {
  absl::Status first;
  auto keep_first = [&](absl::Status s) {
    if (!s.ok() && first.ok()) first = std::move(s);
  };
  for (size_t si = 0; si < program_.sockets.size(); ++si) {
    if (!sockets[si]) continue;
    const SocketProgram& sp = program_.sockets[si];
    for (const ReleaseStep& step : sp.release) {
      if (step.kind == ReleaseStep::Kind::kWrite) {
        const ProgramWrite& w = step.write;
        if (w.group >= 0 && !GroupTouched(groups, w.group)) continue;
        keep_first(WriteLogged(w.reg, Resolved(si, w), w.name, w.why));
        continue;
      }
      const SavedRegister& r = sp.saved[step.saved];
      if (r.group >= 0 && !GroupTouched(groups, r.group)) continue;
      keep_first(WriteLogged(r.reg,
                             saved_values_[si][step.saved] & r.restore_mask,
                             r.name, "restore"));
    }
  }
  return first;
}

void RegisterEngine::Clear() {
  program_ = {};
  saved_values_.clear();
  num_groups_ = 0;
  sockets_.clear();
  counters_.clear();
  period_ = std::chrono::nanoseconds(0);
}

absl::Status RegisterEngine::Program(const ProgramRequest& request) {
  // Before Plan, which may keep state about the program it makes.
  if (programmed_) {
    return absl::FailedPreconditionError(fmt::format(
        "the {} device is already programmed: Release it first", name()));
  }
  UNCORE_ASSIGN_OR_RETURN(RegisterProgram program, Plan(request));
  return Load(std::move(program), request.force);
}

absl::Status RegisterEngine::Load(RegisterProgram program, bool force) {
  if (programmed_) {
    return absl::FailedPreconditionError(fmt::format(
        "the {} device is already programmed: Release it first", name()));
  }
  if (space_ == nullptr) {
    return absl::FailedPreconditionError(
        fmt::format("the {} device has no registers", name()));
  }
  UNCORE_RETURN_IF_ERROR(CheckProgram(program));
  program_ = std::move(program);
  auto fail = [&](absl::Status s) {
    Clear();
    return s;
  };

  // Save every register the program changes, and look for another agent.
  std::string in_use;
  saved_values_.assign(program_.sockets.size(), {});
  int max_group = -1;
  for (size_t si = 0; si < program_.sockets.size(); ++si) {
    const SocketProgram& sp = program_.sockets[si];
    std::vector<uint64_t>& values = saved_values_[si];
    values.assign(sp.saved.size(), 0);
    for (size_t k = 0; k < sp.saved.size(); ++k) {
      const SavedRegister& r = sp.saved[k];
      max_group = std::max(max_group, r.group);
      if (absl::Status s = Read(r.reg, &values[k]); !s.ok()) {
        return fail(
            Annotate(s, fmt::format("reading {} at {} on socket {} to save it",
                                    r.name, r.reg.Location(), sp.socket)));
      }
      if ((values[k] & r.in_use_bits) != 0) {
        in_use +=
            fmt::format("\n  {}: {} at {} = 0x{:08x}, {}", r.owner, r.name,
                        r.reg.Location(), values[k], r.in_use_reason);
      }
    }
    for (const ProgramWrite& w : sp.setup) {
      max_group = std::max(max_group, w.group);
    }
    for (const ReleaseStep& step : sp.release) {
      max_group = std::max(max_group, step.write.group);
    }
  }
  num_groups_ = max_group + 1;
  if (!in_use.empty() && !force) {
    return fail(absl::FailedPreconditionError(fmt::format(
        "the uncore counters appear to be in use by another agent (perf's "
        "uncore driver, another tool): stop it or pass force:{}",
        in_use)));
  }

  // Program; on failure, put back everything touched so far.
  size_t steps = 0;
  for (const SocketProgram& sp : program_.sockets) steps += sp.setup.size();
  std::vector<bool> touched_sockets(program_.sockets.size(), false);
  std::vector<bool> touched_groups(num_groups_, false);
  std::vector<RegisterWrite> done;
  done.reserve(steps);
  for (size_t si = 0; si < program_.sockets.size(); ++si) {
    for (const ProgramWrite& w : program_.sockets[si].setup) {
      // Touched before the write: a failed write may still have landed.
      touched_sockets[si] = true;
      if (w.group >= 0) touched_groups[w.group] = true;
      const uint64_t value = Resolved(si, w);
      if (absl::Status s = WriteLogged(w.reg, value, w.name, w.why); !s.ok()) {
        absl::Status r = RunRelease(touched_sockets, touched_groups);
        const std::string restored =
            r.ok() ? "every register written so far was restored"
                   : fmt::format("restoring the registers failed too: {}",
                                 common::StatusMessage(r));
        return fail(absl::Status(
            s.code(), fmt::format("programming step {} of {} failed: {}; {}",
                                  done.size() + 1, steps,
                                  common::StatusMessage(s), restored)));
      }
      done.push_back({.reg = w.reg,
                      .value = value,
                      .name = w.name,
                      .why = w.why,
                      .group = w.group});
    }
  }
  program_writes_ = std::move(done);

  // Snapshot state.
  sockets_.clear();
  counters_.assign(program_.read_plan.size(), CounterState{});
  double min_wrap_s = std::numeric_limits<double>::infinity();
  for (size_t si = 0; si < program_.sockets.size(); ++si) {
    const SocketProgram& sp = program_.sockets[si];
    auto s = std::make_unique<SocketState>();
    s->socket = sp.socket;
    s->open_reg = sp.open_window.reg;
    s->close_reg = sp.close_window.reg;
    s->open = Resolved(si, sp.open_window);
    s->close = Resolved(si, sp.close_window);
    s->open_name = sp.open_window.name;
    s->close_name = sp.close_window.name;
    for (const CounterRead& c : sp.reads) {
      counters_[c.entry] = {.last_raw = c.initial & WidthMask(c.width),
                            .total = 0,
                            .width = c.width};
      s->entries.push_back(c.entry);
      if (c.reg.space == AccessSpace::kMsr) {
        registers::MsrRead read;
        read.cpu = c.reg.cpu;
        read.msr = c.reg.address;
        s->msr_reads.push_back(read);
        s->msr_entries.push_back(c.entry);
      } else {
        s->pci.push_back({c.reg.pci, c.reg.address, c.entry});
      }
      const double wrap_s =
          std::ldexp(1.0, c.width) / (std::max(1.0, c.max_increment_per_cycle) *
                                      options_.assumed_max_clock_hz);
      min_wrap_s = std::min(min_wrap_s, wrap_s);
    }
    sockets_.push_back(std::move(s));
  }
  const double period_s = std::max(1e-3, min_wrap_s * options_.wrap_fraction);
  period_ = std::chrono::nanoseconds(
      static_cast<int64_t>(std::min(period_s, 1e6) * 1e9));
  programmed_ = true;
  if (options_.background_extender && !program_.read_plan.empty()) {
    StartExtender();
  }
  return absl::OkStatus();
}

absl::Status RegisterEngine::SampleSocket(SocketState& s, Snapshot* out) {
  std::lock_guard<std::mutex> lock(s.mu);
  const uint64_t t0 = common::MonotonicNowNs();
  absl::Status open = Write(s.open_reg, s.open);
  if (!open.ok()) {
    frozen_ns_.fetch_add(common::MonotonicNowNs() - t0,
                         std::memory_order_relaxed);
    return Annotate(open, fmt::format("snapshot of socket {}: writing {}",
                                      s.socket, s.open_name));
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
  // PCI counters: low dword, then high dword, inside the window.
  absl::Status pci_status;
  int pci_failed = -1;
  for (size_t k = 0; k < s.pci.size(); ++k) {
    PciCounter& p = s.pci[k];
    p.ok = false;
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
    p.raw = (uint64_t{hi} << 32) | uint64_t{lo};
    p.ok = true;
  }
  // Closed even when a read failed.
  absl::Status close = Write(s.close_reg, s.close);
  frozen_ns_.fetch_add(common::MonotonicNowNs() - t0,
                       std::memory_order_relaxed);

  // Fold the raw values into the totals after the window (it stays short).
  // A failed MSR batch trusts none of its values.
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
  if (!msr_status.ok() || !pci_status.ok() || !close.ok()) {
    // The error path may allocate.
    if (!msr_status.ok()) {
      size_t failed = 0;
      for (size_t k = 0; k < s.msr_reads.size(); ++k) {
        if (!s.msr_reads[k].status.ok()) {
          failed = k;
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
    return Annotate(close, fmt::format("snapshot of socket {}: writing {}",
                                       s.socket, s.close_name));
  }
  if (out != nullptr) {
    for (int e : s.entries) out->values[e] = counters_[e].total;
  }
  return absl::OkStatus();
}

absl::Status RegisterEngine::TakeSnapshot(Snapshot* out) {
  out->valid = false;
  if (!programmed_) {
    return absl::FailedPreconditionError(
        "TakeSnapshot before Program: nothing is programmed");
  }
  if (out->values.size() != program_.read_plan.size()) {
    out->values.assign(program_.read_plan.size(), 0);
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

absl::Status RegisterEngine::ExtendNow() {
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

absl::Status RegisterEngine::Release() {
  if (!programmed_) return absl::OkStatus();
  StopExtender();
  absl::Status s = RunRelease(std::vector<bool>(program_.sockets.size(), true),
                              std::vector<bool>(num_groups_, true));
  programmed_ = false;
  Clear();
  if (!s.ok()) return Annotate(s, "release");
  return s;
}

absl::Status RegisterEngine::extender_status() const {
  std::lock_guard<std::mutex> lock(extender_mu_);
  return extender_status_;
}

void RegisterEngine::StartExtender() {
  {
    std::lock_guard<std::mutex> lock(extender_mu_);
    extender_stop_ = false;
    extender_status_ = absl::OkStatus();
  }
  extender_ = common::StartQuietThread([this] { ExtenderLoop(); });
}

void RegisterEngine::StopExtender() {
  {
    std::lock_guard<std::mutex> lock(extender_mu_);
    extender_stop_ = true;
  }
  extender_cv_.notify_all();
  if (extender_.joinable()) extender_.join();
}

void RegisterEngine::ExtenderLoop() {
  std::unique_lock<std::mutex> lock(extender_mu_);
  while (!extender_cv_.wait_for(lock, period_,
                                [this] { return extender_stop_; })) {
    lock.unlock();
    absl::Status s = ExtendNow();
    lock.lock();
    if (!s.ok() && extender_status_.ok()) extender_status_ = std::move(s);
  }
}

}  // namespace uncore::devices::engine
