#include "sdk/regions/recorder.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/shared_snapshots.h"
#include "uncore/region.h"

namespace uncore {
namespace internal {
std::atomic<regions::Recorder*> g_active_recorder{nullptr};
}  // namespace internal

namespace regions {

namespace {

constexpr size_t kMaxDistinctErrors = 64;
// A name that could not be looked up safely (a signal handler interrupted
// the SDK on its thread): the region is refused.
constexpr int kRefusedName = -2;

// ---------------------------------------------------------------------------
// Names: a lock-free table.  Lookups walk a bucket's list with acquire
// loads; inserts take the mutex and publish a node at the bucket's head.
// Nodes are never freed (a name lives as long as the process).

struct NameNode {
  std::string text;
  internal::InternedName name{};
  size_t hash = 0;
  NameNode* next = nullptr;  // immutable once published
};

constexpr size_t kNameBuckets = 4096;

struct NameTable {
  std::array<std::atomic<NameNode*>, kNameBuckets> buckets{};
  std::mutex mu;
  std::vector<const NameNode*> by_id;  // guarded by mu
};

NameTable& Names() {
  static NameTable* table = new NameTable();  // never destroyed: names are
  return *table;                              // used until the very end
}

size_t HashOf(std::string_view name) {
  return absl::Hash<std::string_view>{}(name);
}

const NameNode* FindName(NameTable& t, std::string_view name, size_t hash) {
  for (const NameNode* n =
           t.buckets[hash % kNameBuckets].load(std::memory_order_acquire);
       n != nullptr; n = n->next) {
    if (n->hash == hash && n->text == name) return n;
  }
  return nullptr;
}

const NameNode* InternName(std::string_view name) {
  NameTable& t = Names();
  const size_t hash = HashOf(name);
  if (const NameNode* n = FindName(t, name, hash)) return n;
  std::lock_guard<std::mutex> lock(t.mu);
  if (const NameNode* n = FindName(t, name, hash)) return n;
  auto* node = new NameNode();
  node->text = std::string(name);
  node->hash = hash;
  node->name = {node->text.c_str(), node->text.size(),
                static_cast<int>(t.by_id.size())};
  std::atomic<NameNode*>& bucket = t.buckets[hash % kNameBuckets];
  node->next = bucket.load(std::memory_order_relaxed);
  t.by_id.push_back(node);
  bucket.store(node, std::memory_order_release);
  return node;
}

// ---------------------------------------------------------------------------
// Per-thread state that must stay usable in thread_local destructors and
// signal handlers: trivially destructible thread_locals only.

// > 0 while the SDK runs on this thread (a boundary, or a name's first
// use): a region opened then (by a signal handler) is refused.
thread_local int t_busy = 0;

class BusyScope {
 public:
  BusyScope() {
    ++t_busy;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~BusyScope() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    --t_busy;
  }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;
};

// A direct-mapped cache of names by pointer (and length).
struct NameCacheEntry {
  const char* key = nullptr;
  const internal::InternedName* name = nullptr;
};
constexpr size_t kNameCacheSize = 64;
thread_local std::array<NameCacheEntry, kNameCacheSize> t_name_cache{};

NameCacheEntry& CacheEntryOf(const char* key) {
  return t_name_cache[(reinterpret_cast<uintptr_t>(key) >> 3) % kNameCacheSize];
}

// The slow path of every name lookup; kRefusedName when this thread is
// already inside the SDK (the table's lock may be held by it).
int LookUpOrIntern(std::string_view name, NameCacheEntry* entry) {
  if (t_busy != 0) return kRefusedName;
  BusyScope busy;
  const NameNode* node = InternName(name);
  if (entry != nullptr) *entry = {name.data(), &node->name};
  return node->name.id;
}

std::atomic<uint64_t> g_generation{1};
std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_refused{0};

// Single-writer accumulation: only the owning thread writes.
inline void Add(std::atomic<uint64_t>& a, uint64_t v) {
  a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

}  // namespace

// ---------------------------------------------------------------------------
// Thread slots: one per live thread that used regions, recycled when it
// exits (a pthread key's destructor, which runs after the thread's C++
// thread_local destructors, so regions opened there still work).

struct ThreadSlot {
  // The recorder this thread is inside a boundary of, or nullptr.
  std::atomic<Recorder*> hazard{nullptr};
  // The recorder (by generation) `state` belongs to.
  uint64_t generation = 0;
  void* state = nullptr;  // Recorder::ThreadState*
  ThreadSlot* next_all = nullptr;
};

namespace {

struct SlotRegistry {
  std::mutex mu;
  std::atomic<ThreadSlot*> all{nullptr};  // every slot ever made
  std::vector<ThreadSlot*> free;          // guarded by mu
  pthread_key_t key{};
  bool key_ok = false;
};

void ReleaseSlot(void* p);

SlotRegistry& Slots() {
  static SlotRegistry* registry = [] {
    auto* r = new SlotRegistry();
    r->key_ok = pthread_key_create(&r->key, &ReleaseSlot) == 0;
    return r;
  }();
  return *registry;
}

thread_local ThreadSlot* t_slot = nullptr;

ThreadSlot* NewSlot() {
  BusyScope busy;
  SlotRegistry& r = Slots();
  ThreadSlot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (!r.free.empty()) {
      slot = r.free.back();
      r.free.pop_back();
    } else {
      slot = new ThreadSlot();
      slot->next_all = r.all.load(std::memory_order_relaxed);
      r.all.store(slot, std::memory_order_seq_cst);
    }
  }
  if (r.key_ok) pthread_setspecific(r.key, slot);
  t_slot = slot;
  return slot;
}

inline ThreadSlot& CurrentSlot() {
  ThreadSlot* slot = t_slot;
  return slot != nullptr ? *slot : *NewSlot();
}

void ReleaseSlot(void* p) {
  auto* slot = static_cast<ThreadSlot*>(p);
  {
    BusyScope busy;
    Recorder* r = internal::g_active_recorder.load(std::memory_order_acquire);
    if (r != nullptr && slot->state != nullptr) {
      slot->hazard.store(r, std::memory_order_seq_cst);
      if (internal::g_active_recorder.load(std::memory_order_seq_cst) == r &&
          slot->generation == r->generation()) {
        r->RetireThread(*slot);
      }
      slot->hazard.store(nullptr, std::memory_order_release);
    }
  }
  slot->state = nullptr;
  slot->generation = 0;
  t_slot = nullptr;
  SlotRegistry& r = Slots();
  std::lock_guard<std::mutex> lock(r.mu);
  r.free.push_back(slot);
}

// fork(): the registry's and the name table's locks are held across it, so
// the child finds them free; the child counts nothing (no active recorder).
void BeforeFork() {
  Names().mu.lock();
  Slots().mu.lock();
}
void AfterForkInParent() {
  Slots().mu.unlock();
  Names().mu.unlock();
}
void AfterForkInChild() {
  Slots().mu.unlock();
  Names().mu.unlock();
  ForgetActiveRecorderInChild();
}

}  // namespace

std::string RegionName(int name_id) {
  BusyScope busy;
  NameTable& t = Names();
  std::lock_guard<std::mutex> lock(t.mu);
  if (name_id < 0 || name_id >= static_cast<int>(t.by_id.size())) {
    return fmt::format("<region {}>", name_id);
  }
  return t.by_id[name_id]->text;
}

uint64_t DroppedBoundaries() { return g_dropped.load(); }
uint64_t RefusedReentrantRegions() { return g_refused.load(); }

void ForgetActiveRecorderInChild() {
  internal::g_active_recorder.store(nullptr, std::memory_order_relaxed);
  // The other threads are gone: their hazards must not stall a recorder of
  // the child's own that happens to get the same address.
  for (ThreadSlot* s = Slots().all.load(std::memory_order_relaxed);
       s != nullptr; s = s->next_all) {
    if (s != t_slot) s->hazard.store(nullptr, std::memory_order_relaxed);
  }
}

void Activate(Recorder* recorder) {
  static std::once_flag at_fork;
  std::call_once(at_fork, [] {
    (void)Names();
    (void)Slots();
    pthread_atfork(&BeforeFork, &AfterForkInParent, &AfterForkInChild);
  });
  internal::g_active_recorder.store(recorder, std::memory_order_seq_cst);
}

Quiescence Deactivate(Recorder* recorder, std::chrono::nanoseconds timeout) {
  Recorder* expected = recorder;
  internal::g_active_recorder.compare_exchange_strong(
      expected, nullptr, std::memory_order_seq_cst);
  return recorder->Quiesce(timeout);
}

// ---------------------------------------------------------------------------
// The recorder.

struct Recorder::Accumulator {
  explicit Accumulator(size_t n)
      : inclusive(new std::atomic<uint64_t>[n]),
        exclusive(new std::atomic<uint64_t>[n]) {
    for (size_t i = 0; i < n; ++i) {
      inclusive[i].store(0, std::memory_order_relaxed);
      exclusive[i].store(0, std::memory_order_relaxed);
    }
  }
  void Reset(size_t n) {
    for (std::atomic<uint64_t>* a : {&calls, &sampled_calls, &wall_ns, &max_ns,
                                     &overhead_ns, &open_calls}) {
      a->store(0, std::memory_order_relaxed);
    }
    min_ns.store(UINT64_MAX, std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i) {
      inclusive[i].store(0, std::memory_order_relaxed);
      exclusive[i].store(0, std::memory_order_relaxed);
    }
    begun = 0;
  }
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> sampled_calls{0};
  std::atomic<uint64_t> wall_ns{0};
  std::atomic<uint64_t> min_ns{UINT64_MAX};
  std::atomic<uint64_t> max_ns{0};
  std::atomic<uint64_t> overhead_ns{0};
  std::atomic<uint64_t> open_calls{0};
  std::unique_ptr<std::atomic<uint64_t>[]> inclusive;
  // Inclusive minus the child regions' counts of the same calls (without
  // sampling; with it, Collect derives exclusive counts from the paths).
  std::unique_ptr<std::atomic<uint64_t>[]> exclusive;
  uint64_t begun = 0;  // owner only: decides which calls are sampled
};

struct Recorder::RetiredTotals {
  uint64_t calls = 0;
  uint64_t sampled_calls = 0;
  uint64_t wall_ns = 0;
  uint64_t min_ns = UINT64_MAX;
  uint64_t max_ns = 0;
  uint64_t overhead_ns = 0;
  uint64_t open_calls = 0;
  std::vector<uint64_t> inclusive;  // empty until something is added
  std::vector<uint64_t> exclusive;

  // Adds a thread's accumulator of `n` values (relaxed loads: its owner
  // may still be counting).
  void Add(const Accumulator& a, size_t n) {
    calls += a.calls.load(std::memory_order_relaxed);
    sampled_calls += a.sampled_calls.load(std::memory_order_relaxed);
    wall_ns += a.wall_ns.load(std::memory_order_relaxed);
    min_ns = std::min(min_ns, a.min_ns.load(std::memory_order_relaxed));
    max_ns = std::max(max_ns, a.max_ns.load(std::memory_order_relaxed));
    overhead_ns += a.overhead_ns.load(std::memory_order_relaxed);
    open_calls += a.open_calls.load(std::memory_order_relaxed);
    inclusive.resize(n, 0);
    exclusive.resize(n, 0);
    for (size_t i = 0; i < n; ++i) {
      inclusive[i] += a.inclusive[i].load(std::memory_order_relaxed);
      exclusive[i] += a.exclusive[i].load(std::memory_order_relaxed);
    }
  }
  void Add(const RetiredTotals& other) {
    calls += other.calls;
    sampled_calls += other.sampled_calls;
    wall_ns += other.wall_ns;
    min_ns = std::min(min_ns, other.min_ns);
    max_ns = std::max(max_ns, other.max_ns);
    overhead_ns += other.overhead_ns;
    open_calls += other.open_calls;
    inclusive.resize(std::max(inclusive.size(), other.inclusive.size()), 0);
    exclusive.resize(inclusive.size(), 0);
    for (size_t i = 0; i < other.inclusive.size(); ++i) {
      inclusive[i] += other.inclusive[i];
      exclusive[i] += other.exclusive[i];
    }
  }
};

struct Recorder::ThreadState {
  struct Frame {
    int path = -1;
    int name_id = -1;
    uint64_t start_ns = 0;
    uint64_t overhead_ns = 0;  // of the begin boundary
    bool counted = false;      // sampled, and the begin snapshot is good
    Accumulator* accumulator = nullptr;
  };
  int index = 0;
  std::atomic<int> depth{0};  // written by the owner only
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

Recorder::Recorder(devices::Device* device, RecorderOptions options)
    : device_(device),
      options_(options),
      num_values_(device == nullptr ? 0 : device->read_plan().size()),
      generation_(g_generation.fetch_add(1)) {
  if (device_ != nullptr) {
    snapshots_ = std::make_unique<devices::SharedSnapshots>(
        device_, device_->per_thread_snapshots()
                     ? devices::SharedSnapshots::Mode::kEach
                     : options.snapshots);
  }
}

Recorder::~Recorder() = default;

Recorder::ThreadState* Recorder::StateOf(ThreadSlot& slot) {
  if (slot.generation == generation_) {
    return static_cast<ThreadState*>(slot.state);
  }
  ThreadState* t = nullptr;
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    if (!free_threads_.empty()) {
      t = free_threads_.back();
      free_threads_.pop_back();
    } else {
      auto fresh = std::make_unique<ThreadState>();
      fresh->begins.assign(kMaxRegionDepth, devices::Snapshot(num_values_));
      fresh->child_sums.assign(kMaxRegionDepth * num_values_, 0);
      fresh->end = devices::Snapshot(num_values_);
      fresh->index = static_cast<int>(threads_.size());
      t = fresh.get();
      threads_.push_back(std::move(fresh));
    }
  }
  slot.state = t;
  slot.generation = generation_;
  return t;
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

absl::Status Recorder::ReadCounters(devices::Snapshot* out) {
  absl::Status s = snapshots_->Take(out);
  if (s.ok() && !out->valid) {
    s = absl::DataLossError("the snapshot is marked invalid");
  }
  return s;
}

void Recorder::Begin(ThreadSlot& slot, int name_id) {
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
  const int parent = depth == 0 ? -1 : t.frames[depth - 1].path;
  ThreadState::Frame& f = t.frames[depth];
  f.path = PathOf(t, parent, name_id);
  f.name_id = name_id;
  f.accumulator = &AccumulatorOf(t, f.path);
  const bool sampled =
      device_ != nullptr &&
      (options_.sample_every <= 1 ||
       f.accumulator->begun++ % static_cast<uint64_t>(options_.sample_every) ==
           0);
  const uint64_t t0 = common::MonotonicNowNs();
  f.counted = false;
  uint64_t t1 = t0;
  if (sampled) {
    absl::Status s = ReadCounters(&t.begins[depth]);
    t1 = common::MonotonicNowNs();
    f.counted = s.ok();
    if (!s.ok()) {
      AddError(fmt::format(
          "a snapshot failed at the begin of \"{}\": {}; the counts of that "
          "call are estimated from the region's other calls",
          RegionName(name_id), common::StatusMessage(s)));
    }
  }
  f.start_ns = t1;
  f.overhead_ns = t1 - t0;
  uint64_t* sums = t.child_sums.data() + depth * num_values_;
  std::fill(sums, sums + num_values_, 0);
  t.depth.store(depth + 1, std::memory_order_relaxed);
}

void Recorder::CloseFrom(ThreadState& t, int level, uint64_t now_ns,
                         uint64_t end_overhead_ns, const devices::Snapshot* end,
                         bool open) {
  for (int l = t.depth.load(std::memory_order_relaxed) - 1; l >= level; --l) {
    ThreadState::Frame& f = t.frames[l];
    Accumulator& acc = *f.accumulator;
    const uint64_t wall = now_ns >= f.start_ns ? now_ns - f.start_ns : 0;
    Add(acc.calls, 1);
    if (open) Add(acc.open_calls, 1);
    Add(acc.wall_ns, wall);
    Add(acc.overhead_ns, f.overhead_ns + end_overhead_ns);
    if (wall < acc.min_ns.load(std::memory_order_relaxed)) {
      acc.min_ns.store(wall, std::memory_order_relaxed);
    }
    if (wall > acc.max_ns.load(std::memory_order_relaxed)) {
      acc.max_ns.store(wall, std::memory_order_relaxed);
    }
    if (!f.counted || end == nullptr) continue;
    Add(acc.sampled_calls, 1);
    const uint64_t* begin = t.begins[l].values.data();
    const uint64_t* values = end->values.data();
    const uint64_t* children = t.child_sums.data() + l * num_values_;
    uint64_t* parent =
        l == 0 ? nullptr : t.child_sums.data() + (l - 1) * num_values_;
    for (size_t i = 0; i < num_values_; ++i) {
      const uint64_t delta = values[i] >= begin[i] ? values[i] - begin[i] : 0;
      Add(acc.inclusive[i], delta);
      Add(acc.exclusive[i], delta >= children[i] ? delta - children[i] : 0);
      if (parent != nullptr) parent[i] += delta;
    }
  }
  t.depth.store(level, std::memory_order_relaxed);
}

void Recorder::End(ThreadSlot& slot, int name_id, bool exception) {
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
  bool need_snapshot = false;
  for (int l = level; l < depth; ++l) need_snapshot |= t.frames[l].counted;
  const uint64_t t0 = common::MonotonicNowNs();
  uint64_t t1 = t0;
  const devices::Snapshot* end = nullptr;
  if (need_snapshot) {
    absl::Status s = ReadCounters(&t.end);
    t1 = common::MonotonicNowNs();
    if (s.ok()) {
      end = &t.end;
    } else {
      AddError(fmt::format(
          "a snapshot failed at the end of \"{}\": {}; the counts of that "
          "call are estimated from the region's other calls",
          RegionName(t.frames[level].name_id), common::StatusMessage(s)));
    }
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
  CloseFrom(t, level, t0, t1 - t0, end);
}

void Recorder::RetireThread(ThreadSlot& slot) {
  auto* t = static_cast<ThreadState*>(slot.state);
  if (t == nullptr || slot.generation != generation_) return;
  const int depth = t->depth.load(std::memory_order_relaxed);
  if (depth > 0) {
    AddError(fmt::format(
        "a thread exited with region \"{}\" still open: not counted",
        RegionName(t->frames[depth - 1].name_id)));
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
      retired_[p].Add(*a, num_values_);
      a->Reset(num_values_);
    }
    t->depth.store(0, std::memory_order_relaxed);
    t->overflow = 0;
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
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const ThreadSlot* s = Slots().all.load(std::memory_order_seq_cst);
       s != nullptr; s = s->next_all) {
    while (s->hazard.load(std::memory_order_seq_cst) == this) {
      if (std::chrono::steady_clock::now() > deadline) {
        return Quiescence::kTimedOut;
      }
      std::this_thread::yield();
    }
  }
  return Quiescence::kQuiet;
}

std::vector<Recorder::RegionTotals> Recorder::Collect() const {
  BusyScope busy;  // a signal handler's region here must not take our locks
  std::vector<PathInfo> paths;
  {
    std::lock_guard<std::mutex> lock(paths_mu_);
    paths = paths_;
  }
  std::vector<RetiredTotals> raw(paths.size());
  for (RetiredTotals& r : raw) {
    r.inclusive.assign(num_values_, 0);
    r.exclusive.assign(num_values_, 0);
  }
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
        if (a != nullptr) raw[p].Add(*a, num_values_);
      }
    }
  }
  // Inclusive counts scaled to every call; exclusive ones from them.
  std::vector<RegionTotals> out(paths.size());
  for (size_t p = 0; p < paths.size(); ++p) {
    const RetiredTotals& r = raw[p];
    RegionTotals& t = out[p];
    t.name = RegionName(paths[p].name_id);
    t.path = paths[p].path;
    t.depth = paths[p].depth;
    t.calls = r.calls;
    t.sampled_calls = device_ == nullptr ? r.calls : r.sampled_calls;
    t.wall_ns = r.wall_ns;
    t.min_ns = r.calls == 0 ? 0 : r.min_ns;
    t.max_ns = r.max_ns;
    t.overhead_ns = r.overhead_ns;
    t.open_calls = r.open_calls;
    t.estimated = t.sampled_calls < t.calls;
    t.inclusive.assign(num_values_, 0);
    for (size_t i = 0; i < num_values_; ++i) {
      if (!t.estimated) {
        t.inclusive[i] = r.inclusive[i];
      } else if (t.sampled_calls > 0) {
        t.inclusive[i] = static_cast<uint64_t>(
            std::llround(static_cast<long double>(r.inclusive[i]) *
                         static_cast<long double>(t.calls) /
                         static_cast<long double>(t.sampled_calls)));
      }
    }
    // Exact per call without sampling; with it, estimated from the scaled
    // inclusive counts of the region and its child paths.
    t.exclusive = options_.sample_every <= 1 ? r.exclusive : t.inclusive;
  }
  if (options_.sample_every > 1) {
    for (size_t p = 0; p < paths.size(); ++p) {
      const int parent = paths[p].parent;
      if (parent < 0 || out[p].calls == 0) continue;
      for (size_t i = 0; i < num_values_; ++i) {
        uint64_t& e = out[parent].exclusive[i];
        e = e >= out[p].inclusive[i] ? e - out[p].inclusive[i] : 0;
      }
      out[parent].estimated |= out[p].estimated;
    }
  }
  std::vector<RegionTotals> result;
  for (RegionTotals& t : out) {
    if (t.calls > 0) result.push_back(std::move(t));
  }
  return result;
}

std::vector<std::string> Recorder::OpenRegions() const {
  BusyScope busy;
  std::vector<std::string> open;
  std::lock_guard<std::mutex> paths_lock(paths_mu_);
  std::lock_guard<std::mutex> threads_lock(threads_mu_);
  for (const std::unique_ptr<ThreadState>& t : threads_) {
    const int depth = t->depth.load(std::memory_order_relaxed);
    for (int l = 0; l < depth && l < kMaxRegionDepth; ++l) {
      const int path = t->frames[l].path;
      if (path >= 0 && path < static_cast<int>(paths_.size())) {
        open.push_back(
            fmt::format("{} (thread {})", paths_[path].path, t->index));
      }
    }
  }
  return open;
}

void Recorder::CloseOpenRegions() {
  BusyScope busy;
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    bool any_open = false;
    for (const std::unique_ptr<ThreadState>& t : threads_) {
      any_open |= t->depth.load(std::memory_order_relaxed) > 0;
    }
    if (!any_open) return;  // no last snapshot to take
  }
  devices::Snapshot end(num_values_);
  bool have_end = false;
  uint64_t t0 = common::MonotonicNowNs();
  uint64_t t1 = t0;
  if (snapshots_ != nullptr) {
    have_end = ReadCounters(&end).ok();
    t1 = common::MonotonicNowNs();
  }
  std::lock_guard<std::mutex> lock(threads_mu_);
  for (const std::unique_ptr<ThreadState>& t : threads_) {
    if (t->depth.load(std::memory_order_relaxed) == 0) continue;
    CloseFrom(*t, 0, t0, t1 - t0, have_end ? &end : nullptr, /*open=*/true);
    t->overflow = 0;
  }
}

void Recorder::AddError(std::string message) {
  BusyScope busy;
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
  BusyScope busy;
  std::lock_guard<std::mutex> lock(errors_mu_);
  std::vector<std::string> out;
  for (const auto& [text, count] : errors_) {
    out.push_back(count == 1 ? text : fmt::format("{} (x{})", text, count));
  }
  return out;
}

}  // namespace regions

RegionId InternRegionName(std::string_view name) {
  regions::BusyScope busy;
  return RegionId{regions::InternName(name)->name.id};
}

namespace internal {

int NameIdOf(const char* name) {
  if (name == nullptr) name = "";
  regions::NameCacheEntry& entry = regions::CacheEntryOf(name);
  if (entry.key == name && entry.name != nullptr &&
      std::strcmp(entry.name->data, name) == 0) {
    return entry.name->id;
  }
  return regions::LookUpOrIntern(name, &entry);
}

int NameIdOf(std::string_view name) {
  regions::NameCacheEntry& entry = regions::CacheEntryOf(name.data());
  if (entry.key == name.data() && entry.name != nullptr &&
      entry.name->size == name.size() &&
      (name.empty() ||
       std::memcmp(entry.name->data, name.data(), name.size()) == 0)) {
    return entry.name->id;
  }
  return regions::LookUpOrIntern(name, &entry);
}

int NameIdAtSiteSlow(RegionSite& site, std::string_view name) {
  if (regions::t_busy != 0) return regions::kRefusedName;
  regions::BusyScope busy;
  const regions::NameNode* node = regions::InternName(name);
  site.last.store(&node->name, std::memory_order_release);
  return node->name.id;
}

namespace {

// Publishes `recorder` in this thread's slot, runs `boundary` if it is still
// the active one, and withdraws it.  A region that interrupts the SDK on
// its own thread (from a signal handler) is refused.
template <typename F>
inline void OnActive(regions::Recorder* recorder, int name_id, F boundary) {
  if (name_id == regions::kRefusedName || regions::t_busy != 0) {
    regions::g_refused.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  regions::BusyScope busy;
  regions::ThreadSlot& slot = regions::CurrentSlot();
  slot.hazard.store(recorder, std::memory_order_seq_cst);
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
  OnActive(recorder, name_id, [&](regions::ThreadSlot& slot) {
    recorder->Begin(slot, name_id);
    generation = recorder->generation();
  });
  return generation;
}

void EndRegion(regions::Recorder* recorder, int name_id, bool exception,
               uint64_t generation) {
  if (g_active_recorder.load(std::memory_order_acquire) != recorder) {
    return;  // its session stopped: "still open" in that session's report
  }
  OnActive(recorder, name_id, [&](regions::ThreadSlot& slot) {
    // A region begun on an earlier recorder that had the same address is
    // not this one's.
    if (generation != 0 && generation != recorder->generation()) return;
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
