// BoundaryHook: what attaches to a recorder's boundaries beyond the
// attribution rule.  The rule (path_rule.h) decides which boundary opens or
// closes a path and reads the counters; a hook is told what it decided, and
// may ask for the boundary's snapshot.  The trace (runtime/trace_hook.h)
// and the node union across processes (runtime/node_union_hook.h) are
// hooks; regions includes neither.
//
//   class CallLog : public regions::BoundaryHook {
//     void CallEnded(void* thread, int path, uint64_t begin, uint64_t end,
//                    bool marker, bool open, const uint64_t* counts) override;
//   };
//   CallLog log;
//   RecorderOptions o;  o.hooks.push_back(&log);  // outlives the recorder
//
// Guarantees the recorder gives a hook:
// - A recorder with a hook takes the general path at every boundary
//   (Recorder::fast_boundaries(): no hook and every interval read), so a
//   hook sees every boundary that changes a path.
// - PathCreated and ThreadAttached run once per path and per thread state,
//   on the slow path (locks and allocation are allowed there).
// - Stepped and Applied run on the boundary's thread while it holds the
//   lock of every path in `changes` (path_rule.h, kPathLock): a hook's own
//   state per path is written by one thread at a time, in the order of the
//   path's transitions.  They must not throw and must not wait without a
//   bound (a hook that waits for another process gives up once Quiescing
//   says so).
// - CallEnded runs on the thread whose call ended, after its paths are
//   unlocked.
#ifndef UNCORE_SDK_REGIONS_BOUNDARY_HOOK_H_
#define UNCORE_SDK_REGIONS_BOUNDARY_HOOK_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "sdk/devices/device.h"

namespace uncore::regions {

class Recorder;

// A path that a boundary opened (a first thread entered) or closed (its
// last thread left), as one hook sees it.
struct PathChange {
  int path;         // the recorder's path id
  void* path_data;  // what this hook's PathCreated returned for the path
  bool opened;      // else closed
  // The hook's own, from Stepped to Applied (e.g. which of its words it
  // took); 0 when Stepped starts.
  uint32_t marks;
};

class BoundaryHook {
 public:
  virtual ~BoundaryHook() = default;

  // The recorder's times (CallEnded's) are CLOCK_MONOTONIC nanoseconds
  // rather than time-stamp counter ticks.
  virtual bool wants_monotonic_clock() const { return false; }
  // CallEnded wants the counts of a call that opened and closed its path.
  virtual bool wants_call_counts() const { return false; }
  // Stepped and Applied are called (boundaries that open or close a path).
  virtual bool observes_path_changes() const { return false; }

  // Once, from the recorder's constructor (it is not yet active).
  virtual void Attached(Recorder& /*recorder*/) {}
  // A path's first use (full path: "outer/inner"); what it returns is the
  // path's `path_data` from now on.  Under the recorder's paths lock.
  virtual void* PathCreated(int /*path*/, std::string_view /*full_path*/) {
    return nullptr;
  }
  // A thread's state is made or reused (its `thread_data` until detached),
  // and the thread that had it exited.
  virtual void* ThreadAttached() { return nullptr; }
  virtual void ThreadDetached(void* /*thread_data*/) {}

  // The paths a boundary opened or closed, innermost first, their words
  // stepped and locked.  Whether the boundary must read the counters.
  virtual bool Stepped(std::span<PathChange> /*changes*/) { return false; }
  // The boundary's snapshot (nullptr: none was taken, or it failed),
  // before the paths are unlocked.
  virtual void Applied(std::span<PathChange> /*changes*/,
                       const devices::Snapshot* /*snapshot*/) {}
  // A region or marker call ended at `end` (the recorder's clock);
  // `counts`: its read-plan deltas when it opened and closed its path and
  // both were read (wants_call_counts), else nullptr.
  virtual void CallEnded(void* /*thread_data*/, int /*path*/,
                         uint64_t /*begin*/, uint64_t /*end*/, bool /*marker*/,
                         bool /*open*/, const uint64_t* /*counts*/) {}

  // Collect keeps path `path_data`'s region though no call of it counts
  // (the hook holds history for it).
  virtual bool KeepsPath(const void* /*path_data*/) const { return false; }
  // Recorder::Quiesce began (true: stop waiting on others) or ended.
  virtual void Quiescing(bool /*on*/) {}
};

}  // namespace uncore::regions

#endif  // UNCORE_SDK_REGIONS_BOUNDARY_HOOK_H_
