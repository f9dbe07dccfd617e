// The recorder's state, shared by its files (recorder.cc: paths, threads,
// totals; boundaries.cc: the hot path).  Internal to sdk/regions.
//
// Who writes what (docs/concurrency.md, "The invariants"):
// - Accumulator: its thread only (single-writer relaxed atomics), read by
//   Collect; an interval's counts are stored before `intervals` is
//   released, and Collect acquires `intervals` first.
// - PathState: `word` by compare-and-swap (path_rule.h); every other field
//   by the thread that holds the path lock, except `measuring`, which a
//   joining thread reads relaxed.
// - Frame, ThreadState: the owning thread; `depth` is read by OpenRegions
//   and CloseOpenRegions once the recorder is quiet.
//
// Times: every *_ns field and now_ns argument in these structures holds
// ticks of the recorder's clock (common::TickClock: TSC ticks, or
// nanoseconds where it reads CLOCK_MONOTONIC); Recorder::Totals turns them
// into nanoseconds.  counted_ns holds the snapshots' own nanoseconds.
#ifndef UNCORE_SDK_REGIONS_RECORDER_STATE_H_
#define UNCORE_SDK_REGIONS_RECORDER_STATE_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "sdk/devices/device.h"
#include "sdk/devices/shared_snapshots.h"
#include "sdk/regions/boundary_hook.h"
#include "sdk/regions/path_rule.h"
#include "sdk/regions/recorder.h"
#include "uncore/region.h"

namespace uncore::regions {

// One snapshot in this many of a thread's is timed (two more clock reads);
// a region's overhead is its boundaries' snapshots times their thread's
// mean snapshot time (computed when collected: no division on the path).
inline constexpr uint64_t kTimeEvery = 64;

inline uint64_t Delta(uint64_t end, uint64_t begin) {
  return end >= begin ? end - begin : 0;
}

// Single-writer accumulation: only the owning thread writes.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void Add(std::atomic<uint64_t>& a,
                                             uint64_t v) {
  a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

struct Recorder::Accumulator {
  explicit Accumulator(size_t n)
      : inclusive(new std::atomic<uint64_t>[n]),
        exclusive(new std::atomic<uint64_t>[n]) {
    Reset(n);
  }
  void Reset(size_t n) {
    for (std::atomic<uint64_t>* a :
         {&calls, &sampled_calls, &thread_ns, &max_ns, &snapshots, &open_calls,
          &intervals, &measured_intervals, &wall_ns, &counted_ns,
          &overlap_ns}) {
      a->store(0, std::memory_order_relaxed);
    }
    min_ns.store(UINT64_MAX, std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i) {
      inclusive[i].store(0, std::memory_order_relaxed);
      exclusive[i].store(0, std::memory_order_relaxed);
    }
  }
  // The thread's own calls.
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> sampled_calls{0};
  std::atomic<uint64_t> thread_ns{0};
  std::atomic<uint64_t> min_ns{UINT64_MAX};
  std::atomic<uint64_t> max_ns{0};
  std::atomic<uint64_t> snapshots{0};  // its boundaries that read counters
  std::atomic<uint64_t> open_calls{0};
  // The intervals this thread closed, and the counts it was credited.
  std::atomic<uint64_t> intervals{0};
  std::atomic<uint64_t> measured_intervals{0};
  std::atomic<uint64_t> wall_ns{0};
  // The measured intervals' time between their snapshots, as the device
  // timed them (Snapshot::timestamp_ns, nanoseconds).
  std::atomic<uint64_t> counted_ns{0};
  // Time its exclusive stretches ran beside another path's (OverlapClock).
  std::atomic<uint64_t> overlap_ns{0};
  std::unique_ptr<std::atomic<uint64_t>[]> inclusive;
  std::unique_ptr<std::atomic<uint64_t>[]> exclusive;
};

// One per region path, shared by every thread.
struct Recorder::PathState {
  explicit PathState(size_t n)
      : begin(n), exclusive_begin(n), exclusive(n, 0) {}
  std::atomic<uint64_t> word{0};  // path_rule's
  // The open interval's counts are read (sampling, or a failed snapshot).
  std::atomic<bool> measuring{false};
  // Written by the thread that holds the path lock only.
  devices::Snapshot begin;            // of the open interval
  devices::Snapshot exclusive_begin;  // of the open exclusive stretch
  // The open interval's exclusive stretches so far: credited with its
  // inclusive counts when it closes, so Collect never shows an open
  // interval's part.
  std::vector<uint64_t> exclusive;
  uint64_t open_ns = 0;
  uint64_t opened = 0;  // intervals opened, for sampling
  // The open exclusive stretch's OverlapClock mark, and the open
  // interval's stretches' shared time so far (credited when it closes).
  uint64_t overlap_mark = 0;
  uint64_t overlap = 0;
  bool exclusive_valid = false;
  // Per hook (RecorderOptions::hooks), what its PathCreated returned.
  std::array<void*, kMaxHooks> hook_data{};
};

// What a boundary changed of one path's state (recorded by Step, applied by
// Apply).  Plain fields with no initialisers: a boundary's array of them is
// left uninitialised (filling ~800 bytes per boundary showed in profiles);
// Step writes every field of the entries it records.
struct Recorder::Transition {
  PathState* path;
  Accumulator* accumulator;  // the boundary thread's, of the path
  path_rule::Step step;
  // Closed, for a hook's CallEnded: when its interval opened, and whether
  // its counts are in Boundary::call_counts.
  uint64_t open_ns;
  int path_id;
  bool measure;  // opened: its interval is to be read
  bool counted;
};

struct Recorder::Boundary {
  std::array<Transition, kMaxRegionDepth + 1> transitions;  // [0, count)
  int count = 0;
  bool needs_snapshot = false;
  // wants_call_counts: num_values per transition, the counts of the
  // intervals closed.
  uint64_t* call_counts = nullptr;
  // Per hook that observes path changes, the paths opened or closed:
  // [0, num_changes) of the thread's ThreadState::changes (HookSteps; on
  // the heap: a boundary's stack frame stays small, signal handlers'
  // stacks included).
  std::array<PathChange, kMaxRegionDepth + 1>* changes = nullptr;
  int num_changes = 0;
};

struct Recorder::RetiredTotals {
  uint64_t calls = 0;
  uint64_t threads = 0;
  uint64_t sampled_calls = 0;
  uint64_t thread_ns = 0;
  uint64_t min_ns = UINT64_MAX;
  uint64_t max_ns = 0;
  uint64_t overhead_ns = 0;
  uint64_t open_calls = 0;
  uint64_t intervals = 0;
  uint64_t measured_intervals = 0;
  uint64_t wall_ns = 0;
  uint64_t counted_ns = 0;
  uint64_t overlap_ns = 0;
  std::vector<uint64_t> inclusive;  // empty until something is added
  std::vector<uint64_t> exclusive;

  // Adds a thread's accumulator of `n` values (relaxed loads: its owner
  // may still be counting); its snapshots took `mean_snapshot_ns` each.
  void Add(const Accumulator& a, size_t n, uint64_t mean_snapshot_ns);
  void Add(const RetiredTotals& other);
};

struct Recorder::Frame {
  int path = -1;
  int name_id = -1;
  PathState* state = nullptr;
  // The path's parent (the frame below, or a path of another thread's:
  // BeginUnder), nullptr at the top level.
  PathState* parent_state = nullptr;
  int parent_path = -1;  // its id (-1: top level)
  Accumulator* accumulator = nullptr;
  uint64_t start_ns = 0;
  bool measured = false;  // its path's interval is read
};

struct Recorder::ThreadState {
  int index = 0;
  std::atomic<int> depth{0};  // written by the owner only
  int overflow = 0;  // regions begun beyond kMaxRegionDepth, not counted
  std::array<Frame, kMaxRegionDepth> frames;
  // LIKWID-style markers open on this thread (top-level paths, by name,
  // in any order): [0, markers_open).
  std::array<Frame, kMaxMarkers> markers;
  int markers_open = 0;
  devices::Snapshot snapshot;  // the boundary's
  // Snapshots this thread's boundaries took, and the timed ones (written
  // by the owner, read by Collect).
  uint64_t snapshots = 0;
  std::atomic<uint64_t> timed{0};
  std::atomic<uint64_t> timed_ns{0};
  uint64_t MeanSnapshotNs() const {
    const uint64_t n = timed.load(std::memory_order_relaxed);
    return n == 0 ? 0 : timed_ns.load(std::memory_order_relaxed) / n;
  }
  // Regions of this thread: (parent path, name) -> path, a direct-mapped
  // cache in front of a hash map.
  struct FastPath {
    int parent = -2;
    int name_id = -2;
    int path = -1;
    PathState* state = nullptr;
  };
  std::array<FastPath, 64> fast_paths;
  absl::flat_hash_map<uint64_t, std::pair<int, PathState*>> path_cache;
  // By path id; nullptr where the thread never entered the path.  Grows
  // under `mu` (Collect reads under it); entries are stable.
  mutable std::mutex mu;
  std::vector<std::unique_ptr<Accumulator>> accumulators;
  // Per hook, what its ThreadAttached returned (attached: the thread
  // state's first use by a thread), and room for the counts of the
  // intervals one boundary closes (Boundary::call_counts).
  std::array<void*, kMaxHooks> hook_thread{};
  std::array<std::array<PathChange, kMaxRegionDepth + 1>, kMaxHooks> changes;
  bool hooks_attached = false;
  std::vector<uint64_t> call_counts;
};

inline absl::Status Recorder::ReadCounters(devices::Snapshot* out) {
  absl::Status s = snapshots_->Take(out);
  if (s.ok() && !out->valid) [[unlikely]] {
    s = absl::DataLossError("the snapshot is marked invalid");
  }
  return s;
}

}  // namespace uncore::regions

#endif  // UNCORE_SDK_REGIONS_RECORDER_STATE_H_
