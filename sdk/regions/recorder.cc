// The recorder's slow parts: making it, the paths and thread states a
// boundary finds on its first use, a thread's exit, Quiesce, Collect and
// the errors.  The hot path is boundaries.cc.
#include "sdk/regions/recorder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "sdk/common/asymmetric_fence.h"
#include "sdk/common/clock.h"
#include "sdk/common/region_path.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/shared_snapshots.h"
#include "sdk/regions/boundary_hook.h"
#include "sdk/regions/names.h"
#include "sdk/regions/recorder_state.h"
#include "sdk/regions/thread_slots.h"
#include "uncore/region.h"

namespace uncore::regions {

namespace {

constexpr size_t kMaxDistinctErrors = 64;

std::atomic<uint64_t> g_generation{1};
std::atomic<bool> g_general_boundaries_only{false};

bool AnyHookWantsMonotonicClock(const RecorderOptions& options) {
  return std::any_of(options.hooks.begin(), options.hooks.end(),
                     [](const BoundaryHook* h) {
                       return h != nullptr && h->wants_monotonic_clock();
                     });
}

}  // namespace

void UseGeneralBoundariesOnlyForTesting(bool general_only) {
  g_general_boundaries_only.store(general_only, std::memory_order_relaxed);
}

bool GeneralBoundariesOnlyForTesting() {
  return g_general_boundaries_only.load(std::memory_order_relaxed);
}

bool Recorder::FastBoundaries(const RecorderOptions& options) {
  // A hook sees every boundary that opens or closes a path (the fast path
  // tells no one); sampling decides per interval whether it is read.
  return options.hooks.empty() && options.sample_every <= 1 &&
         !g_general_boundaries_only.load(std::memory_order_relaxed);
}

Recorder::Recorder(devices::Device* device, RecorderOptions options)
    : device_(device),
      options_(std::move(options)),
      num_values_(device == nullptr ? 0 : device->read_plan().size()),
      generation_(g_generation.fetch_add(1)),
      // A hook that asks (a trace's records carry CLOCK_MONOTONIC times):
      // ticks are then nanoseconds.
      clock_(!AnyHookWantsMonotonicClock(options_) &&
             common::TscIsUsableClock()) {
  if (device_ != nullptr) {
    snapshots_ =
        std::make_unique<devices::SharedSnapshots>(device_, options_.snapshots);
  }
  for (BoundaryHook* hook : options_.hooks) {
    if (hook == nullptr) continue;
    if (hooks_.size() == kMaxHooks) {
      AddError(fmt::format(
          "more than {} boundary hooks given to one recorder: the rest are "
          "left out",
          kMaxHooks));
      break;
    }
    if (hook->observes_path_changes()) observers_.push_back(hooks_.size());
    call_counts_ |= hook->wants_call_counts();
    hooks_.push_back(hook);
  }
  track_exclusive_ = options_.sample_every <= 1;
  fast_ = FastBoundaries(options_);
  for (BoundaryHook* hook : hooks_) hook->Attached(*this);
  // The first thread's snapshots need no claim until a second thread comes
  // (NewStateOf); CloseOpenRegions takes its snapshot once every boundary
  // has left (Quiesce), alone too.
  if (fast_ && snapshots_ != nullptr) snapshots_->AllowSolo();
}

std::pair<std::string, std::string> Recorder::PathNames(int path) const {
  std::lock_guard<std::mutex> lock(paths_mu_);
  if (path < 0 || path >= static_cast<int>(paths_.size())) {
    return {fmt::format("<path {}>", path), fmt::format("<path {}>", path)};
  }
  return {RegionName(paths_[path].name_id), paths_[path].path};
}

Recorder::~Recorder() = default;

void Recorder::AttachHooks(ThreadState& t) {
  for (size_t h = 0; h < hooks_.size(); ++h) {
    t.hook_thread[h] = hooks_[h]->ThreadAttached();
  }
  if (call_counts_ && t.call_counts.empty()) {
    t.call_counts.assign((kMaxRegionDepth + 1) * num_values_, 0);
  }
  t.hooks_attached = true;
}

bool Recorder::HookKeeps(int path) const {
  if (hooks_.empty()) return false;
  const PathState* state = nullptr;
  {
    std::lock_guard<std::mutex> lock(paths_mu_);
    if (path < 0 || path >= static_cast<int>(path_states_.size())) return false;
    state = path_states_[path].get();
  }
  for (size_t h = 0; h < hooks_.size(); ++h) {
    if (hooks_[h]->KeepsPath(state->hook_data[h])) return true;
  }
  return false;
}

void Recorder::RetiredTotals::Add(const Accumulator& a, size_t n,
                                  uint64_t mean_snapshot_ns) {
  // First, acquiring: the counts of every interval it counts are there.
  intervals += a.intervals.load(std::memory_order_acquire);
  const uint64_t c = a.calls.load(std::memory_order_relaxed);
  calls += c;
  threads += c > 0 ? 1 : 0;
  sampled_calls += a.sampled_calls.load(std::memory_order_relaxed);
  thread_ns += a.thread_ns.load(std::memory_order_relaxed);
  min_ns = std::min(min_ns, a.min_ns.load(std::memory_order_relaxed));
  max_ns = std::max(max_ns, a.max_ns.load(std::memory_order_relaxed));
  overhead_ns += a.snapshots.load(std::memory_order_relaxed) * mean_snapshot_ns;
  open_calls += a.open_calls.load(std::memory_order_relaxed);
  measured_intervals += a.measured_intervals.load(std::memory_order_relaxed);
  wall_ns += a.wall_ns.load(std::memory_order_relaxed);
  counted_ns += a.counted_ns.load(std::memory_order_relaxed);
  overlap_ns += a.overlap_ns.load(std::memory_order_relaxed);
  inclusive.resize(n, 0);
  exclusive.resize(n, 0);
  for (size_t i = 0; i < n; ++i) {
    inclusive[i] += a.inclusive[i].load(std::memory_order_relaxed);
    exclusive[i] += a.exclusive[i].load(std::memory_order_relaxed);
  }
}

void Recorder::RetiredTotals::Add(const RetiredTotals& other) {
  calls += other.calls;
  threads += other.threads;
  sampled_calls += other.sampled_calls;
  thread_ns += other.thread_ns;
  min_ns = std::min(min_ns, other.min_ns);
  max_ns = std::max(max_ns, other.max_ns);
  overhead_ns += other.overhead_ns;
  open_calls += other.open_calls;
  intervals += other.intervals;
  measured_intervals += other.measured_intervals;
  wall_ns += other.wall_ns;
  counted_ns += other.counted_ns;
  overlap_ns += other.overlap_ns;
  inclusive.resize(std::max(inclusive.size(), other.inclusive.size()), 0);
  exclusive.resize(inclusive.size(), 0);
  for (size_t i = 0; i < other.inclusive.size(); ++i) {
    inclusive[i] += other.inclusive[i];
    exclusive[i] += other.exclusive[i];
  }
}

Recorder::ThreadState* Recorder::NewStateOf(ThreadSlot& slot) {
  ThreadState* t = nullptr;
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    first = states_handed_out_++ == 0;
    if (!free_threads_.empty()) {
      t = free_threads_.back();
      free_threads_.pop_back();
    } else {
      auto fresh = std::make_unique<ThreadState>();
      fresh->snapshot = devices::Snapshot(num_values_);
      fresh->index = static_cast<int>(threads_.size());
      t = fresh.get();
      threads_.push_back(std::move(fresh));
    }
  }
  // A second thread: the first one's snapshots stop being solo (no claim,
  // SharedSnapshots::AllowSolo) before this one takes any.
  if (!first && snapshots_ != nullptr) snapshots_->EndSolo();
  if (!t->hooks_attached) AttachHooks(*t);
  slot.state = t;
  slot.generation = generation_;
  return t;
}

int Recorder::SlowPathOf(ThreadState& t, int parent, int name_id,
                         PathState** state) {
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(parent)) << 32) |
      static_cast<uint32_t>(name_id);
  auto it = t.path_cache.find(key);
  if (it != t.path_cache.end()) {
    *state = it->second.second;
    return it->second.first;
  }
  int path = -1;
  {
    std::lock_guard<std::mutex> lock(paths_mu_);
    auto found = path_by_key_.find(key);
    if (found != path_by_key_.end()) {
      path = found->second;
    } else {
      PathInfo info;
      info.name_id = name_id;
      info.parent = parent;
      info.depth = parent < 0 ? 0 : paths_[parent].depth + 1;
      const std::string name = RegionName(name_id);
      info.path = parent < 0
                      ? common::TopRegionPath(name)
                      : common::JoinRegionPath(paths_[parent].path, name);
      path = static_cast<int>(paths_.size());
      auto state = std::make_unique<PathState>(num_values_);
      for (size_t h = 0; h < hooks_.size(); ++h) {
        state->hook_data[h] = hooks_[h]->PathCreated(path, info.path);
      }
      paths_.push_back(std::move(info));
      path_states_.push_back(std::move(state));
      path_by_key_.emplace(key, path);
    }
    *state = path_states_[path].get();
  }
  t.path_cache.emplace(key, std::make_pair(path, *state));
  return path;
}

Recorder::Accumulator& Recorder::NewAccumulatorOf(ThreadState& t, int path) {
  std::lock_guard<std::mutex> lock(t.mu);
  if (path >= static_cast<int>(t.accumulators.size())) {
    t.accumulators.resize(path + 1);
  }
  t.accumulators[path] = std::make_unique<Accumulator>(num_values_);
  return *t.accumulators[path];
}

void Recorder::RetireThread(ThreadSlot& slot) {
  auto* t = static_cast<ThreadState*>(slot.state);
  if (t == nullptr || slot.generation != generation_) return;
  const int depth = t->depth.load(std::memory_order_relaxed);
  if (depth > 0) {
    AddError(fmt::format(
        "a thread exited with region \"{}\" still open: counted up to its "
        "exit (its open_calls)",
        RegionName(t->frames[depth - 1].name_id)));
    CloseFrom(*t, 0, /*now_ns=*/0, /*open=*/true, nullptr);
  }
  while (t->markers_open > 0) {
    AddError(fmt::format(
        "a thread exited with marker region \"{}\" still running: counted "
        "up to its exit (its open_calls)",
        RegionName(t->markers[t->markers_open - 1].name_id)));
    CloseMarker(*t, t->markers_open - 1, /*now_ns=*/0, /*open=*/true, nullptr);
  }
  if (t->hooks_attached) {
    for (size_t h = 0; h < hooks_.size(); ++h) {
      hooks_[h]->ThreadDetached(t->hook_thread[h]);
      t->hook_thread[h] = nullptr;
    }
    t->hooks_attached = false;
  }
  {
    std::lock_guard<std::mutex> threads_lock(threads_mu_);
    std::lock_guard<std::mutex> lock(t->mu);
    if (retired_.size() < t->accumulators.size()) {
      retired_.resize(t->accumulators.size());
    }
    for (size_t p = 0; p < t->accumulators.size(); ++p) {
      Accumulator* a = t->accumulators[p].get();
      if (a == nullptr) continue;
      retired_[p].Add(*a, num_values_, t->MeanSnapshotNs());
      a->Reset(num_values_);
    }
    t->depth.store(0, std::memory_order_relaxed);
    t->overflow = 0;
    t->markers_open = 0;
    free_threads_.push_back(t);
  }
  slot.state = nullptr;
  slot.generation = 0;
}

Quiescence Recorder::Quiesce(std::chrono::nanoseconds timeout) const {
  const ThreadSlot* self = t_slot;
  if (t_busy != 0 ||
      (self != nullptr &&
       self->hazard.load(std::memory_order_relaxed) != nullptr)) {
    // Called from a signal handler that interrupted the SDK on this thread:
    // the interrupted boundary may hold any lock of this recorder.
    return Quiescence::kCallerInside;
  }
  // A boundary waiting for another process (a hook's) stops waiting.
  for (BoundaryHook* hook : hooks_) hook->Quiescing(true);
  // Every boundary that published this recorder before the fence is seen
  // below; every later one sees that it is no longer the active one.
  common::HeavyFence();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const ThreadSlot* s = FirstSlot(); s != nullptr; s = s->next_all) {
    while (s->hazard.load(std::memory_order_seq_cst) == this) {
      if (std::chrono::steady_clock::now() > deadline) {
        return Quiescence::kTimedOut;
      }
      std::this_thread::yield();
    }
  }
  // Quiet: CloseOpenRegions' hooks may wait again (bounded).
  for (BoundaryHook* hook : hooks_) hook->Quiescing(false);
  return Quiescence::kQuiet;
}

void Recorder::Totals(const std::vector<PathInfo>& paths,
                      std::vector<RetiredTotals>& raw,
                      std::vector<RegionTotals>& out) const {
  // Counts of unmeasured intervals (sampling, failed snapshots) estimated
  // from the measured ones; exclusive counts under sampling from the
  // paths.
  out.assign(paths.size(), RegionTotals{});
  const double ns_per_tick = clock_.NsPerTick();
  for (size_t p = 0; p < paths.size(); ++p) {
    const RetiredTotals& r = raw[p];
    RegionTotals& t = out[p];
    t.name = RegionName(paths[p].name_id);
    t.path = paths[p].path;
    t.path_id = static_cast<int>(p);
    t.depth = paths[p].depth;
    t.calls = r.calls;
    t.threads = r.threads;
    t.sampled_calls = device_ == nullptr ? r.calls : r.sampled_calls;
    // The accumulators count clock_'s ticks.
    t.wall_ns = common::TickClock::ToNs(r.wall_ns, ns_per_tick);
    t.thread_ns = common::TickClock::ToNs(r.thread_ns, ns_per_tick);
    t.min_ns =
        r.calls == 0 ? 0 : common::TickClock::ToNs(r.min_ns, ns_per_tick);
    t.max_ns = common::TickClock::ToNs(r.max_ns, ns_per_tick);
    t.overhead_ns = common::TickClock::ToNs(r.overhead_ns, ns_per_tick);
    t.overlap_ns = common::TickClock::ToNs(r.overlap_ns, ns_per_tick);
    t.open_calls = r.open_calls;
    t.intervals = r.intervals;
    t.measured_intervals =
        device_ == nullptr ? r.intervals : r.measured_intervals;
    t.estimated = t.measured_intervals < t.intervals;
    auto scaled = [&](const std::vector<uint64_t>& values) {
      std::vector<uint64_t> v(num_values_, 0);
      for (size_t i = 0; i < num_values_ && i < values.size(); ++i) {
        if (!t.estimated) {
          v[i] = values[i];
        } else if (t.measured_intervals > 0) {
          v[i] = static_cast<uint64_t>(
              std::llround(static_cast<long double>(values[i]) *
                           static_cast<long double>(t.intervals) /
                           static_cast<long double>(t.measured_intervals)));
        }
      }
      return v;
    };
    t.inclusive = scaled(r.inclusive);
    // The counters' own window, scaled as the counts are: count / window
    // is the measured intervals' rate either way.
    t.counted_ns = !t.estimated || t.measured_intervals == 0
                       ? r.counted_ns
                       : static_cast<uint64_t>(std::llround(
                             static_cast<long double>(r.counted_ns) *
                             static_cast<long double>(t.intervals) /
                             static_cast<long double>(t.measured_intervals)));
    t.exclusive =
        options_.sample_every <= 1 ? scaled(r.exclusive) : t.inclusive;
  }
  if (options_.sample_every > 1) {
    for (size_t p = 0; p < paths.size(); ++p) {
      const int parent = paths[p].parent;
      if (parent < 0 || out[p].calls == 0) continue;
      for (size_t i = 0; i < num_values_; ++i) {
        uint64_t& e = out[parent].exclusive[i];
        e = e >= out[p].inclusive[i] ? e - out[p].inclusive[i] : 0;
      }
      out[parent].estimated |= out[p].estimated || out[p].intervals > 0;
    }
  }
}

Recorder::RegionTime Recorder::RegionsTime() {
  const OverlapClock::Totals t = overlap_.Read(clock_.Now());
  const double ns_per_tick = clock_.NsPerTick();
  return {common::TickClock::ToNs(t.any_open, ns_per_tick),
          common::TickClock::ToNs(t.overcount, ns_per_tick)};
}

std::vector<Recorder::RegionTotals> Recorder::Collect() const {
  BusyScope busy;  // a signal handler's region here must not take our locks
  std::vector<PathInfo> paths;
  {
    std::lock_guard<std::mutex> lock(paths_mu_);
    paths = paths_;
  }
  std::vector<RetiredTotals> raw(paths.size());
  {
    std::lock_guard<std::mutex> threads_lock(threads_mu_);
    for (size_t p = 0; p < retired_.size() && p < raw.size(); ++p) {
      raw[p].Add(retired_[p]);
    }
    for (const std::unique_ptr<ThreadState>& t : threads_) {
      std::lock_guard<std::mutex> lock(t->mu);
      const size_t n = std::min(t->accumulators.size(), paths.size());
      for (size_t p = 0; p < n; ++p) {
        const Accumulator* a = t->accumulators[p].get();
        if (a != nullptr) raw[p].Add(*a, num_values_, t->MeanSnapshotNs());
      }
    }
  }
  std::vector<RegionTotals> out;
  Totals(paths, raw, out);
  std::vector<RegionTotals> result;
  for (RegionTotals& t : out) {
    // A path whose calls a LIKWID reset took away may still hold a hook's
    // history (the node union's share): kept for it.
    if (t.calls > 0 || HookKeeps(t.path_id)) result.push_back(std::move(t));
  }
  return result;
}

std::vector<Recorder::RegionTotals> Recorder::CollectCallingThread() const {
  const ThreadSlot* slot = t_slot;
  if (slot == nullptr || slot->generation != generation_) return {};
  BusyScope busy;
  std::vector<PathInfo> paths;
  {
    std::lock_guard<std::mutex> lock(paths_mu_);
    paths = paths_;
  }
  std::vector<RetiredTotals> raw(paths.size());
  std::vector<bool> entered(paths.size(), false);
  const auto* t = static_cast<const ThreadState*>(slot->state);
  {
    std::lock_guard<std::mutex> lock(t->mu);
    const size_t n = std::min(t->accumulators.size(), paths.size());
    for (size_t p = 0; p < n; ++p) {
      const Accumulator* a = t->accumulators[p].get();
      if (a != nullptr) raw[p].Add(*a, num_values_, t->MeanSnapshotNs());
      entered[p] = a != nullptr;
    }
  }
  std::vector<RegionTotals> out;
  Totals(paths, raw, out);
  // Every path the thread entered, even with nothing counted yet (its
  // first call still open, or reset): LIKWID's GET then reads zeros.
  std::vector<RegionTotals> result;
  for (size_t p = 0; p < out.size(); ++p) {
    if (entered[p]) result.push_back(std::move(out[p]));
  }
  return result;
}

std::vector<Recorder::OpenRegion> Recorder::OpenRegions() const {
  BusyScope busy;
  std::vector<OpenRegion> open;
  absl::flat_hash_map<int, size_t> index_of_path;  // into `open`
  std::lock_guard<std::mutex> paths_lock(paths_mu_);
  std::lock_guard<std::mutex> threads_lock(threads_mu_);
  for (const std::unique_ptr<ThreadState>& t : threads_) {
    // A thread counts once per path, though a marker and a region (or two
    // markers) may hold the same path open on it.
    std::vector<int> paths_of_thread;  // a few: at most its depth
    auto add = [&](int path) {
      if (path < 0 || path >= static_cast<int>(paths_.size()) ||
          std::find(paths_of_thread.begin(), paths_of_thread.end(), path) !=
              paths_of_thread.end()) {
        return;
      }
      paths_of_thread.push_back(path);
      const auto [it, inserted] = index_of_path.try_emplace(path, open.size());
      if (inserted) {
        open.push_back({.path = paths_[path].path,
                        .threads = 0,
                        .first_thread = t->index});
      }
      ++open[it->second].threads;
    };
    const int depth = t->depth.load(std::memory_order_relaxed);
    for (int l = 0; l < depth && l < kMaxRegionDepth; ++l) {
      add(t->frames[l].path);
    }
    for (int m = 0; m < t->markers_open; ++m) add(t->markers[m].path);
  }
  return open;
}

void Recorder::CloseOpenRegions() {
  BusyScope busy;
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    bool any_open = false;
    for (const std::unique_ptr<ThreadState>& t : threads_) {
      any_open |=
          t->depth.load(std::memory_order_relaxed) > 0 || t->markers_open > 0;
    }
    if (!any_open) return;  // no last snapshot to take
  }
  // One last snapshot closes every open interval; the threads' open calls
  // end there too.
  devices::Snapshot end(num_values_);
  if (snapshots_ != nullptr) {
    absl::Status status = ReadCounters(&end);
    if (!status.ok()) {
      end.valid = false;
      const std::string reason = common::StatusMessage(status);
      AddSnapshotError(
          fmt::format(
              "the last snapshot, which closes the regions still open at the "
              "stop, failed: {}; their counts are estimated from their other "
              "intervals",
              reason),
          reason, "the stop");
    }
  }
  const uint64_t now = clock_.Now();
  std::lock_guard<std::mutex> lock(threads_mu_);
  for (const std::unique_ptr<ThreadState>& t : threads_) {
    if (t->depth.load(std::memory_order_relaxed) > 0) {
      CloseFrom(*t, 0, now, /*open=*/true, &end);
    }
    while (t->markers_open > 0) {
      CloseMarker(*t, t->markers_open - 1, now, /*open=*/true, &end);
    }
    t->overflow = 0;
  }
}

void Recorder::AddError(std::string message) {
  ErrorEntry entry;
  entry.key = message;
  entry.text = std::move(message);
  AddErrorEntry(std::move(entry));
}

void Recorder::AddSnapshotError(std::string message, std::string_view reason,
                                std::string_view first_where) {
  ErrorEntry entry;
  entry.key = fmt::format("snapshot\n{}", reason);
  entry.many = fmt::format(
      "snapshots failed, the first at {}: {}; the counts of those intervals "
      "are estimated from their regions' other intervals",
      first_where, reason);
  entry.text = std::move(message);
  AddErrorEntry(std::move(entry));
}

void Recorder::AddErrorEntry(ErrorEntry entry) {
  BusyScope busy;
  std::lock_guard<std::mutex> lock(errors_mu_);
  for (ErrorEntry& e : errors_) {
    if (e.key == entry.key) {
      ++e.count;
      return;
    }
  }
  if (errors_.size() < kMaxDistinctErrors) {
    entry.count = 1;
    errors_.push_back(std::move(entry));
  } else {
    ++more_errors_;  // never merged into the last one listed
  }
}

std::vector<std::string> Recorder::Errors() const {
  BusyScope busy;
  std::lock_guard<std::mutex> lock(errors_mu_);
  std::vector<std::string> out;
  for (const ErrorEntry& e : errors_) {
    if (e.count == 1) {
      out.push_back(e.text);
    } else if (!e.many.empty()) {
      out.push_back(fmt::format("{} {}", e.count, e.many));
    } else {
      out.push_back(fmt::format("{} (x{})", e.text, e.count));
    }
  }
  if (more_errors_ > 0) {
    out.push_back(fmt::format(
        "{} more error{}, not listed: a report lists the first {} distinct "
        "ones",
        more_errors_, more_errors_ == 1 ? "" : "s", kMaxDistinctErrors));
  }
  return out;
}

}  // namespace uncore::regions