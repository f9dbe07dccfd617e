#include "sdk/regions/recorder.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/common/status_macros.h"
#include "uncore/region.h"

namespace uncore {
namespace internal {
std::atomic<regions::Recorder*> g_active_recorder{nullptr};
}  // namespace internal

namespace regions {

namespace {

constexpr size_t kMaxDistinctErrors = 64;

struct NameTable {
  std::mutex mu;
  std::vector<std::unique_ptr<std::string>> names;  // stable addresses
  absl::flat_hash_map<std::string, int> ids;
};

NameTable& Names() {
  static NameTable* table = new NameTable();  // never destroyed: names are
  return *table;                              // used until the very end
}

std::atomic<uint64_t> g_generation{1};

// Single-writer accumulation: only the owning thread writes.
inline void Add(std::atomic<uint64_t>& a, uint64_t v) {
  a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

}  // namespace

std::string RegionName(int name_id) {
  NameTable& t = Names();
  std::lock_guard<std::mutex> lock(t.mu);
  if (name_id < 0 || name_id >= static_cast<int>(t.names.size())) {
    return fmt::format("<region {}>", name_id);
  }
  return *t.names[name_id];
}

struct Recorder::Accumulator {
  explicit Accumulator(size_t n)
      : inclusive(new std::atomic<uint64_t>[n]),
        exclusive(new std::atomic<uint64_t>[n]) {
    for (size_t i = 0; i < n; ++i) {
      inclusive[i].store(0, std::memory_order_relaxed);
      exclusive[i].store(0, std::memory_order_relaxed);
    }
  }
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> wall_ns{0};
  std::atomic<uint64_t> min_ns{UINT64_MAX};
  std::atomic<uint64_t> max_ns{0};
  std::unique_ptr<std::atomic<uint64_t>[]> inclusive;
  std::unique_ptr<std::atomic<uint64_t>[]> exclusive;
};

struct Recorder::ThreadState {
  struct Frame {
    int path = -1;
    int name_id = -1;
    uint64_t start_ns = 0;
    bool valid = false;  // the begin snapshot is good
    Accumulator* accumulator = nullptr;
  };
  int index = 0;
  int depth = 0;
  int overflow = 0;  // regions begun beyond kMaxRegionDepth, not counted
  std::array<Frame, kMaxRegionDepth> frames;
  std::vector<devices::Snapshot> begins;  // per depth
  std::vector<uint64_t> child_sums;       // per depth, num_values each
  devices::Snapshot end;
  // Regions of this thread: (parent path, name) -> path, a direct-mapped
  // cache in front of a hash map.
  struct FastPath {
    int parent = -2;
    int name_id = -2;
    int path = -1;
  };
  std::array<FastPath, 64> fast_paths;
  absl::flat_hash_map<uint64_t, int> path_cache;
  // By path id; nullptr where the thread never entered the path.  Grows
  // under `mu` (Collect reads under it); entries are stable.
  mutable std::mutex mu;
  std::vector<std::unique_ptr<Accumulator>> accumulators;
};

Recorder::Recorder(devices::Device* device)
    : device_(device),
      num_values_(device == nullptr ? 0 : device->read_plan().size()),
      generation_(g_generation.fetch_add(1)) {}

Recorder::~Recorder() = default;

Recorder::ThreadState* Recorder::NewThreadState() {
  auto t = std::make_unique<ThreadState>();
  t->begins.assign(kMaxRegionDepth, devices::Snapshot(num_values_));
  t->child_sums.assign(kMaxRegionDepth * num_values_, 0);
  t->end = devices::Snapshot(num_values_);
  std::lock_guard<std::mutex> lock(threads_mu_);
  t->index = static_cast<int>(threads_.size());
  threads_.push_back(std::move(t));
  return threads_.back().get();
}

Recorder::ThreadState& Recorder::State() {
  struct Current {
    uint64_t generation = 0;
    ThreadState* state = nullptr;
  };
  thread_local Current current;
  if (current.generation != generation_) {
    current.state = NewThreadState();
    current.generation = generation_;
  }
  return *current.state;
}

int Recorder::PathOf(ThreadState& t, int parent, int name_id) {
  ThreadState::FastPath& fast =
      t.fast_paths[static_cast<uint32_t>(name_id * 7 + parent) %
                   t.fast_paths.size()];
  if (fast.parent == parent && fast.name_id == name_id) return fast.path;
  const int path = SlowPathOf(t, parent, name_id);
  fast = {parent, name_id, path};
  return path;
}

int Recorder::SlowPathOf(ThreadState& t, int parent, int name_id) {
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(parent)) << 32) |
      static_cast<uint32_t>(name_id);
  auto it = t.path_cache.find(key);
  if (it != t.path_cache.end()) return it->second;
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
      info.path = parent < 0 ? name : paths_[parent].path + "/" + name;
      path = static_cast<int>(paths_.size());
      paths_.push_back(std::move(info));
      path_by_key_.emplace(key, path);
    }
  }
  t.path_cache.emplace(key, path);
  return path;
}

Recorder::Accumulator& Recorder::AccumulatorOf(ThreadState& t, int path) {
  if (path < static_cast<int>(t.accumulators.size()) &&
      t.accumulators[path] != nullptr) {
    return *t.accumulators[path];
  }
  std::lock_guard<std::mutex> lock(t.mu);
  if (path >= static_cast<int>(t.accumulators.size())) {
    t.accumulators.resize(path + 1);
  }
  t.accumulators[path] = std::make_unique<Accumulator>(num_values_);
  return *t.accumulators[path];
}

void Recorder::Begin(int name_id) {
  ThreadState& t = State();
  if (t.depth >= kMaxRegionDepth) {
    ++t.overflow;
    AddError(fmt::format(
        "region \"{}\" opened deeper than the {} nesting levels a thread may "
        "have: not measured; close regions sooner or merge levels",
        RegionName(name_id), kMaxRegionDepth));
    return;
  }
  const int parent = t.depth == 0 ? -1 : t.frames[t.depth - 1].path;
  ThreadState::Frame& f = t.frames[t.depth];
  f.path = PathOf(t, parent, name_id);
  f.name_id = name_id;
  f.accumulator = &AccumulatorOf(t, f.path);
  uint64_t* sums = t.child_sums.data() + t.depth * num_values_;
  std::fill(sums, sums + num_values_, 0);
  ++t.depth;
  f.valid = true;
  if (device_ == nullptr) {
    f.start_ns = common::MonotonicNowNs();
    return;
  }
  devices::Snapshot& begin = t.begins[t.depth - 1];
  absl::Status s = device_->TakeSnapshot(&begin);
  if (!s.ok() || !begin.valid) {
    f.valid = false;
    AddError(
        fmt::format("a snapshot failed at the begin of \"{}\": {}; "
                    "that call is not counted",
                    RegionName(name_id), common::StatusMessage(s)));
  }
  // The snapshot's own CLOCK_MONOTONIC time (a clock read costs tens of
  // nanoseconds, more on some virtual machines).
  f.start_ns = begin.valid ? begin.timestamp_ns : common::MonotonicNowNs();
}

void Recorder::CloseTop(ThreadState& t, uint64_t now_ns, bool take_snapshot) {
  ThreadState::Frame& f = t.frames[t.depth - 1];
  const int level = t.depth - 1;
  --t.depth;
  absl::Status snapshot;
  if (take_snapshot) {
    if (device_ != nullptr) {
      snapshot = device_->TakeSnapshot(&t.end);
      if (snapshot.ok() && !t.end.valid) {
        snapshot = absl::DataLossError("the snapshot is marked invalid");
      }
    }
    now_ns = device_ != nullptr && snapshot.ok() ? t.end.timestamp_ns
                                                 : common::MonotonicNowNs();
  }
  Accumulator& acc = *f.accumulator;
  const uint64_t wall = now_ns >= f.start_ns ? now_ns - f.start_ns : 0;
  Add(acc.calls, 1);
  Add(acc.wall_ns, wall);
  if (wall < acc.min_ns.load(std::memory_order_relaxed)) {
    acc.min_ns.store(wall, std::memory_order_relaxed);
  }
  if (wall > acc.max_ns.load(std::memory_order_relaxed)) {
    acc.max_ns.store(wall, std::memory_order_relaxed);
  }
  if (device_ == nullptr || !f.valid) return;
  if (!snapshot.ok()) {
    AddError(
        fmt::format("a snapshot failed at the end of \"{}\": {}; "
                    "that call is not counted",
                    RegionName(f.name_id), common::StatusMessage(snapshot)));
    // The enclosing regions lose nothing: their deltas come from their own
    // snapshots.
    return;
  }
  const uint64_t* begin = t.begins[level].values.data();
  const uint64_t* end = t.end.values.data();
  const uint64_t* children = t.child_sums.data() + level * num_values_;
  uint64_t* parent_sums =
      level == 0 ? nullptr : t.child_sums.data() + (level - 1) * num_values_;
  for (size_t i = 0; i < num_values_; ++i) {
    const uint64_t delta = end[i] >= begin[i] ? end[i] - begin[i] : 0;
    Add(acc.inclusive[i], delta);
    Add(acc.exclusive[i], delta >= children[i] ? delta - children[i] : 0);
    if (parent_sums != nullptr) parent_sums[i] += delta;
  }
}

void Recorder::End(int name_id, bool exception) {
  ThreadState& t = State();
  if (t.overflow > 0) {
    --t.overflow;
    return;
  }
  if (t.depth == 0) {
    AddError(fmt::format(
        "end of region \"{}\" on a thread with no open region (an end "
        "without a begin, or a begin made before the session started)",
        RegionName(name_id)));
    return;
  }
  if (t.frames[t.depth - 1].name_id == name_id || name_id < 0) {
    if (exception) {
      AddError(fmt::format(
          "region \"{}\" was closed by an exception; it is counted up to "
          "that point",
          RegionName(name_id)));
    }
    CloseTop(t, 0, /*take_snapshot=*/true);
    return;
  }
  const uint64_t now = common::MonotonicNowNs();
  // Not the innermost: close the regions above it, if it is open at all.
  int level = t.depth - 1;
  while (level >= 0 && t.frames[level].name_id != name_id) --level;
  if (level < 0) {
    AddError(fmt::format(
        "end of region \"{}\" while \"{}\" is the innermost open region and "
        "\"{}\" is not open on this thread: ignored",
        RegionName(name_id), RegionName(t.frames[t.depth - 1].name_id),
        RegionName(name_id)));
    return;
  }
  if (device_ != nullptr) {
    absl::Status s = device_->TakeSnapshot(&t.end);
    if (!s.ok() || !t.end.valid) {
      for (int l = level; l < t.depth; ++l) t.frames[l].valid = false;
      AddError(fmt::format("a snapshot failed at the end of \"{}\": {}",
                           RegionName(name_id), common::StatusMessage(s)));
    }
  }
  while (t.depth - 1 > level) {
    AddError(fmt::format(
        "region \"{}\" was still open when its enclosing region \"{}\" "
        "ended: closed there",
        RegionName(t.frames[t.depth - 1].name_id), RegionName(name_id)));
    CloseTop(t, now, /*take_snapshot=*/false);
  }
  CloseTop(t, now, /*take_snapshot=*/false);
}

std::vector<Recorder::RegionTotals> Recorder::Collect() const {
  std::vector<PathInfo> paths;
  {
    std::lock_guard<std::mutex> lock(paths_mu_);
    paths = paths_;
  }
  std::vector<RegionTotals> out(paths.size());
  std::vector<bool> seen(paths.size(), false);
  for (size_t p = 0; p < paths.size(); ++p) {
    out[p].name = RegionName(paths[p].name_id);
    out[p].path = paths[p].path;
    out[p].depth = paths[p].depth;
    out[p].min_ns = UINT64_MAX;
    out[p].inclusive.assign(num_values_, 0);
    out[p].exclusive.assign(num_values_, 0);
  }
  std::lock_guard<std::mutex> threads_lock(threads_mu_);
  for (const std::unique_ptr<ThreadState>& t : threads_) {
    std::lock_guard<std::mutex> lock(t->mu);
    const size_t n = std::min(t->accumulators.size(), paths.size());
    for (size_t p = 0; p < n; ++p) {
      const Accumulator* a = t->accumulators[p].get();
      if (a == nullptr) continue;
      const uint64_t calls = a->calls.load(std::memory_order_relaxed);
      if (calls == 0) continue;
      RegionTotals& r = out[p];
      seen[p] = true;
      r.calls += calls;
      r.wall_ns += a->wall_ns.load(std::memory_order_relaxed);
      r.min_ns = std::min(r.min_ns, a->min_ns.load(std::memory_order_relaxed));
      r.max_ns = std::max(r.max_ns, a->max_ns.load(std::memory_order_relaxed));
      for (size_t i = 0; i < num_values_; ++i) {
        r.inclusive[i] += a->inclusive[i].load(std::memory_order_relaxed);
        r.exclusive[i] += a->exclusive[i].load(std::memory_order_relaxed);
      }
    }
  }
  std::vector<RegionTotals> result;
  for (size_t p = 0; p < out.size(); ++p) {
    if (seen[p]) result.push_back(std::move(out[p]));
  }
  return result;
}

std::vector<std::string> Recorder::OpenRegions() const {
  std::vector<std::string> open;
  std::lock_guard<std::mutex> paths_lock(paths_mu_);
  std::lock_guard<std::mutex> threads_lock(threads_mu_);
  for (const std::unique_ptr<ThreadState>& t : threads_) {
    // depth is written by its thread without a lock: this is a diagnostic
    // taken when the program says it is done counting.
    for (int l = 0; l < t->depth && l < kMaxRegionDepth; ++l) {
      const int path = t->frames[l].path;
      if (path >= 0 && path < static_cast<int>(paths_.size())) {
        open.push_back(
            fmt::format("{} (thread {})", paths_[path].path, t->index));
      }
    }
  }
  return open;
}

void Recorder::AddError(std::string message) {
  std::lock_guard<std::mutex> lock(errors_mu_);
  for (auto& [text, count] : errors_) {
    if (text == message) {
      ++count;
      return;
    }
  }
  if (errors_.size() < kMaxDistinctErrors) {
    errors_.emplace_back(std::move(message), 1);
  } else {
    errors_.back().second++;
  }
}

std::vector<std::string> Recorder::Errors() const {
  std::lock_guard<std::mutex> lock(errors_mu_);
  std::vector<std::string> out;
  for (const auto& [text, count] : errors_) {
    out.push_back(count == 1 ? text : fmt::format("{} (x{})", text, count));
  }
  return out;
}

}  // namespace regions

RegionId InternRegionName(std::string_view name) {
  regions::NameTable& t = regions::Names();
  std::lock_guard<std::mutex> lock(t.mu);
  const std::string key(name);
  auto it = t.ids.find(key);
  if (it != t.ids.end()) return RegionId{it->second};
  const int id = static_cast<int>(t.names.size());
  t.names.push_back(std::make_unique<std::string>(key));
  t.ids.emplace(key, id);
  return RegionId{id};
}

namespace internal {

int NameIdOf(const char* name) {
  if (name == nullptr) name = "";
  struct Cached {
    const std::string* interned;
    int id;
  };
  thread_local absl::flat_hash_map<const char*, Cached> cache;
  auto it = cache.find(name);
  if (it != cache.end() &&
      std::strcmp(it->second.interned->c_str(), name) == 0) {
    return it->second.id;
  }
  const int id = InternRegionName(name).value;
  const std::string* interned = nullptr;
  {
    regions::NameTable& t = regions::Names();
    std::lock_guard<std::mutex> lock(t.mu);
    interned = t.names[id].get();
  }
  cache[name] = Cached{interned, id};
  return id;
}

void BeginRegion(regions::Recorder* recorder, int name_id) {
  recorder->Begin(name_id);
}

void EndRegion(regions::Recorder* recorder, int name_id, bool exception) {
  recorder->End(name_id, exception);
}

}  // namespace internal

void RegionBegin(RegionId id) {
  regions::Recorder* r =
      internal::g_active_recorder.load(std::memory_order_acquire);
  if (r != nullptr) r->Begin(id.value);
}

void RegionEnd(RegionId id) {
  regions::Recorder* r =
      internal::g_active_recorder.load(std::memory_order_acquire);
  if (r != nullptr) r->End(id.value, /*exception=*/false);
}

void RegionBegin(std::string_view name) {
  if (internal::g_active_recorder.load(std::memory_order_acquire) == nullptr) {
    return;
  }
  RegionBegin(InternRegionName(name));
}

void RegionEnd(std::string_view name) {
  if (internal::g_active_recorder.load(std::memory_order_acquire) == nullptr) {
    return;
  }
  RegionEnd(InternRegionName(name));
}

}  // namespace uncore
