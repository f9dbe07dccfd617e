// SharedSnapshots: many threads that need a device's counters at once share
// one snapshot instead of queueing for one each.
//
//   SharedSnapshots shared(&device);        // a programmed Device
//   Snapshot s(device.read_plan().size());
//   UNCORE_RETURN_IF_ERROR(shared.Take(&s)); // from any number of threads
//
// The protocol (docs/concurrency.md): one sequence number says whether a
// snapshot is claimed and whether its reading has begun.  A thread that
// finds none claimed claims the next (one compare-and-swap); if another
// thread won, that snapshot was claimed after this thread arrived, so it
// serves this thread too: the thread waits for it and copies its values
// from a ring of published results (a seqlock per slot).  A thread that
// finds a snapshot claimed joins it if its reading has not begun; else it
// cannot use it (it may have read the counters before the thread's
// boundary): it waits for that one to finish, then claims or joins the
// next.  A leader whose previous snapshot served other threads claims a
// joinable snapshot and waits up to a quarter of that snapshot's duration
// before reading, so that the threads it woke can join; a leader alone
// claims a snapshot whose reading begins at once (the claim is the only
// locked instruction of an uncontended snapshot: the publication's fence
// is light, common/asymmetric_fence.h, and a thread about to sleep pays
// the heavy one).
//
// Guarantees:
// - The counters of a snapshot a thread receives were read after the thread
//   called Take, and before it returned.
// - One snapshot is under way at a time, so freeze windows (direct) and
//   passes of group reads (perf) never overlap or unfreeze one another.
// - No thread waits behind more than the one snapshot that was already
//   reading when it arrived, plus the one that serves it.  Waiting is blocking
//   (a thread depends on the snapshot's taker finishing): it spins briefly,
//   then sleeps on a futex until the next snapshot is published.  A reader
//   that was descheduled for longer than kRingSize further snapshots takes
//   one of its own instead.
// - Take allocates nothing and takes no lock; the only system calls are the
//   device's own reads, a futex wait when a thread waits longer than a short
//   spin, and one futex wake per snapshot that has sleeping waiters.
// - Solo (AllowSolo, until EndSolo): while its owner knows that one thread
//   alone calls Take, that thread reads the device without claiming a
//   snapshot (no locked instruction: a plain store and the light side of
//   an asymmetric fence mark the reading).  EndSolo, called by every other
//   thread before its first Take, waits for a solo reading under way, so
//   readings still never overlap.
// - With Mode::kEach every Take calls the device itself (the design before
//   shared snapshots: the direct device serializes its freeze windows with a
//   per-socket lock); kept as the baseline of tests/bench.
#ifndef UNCORE_SDK_DEVICES_SHARED_SNAPSHOTS_H_
#define UNCORE_SDK_DEVICES_SHARED_SNAPSHOTS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "sdk/common/asymmetric_fence.h"
#include "sdk/devices/device.h"

namespace uncore::devices {

// Sees every snapshot a SharedSnapshots takes on its device (a trace's
// counter tracks).  Called by the thread that took it, right after the
// device's read and before any thread receives it; in the order taken
// (Mode::kShared: one snapshot at a time; Mode::kEach: concurrently, in any
// order).  Must be quick (other threads may be waiting for the snapshot)
// and must not take snapshots itself.
class SnapshotObserver {
 public:
  virtual ~SnapshotObserver() = default;
  virtual void OnSnapshot(const Snapshot& snapshot) = 0;
};

class SharedSnapshots {
 public:
  enum class Mode {
    kShared,  // concurrent callers share snapshots (the default)
    kEach,    // every caller takes its own (the old design; a baseline)
  };
  static constexpr int kRingSize = 32;

  // `device` is programmed, outlives this object and keeps its read plan.
  explicit SharedSnapshots(Device* device, Mode mode = Mode::kShared);
  SharedSnapshots(const SharedSnapshots&) = delete;
  SharedSnapshots& operator=(const SharedSnapshots&) = delete;

  // Where a call stood in the sequence (for tests of the waiting bound):
  // the sequence number it found when it arrived, and the one that
  // published the snapshot it got (odd numbers are snapshots under way).
  struct Trace {
    uint64_t arrived = 0;
    uint64_t served = 0;
    bool retaken = false;  // it started over at least once
  };

  // A snapshot begun after this call began.  `out` gets read_plan().size()
  // values.  The solo reading (AllowSolo) is inline: a boundary on perf
  // costs mostly what surrounds its read(), each call and return included.
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Take(Snapshot* out,
                                                 Trace* trace = nullptr) {
    if (solo_.load(std::memory_order_relaxed) && trace == nullptr &&
        out->values.size() == num_values_) [[likely]] {
      // Mark the reading, then check that it is still solo: EndSolo stores
      // the end, then looks at the mark (an asymmetric store-load
      // handshake), so either this sees the end or EndSolo waits for this
      // reading.
      solo_reading_.store(true, std::memory_order_relaxed);
      common::LightFence();
      if (solo_.load(std::memory_order_relaxed)) [[likely]] {
        absl::Status status = device_->TakeSnapshot(out);
        // One writer: the solo thread, then leaders after EndSolo's wait.
        taken_.store(taken_.load(std::memory_order_relaxed) + 1,
                     std::memory_order_relaxed);
        solo_reading_.store(false, std::memory_order_release);
        if (status.ok() && !out->valid) [[unlikely]] {
          return InvalidSnapshot();
        }
        return status;
      }
      solo_reading_.store(false, std::memory_order_release);
    }
    return TakeShared(out, trace);
  }

  // Snapshots taken on the device, and Take calls served by another
  // thread's snapshot.
  uint64_t snapshots_taken() const {
    return taken_.load(std::memory_order_relaxed);
  }
  uint64_t snapshots_shared() const {
    return shared_.load(std::memory_order_relaxed);
  }
  // Calls that found the result meant for them overwritten (they were away
  // for kRingSize snapshots) and started over.
  uint64_t snapshots_retaken() const {
    return retaken_.load(std::memory_order_relaxed);
  }
  Mode mode() const { return mode_; }
  // Set before the first Take; nullptr: none.  Sees valid snapshots only.
  void SetObserver(SnapshotObserver* observer) { observer_ = observer; }
  // Before the first Take, by an owner that will call EndSolo on every
  // thread but one before that thread's first Take: until then Take reads
  // the device without the protocol's claim.  Not with an observer or
  // Mode::kEach (ignored).
  void AllowSolo();
  // Ends solo reading for good and waits until a solo reading under way
  // has finished; cheap once ended.  Safe from any thread, any number of
  // times.
  void EndSolo();
  bool solo() const { return solo_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    // 0 while being written; else the sequence number that published it.
    std::atomic<uint64_t> stamp{0};
    std::atomic<uint64_t> timestamp_ns{0};
    std::atomic<bool> valid{false};
    std::unique_ptr<std::atomic<uint64_t>[]> values;
  };

  // The sequence number: snapshot k is idle at 4k, claimed at 4k+1
  // (joinable: its leader waits for threads to join) or 4k+2 (its reading
  // begins: no thread joins it), and published at 4k+4.  Traces show the
  // old numbering: 2k idle, 2k+1 claimed, 2k+2 published.
  static constexpr uint64_t kPhase = 4;
  static constexpr uint64_t kStateMask = 3;
  static constexpr uint64_t kJoinable = 1;
  static constexpr uint64_t kReading = 2;
  // Take, but for its inline solo reading.
  absl::Status TakeShared(Snapshot* out, Trace* trace);
  ABSL_ATTRIBUTE_COLD static absl::Status InvalidSnapshot();
  static uint64_t IdleOf(uint64_t sequence) { return sequence & ~kStateMask; }
  static uint64_t TraceNumber(uint64_t sequence) {
    return sequence / kPhase * 2 + ((sequence & kStateMask) != 0 ? 1 : 0);
  }
  // Takes the snapshot claimed at `idle` on the device into `out` and
  // publishes it (at idle + kPhase).
  // Inlined into Take: every return after the device's system call costs
  // (the boundary's time on perf is mostly what follows its read()).
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Lead(uint64_t idle, bool contended,
                                                 Snapshot* out);
  // Copies the snapshot published at `done`; false when its slot has been
  // reused since.
  bool CopyPublished(uint64_t done, Snapshot* out) const;
  // Waits until the sequence number is at least `target`.
  void WaitFor(uint64_t target) const;
  Slot& SlotOf(uint64_t done) { return ring_[(done / kPhase) % kRingSize]; }
  const Slot& SlotOf(uint64_t done) const {
    return ring_[(done / kPhase) % kRingSize];
  }
  absl::Status FailedShared() const;
  // A failed snapshot's message, for the threads it served (FailedShared);
  // a call, off the path of a good snapshot.
  ABSL_ATTRIBUTE_NOINLINE void KeepError(const absl::Status& status);

  Device* const device_;
  const Mode mode_;
  SnapshotObserver* observer_ = nullptr;
  const size_t num_values_;
  std::atomic<uint64_t> sequence_{0};
  // The leader's own (one leader at a time; handed over through sequence_).
  uint64_t last_duration_ns_ = 0;
  // shared_ when the last leader began: a claimer that finds it changed
  // leads a joinable snapshot (written by leaders, read by claimers).
  std::atomic<uint64_t> shared_at_last_lead_{0};
  // Sleeping waiters: they wait on `published_` (a 32-bit futex word that
  // every publication bumps) while `waiters_` says someone sleeps.
  mutable std::atomic<uint32_t> published_{0};
  mutable std::atomic<int> waiters_{0};
  std::array<Slot, kRingSize> ring_;
  // Solo reading (AllowSolo): allowed; under way; ended and waited for.
  std::atomic<bool> solo_{false};
  std::atomic<bool> solo_reading_{false};
  std::atomic<bool> solo_over_{false};
  std::atomic<uint64_t> taken_{0};
  std::atomic<uint64_t> shared_{0};
  std::atomic<uint64_t> retaken_{0};

  mutable std::mutex error_mu_;  // the error path only
  std::string last_error_;       // guarded by error_mu_
};

}  // namespace uncore::devices

#endif  // UNCORE_SDK_DEVICES_SHARED_SNAPSHOTS_H_
