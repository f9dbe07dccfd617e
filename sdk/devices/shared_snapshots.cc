#include "sdk/devices/shared_snapshots.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "sdk/common/asymmetric_fence.h"
#include "sdk/common/clock.h"
#include "sdk/common/cpu_relax.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/device.h"

namespace uncore::devices {

SharedSnapshots::SharedSnapshots(Device* device, Mode mode)
    : device_(device), mode_(mode), num_values_(device->read_plan().size()) {
  common::EnableAsymmetricFences();
  for (Slot& slot : ring_) {
    slot.values = std::make_unique<std::atomic<uint64_t>[]>(num_values_);
    for (size_t i = 0; i < num_values_; ++i) {
      slot.values[i].store(0, std::memory_order_relaxed);
    }
  }
}

absl::Status SharedSnapshots::InvalidSnapshot() {
  return absl::DataLossError("the snapshot is marked invalid");
}

absl::Status SharedSnapshots::TakeShared(Snapshot* out, Trace* trace) {
  if (mode_ == Mode::kEach) {
    taken_.fetch_add(1, std::memory_order_relaxed);
    absl::Status status = device_->TakeSnapshot(out);
    if (observer_ != nullptr && status.ok() && out->valid) {
      observer_->OnSnapshot(*out);
    }
    return status;
  }
  if (out->values.size() != num_values_) {
    out->values.assign(num_values_, 0);
    // Sized now: the solo reading, if it is still solo, serves it.
    if (solo_.load(std::memory_order_relaxed) && trace == nullptr) {
      return Take(out, trace);
    }
  }
  uint64_t arrived = sequence_.load(std::memory_order_seq_cst);
  if (trace != nullptr) *trace = {TraceNumber(arrived), 0, false};
  for (;;) {
    // The publication (a phase's idle number) that will serve this call.
    uint64_t serving = 0;
    if ((arrived & kStateMask) == kJoinable) {
      // Snapshot `arrived` is claimed and its leader waits for threads to
      // join: its reading comes after this call arrived.
      serving = IdleOf(arrived) + kPhase;
    } else {
      // The first snapshot that may serve this call is claimed at an idle
      // number reached after the call arrived.
      const uint64_t idle =
          IdleOf(arrived) + ((arrived & kStateMask) != 0 ? kPhase : 0);
      if (idle != arrived) WaitFor(idle);
      // A leader whose last snapshot served others waits for joiners; one
      // alone reads at once, claimed and reading in one step.
      const bool contended =
          shared_.load(std::memory_order_relaxed) !=
          shared_at_last_lead_.load(std::memory_order_relaxed);
      uint64_t expected = idle;
      if (sequence_.compare_exchange_strong(
              expected, idle + (contended ? kJoinable : kReading),
              std::memory_order_seq_cst)) {
        if (trace != nullptr) trace->served = TraceNumber(idle + kPhase);
        return Lead(idle, contended, out);
      }
      // Another thread claimed snapshot `idle` after this call arrived: it
      // serves this call too.
      serving = idle + kPhase;
    }
    WaitFor(serving);
    if (CopyPublished(serving, out)) {
      shared_.fetch_add(1, std::memory_order_relaxed);
      if (trace != nullptr) trace->served = TraceNumber(serving);
      return out->valid ? absl::OkStatus() : FailedShared();
    }
    // Its slot was reused while this thread was away: every snapshot from
    // now on is after the call, so start over.
    retaken_.fetch_add(1, std::memory_order_relaxed);
    if (trace != nullptr) trace->retaken = true;
    arrived = sequence_.load(std::memory_order_seq_cst);
  }
}

inline absl::Status SharedSnapshots::Lead(uint64_t idle, bool contended,
                                          Snapshot* out) {
  // When the last snapshot served other threads too, give the threads it
  // released a moment to reach their next boundary and join this one: a
  // quarter of the last snapshot's duration, so the wait costs little and
  // pays where reading the counters is slow (the msr driver, IPIs).
  // Only contended snapshots are timed: one thread alone pays no clock
  // reads here, and its claim was its reading's start (one locked
  // instruction for both).
  shared_at_last_lead_.store(shared_.load(std::memory_order_relaxed),
                             std::memory_order_relaxed);
  uint64_t start = 0;
  if (contended) {
    start = common::MonotonicNowNs();
    const uint64_t until = start + last_duration_ns_ / 4;
    while (start < until) {
      common::CpuRelax();
      start = common::MonotonicNowNs();
    }
    // From here on, a thread that arrives cannot join: the reading begins
    // (a full fence: the counters are read after the store).
    sequence_.store(idle + kReading, std::memory_order_seq_cst);
  }
  absl::Status status = device_->TakeSnapshot(out);
  if (contended) last_duration_ns_ = common::MonotonicNowNs() - start;
  // One leader at a time writes it: no read-modify-write (a locked add
  // right after the device's system call showed as half of this function).
  taken_.store(taken_.load(std::memory_order_relaxed) + 1,
               std::memory_order_relaxed);
  const bool valid = status.ok() && out->valid;
  if (valid && observer_ != nullptr) observer_->OnSnapshot(*out);
  if (!valid) [[unlikely]] {
    KeepError(status);
  }
  const uint64_t done = idle + kPhase;
  Slot& slot = SlotOf(done);
  // A seqlock without fences (ThreadSanitizer does not model them): the
  // values are release stores, so a reader that sees a new value (an
  // acquire load) also sees the stamp cleared before it.
  slot.stamp.store(0, std::memory_order_relaxed);
  for (size_t i = 0; i < num_values_; ++i) {
    slot.values[i].store(valid ? out->values[i] : 0, std::memory_order_release);
  }
  slot.timestamp_ns.store(out->timestamp_ns, std::memory_order_release);
  slot.valid.store(valid, std::memory_order_release);
  slot.stamp.store(done, std::memory_order_release);
  // Publish, then wake the sleepers, if any.  A waiter counts itself, then
  // (common::HeavyFence) makes this thread's store visible or its count
  // visible to this load, before it checks the sequence number: a waiter
  // this load misses sees `done` and does not sleep.  This side's fence is
  // the light one (no locked instruction) where membarrier serves.
  if (common::LightFencesEnabled()) {
    sequence_.store(done, std::memory_order_release);
    common::LightFence();
  } else {
    sequence_.store(done, std::memory_order_seq_cst);
  }
  if (waiters_.load(std::memory_order_seq_cst) != 0) {
    published_.fetch_add(1, std::memory_order_seq_cst);
    published_.notify_all();
  }
  if (!valid && status.ok()) {
    return absl::DataLossError("the snapshot is marked invalid");
  }
  return status;
}

bool SharedSnapshots::CopyPublished(uint64_t done, Snapshot* out) const {
  const Slot& slot = SlotOf(done);
  if (slot.stamp.load(std::memory_order_acquire) != done) return false;
  for (size_t i = 0; i < num_values_; ++i) {
    out->values[i] = slot.values[i].load(std::memory_order_acquire);
  }
  out->timestamp_ns = slot.timestamp_ns.load(std::memory_order_acquire);
  out->valid = slot.valid.load(std::memory_order_acquire);
  return slot.stamp.load(std::memory_order_relaxed) == done;
}

void SharedSnapshots::WaitFor(uint64_t target) const {
  // A snapshot takes from a few hundred nanoseconds (the simulator) to many
  // microseconds (the msr driver, perf reads of another CPU): spin through
  // the short ones, then sleep (a futex) so that the thread taking the
  // snapshot gets the CPU when threads outnumber cores.
  for (int spin = 0; spin < 64; ++spin) {
    if (sequence_.load(std::memory_order_acquire) >= target) return;
    common::CpuRelax();
  }
  // Then let another thread of this CPU run a little (the one taking the
  // snapshot, when threads outnumber cores), before sleeping.
  for (int turn = 0; turn < 4; ++turn) {
    if (sequence_.load(std::memory_order_acquire) >= target) return;
    std::this_thread::yield();
  }
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  // The publisher's fence may be light: this side's heavy one (Lead).
  common::HeavyFence();
  for (;;) {
    const uint32_t published = published_.load(std::memory_order_seq_cst);
    if (sequence_.load(std::memory_order_seq_cst) >= target) break;
    published_.wait(published, std::memory_order_seq_cst);
  }
  waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void SharedSnapshots::AllowSolo() {
  if (mode_ == Mode::kShared && observer_ == nullptr &&
      !solo_over_.load(std::memory_order_relaxed)) {
    solo_.store(true, std::memory_order_relaxed);
  }
}

void SharedSnapshots::EndSolo() {
  if (solo_over_.load(std::memory_order_acquire)) return;
  solo_.store(false, std::memory_order_seq_cst);
  // The heavy side of the handshake in Take: a solo reading that did not
  // see the end is seen under way here.
  common::HeavyFence();
  for (int spin = 0; solo_reading_.load(std::memory_order_acquire); ++spin) {
    if (spin < 64) {
      common::CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
  solo_over_.store(true, std::memory_order_release);
}

void SharedSnapshots::KeepError(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(error_mu_);
  last_error_ = status.ok() ? "the snapshot is marked invalid"
                            : common::StatusMessage(status);
}

absl::Status SharedSnapshots::FailedShared() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  // The leader's own message: a report merges the failures of one cause.
  return absl::DataLossError(last_error_);
}

}  // namespace uncore::devices
