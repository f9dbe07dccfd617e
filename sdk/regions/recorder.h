// Recorder: the region hot path.  Per-thread stacks of open regions, each
// with its begin snapshot, and per-thread accumulators (per region path, per
// read-plan entry: inclusive and exclusive counts), merged by Collect.
//
//   Recorder rec(device.get());            // a programmed Device
//   internal::g_active_recorder = &rec;    // what Session::Start does
//   { UNCORE_REGION("solve"); ... }        // Begin/End on this thread
//   std::vector<Recorder::RegionTotals> t = rec.Collect();
//
// Region paths: the names of the enclosing open regions of the same thread
// and the region's own, joined by '/'.  The same path on several threads is
// one region in the results.
//
// Guarantees: Begin and End take no lock and allocate nothing once the
// thread has used that region path (its first use locks and allocates).
// Accumulators have one writer (their thread) and are read by Collect with
// relaxed atomics, so Collect may run while threads are counting.  A
// Recorder must outlive every region opened on it: Session keeps retired
// recorders until the process exits.
#ifndef UNCORE_SDK_REGIONS_RECORDER_H_
#define UNCORE_SDK_REGIONS_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "sdk/devices/device.h"
#include "uncore/region.h"

namespace uncore::regions {

// The process-wide name table.
std::string RegionName(int name_id);

class Recorder {
 public:
  // `device` is programmed and must outlive the recorder; nullptr counts
  // calls and wall time only.
  explicit Recorder(devices::Device* device);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void Begin(int name_id);
  void End(int name_id, bool exception);

  struct RegionTotals {
    std::string name;
    std::string path;
    int depth = 0;
    uint64_t calls = 0;
    uint64_t wall_ns = 0;
    uint64_t min_ns = 0;
    uint64_t max_ns = 0;
    std::vector<uint64_t> inclusive;  // per read-plan entry
    std::vector<uint64_t> exclusive;
  };
  // Every region entered so far, in order of first entry, merged over
  // threads.  Regions still open are not in it (they are counted when they
  // end).
  std::vector<RegionTotals> Collect() const;
  // Regions open right now, as "path (thread N)".
  std::vector<std::string> OpenRegions() const;

  // Misuse and failures, each once with its count: "... (x12)".
  std::vector<std::string> Errors() const;
  void AddError(std::string message);

  size_t num_values() const { return num_values_; }

 private:
  struct Accumulator;
  struct ThreadState;
  struct PathInfo {
    int name_id = -1;
    int parent = -1;
    int depth = 0;
    std::string path;
  };

  ThreadState& State();
  ThreadState* NewThreadState();
  int PathOf(ThreadState& t, int parent, int name_id);
  int SlowPathOf(ThreadState& t, int parent, int name_id);
  Accumulator& AccumulatorOf(ThreadState& t, int path);
  void CloseTop(ThreadState& t, uint64_t now_ns, bool take_snapshot);

  devices::Device* const device_;
  const size_t num_values_;
  const uint64_t generation_;

  mutable std::mutex paths_mu_;
  std::vector<PathInfo> paths_;                     // guarded by paths_mu_
  absl::flat_hash_map<uint64_t, int> path_by_key_;  // guarded by paths_mu_

  mutable std::mutex threads_mu_;
  std::vector<std::unique_ptr<ThreadState>> threads_;  // guarded

  mutable std::mutex errors_mu_;
  std::vector<std::pair<std::string, uint64_t>> errors_;  // guarded
};

}  // namespace uncore::regions

#endif  // UNCORE_SDK_REGIONS_RECORDER_H_
