// The hot path: Begin, End and the markers, the rule's steps (Step, Apply,
// and the fast path OpenFast/CloseFast, both through path_rule.h and
// ApplyStep), and the entry points that inline them (internal::BeginRegion,
// EndRegion ...).  recorder.h says what a boundary guarantees;
// docs/concurrency.md how.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/common/cpu_relax.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/shared_snapshots.h"
#include "sdk/regions/boundary_hook.h"
#include "sdk/regions/names.h"
#include "sdk/regions/path_rule.h"
#include "sdk/regions/recorder.h"
#include "sdk/regions/recorder_state.h"
#include "sdk/regions/thread_slots.h"
#include "uncore/region.h"

namespace uncore {
namespace regions {

namespace {

using path_rule::kPathLock;

std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_refused{0};

}  // namespace

uint64_t DroppedBoundaries() { return g_dropped.load(); }
uint64_t RefusedReentrantRegions() { return g_refused.load(); }

inline Recorder::ThreadState* Recorder::StateOf(ThreadSlot& slot) {
  if (slot.generation == generation_) [[likely]] {
    return static_cast<ThreadState*>(slot.state);
  }
  return NewStateOf(slot);
}

inline int Recorder::PathOf(ThreadState& t, int parent, int name_id,
                            PathState** state) {
  ThreadState::FastPath& fast =
      t.fast_paths[static_cast<uint32_t>(name_id * 7 + parent) %
                   t.fast_paths.size()];
  if (fast.parent == parent && fast.name_id == name_id) [[likely]] {
    *state = fast.state;
    return fast.path;
  }
  const int path = SlowPathOf(t, parent, name_id, state);
  fast = {parent, name_id, path, *state};
  return path;
}

inline Recorder::Accumulator& Recorder::AccumulatorOf(ThreadState& t,
                                                      int path) {
  if (path < static_cast<int>(t.accumulators.size()) &&
      t.accumulators[path] != nullptr) [[likely]] {
    return *t.accumulators[path];
  }
  return NewAccumulatorOf(t, path);
}

void Recorder::WaitForPathLock(PathState& p) {
  // The holder takes one snapshot and unlocks with a plain store (no wake-up
  // call on the boundary path): spin through a short one, yield (the holder
  // may need this CPU), then nap in 20 us steps.  (Sleeping on a futex as
  // SharedSnapshots::WaitFor does, with a waiter count and the heavy fence,
  // cut 16 threads on perf msr/tsc/ from 7.4 M pairs/s to 36 k: see
  // docs/concurrency.md, "The path lock".)
  for (int spin = 0; spin < 64; ++spin) {
    if (!path_rule::Locked(p.word.load(std::memory_order_acquire))) return;
    common::CpuRelax();
  }
  for (int turn = 0; turn < 16; ++turn) {
    if (!path_rule::Locked(p.word.load(std::memory_order_acquire))) return;
    std::this_thread::yield();
  }
  while (path_rule::Locked(p.word.load(std::memory_order_acquire))) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

bool Recorder::Step(Boundary& b, PathState& p, int path_id, Accumulator* acc,
                    path_rule::Event e) {
  uint64_t w = p.word.load(std::memory_order_acquire);
  for (;;) {
    if (path_rule::Locked(w)) {
      WaitForPathLock(p);
      w = p.word.load(std::memory_order_acquire);
      continue;
    }
    const path_rule::Step s = path_rule::StepWord(w, e);
    if (!p.word.compare_exchange_weak(w, s.next, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      continue;
    }
    if (!s.transition) return false;
    Transition& tr = b.transitions[b.count++];
    tr = {.path = &p,
          .accumulator = acc,
          .step = s,
          .open_ns = 0,
          .path_id = path_id,
          .measure = false,
          .counted = false};
    if (s.opened) {
      // Sampling: the 1st, N+1th, ... interval of a path is read.
      tr.measure =
          device_ != nullptr &&
          (options_.sample_every <= 1 ||
           p.opened % static_cast<uint64_t>(options_.sample_every) == 0);
      ++p.opened;
      b.needs_snapshot |= tr.measure;
    } else {
      b.needs_snapshot |= path_rule::NeedsSnapshot(
          s, p.measuring.load(std::memory_order_relaxed), p.exclusive_valid,
          track_exclusive_);
    }
    return path_rule::StepsParent(s);
  }
}

void Recorder::HookSteps(Boundary& b) {
  // The paths this boundary opened or closed, innermost first (the order of
  // the transitions): their words are held locked until Apply.
  int n = 0;
  for (int k = 0; k < b.count; ++k) {
    const Transition& tr = b.transitions[k];
    if (!tr.step.opened && !tr.step.closed) continue;
    for (size_t o = 0; o < observers_.size(); ++o) {
      b.changes[o][n] = {.path = tr.path_id,
                         .path_data = tr.path->hook_data[observers_[o]],
                         .opened = tr.step.opened,
                         .marks = 0};
    }
    ++n;
  }
  b.num_changes = n;
  if (n == 0) return;
  bool wanted = false;
  for (size_t o = 0; o < observers_.size(); ++o) {
    wanted |= hooks_[observers_[o]]->Stepped(
        std::span<PathChange>(b.changes[o].data(), static_cast<size_t>(n)));
  }
  // A recorder with no device has no snapshot to give (Applied: nullptr).
  b.needs_snapshot |= wanted && snapshots_ != nullptr;
}

inline const devices::Snapshot* Recorder::SnapshotFor(ThreadState& t,
                                                      const char* where,
                                                      int name_id) {
  const bool timed = t.snapshots++ % kTimeEvery == 0;
  const uint64_t t0 = timed ? clock_.Now() : 0;
  const absl::Status s = ReadCounters(&t.snapshot);
  if (timed) {
    Add(t.timed_ns, clock_.Now() - t0);
    Add(t.timed, 1);
  }
  if (s.ok()) [[likely]] {
    return &t.snapshot;
  }
  SnapshotFailed(s, where, name_id);
  return nullptr;
}

void Recorder::SnapshotFailed(const absl::Status& s, const char* where,
                              int name_id) {
  // The words are held busy until Apply: nothing may throw out of here
  // (std::bad_alloc from the message), or their paths would hang.
  try {
    const std::string reason = common::StatusMessage(s);
    const std::string name = RegionName(name_id);
    AddSnapshotError(
        fmt::format("a snapshot failed at the {} of \"{}\": {}; the counts "
                    "of that interval are estimated from the region's other "
                    "intervals",
                    where, name, reason),
        reason, fmt::format("the {} of \"{}\"", where, name));
  } catch (...) {  // NOLINT(bugprone-empty-catch): the report loses a line
  }
}

void Recorder::HookApplied(Boundary& b, const devices::Snapshot* snap) {
  for (size_t o = 0; o < observers_.size(); ++o) {
    hooks_[observers_[o]]->Applied(
        std::span<PathChange>(b.changes[o].data(),
                              static_cast<size_t>(b.num_changes)),
        snap);
  }
}

// The interval and exclusive-stretch arithmetic, once: Apply and the fast
// path both come here, through ApplyStep.  The caller holds the path's
// lock.  One pass over the values per step (the fast path's cost is these
// loops): OpenInterval copies the snapshot to both starts, CloseInterval
// ends the stretch and the interval together.

inline void Recorder::OpenInterval(PathState& p, const devices::Snapshot* snap,
                                   uint64_t now_ns, bool read,
                                   bool read_exclusive) {
  p.open_ns = now_ns;
  if (read) {
    // A loop, not memmove calls: a few values, after a system call.
    for (size_t i = 0; i < num_values_; ++i) {
      const uint64_t v = snap->values[i];
      p.begin.values[i] = v;
      if (read_exclusive) p.exclusive_begin.values[i] = v;
    }
    p.begin.timestamp_ns = snap->timestamp_ns;
  }
  p.exclusive_valid = read && read_exclusive;
  p.measuring.store(read, std::memory_order_relaxed);
}

inline void Recorder::StartExclusive(PathState& p,
                                     const devices::Snapshot* snap,
                                     uint64_t now_ns, bool read) {
  p.overlap_mark = overlap_.Start(now_ns);
  if (read) {
    p.exclusive_valid = true;
    for (size_t i = 0; i < num_values_; ++i) {
      p.exclusive_begin.values[i] = snap->values[i];
    }
  }
}

inline uint64_t Recorder::StretchCounts(const PathState& p,
                                        const devices::Snapshot& snap,
                                        size_t i) {
  return Delta(snap.values[i], p.exclusive_begin.values[i]);
}

inline void Recorder::CloseInterval(PathState& p, Accumulator* acc,
                                    const devices::Snapshot* snap,
                                    uint64_t now_ns, bool close,
                                    bool stop_exclusive, bool counted) {
  // The stretch ending here was read: its counts are the interval's too.
  const bool last = stop_exclusive && p.exclusive_valid && snap != nullptr;
  if (close && counted) {  // counted: snap != nullptr
    // The counts before the interval is counted: a Collect running now
    // must not see one interval more than measured (and scale the counts
    // up as if it were an unmeasured one).  The exclusive counts: the
    // stretches before (a child path was open in between) and the last.
    for (size_t i = 0; i < num_values_; ++i) {
      const uint64_t stretch = last ? StretchCounts(p, *snap, i) : 0;
      Add(acc->inclusive[i], Delta(snap->values[i], p.begin.values[i]));
      Add(acc->exclusive[i], p.exclusive[i] + stretch);
      p.exclusive[i] = 0;
    }
    Add(acc->counted_ns, Delta(snap->timestamp_ns, p.begin.timestamp_ns));
    Add(acc->measured_intervals, 1);
  } else if (close) {
    for (size_t i = 0; i < num_values_; ++i) p.exclusive[i] = 0;
  } else if (last) {
    for (size_t i = 0; i < num_values_; ++i) {
      p.exclusive[i] += StretchCounts(p, *snap, i);
    }
  }
  const uint64_t overlap =
      stop_exclusive ? overlap_.Stop(now_ns, p.overlap_mark) : 0;
  p.exclusive_valid = false;
  if (!close) {
    p.overlap += overlap;
    return;
  }
  Add(acc->wall_ns, Delta(now_ns, p.open_ns));
  Add(acc->overlap_ns, p.overlap + overlap);
  p.overlap = 0;
  // Released: a Collect that reads the new count (acquiring it first) sees
  // everything above.
  acc->intervals.store(acc->intervals.load(std::memory_order_relaxed) + 1,
                       std::memory_order_release);
  p.measuring.store(false, std::memory_order_relaxed);
}

inline bool Recorder::ApplyStep(PathState& p, const path_rule::Step& s,
                                Accumulator* acc, bool measure,
                                const devices::Snapshot* snap, uint64_t now_ns,
                                bool track_exclusive) {
  if (s.opened) {
    if (s.exclusive_started) p.overlap_mark = overlap_.Start(now_ns);
    OpenInterval(p, snap, now_ns, measure && snap != nullptr, track_exclusive);
    return false;
  }
  bool measuring = measure;  // the interval is being read
  if (measuring && snap == nullptr && track_exclusive &&
      (s.exclusive_stopped || s.exclusive_started)) {
    // A stretch of the interval's exclusive counts is lost with the
    // snapshot: the whole interval is estimated, never short.
    measuring = false;
    p.measuring.store(false, std::memory_order_relaxed);
  }
  const bool counted = s.closed && measuring && snap != nullptr;
  if (s.closed || s.exclusive_stopped) {
    // A closing step has an accumulator.
    CloseInterval(p, acc, snap, now_ns, s.closed, s.exclusive_stopped, counted);
  }
  if (s.exclusive_started) {
    StartExclusive(p, snap, now_ns,
                   measuring && track_exclusive && snap != nullptr);
  }
  return counted;
}

inline void Recorder::UnlockPath(PathState& p, uint64_t word) {
  // Nothing changes a locked word but its holder (the others'
  // compare-and-swaps expect it unlocked), so a release store is the whole
  // unlock.
  p.word.store(word, std::memory_order_release);
}

void Recorder::Apply(Boundary& b, const devices::Snapshot* snap,
                     uint64_t now_ns) {
  if (b.num_changes > 0) HookApplied(b, snap);
  for (int k = 0; k < b.count; ++k) {
    Transition& tr = b.transitions[k];
    PathState& p = *tr.path;
    const bool measure = tr.step.opened
                             ? tr.measure
                             : p.measuring.load(std::memory_order_relaxed);
    const bool counted = ApplyStep(p, tr.step, tr.accumulator, measure, snap,
                                   now_ns, track_exclusive_);
    if (tr.step.closed && b.call_counts != nullptr) {
      tr.open_ns = p.open_ns;
      tr.counted = counted;
      if (counted) {
        uint64_t* counts = b.call_counts + k * num_values_;
        for (size_t i = 0; i < num_values_; ++i) {
          counts[i] = Delta(snap->values[i], p.begin.values[i]);
        }
      }
    }
  }
  // Unlock the words (a hook released its own in Applied), innermost
  // last.
  for (int k = b.count - 1; k >= 0; --k) {
    PathState& p = *b.transitions[k].path;
    UnlockPath(p, p.word.load(std::memory_order_relaxed) & ~kPathLock);
  }
}

inline void Recorder::Begin(ThreadSlot& slot, int name_id,
                            const internal::RegionParent* under) {
  ThreadState& t = *StateOf(slot);
  const int depth = t.depth.load(std::memory_order_relaxed);
  if (depth >= kMaxRegionDepth) {
    ++t.overflow;
    AddError(fmt::format(
        "region \"{}\" opened deeper than the {} nesting levels a thread may "
        "have: not measured; close regions sooner or merge levels",
        RegionName(name_id), kMaxRegionDepth));
    return;
  }
  Frame& f = t.frames[depth];
  int parent_path = -1;
  f.parent_state = nullptr;
  if (depth > 0) {
    parent_path = t.frames[depth - 1].path;
    f.parent_state = t.frames[depth - 1].state;
  } else if (under != nullptr && under->generation == generation_ &&
             under->path >= 0) {
    // The first region of a team's worker, under the region its team's
    // first thread is in (only at the bottom of a stack, so that every
    // path a thread holds stays below the ones it may wait for).
    parent_path = under->path;
    f.parent_state = static_cast<PathState*>(under->state);
  }
  f.parent_path = parent_path;
  f.path = PathOf(t, parent_path, name_id, &f.state);
  f.name_id = name_id;
  f.accumulator = &AccumulatorOf(t, f.path);
  if (fast_ && OpenFast(t, f)) {
    t.depth.store(depth + 1, std::memory_order_relaxed);
    return;
  }
  // The path's word, then, if the path opened, its parent's count of open
  // child paths: a thread only ever waits for a word above the ones it
  // holds, so waiting cannot go round in a circle (docs/concurrency.md).
  Boundary b;
  if (Step(b, *f.state, f.path, f.accumulator, path_rule::kEnter) &&
      f.parent_state != nullptr) {
    Step(b, *f.parent_state, f.parent_path, nullptr, path_rule::kChildOpened);
  }
  OpenFrame(b, t, f, name_id);
  t.depth.store(depth + 1, std::memory_order_relaxed);
}

void Recorder::OpenFrame(Boundary& b, ThreadState& t, Frame& f, int name_id) {
  if (!observers_.empty()) {
    b.changes = t.changes.data();
    HookSteps(b);
  }
  const uint64_t snapshots_before = t.snapshots;
  // The snapshot, then the clock: the call starts after its snapshot.
  const devices::Snapshot* snap =
      b.needs_snapshot ? SnapshotFor(t, "begin", name_id) : nullptr;
  const uint64_t now = clock_.Now();
  Apply(b, snap, now);
  f.start_ns = now;
  if (t.snapshots != snapshots_before) Add(f.accumulator->snapshots, 1);
  f.measured = f.state->measuring.load(std::memory_order_relaxed);
}

// The boundaries path_rule::FastCase allows, without recording
// transitions: a join or a leave steps the count; the open or close of a
// top-level path with no open child path holds its lock over the snapshot
// and applies the step as Apply does (ApplyStep).  Control flow only: the
// word's arithmetic is path_rule's, the interval's ApplyStep's.
inline bool Recorder::OpenFast(ThreadState& t, Frame& f) {
  PathState& p = *f.state;
  uint64_t w = p.word.load(std::memory_order_acquire);
  const path_rule::Fast fast =
      path_rule::FastEnter(w, f.parent_state != nullptr);
  if (fast == path_rule::Fast::kNone) return false;
  if (fast == path_rule::Fast::kCount) {
    if (!p.word.compare_exchange_strong(
            w, path_rule::StepWord(w, path_rule::kEnter).next,
            std::memory_order_acq_rel, std::memory_order_acquire)) {
      return false;
    }
    f.start_ns = clock_.Now();
    f.measured = p.measuring.load(std::memory_order_relaxed);
    return true;
  }
  if (!p.word.compare_exchange_strong(w, path_rule::kOpenAlone.next,
                                      std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
    return false;
  }
  // The path opens alone (sampling is off: every interval is read, and
  // PathState::opened, which only sampling reads, is left as it is).
  const devices::Snapshot* snap = nullptr;
  if (device_ != nullptr) {
    // The snapshot, then the clock: the call starts after its snapshot.
    snap = SnapshotFor(t, "begin", f.name_id);
    Add(f.accumulator->snapshots, 1);
  }
  const uint64_t now = clock_.Now();
  ApplyStep(p, path_rule::kOpenAlone, f.accumulator, /*measure=*/true, snap,
            now, /*track_exclusive=*/true);
  UnlockPath(p, path_rule::kOpenAlone.next & ~kPathLock);
  f.start_ns = now;
  f.measured = snap != nullptr;
  return true;
}

inline bool Recorder::CloseFast(ThreadState& t, Frame& f) {
  PathState& p = *f.state;
  uint64_t w = p.word.load(std::memory_order_acquire);
  const path_rule::Fast fast =
      path_rule::FastLeave(w, f.parent_state != nullptr);
  if (fast == path_rule::Fast::kNone) return false;
  if (fast == path_rule::Fast::kCount) {
    if (!p.word.compare_exchange_strong(
            w, path_rule::StepWord(w, path_rule::kLeave).next,
            std::memory_order_acq_rel, std::memory_order_acquire)) {
      return false;
    }
    CountCall(f, clock_.Now(), /*open=*/false, /*took_snapshot=*/false);
    return true;
  }
  if (!p.word.compare_exchange_strong(w, path_rule::kCloseAlone.next,
                                      std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
    return false;
  }
  // The path closes (its last thread, no open child path).  The clock,
  // then the snapshot: the call ends before its snapshot.
  constexpr path_rule::Step kClose = path_rule::kCloseAlone;
  const uint64_t now = clock_.Now();
  const bool measuring = p.measuring.load(std::memory_order_relaxed);
  const bool read =
      path_rule::NeedsSnapshot(kClose, measuring, p.exclusive_valid, true);
  const devices::Snapshot* snap =
      read ? SnapshotFor(t, "end", f.name_id) : nullptr;
  ApplyStep(p, kClose, f.accumulator, measuring, snap, now,
            /*track_exclusive=*/true);
  UnlockPath(p, kClose.next & ~kPathLock);
  CountCall(f, now, /*open=*/false, /*took_snapshot=*/read);
  return true;
}

inline void Recorder::CountCall(const Frame& f, uint64_t now_ns, bool open,
                                bool took_snapshot) {
  Accumulator& acc = *f.accumulator;
  const uint64_t wall = Delta(now_ns, f.start_ns);
  Add(acc.calls, 1);
  if (f.measured) Add(acc.sampled_calls, 1);
  if (open) Add(acc.open_calls, 1);
  Add(acc.thread_ns, wall);
  if (took_snapshot) Add(acc.snapshots, 1);
  if (wall < acc.min_ns.load(std::memory_order_relaxed)) {
    acc.min_ns.store(wall, std::memory_order_relaxed);
  }
  if (wall > acc.max_ns.load(std::memory_order_relaxed)) {
    acc.max_ns.store(wall, std::memory_order_relaxed);
  }
}

int Recorder::BeginMarker(ThreadSlot& slot, int name_id) {
  ThreadState& t = *StateOf(slot);
  for (int i = 0; i < t.markers_open; ++i) {
    if (t.markers[i].name_id == name_id) {
      AddError(fmt::format(
          "marker region \"{}\" started again while it runs on this thread: "
          "ignored (LIKWID warns the same)",
          RegionName(name_id)));
      return internal::kMarkerRunning;
    }
  }
  if (t.markers_open >= kMaxMarkers) {
    AddError(fmt::format(
        "marker region \"{}\" started while {} marker regions run on this "
        "thread: not measured",
        RegionName(name_id), kMaxMarkers));
    return internal::kMarkerTooMany;
  }
  Frame& f = t.markers[t.markers_open];
  f.parent_state = nullptr;
  f.parent_path = -1;
  f.path = PathOf(t, -1, name_id, &f.state);
  f.name_id = name_id;
  f.accumulator = &AccumulatorOf(t, f.path);
  if (!fast_ || !OpenFast(t, f)) {
    Boundary b;
    Step(b, *f.state, f.path, f.accumulator, path_rule::kEnter);
    OpenFrame(b, t, f, name_id);
  }
  ++t.markers_open;
  return 0;
}

int Recorder::EndMarker(ThreadSlot& slot, int name_id) {
  if (slot.generation == generation_) {
    ThreadState& t = *static_cast<ThreadState*>(slot.state);
    for (int i = 0; i < t.markers_open; ++i) {
      if (t.markers[i].name_id == name_id) {
        if (fast_ && CloseFast(t, t.markers[i])) {
          DropMarker(t, i);
        } else {
          CloseMarker(t, i, /*now_ns=*/0, /*open=*/false, nullptr);
        }
        return 0;
      }
    }
  }
  AddError(fmt::format(
      "marker region \"{}\" stopped on a thread where it does not run: "
      "ignored (LIKWID warns the same)",
      RegionName(name_id)));
  return internal::kMarkerNotRunning;
}

void Recorder::CloseMarker(ThreadState& t, int index, uint64_t now_ns,
                           bool open, const devices::Snapshot* given) {
  Frame& f = t.markers[index];
  Boundary b;
  Step(b, *f.state, f.path, f.accumulator, path_rule::kLeave);
  if (!observers_.empty()) {
    b.changes = t.changes.data();
    HookSteps(b);
  }
  if (now_ns == 0) now_ns = clock_.Now();
  const uint64_t snapshots_before = t.snapshots;
  const devices::Snapshot* snap = !b.needs_snapshot ? nullptr
                                  : given != nullptr
                                      ? (given->valid ? given : nullptr)
                                      : SnapshotFor(t, "end", f.name_id);
  if (call_counts_) b.call_counts = t.call_counts.data();
  Apply(b, snap, now_ns);
  CountCall(f, now_ns, open, t.snapshots != snapshots_before);
  if (!hooks_.empty()) ReportCall(b, t, f, now_ns, true, open);
  DropMarker(t, index);
}

void Recorder::DropMarker(ThreadState& t, int index) {
  t.markers[index] = t.markers[t.markers_open - 1];
  --t.markers_open;
}

int Recorder::ResetMarker(ThreadSlot& slot, int name_id) {
  if (slot.generation != generation_) return 0;  // nothing to reset
  ThreadState& t = *static_cast<ThreadState*>(slot.state);
  for (int i = 0; i < t.markers_open; ++i) {
    if (t.markers[i].name_id == name_id) return internal::kMarkerRunning;
  }
  const int depth = t.depth.load(std::memory_order_relaxed);
  for (int l = 0; l < depth && l < kMaxRegionDepth; ++l) {
    if (t.frames[l].name_id == name_id) return internal::kMarkerRunning;
  }
  int path = -1;
  {
    std::lock_guard<std::mutex> lock(paths_mu_);
    auto found = path_by_key_.find(
        (static_cast<uint64_t>(static_cast<uint32_t>(-1)) << 32) |
        static_cast<uint32_t>(name_id));
    if (found != path_by_key_.end()) path = found->second;
  }
  if (path < 0) return 0;
  std::lock_guard<std::mutex> lock(t.mu);
  if (path < static_cast<int>(t.accumulators.size()) &&
      t.accumulators[path] != nullptr) {
    t.accumulators[path]->Reset(num_values_);
  }
  return 0;
}

internal::RegionParent Recorder::CurrentParent(ThreadSlot& slot) const {
  if (slot.generation != generation_) return {};
  const auto& t = *static_cast<const ThreadState*>(slot.state);
  const int depth = t.depth.load(std::memory_order_relaxed);
  if (depth == 0 || depth > kMaxRegionDepth) return {};
  const Frame& f = t.frames[depth - 1];
  return {generation_, f.path, f.state};
}

void Recorder::CloseFrom(ThreadState& t, int level, uint64_t now_ns, bool open,
                         const devices::Snapshot* given) {
  const int depth = t.depth.load(std::memory_order_relaxed);
  // Innermost first, each word once: a level leaves its own path and, if
  // the level inside it closed its path, that open child path too.
  Boundary b;
  bool child_closed = false;
  for (int l = depth - 1; l >= level; --l) {
    Frame& f = t.frames[l];
    child_closed = Step(
        b, *f.state, f.path, f.accumulator,
        child_closed ? path_rule::kLeaveAfterChildClosed : path_rule::kLeave);
  }
  const Frame& outer = t.frames[level];
  if (child_closed && outer.parent_state != nullptr) {
    Step(b, *outer.parent_state, outer.parent_path, nullptr,
         path_rule::kChildClosed);
  }
  if (!observers_.empty()) {
    b.changes = t.changes.data();
    HookSteps(b);
  }
  // The clock after the steps (which may have waited), then the snapshot:
  // the call ends before its snapshot, and the thread that closes the path
  // reads the clock after every other thread's call ended.
  if (now_ns == 0) now_ns = clock_.Now();
  const uint64_t snapshots_before = t.snapshots;
  const devices::Snapshot* snap =
      !b.needs_snapshot  ? nullptr
      : given != nullptr ? (given->valid ? given : nullptr)
                         : SnapshotFor(t, "end", t.frames[level].name_id);
  if (call_counts_) b.call_counts = t.call_counts.data();
  Apply(b, snap, now_ns);
  const bool took_snapshot = t.snapshots != snapshots_before;
  for (int l = depth - 1; l >= level; --l) {
    CountCall(t.frames[l], now_ns, open, took_snapshot);
    if (!hooks_.empty()) ReportCall(b, t, t.frames[l], now_ns, false, open);
  }
  t.depth.store(level, std::memory_order_relaxed);
}

void Recorder::ReportCall(const Boundary& b, ThreadState& t, const Frame& f,
                          uint64_t now_ns, bool marker, bool open) {
  // The call's own counts when it opened and closed its path's interval
  // (the interval is the call: no other thread was inside).
  const uint64_t* counts = nullptr;
  for (int k = 0; k < b.count && b.call_counts != nullptr; ++k) {
    const Transition& tr = b.transitions[k];
    if (tr.path == f.state && tr.step.closed) {
      if (tr.counted && tr.open_ns == f.start_ns) {
        counts = b.call_counts + k * num_values_;
      }
      break;
    }
  }
  for (size_t h = 0; h < hooks_.size(); ++h) {
    hooks_[h]->CallEnded(t.hook_thread[h], f.path, f.start_ns, now_ns, marker,
                         open, counts);
  }
}

inline void Recorder::End(ThreadSlot& slot, int name_id, bool exception) {
  if (slot.generation != generation_) {
    AddError(fmt::format(
        "end of region \"{}\" on a thread with no open region (an end "
        "without a begin, or a begin made before the session started)",
        RegionName(name_id)));
    return;
  }
  ThreadState& t = *static_cast<ThreadState*>(slot.state);
  if (t.overflow > 0) {
    --t.overflow;
    return;
  }
  const int depth = t.depth.load(std::memory_order_relaxed);
  if (depth == 0) {
    AddError(fmt::format(
        "end of region \"{}\" on a thread with no open region (an end "
        "without a begin, or a begin made before the session started)",
        RegionName(name_id)));
    return;
  }
  // The region to close: the innermost, or an enclosing one (which closes
  // the regions inside it).
  int level = depth - 1;
  if (name_id >= 0) {
    while (level >= 0 && t.frames[level].name_id != name_id) --level;
  }
  if (level < 0) {
    AddError(fmt::format(
        "end of region \"{}\" while \"{}\" is the innermost open region and "
        "\"{}\" is not open on this thread: ignored",
        RegionName(name_id), RegionName(t.frames[depth - 1].name_id),
        RegionName(name_id)));
    return;
  }
  if (exception) {
    AddError(fmt::format(
        "region \"{}\" was closed by an exception; it is counted up to that "
        "point",
        RegionName(t.frames[level].name_id)));
  }
  for (int l = depth - 1; l > level; --l) {
    AddError(fmt::format(
        "region \"{}\" was still open when its enclosing region \"{}\" "
        "ended: closed there",
        RegionName(t.frames[l].name_id), RegionName(t.frames[level].name_id)));
  }
  if (fast_ && level == depth - 1 && CloseFast(t, t.frames[level])) {
    t.depth.store(level, std::memory_order_relaxed);
    return;
  }
  CloseFrom(t, level, /*now_ns=*/0, /*open=*/false, nullptr);
}

}  // namespace regions

namespace internal {

namespace {

// Publishes `recorder` in this thread's slot, runs `boundary` if it is still
// the active one, and withdraws it.  A region that interrupts the SDK on
// its own thread (from a signal handler) is refused.  BeginRegion and
// EndRegion inline it and their lambdas: a perf boundary's cost is mostly
// what follows its read(), each return included.
template <typename F>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void OnActive(regions::Recorder* recorder,
                                                  int name_id, F boundary) {
  // The thread's count, by address once: in a shared library each
  // thread_local's address is a call (__tls_get_addr), and the scope's
  // decrement comes after the boundary's calls.
  int& busy_count = regions::t_busy;
  if (name_id == regions::kRefusedName || busy_count != 0) {
    regions::g_refused.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  regions::BusyScope busy(busy_count);
  regions::ThreadSlot& slot = regions::CurrentSlot();
  regions::PublishHazard(slot.hazard, recorder);
  if (g_active_recorder.load(std::memory_order_seq_cst) == recorder) {
    boundary(slot);
  } else {
    regions::g_dropped.fetch_add(1, std::memory_order_relaxed);
  }
  slot.hazard.store(nullptr, std::memory_order_release);
}

}  // namespace

uint64_t BeginRegion(regions::Recorder* recorder, int name_id) {
  uint64_t generation = 0;
  OnActive(recorder, name_id,
           [&](regions::ThreadSlot& slot) ABSL_ATTRIBUTE_ALWAYS_INLINE {
             recorder->Begin(slot, name_id);
             generation = recorder->generation();
           });
  return generation;
}

RegionParent CurrentRegionParent(regions::Recorder* recorder) {
  RegionParent parent;
  if (recorder == nullptr) return parent;
  OnActive(recorder, 0, [&](regions::ThreadSlot& slot) {
    parent = recorder->CurrentParent(slot);
  });
  return parent;
}

uint64_t BeginRegionUnder(regions::Recorder* recorder,
                          const RegionParent& parent, int name_id) {
  uint64_t generation = 0;
  OnActive(recorder, name_id, [&](regions::ThreadSlot& slot) {
    recorder->Begin(slot, name_id, &parent);
    generation = recorder->generation();
  });
  return generation;
}

int BeginMarker(regions::Recorder* recorder, int name_id) {
  int result = kMarkerRefused;
  OnActive(recorder, name_id, [&](regions::ThreadSlot& slot) {
    result = recorder->BeginMarker(slot, name_id);
  });
  return result;
}

int EndMarker(regions::Recorder* recorder, int name_id) {
  int result = kMarkerRefused;
  OnActive(recorder, name_id, [&](regions::ThreadSlot& slot) {
    result = recorder->EndMarker(slot, name_id);
  });
  return result;
}

int ResetMarker(regions::Recorder* recorder, int name_id) {
  int result = kMarkerRefused;
  OnActive(recorder, name_id, [&](regions::ThreadSlot& slot) {
    result = recorder->ResetMarker(slot, name_id);
  });
  return result;
}

void EndRegion(regions::Recorder* recorder, int name_id, bool exception,
               uint64_t generation) {
  if (g_active_recorder.load(std::memory_order_acquire) != recorder) {
    return;  // its session stopped: "still open" in that session's report
  }
  OnActive(recorder, name_id,
           [&](regions::ThreadSlot& slot) ABSL_ATTRIBUTE_ALWAYS_INLINE {
             // A region begun on an earlier recorder that had the same
             // address is not this one's.
             if (generation != 0 && generation != recorder->generation()) {
               return;
             }
             recorder->End(slot, name_id, exception);
           });
}

}  // namespace internal

void RegionBegin(RegionId id) {
  regions::Recorder* r =
      internal::g_active_recorder.load(std::memory_order_acquire);
  if (r != nullptr) internal::BeginRegion(r, id.value);
}

void RegionEnd(RegionId id) {
  regions::Recorder* r =
      internal::g_active_recorder.load(std::memory_order_acquire);
  if (r != nullptr) internal::EndRegion(r, id.value, /*exception=*/false);
}

void RegionBegin(std::string_view name) {
  regions::Recorder* r =
      internal::g_active_recorder.load(std::memory_order_acquire);
  if (r != nullptr) internal::BeginRegion(r, internal::NameIdOf(name));
}

void RegionEnd(std::string_view name) {
  regions::Recorder* r =
      internal::g_active_recorder.load(std::memory_order_acquire);
  if (r != nullptr) {
    internal::EndRegion(r, internal::NameIdOf(name), /*exception=*/false);
  }
}

}  // namespace uncore
