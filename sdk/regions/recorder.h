// Recorder: the region hot path.  Per-thread stacks of open regions, one
// process-wide state word per region path (how many threads are inside it
// and inside its child paths), and per-thread accumulators merged by
// Collect.
//
//   Recorder rec(device.get());            // a programmed Device
//   regions::Activate(&rec);               // what Session::Start does
//   { UNCORE_REGION("solve"); ... }        // Begin/End on this thread
//   regions::Deactivate(&rec);             // stops new boundaries, waits
//   std::vector<Recorder::RegionTotals> t = rec.Collect();  // for the rest
//
// Region paths: the names of the enclosing open regions of the same thread
// and the region's own, joined by '/'.  The same path on several threads is
// one region.
//
// The attribution rule (docs/concurrency.md, "Teams of threads"): a path's
// counts are what the sockets counted while at least one thread was inside
// it (the union of its threads' calls), each socket once.  Only the
// boundary that opens a path (no thread was inside) or closes it (the last
// thread leaves) reads the counters; a thread that joins or leaves while
// others stay inside reads nothing.  Exclusive counts are what the sockets
// counted while the path was open and no thread was inside any of its
// child paths.  Every interval's counts are credited to the thread that
// closed it, so per-thread values (CollectCallingThread) sum to the path's
// total.
// The rule's arithmetic is path_rule.h's.  Joins, leaves, and the opens
// and closes of top-level paths take a fast path (OpenFast/CloseFast) where
// the recorder has no hook and no sampling (fast_boundaries()); it calls the
// same rule (docs/concurrency.md, "Two paths, one rule").  What is not the
// rule (a trace, the node union across processes) attaches through
// BoundaryHook (boundary_hook.h).
//
// Files: names.* (region names), thread_slots.* (threads' slots, hazards,
// fork), recorder.cc (paths, thread states, totals, Collect, errors),
// boundaries.cc (Begin, End, markers: the hot path), recorder_state.h
// (their shared structures).
//
// Lifetime (docs/concurrency.md): every boundary publishes the recorder it
// works on in its thread's slot (a hazard pointer) and checks that the
// recorder is still the active one.  Deactivate clears the active recorder
// and waits until no slot holds it, so a recorder and its device can be
// destroyed after Deactivate while other threads keep opening regions:
// those find no active recorder (one pointer test) or see that theirs is no
// longer active and touch nothing.
//
// Guarantees: Begin and End take no lock and allocate nothing once the
// thread has used that region path (its first use locks and allocates); a
// boundary reads the clock once (the time-stamp counter where it is
// constant, common::TickClock; CLOCK_MONOTONIC when a hook asks).  A hook
// adds what it does (a trace: one record per call in its thread's buffer).
// A boundary waits only while another
// thread is opening or closing the same path (or its parent's exclusive
// stretch) with a snapshot; boundaries that need the counters at once
// share one snapshot (devices::SharedSnapshots).  Accumulators have one
// writer (their thread) and are read by Collect with relaxed atomics, so
// Collect may run while threads are counting.  A thread that exits closes
// its open regions (counted up to then), hands its totals to the recorder,
// and its state is reused by the next thread: memory is bounded by the
// number of threads alive at once.
#ifndef UNCORE_SDK_REGIONS_RECORDER_H_
#define UNCORE_SDK_REGIONS_RECORDER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "sdk/common/clock.h"
#include "sdk/devices/device.h"
#include "sdk/devices/shared_snapshots.h"
#include "sdk/regions/boundary_hook.h"
#include "sdk/regions/names.h"
#include "sdk/regions/overlap_clock.h"
#include "sdk/regions/path_rule.h"
#include "uncore/region.h"

namespace uncore::regions {

// Hooks a recorder takes at most (RecorderOptions::hooks).
inline constexpr size_t kMaxHooks = 4;

struct RecorderOptions {
  // Read the counters on every Nth interval of each region path only (the
  // 1st, N+1th, ... time a thread opens it while no other thread is
  // inside); counts of the others are estimated.  1: every interval.
  int sample_every = 1;
  devices::SharedSnapshots::Mode snapshots =
      devices::SharedSnapshots::Mode::kShared;
  // What attaches to the boundaries beyond the rule (boundary_hook.h: the
  // trace, the node union), at most kMaxHooks; each must outlive the
  // recorder.  Any hook: every boundary takes the general path.
  std::vector<BoundaryHook*> hooks;
};

struct ThreadSlot;

enum class Quiescence {
  kQuiet,         // no thread is inside a boundary on the recorder
  kTimedOut,      // a thread stayed inside one for the whole timeout
  kCallerInside,  // the calling thread is (a signal handler interrupted it)
};

class Recorder {
 public:
  // `device` is programmed and must outlive the recorder; nullptr counts
  // calls and wall time only.
  explicit Recorder(devices::Device* device, RecorderOptions options = {});
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  struct RegionTotals {
    std::string name;
    std::string path;
    int path_id = -1;  // the recorder's (a hook's PathCreated's)
    int depth = 0;
    uint64_t calls = 0;    // over every thread
    uint64_t threads = 0;  // distinct threads that entered the path
    // Calls made while the path's interval was measured (sampling: the
    // 1st, N+1th, ... interval of a path is); < calls: estimated.
    uint64_t sampled_calls = 0;
    uint64_t wall_ns = 0;  // time at least one thread was inside
    // The measured intervals' time from the snapshot that opened each to
    // the one that closed it, as the device timed the reads
    // (Snapshot::timestamp_ns); scaled like the counts when estimated.
    // What the counts cover exactly, whatever a read costs.  0 without a
    // device.
    uint64_t counted_ns = 0;
    // Time its exclusive stretches (open, no child path open) ran beside
    // another path's: another thread was inside a path that is neither its
    // ancestor nor its descendant, and the socket's counts went to both.
    uint64_t overlap_ns = 0;
    uint64_t thread_ns = 0;  // sum of every call's own wall time
    uint64_t min_ns = 0;     // shortest and longest single call
    uint64_t max_ns = 0;
    uint64_t overhead_ns = 0;
    uint64_t open_calls = 0;  // closed by CloseOpenRegions or a thread exit
    // Stretches of time with a thread inside (the union's pieces), and how
    // many of them had their counts read.
    uint64_t intervals = 0;
    uint64_t measured_intervals = 0;
    std::vector<uint64_t> inclusive;  // per read-plan entry, scaled
    std::vector<uint64_t> exclusive;  // while no child path was open
    bool estimated = false;           // scaled from measured intervals
  };
  // Every region entered so far, in order of first entry, merged over
  // threads (live and exited).  An interval still open is not in it (it is
  // counted when its last thread leaves).
  std::vector<RegionTotals> Collect() const;
  // The same, of the calling thread only: its calls and times, and the
  // counts of the intervals it closed (summing every thread's gives
  // Collect's; `threads` is 1 where it entered).  Empty for a thread that
  // never entered a region of this recorder.
  std::vector<RegionTotals> CollectCallingThread() const;
  // A region path open right now and on how many threads (the first of
  // them, by its index, for a message naming one).
  struct OpenRegion {
    std::string path;
    size_t threads = 0;
    int first_thread = 0;
  };
  // Regions open right now, one per path in the order first found.  Exact
  // once the recorder is deactivated.
  std::vector<OpenRegion> OpenRegions() const;
  // Once deactivated and quiet: closes every region still open on any
  // thread with one last snapshot, counting them as open calls (their
  // threads will never end them on this recorder).
  void CloseOpenRegions();

  // Misuse and failures, each once with its count: "... (x12)"; the first
  // 64 distinct ones, then one line "N more errors, not listed ...".
  std::vector<std::string> Errors() const;
  // Cold: the boundary's code keeps its error paths out of the way.
  ABSL_ATTRIBUTE_COLD void AddError(std::string message);
  // A failed snapshot: the errors of one cause (`reason`, the device's
  // message: a dead server fails every boundary after it) are one line,
  // `message` for the first, counted: "N snapshots failed, the first ...".
  ABSL_ATTRIBUTE_COLD void AddSnapshotError(std::string message,
                                            std::string_view reason,
                                            std::string_view first_where);

  size_t num_values() const { return num_values_; }
  uint64_t generation() const { return generation_; }
  // Whether Begin and End try the fast path: no hook, and every interval
  // is read (no sampling).  The one place this is decided.
  static bool FastBoundaries(const RecorderOptions& options);
  bool fast_boundaries() const { return fast_; }
  const devices::SharedSnapshots* snapshots() const { return snapshots_.get(); }
  // For a hook's observer and background snapshots (nullptr when counting
  // nothing).
  devices::SharedSnapshots* shared_snapshots() { return snapshots_.get(); }
  // A path's region name and full path, by path id (a hook's records).
  std::pair<std::string, std::string> PathNames(int path) const;

  // The hot path; `slot` is the calling thread's, holding this recorder.
  // `under`: for the first region of a thread with none open, the path it
  // is a child of (another thread's region: a team's worker).
  // Inlined into the entry points of recorder.cc (internal::BeginRegion,
  // EndRegion ...), their only callers: a return costs more after the
  // snapshot's system call than anything else on a perf boundary.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Begin(
      ThreadSlot& slot, int name_id,
      const internal::RegionParent* under = nullptr);
  ABSL_ATTRIBUTE_ALWAYS_INLINE void End(ThreadSlot& slot, int name_id,
                                        bool exception);
  // LIKWID-style markers (internal::BeginMarker): 0 or an internal::kMarker
  // code.
  int BeginMarker(ThreadSlot& slot, int name_id);
  int EndMarker(ThreadSlot& slot, int name_id);
  int ResetMarker(ThreadSlot& slot, int name_id);
  // The calling thread's innermost open region, for BeginUnder.
  internal::RegionParent CurrentParent(ThreadSlot& slot) const;
  // A thread that used this recorder exits: its totals move to the
  // recorder and its state is kept for the next thread.
  void RetireThread(ThreadSlot& slot);

  // Time at least one region path was open, and the time summing every
  // path's exclusive stretches counts more than once (OverlapClock), up
  // to now.
  struct RegionTime {
    uint64_t any_open_ns = 0;
    uint64_t overcount_ns = 0;
  };
  RegionTime RegionsTime();

  // Waits until no thread is inside a boundary on this recorder (it must
  // no longer be the active one).  Anything but kQuiet: the recorder and its
  // device must be left alone (kCallerInside: not even read).
  Quiescence Quiesce(std::chrono::nanoseconds timeout) const;

 private:
  struct Accumulator;
  struct Frame;
  struct ThreadState;
  struct PathState;
  struct PathInfo {
    int name_id = -1;
    int parent = -1;
    int depth = 0;
    std::string path;
  };
  struct RetiredTotals;
  struct Transition;
  struct Boundary;

  // The lookups of a boundary: inline where the thread has used the
  // recorder, the path and its accumulator before, a call otherwise.
  ABSL_ATTRIBUTE_ALWAYS_INLINE ThreadState* StateOf(ThreadSlot& slot);
  ABSL_ATTRIBUTE_COLD ThreadState* NewStateOf(ThreadSlot& slot);
  // The path of `name_id` under `parent` (-1: top level), and its state.
  ABSL_ATTRIBUTE_ALWAYS_INLINE int PathOf(ThreadState& t, int parent,
                                          int name_id, PathState** state);
  ABSL_ATTRIBUTE_COLD int SlowPathOf(ThreadState& t, int parent, int name_id,
                                     PathState** state);
  ABSL_ATTRIBUTE_ALWAYS_INLINE Accumulator& AccumulatorOf(ThreadState& t,
                                                          int path);
  ABSL_ATTRIBUTE_COLD Accumulator& NewAccumulatorOf(ThreadState& t, int path);
  // A snapshot through the shared-snapshot protocol; an invalid one is an
  // error.
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status ReadCounters(
      devices::Snapshot* out);
  // Tells the hooks that observe path changes which paths the boundary
  // opened or closed (BoundaryHook::Stepped) and whether they need its
  // snapshot; then, with it, Applied (HookApplied, before the unlock).
  void HookSteps(Boundary& b);
  void HookApplied(Boundary& b, const devices::Snapshot* snap);
  // Steps `path`'s word by `e` (path_rule::StepWord, waiting while it is
  // locked); records a transition (the word is then locked) when the rule
  // says so.  Whether the path opened or closed (path_rule::StepsParent).
  bool Step(Boundary& b, PathState& path, int path_id, Accumulator* acc,
            path_rule::Event e);
  // Waits until `p`'s path lock is free (spins, yields, then naps).
  static void WaitForPathLock(PathState& p);
  // Stores `word` (unlocked): the lock's release.
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void UnlockPath(PathState& p,
                                                      uint64_t word);
  // One path's step `s`, applied by the boundary that holds its lock, with
  // the boundary's snapshot `snap` (nullptr: none, or it failed) at
  // `now_ns`: an opening records the interval's start (read: `measure`;
  // any other step: `measure` is p.measuring, as the caller loaded it
  // under the lock), a closing credits the interval to `acc`, exclusive
  // stretches start and stop (read: `track_exclusive`, track_exclusive_;
  // the fast path passes true, a constant).  Whether a closed interval's
  // counts were credited.  Apply and the fast path both call it; it calls
  // the helpers below.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool ApplyStep(
      PathState& p, const path_rule::Step& s, Accumulator* acc, bool measure,
      const devices::Snapshot* snap, uint64_t now_ns, bool track_exclusive);
  // Starts the interval: `snap` (if `read`) as its start and, with
  // `read_exclusive`, its exclusive stretch's, in one pass.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void OpenInterval(PathState& p,
                                                 const devices::Snapshot* snap,
                                                 uint64_t now_ns, bool read,
                                                 bool read_exclusive);
  // Ends the exclusive stretch (`stop_exclusive`: its overlap time and, if
  // it was read, its counts) and, with `close`, the interval (credited to
  // `acc`, its counts too if `counted`), in one pass over the values.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void CloseInterval(
      PathState& p, Accumulator* acc, const devices::Snapshot* snap,
      uint64_t now_ns, bool close, bool stop_exclusive, bool counted);
  // The counts of `p`'s exclusive stretch that ends at `snap`, value `i`.
  ABSL_ATTRIBUTE_ALWAYS_INLINE static uint64_t StretchCounts(
      const PathState& p, const devices::Snapshot& snap, size_t i);
  // Starts an exclusive stretch of an open interval (read: `read`).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void StartExclusive(
      PathState& p, const devices::Snapshot* snap, uint64_t now_ns, bool read);
  // Takes the boundary's snapshot, reads the clock, applies the
  // transitions and starts `f`'s call.
  void OpenFrame(Boundary& b, ThreadState& t, Frame& f, int name_id);
  // The boundaries most calls are, without Step and Apply (fast_): `f`
  // joins its path while other threads are inside, or opens a path that
  // has no parent path and no open child path; CloseFast, the same
  // leaving.  false: nothing was done (another case, or the word changed
  // under it), the general path follows.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool OpenFast(ThreadState& t, Frame& f);
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool CloseFast(ThreadState& t, Frame& f);
  // Adds a call of `f` that ends at `now_ns` to its accumulator.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void CountCall(const Frame& f, uint64_t now_ns,
                                              bool open, bool took_snapshot);
  // Stops marker `index` of `t` (as CloseFrom does a stack's levels).
  void CloseMarker(ThreadState& t, int index, uint64_t now_ns, bool open,
                   const devices::Snapshot* given);
  // Removes stopped marker `index` from `t`'s running ones.
  static void DropMarker(ThreadState& t, int index);
  // The thread's snapshot for a boundary that needs one (at the `where`
  // of region `name_id`), or nullptr: it failed (an error says so).
  ABSL_ATTRIBUTE_ALWAYS_INLINE const devices::Snapshot* SnapshotFor(
      ThreadState& t, const char* where, int name_id);
  ABSL_ATTRIBUTE_COLD void SnapshotFailed(const absl::Status& status,
                                          const char* where, int name_id);
  // Applies the boundary's transitions with `snap` at `now_ns` and
  // releases their words.
  void Apply(Boundary& b, const devices::Snapshot* snap, uint64_t now_ns);
  // Hands a call that `b` closed to the hooks (BoundaryHook::CallEnded).
  void ReportCall(const Boundary& b, ThreadState& t, const Frame& f,
                  uint64_t now_ns, bool marker, bool open);
  // The thread's hook data (ThreadAttached) on its state's first use.
  void AttachHooks(ThreadState& t);
  // Whether a hook keeps path `path`'s region in Collect (KeepsPath).
  bool HookKeeps(int path) const;
  // Closes the regions at levels [level, depth) of `t`, innermost first,
  // at `now_ns` (0: the clock once their paths' words are stepped);
  // `given`: a snapshot already taken (CloseOpenRegions).
  void CloseFrom(ThreadState& t, int level, uint64_t now_ns, bool open,
                 const devices::Snapshot* given);
  void Totals(const std::vector<PathInfo>& paths,
              std::vector<RetiredTotals>& raw,
              std::vector<RegionTotals>& out) const;

  devices::Device* const device_;
  const RecorderOptions options_;
  const size_t num_values_;
  const uint64_t generation_;
  // Every time on the hot path (a boundary's one clock read) is a tick of
  // this clock, turned into nanoseconds when collected.
  const common::TickClock clock_;
  // FastBoundaries(options_): Begin and End try OpenFast and CloseFast
  // first.
  bool fast_ = false;
  // RecorderOptions::hooks (at most kMaxHooks), and those of them that
  // observe path changes (their index in hooks_).
  std::vector<BoundaryHook*> hooks_;
  std::vector<size_t> observers_;
  bool call_counts_ = false;  // a hook wants_call_counts
  // Exclusive counts are read (no sampling).
  bool track_exclusive_ = true;
  std::unique_ptr<devices::SharedSnapshots> snapshots_;
  // Exclusive stretches side by side (RegionTotals::overlap_ns).
  OverlapClock overlap_;
  mutable std::mutex paths_mu_;
  std::vector<PathInfo> paths_;                     // guarded by paths_mu_
  absl::flat_hash_map<uint64_t, int> path_by_key_;  // guarded by paths_mu_
  // By path id; stable addresses, used without the lock once found.
  std::vector<std::unique_ptr<PathState>> path_states_;  // guarded

  mutable std::mutex threads_mu_;
  std::vector<std::unique_ptr<ThreadState>> threads_;  // guarded
  std::vector<ThreadState*> free_threads_;             // guarded
  uint64_t states_handed_out_ = 0;                     // guarded
  std::vector<RetiredTotals> retired_;  // per path, guarded by threads_mu_

  struct ErrorEntry {
    std::string text;
    std::string key;   // what merges repeats: the text, or a snapshot cause
    std::string many;  // the text for a count above 1 ("": text (xN))
    uint64_t count = 0;
  };
  void AddErrorEntry(ErrorEntry entry);
  mutable std::mutex errors_mu_;
  std::vector<ErrorEntry> errors_;  // guarded
  uint64_t more_errors_ = 0;        // guarded: beyond kMaxDistinctErrors
};

// Makes `recorder` the active one (regions count on it).
void Activate(Recorder* recorder);
// If `recorder` is the active one, no longer: new boundaries do not reach
// it.  Then waits as Recorder::Quiesce does.
Quiescence Deactivate(Recorder* recorder, std::chrono::nanoseconds timeout);

// Boundaries that found their recorder deactivated under them, and regions
// refused because a signal handler interrupted the SDK on the same thread:
// process-wide counts (a recorder reports the difference over its life).
uint64_t DroppedBoundaries();
uint64_t RefusedReentrantRegions();

// Tests: recorders made from now on take the general path at every
// boundary (no OpenFast, CloseFast), so that one suite checks both.
void UseGeneralBoundariesOnlyForTesting(bool general_only);
bool GeneralBoundariesOnlyForTesting();

// In a forked child: no region counts (the parent's session is not the
// child's).  Installed by the first Activate with pthread_atfork.
void ForgetActiveRecorderInChild();

}  // namespace uncore::regions

#endif  // UNCORE_SDK_REGIONS_RECORDER_H_
