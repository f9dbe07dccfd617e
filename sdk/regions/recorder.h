// Recorder: the region hot path.  Per-thread stacks of open regions, each
// with its begin snapshot, and per-thread accumulators (per region path:
// calls, wall time, overhead, inclusive counts), merged by Collect.
//
//   Recorder rec(device.get());            // a programmed Device
//   regions::Activate(&rec);               // what Session::Start does
//   { UNCORE_REGION("solve"); ... }        // Begin/End on this thread
//   regions::Deactivate(&rec);             // stops new boundaries, waits
//   std::vector<Recorder::RegionTotals> t = rec.Collect();  // for the rest
//
// Region paths: the names of the enclosing open regions of the same thread
// and the region's own, joined by '/'.  The same path on several threads is
// one region in the results.
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
// thread has used that region path (its first use locks and allocates).
// Threads crossing boundaries together share snapshots
// (devices::SharedSnapshots).  Accumulators have one writer (their thread)
// and are read by Collect with relaxed atomics, so Collect may run while
// threads are counting.  A thread that exits hands its totals to the
// recorder and its state is reused by the next thread: memory is bounded by
// the number of threads alive at once.
#ifndef UNCORE_SDK_REGIONS_RECORDER_H_
#define UNCORE_SDK_REGIONS_RECORDER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "sdk/devices/device.h"
#include "sdk/devices/shared_snapshots.h"
#include "uncore/region.h"

namespace uncore::regions {

// The process-wide name table.
std::string RegionName(int name_id);

struct RecorderOptions {
  // Take snapshots on every Nth call of each region path of a thread only
  // (the 1st, N+1th, ...); counts of the others are estimated.  1: every
  // call.
  int sample_every = 1;
  devices::SharedSnapshots::Mode snapshots =
      devices::SharedSnapshots::Mode::kShared;
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
    int depth = 0;
    uint64_t calls = 0;
    uint64_t sampled_calls = 0;  // calls with counts; < calls: estimated
    uint64_t wall_ns = 0;
    uint64_t min_ns = 0;
    uint64_t max_ns = 0;
    uint64_t overhead_ns = 0;
    uint64_t open_calls = 0;          // closed by CloseOpenRegions
    std::vector<uint64_t> inclusive;  // per read-plan entry, scaled
    std::vector<uint64_t> exclusive;  // inclusive minus child paths'
    bool estimated = false;           // scaled from sampled calls
  };
  // Every region entered so far, in order of first entry, merged over
  // threads (live and exited).  Regions still open are not in it (they are
  // counted when they end).
  std::vector<RegionTotals> Collect() const;
  // Regions open right now, as "path (thread N)".  Exact once the recorder
  // is deactivated.
  std::vector<std::string> OpenRegions() const;
  // Once deactivated and quiet: closes every region still open on any
  // thread with one last snapshot, counting them as open calls (their
  // threads will never end them on this recorder).
  void CloseOpenRegions();

  // Misuse and failures, each once with its count: "... (x12)".
  std::vector<std::string> Errors() const;
  void AddError(std::string message);

  size_t num_values() const { return num_values_; }
  uint64_t generation() const { return generation_; }
  const devices::SharedSnapshots* snapshots() const { return snapshots_.get(); }

  // The hot path; `slot` is the calling thread's, holding this recorder.
  void Begin(ThreadSlot& slot, int name_id);
  void End(ThreadSlot& slot, int name_id, bool exception);
  // A thread that used this recorder exits: its totals move to the
  // recorder and its state is kept for the next thread.
  void RetireThread(ThreadSlot& slot);

  // Waits until no thread is inside a boundary on this recorder (it must
  // no longer be the active one).  Anything but kQuiet: the recorder and its
  // device must be left alone (kCallerInside: not even read).
  Quiescence Quiesce(std::chrono::nanoseconds timeout) const;

 private:
  struct Accumulator;
  struct ThreadState;
  struct PathInfo {
    int name_id = -1;
    int parent = -1;
    int depth = 0;
    std::string path;
  };
  struct RetiredTotals;

  ThreadState* StateOf(ThreadSlot& slot);
  int PathOf(ThreadState& t, int parent, int name_id);
  int SlowPathOf(ThreadState& t, int parent, int name_id);
  Accumulator& AccumulatorOf(ThreadState& t, int path);
  // A snapshot through the shared-snapshot protocol; an invalid one is an
  // error.
  absl::Status ReadCounters(devices::Snapshot* out);
  // Closes the regions at levels [level, depth) of `t`, innermost first,
  // at `now_ns`; `end` is the end snapshot (nullptr: none was taken).
  void CloseFrom(ThreadState& t, int level, uint64_t now_ns,
                 uint64_t end_overhead_ns, const devices::Snapshot* end,
                 bool open = false);

  devices::Device* const device_;
  const RecorderOptions options_;
  const size_t num_values_;
  const uint64_t generation_;
  std::unique_ptr<devices::SharedSnapshots> snapshots_;

  mutable std::mutex paths_mu_;
  std::vector<PathInfo> paths_;                     // guarded by paths_mu_
  absl::flat_hash_map<uint64_t, int> path_by_key_;  // guarded by paths_mu_

  mutable std::mutex threads_mu_;
  std::vector<std::unique_ptr<ThreadState>> threads_;  // guarded
  std::vector<ThreadState*> free_threads_;             // guarded
  std::vector<RetiredTotals> retired_;  // per path, guarded by threads_mu_

  mutable std::mutex errors_mu_;
  std::vector<std::pair<std::string, uint64_t>> errors_;  // guarded
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

// In a forked child: no region counts (the parent's session is not the
// child's).  Installed by the first Activate with pthread_atfork.
void ForgetActiveRecorderInChild();

}  // namespace uncore::regions

#endif  // UNCORE_SDK_REGIONS_RECORDER_H_
