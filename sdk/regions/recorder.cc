#include "sdk/regions/recorder.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
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

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "fmt/format.h"
#include "sdk/common/asymmetric_fence.h"
#include "sdk/common/clock.h"
#include "sdk/common/cpu_relax.h"
#include "sdk/common/region_path.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/shared_snapshots.h"
#include "sdk/regions/path_rule.h"
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
// (The global-dynamic TLS model, not initial-exec: a library that the
// OpenMP runtime or Kokkos dlopens as a tool would need its whole TLS block
// in the C library's small static reserve, and dlopen fails without it.)
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

// The hazard handshake (docs/concurrency.md, "Lifetime"): a boundary
// publishes its recorder in its slot, then checks that the recorder is still
// the active one; Deactivate clears the active recorder, then looks at the
// slots.  Either side sees the other's store: the boundary's fence is a
// light one (common/asymmetric_fence.h: no locked instruction where
// membarrier serves), Quiesce's the heavy one.
inline void PublishHazard(std::atomic<Recorder*>& hazard, Recorder* recorder) {
  if (common::LightFencesEnabled()) {
    hazard.store(recorder, std::memory_order_relaxed);
    common::LightFence();
  } else {
    hazard.store(recorder, std::memory_order_seq_cst);
  }
}

std::atomic<uint64_t> g_generation{1};
std::atomic<bool> g_general_boundaries_only{false};
std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_refused{0};

// Single-writer accumulation: only the owning thread writes.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void Add(std::atomic<uint64_t>& a,
                                             uint64_t v) {
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

void UseGeneralBoundariesOnlyForTesting(bool general_only) {
  g_general_boundaries_only.store(general_only, std::memory_order_relaxed);
}

bool GeneralBoundariesOnlyForTesting() {
  return g_general_boundaries_only.load(std::memory_order_relaxed);
}

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
  common::EnableAsymmetricFences();
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

namespace {

using path_rule::kPathLock;

// One snapshot in this many of a thread's is timed (two more clock reads);
// a region's overhead is its boundaries' snapshots times their thread's
// mean snapshot time (computed when collected: no division on the path).
constexpr uint64_t kTimeEvery = 64;

// Node groups a process steps at most (Transition's bit masks).
constexpr size_t kMaxNodeGroups = 32;

inline uint64_t Delta(uint64_t end, uint64_t begin) {
  return end >= begin ? end - begin : 0;
}

}  // namespace

// Times: every *_ns field and now_ns/open_ns argument below, in the
// accumulators, frames, path states and retired totals, holds ticks of the
// recorder's clock_ (common::TickClock: TSC ticks, or nanoseconds where it
// reads CLOCK_MONOTONIC); Totals turns them into nanoseconds for
// RegionTotals.
struct Recorder::Accumulator {
  Accumulator(size_t n, size_t groups)
      : inclusive(new std::atomic<uint64_t>[n]),
        exclusive(new std::atomic<uint64_t>[n]),
        node_groups(groups) {
    if (groups > 0) {
      node_share.reset(new std::atomic<uint64_t>[n]);
      node_counts.reset(new std::atomic<uint64_t>[3 * groups]);
    }
    Reset(n);
  }
  void Reset(size_t n) {
    node_failed.store(false, std::memory_order_relaxed);
    if (node_groups > 0) {
      for (size_t i = 0; i < n; ++i) {
        node_share[i].store(0, std::memory_order_relaxed);
      }
      for (size_t i = 0; i < 3 * node_groups; ++i) {
        node_counts[i].store(0, std::memory_order_relaxed);
      }
    }
    ResetOwn(n);
  }
  // The thread's own calls and counts only (a LIKWID reset): its node
  // share is the node's history and stays.
  void ResetOwn(size_t n) {
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
  // Node sharing (RegionTotals::NodeShare), credited by this thread's
  // boundaries: per read-plan entry its share (modulo 2^64), then per node
  // group [opens, closes, wall] at node_counts[3 * group].
  const size_t node_groups;
  std::unique_ptr<std::atomic<uint64_t>[]> node_share;
  std::unique_ptr<std::atomic<uint64_t>[]> node_counts;
  std::atomic<bool> node_failed{false};
};

// One per region path, shared by every thread.
struct Recorder::PathState {
  explicit PathState(size_t n)
      : begin(n), exclusive_begin(n), exclusive(n, 0) {}
  std::atomic<uint64_t> word{0};  // path_rule's
  // Per node group (RecorderOptions::node_groups), the path's node word in
  // that group's segment; nullptr where its table was full.
  std::vector<std::atomic<uint64_t>*> node_words;
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
};

// What a boundary changed of one path's state (recorded by Step, applied by
// Apply).  Plain fields with no initialisers: a boundary's array of them is
// left uninitialised (filling ~800 bytes per boundary showed in profiles);
// Step writes every field of the entries it records.
struct Recorder::Transition {
  PathState* path;
  Accumulator* accumulator;  // the boundary thread's, of the path
  path_rule::Step step;
  bool measure;  // opened: its interval is to be read
  // Closed, for a trace: when its interval opened, and whether its counts
  // are in Boundary::trace_counts.
  uint64_t open_ns;
  bool counted;
  // Node groups (bit g: RecorderOptions::node_groups[g]) whose node word of
  // the path this boundary took 0 -> 1 or 1 -> 0, held busy until Apply.
  uint32_t node_opened;
  uint32_t node_closed;
};

struct Recorder::Boundary {
  std::array<Transition, kMaxRegionDepth + 1> transitions;  // [0, count)
  int count = 0;
  bool needs_snapshot = false;
  // Tracing: num_values per transition, the counts of the intervals closed.
  uint64_t* trace_counts = nullptr;
  // A node word opened or closed (StepNodeWords): the boundary's time on
  // CLOCK_MONOTONIC, read beside its own clock (NodeTime), for a snapshot
  // without a time of its own.
  bool node_transition = false;
  uint64_t node_now_ns = 0;
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
  // Node sharing: Accumulator's node_share and node_counts, summed.
  bool node_failed = false;
  std::vector<uint64_t> node_share;
  std::vector<uint64_t> node_counts;

  // Adds a thread's accumulator of `n` values (relaxed loads: its owner
  // may still be counting); its snapshots took `mean_snapshot_ns` each.
  void Add(const Accumulator& a, size_t n, uint64_t mean_snapshot_ns) {
    // First, acquiring: the counts of every interval it counts are there.
    intervals += a.intervals.load(std::memory_order_acquire);
    const uint64_t c = a.calls.load(std::memory_order_relaxed);
    calls += c;
    threads += c > 0 ? 1 : 0;
    sampled_calls += a.sampled_calls.load(std::memory_order_relaxed);
    thread_ns += a.thread_ns.load(std::memory_order_relaxed);
    min_ns = std::min(min_ns, a.min_ns.load(std::memory_order_relaxed));
    max_ns = std::max(max_ns, a.max_ns.load(std::memory_order_relaxed));
    overhead_ns +=
        a.snapshots.load(std::memory_order_relaxed) * mean_snapshot_ns;
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
    if (a.node_groups > 0) {
      node_failed |= a.node_failed.load(std::memory_order_relaxed);
      node_share.resize(n, 0);
      node_counts.resize(3 * a.node_groups, 0);
      for (size_t i = 0; i < n; ++i) {
        node_share[i] += a.node_share[i].load(std::memory_order_relaxed);
      }
      for (size_t i = 0; i < node_counts.size(); ++i) {
        node_counts[i] += a.node_counts[i].load(std::memory_order_relaxed);
      }
    }
  }
  void Add(const RetiredTotals& other) {
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
    node_failed |= other.node_failed;
    node_share.resize(std::max(node_share.size(), other.node_share.size()), 0);
    node_counts.resize(std::max(node_counts.size(), other.node_counts.size()),
                       0);
    for (size_t i = 0; i < other.node_share.size(); ++i) {
      node_share[i] += other.node_share[i];
    }
    for (size_t i = 0; i < other.node_counts.size(); ++i) {
      node_counts[i] += other.node_counts[i];
    }
  }
};

struct Recorder::Frame {
  int path = -1;
  int name_id = -1;
  PathState* state = nullptr;
  // The path's parent (the frame below, or a path of another thread's:
  // BeginUnder), nullptr at the top level.
  PathState* parent_state = nullptr;
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
  // Tracing: the thread's records, and room for the counts of the
  // intervals one boundary closes (Boundary::trace_counts).
  trace::TraceCollector::ThreadLog* trace_log = nullptr;
  std::vector<uint64_t> trace_counts;
};

Recorder::Recorder(devices::Device* device, RecorderOptions options)
    : device_(device),
      options_(std::move(options)),
      num_values_(device == nullptr ? 0 : device->read_plan().size()),
      generation_(g_generation.fetch_add(1)),
      // A trace's records carry CLOCK_MONOTONIC times: ticks are then
      // nanoseconds.
      clock_(options_.trace == nullptr && common::TscIsUsableClock()) {
  if (device_ != nullptr) {
    snapshots_ =
        std::make_unique<devices::SharedSnapshots>(device_, options_.snapshots);
    if (options_.trace != nullptr) snapshots_->SetObserver(options_.trace);
  }
  if (options_.trace != nullptr) {
    options_.trace->SetPathNames([this](int path) { return PathNames(path); });
  }
  if (device_ != nullptr && options_.sample_every <= 1) {
    for (const devices::NodeUnionGroup& g : options_.node_groups) {
      if (g.table.present() && g.first_entry + g.entries <= num_values_) {
        node_groups_.push_back(g);
      }
    }
    std::sort(node_groups_.begin(), node_groups_.end(),
              [](const devices::NodeUnionGroup& a,
                 const devices::NodeUnionGroup& b) { return a.name < b.name; });
    if (node_groups_.size() > kMaxNodeGroups) {
      AddError(fmt::format(
          "this process reads {} shared counters segments; node unions are "
          "counted over at most {}: the merged report takes one process's "
          "view per socket",
          node_groups_.size(), kMaxNodeGroups));
      node_groups_.clear();
    }
  }
  track_exclusive_ = options_.sample_every <= 1;
  fast_ = options_.trace == nullptr && node_groups_.empty() &&
          options_.sample_every <= 1 &&
          !g_general_boundaries_only.load(std::memory_order_relaxed);
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

inline Recorder::ThreadState* Recorder::StateOf(ThreadSlot& slot) {
  if (slot.generation == generation_) [[likely]] {
    return static_cast<ThreadState*>(slot.state);
  }
  return NewStateOf(slot);
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
  if (options_.trace != nullptr && t->trace_log == nullptr) {
    t->trace_log = options_.trace->AttachThread();
    t->trace_counts.assign((kMaxRegionDepth + 1) * num_values_, 0);
  }
  slot.state = t;
  slot.generation = generation_;
  return t;
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
      bool full = false;
      for (const devices::NodeUnionGroup& g : node_groups_) {
        state->node_words.push_back(g.table.WordOf(info.path));
        full |= state->node_words.back() == nullptr;
      }
      if (full) {
        AddError(fmt::format(
            "region \"{}\": the node's table of region paths is full ({} "
            "paths per shared counters segment): its merged counts take one "
            "process's view per socket",
            info.path, devices::kNodeUnionSlots));
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

inline Recorder::Accumulator& Recorder::AccumulatorOf(ThreadState& t,
                                                      int path) {
  if (path < static_cast<int>(t.accumulators.size()) &&
      t.accumulators[path] != nullptr) [[likely]] {
    return *t.accumulators[path];
  }
  return NewAccumulatorOf(t, path);
}

Recorder::Accumulator& Recorder::NewAccumulatorOf(ThreadState& t, int path) {
  std::lock_guard<std::mutex> lock(t.mu);
  if (path >= static_cast<int>(t.accumulators.size())) {
    t.accumulators.resize(path + 1);
  }
  t.accumulators[path] =
      std::make_unique<Accumulator>(num_values_, node_groups_.size());
  return *t.accumulators[path];
}

inline absl::Status Recorder::ReadCounters(devices::Snapshot* out) {
  absl::Status s = snapshots_->Take(out);
  if (s.ok() && !out->valid) [[unlikely]] {
    s = absl::DataLossError("the snapshot is marked invalid");
  }
  return s;
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

bool Recorder::Step(Boundary& b, PathState& p, Accumulator* acc,
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
          .measure = false,
          .open_ns = 0,
          .counted = false,
          .node_opened = 0,
          .node_closed = 0};
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

void Recorder::StepNodeWords(Boundary& b) {
  if (node_groups_.empty()) return;
  // Innermost first (the order of the transitions), and each path's groups
  // by name: every process takes node words in one order, after its own
  // words, so that waiting cannot go round in a circle.
  for (int k = 0; k < b.count; ++k) {
    Transition& tr = b.transitions[k];
    if (!tr.step.opened && !tr.step.closed) continue;
    Accumulator& acc = *tr.accumulator;  // an opening or closing step's
    for (size_t g = 0; g < node_groups_.size(); ++g) {
      std::atomic<uint64_t>* word = tr.path->node_words[g];
      if (word == nullptr || node_off_.load(std::memory_order_relaxed)) {
        acc.node_failed.store(true, std::memory_order_relaxed);
        continue;
      }
      const uint32_t bit = uint32_t{1} << g;
      switch (devices::StepNodeWord(*word, tr.step.opened,
                                    devices::kNodeWordTimeout, &quiescing_)) {
        case devices::NodeStep::kJoined:
          break;
        case devices::NodeStep::kOpened:
          tr.node_opened |= bit;
          b.needs_snapshot = true;
          b.node_transition = true;
          break;
        case devices::NodeStep::kClosed:
          tr.node_closed |= bit;
          b.needs_snapshot = true;
          b.node_transition = true;
          break;
        case devices::NodeStep::kTimedOut:
        case devices::NodeStep::kBroken:
          acc.node_failed.store(true, std::memory_order_relaxed);
          if (!node_off_.exchange(true, std::memory_order_relaxed)) {
            // Words are held busy until Apply: nothing may throw here.
            try {
              AddError(fmt::format(
                  "the node's count of processes inside a region of shared "
                  "counters segment {} was held by another process for over "
                  "{} s or while the session stopped, or was inconsistent (a "
                  "process died inside a boundary?): this process no longer "
                  "counts node unions, and the merged report takes one "
                  "process's view per socket",
                  node_groups_[g].name, devices::kNodeWordTimeout.count()));
            } catch (...) {  // NOLINT(bugprone-empty-catch): a lost line
            }
          }
          break;
      }
    }
  }
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

void Recorder::NodeTime(Boundary& b) {
  // Only for a snapshot that carries no time of its own (CreditNode): every
  // device the SDK has stamps its snapshots.  CLOCK_MONOTONIC, which every
  // process of the node reads alike.
  if (b.node_transition) b.node_now_ns = common::MonotonicNowNs();
}

void Recorder::CreditNode(const Transition& tr, const devices::Snapshot* snap,
                          uint64_t now_ns) {
  Accumulator& acc = *tr.accumulator;
  if (snap == nullptr) {
    acc.node_failed.store(true, std::memory_order_relaxed);
    return;
  }
  // The opener subtracts its snapshot and its time, the closer adds its
  // own (one writer: this thread; modulo 2^64).  The time is the
  // snapshot's own (Snapshot::timestamp_ns: when the counts were read, on
  // CLOCK_MONOTONIC; with node sharing, the leader's device's for every
  // process of the node), not a clock read beside it: a reader's snapshot
  // is taken by the leader's server thread, which under load runs
  // milliseconds after (or before) the reader's own clock read, and the
  // counts and the time must cover the same window (docs/mpi.md).
  const uint64_t time_ns =
      snap->timestamp_ns != 0 ? snap->timestamp_ns : now_ns;
  const bool opened = tr.node_opened != 0;
  for (uint32_t bits = tr.node_opened | tr.node_closed; bits != 0;
       bits &= bits - 1) {
    const auto g = static_cast<size_t>(__builtin_ctz(bits));
    const devices::NodeUnionGroup& group = node_groups_[g];
    for (size_t i = group.first_entry; i < group.first_entry + group.entries;
         ++i) {
      const uint64_t v = snap->values[i];
      std::atomic<uint64_t>& share = acc.node_share[i];
      share.store(share.load(std::memory_order_relaxed) + (opened ? -v : v),
                  std::memory_order_relaxed);
    }
    Add(acc.node_counts[3 * g + (opened ? 0 : 1)], 1);
    std::atomic<uint64_t>& wall = acc.node_counts[3 * g + 2];
    wall.store(
        wall.load(std::memory_order_relaxed) + (opened ? -time_ns : time_ns),
        std::memory_order_relaxed);
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
  for (int k = 0; k < b.count; ++k) {
    Transition& tr = b.transitions[k];
    PathState& p = *tr.path;
    if (b.node_transition && (tr.node_opened | tr.node_closed) != 0) {
      CreditNode(tr, snap, b.node_now_ns);
    }
    const bool measure = tr.step.opened
                             ? tr.measure
                             : p.measuring.load(std::memory_order_relaxed);
    const bool counted = ApplyStep(p, tr.step, tr.accumulator, measure, snap,
                                   now_ns, track_exclusive_);
    if (tr.step.closed && b.trace_counts != nullptr) {
      tr.open_ns = p.open_ns;
      tr.counted = counted;
      if (counted) {
        uint64_t* counts = b.trace_counts + k * num_values_;
        for (size_t i = 0; i < num_values_; ++i) {
          counts[i] = Delta(snap->values[i], p.begin.values[i]);
        }
      }
    }
  }
  // Unlock the words, the node's first, innermost last.
  for (int k = b.count - 1; k >= 0 && b.node_transition; --k) {
    const Transition& tr = b.transitions[k];
    for (uint32_t bits = tr.node_opened | tr.node_closed; bits != 0;
         bits &= bits - 1) {
      devices::ReleaseNodeWord(
          *tr.path->node_words[static_cast<size_t>(__builtin_ctz(bits))]);
    }
  }
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
  if (Step(b, *f.state, f.accumulator, path_rule::kEnter) &&
      f.parent_state != nullptr) {
    Step(b, *f.parent_state, nullptr, path_rule::kChildOpened);
  }
  OpenFrame(b, t, f, name_id);
  t.depth.store(depth + 1, std::memory_order_relaxed);
}

void Recorder::OpenFrame(Boundary& b, ThreadState& t, Frame& f, int name_id) {
  StepNodeWords(b);
  const uint64_t snapshots_before = t.snapshots;
  // The snapshot, then the clock: the call starts after its snapshot.
  const devices::Snapshot* snap =
      b.needs_snapshot ? SnapshotFor(t, "begin", name_id) : nullptr;
  const uint64_t now = clock_.Now();
  NodeTime(b);
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
  // The path opens alone (sampling is off: every interval is read).
  ++p.opened;
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
  f.path = PathOf(t, -1, name_id, &f.state);
  f.name_id = name_id;
  f.accumulator = &AccumulatorOf(t, f.path);
  if (!fast_ || !OpenFast(t, f)) {
    Boundary b;
    Step(b, *f.state, f.accumulator, path_rule::kEnter);
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
  Step(b, *f.state, f.accumulator, path_rule::kLeave);
  StepNodeWords(b);
  if (now_ns == 0) now_ns = clock_.Now();
  NodeTime(b);
  const uint64_t snapshots_before = t.snapshots;
  const devices::Snapshot* snap = !b.needs_snapshot ? nullptr
                                  : given != nullptr
                                      ? (given->valid ? given : nullptr)
                                      : SnapshotFor(t, "end", f.name_id);
  if (options_.trace != nullptr) b.trace_counts = t.trace_counts.data();
  Apply(b, snap, now_ns);
  CountCall(f, now_ns, open, t.snapshots != snapshots_before);
  if (options_.trace != nullptr) TraceCall(b, t, f, now_ns, true, open);
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
    t.accumulators[path]->ResetOwn(num_values_);
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
        b, *f.state, f.accumulator,
        child_closed ? path_rule::kLeaveAfterChildClosed : path_rule::kLeave);
  }
  if (child_closed && t.frames[level].parent_state != nullptr) {
    Step(b, *t.frames[level].parent_state, nullptr, path_rule::kChildClosed);
  }
  StepNodeWords(b);
  // The clock after the steps (which may have waited), then the snapshot:
  // the call ends before its snapshot, and the thread that closes the path
  // reads the clock after every other thread's call ended.
  if (now_ns == 0) now_ns = clock_.Now();
  NodeTime(b);
  const uint64_t snapshots_before = t.snapshots;
  const devices::Snapshot* snap =
      !b.needs_snapshot  ? nullptr
      : given != nullptr ? (given->valid ? given : nullptr)
                         : SnapshotFor(t, "end", t.frames[level].name_id);
  if (options_.trace != nullptr) b.trace_counts = t.trace_counts.data();
  Apply(b, snap, now_ns);
  const bool took_snapshot = t.snapshots != snapshots_before;
  for (int l = depth - 1; l >= level; --l) {
    CountCall(t.frames[l], now_ns, open, took_snapshot);
    if (options_.trace != nullptr) {
      TraceCall(b, t, t.frames[l], now_ns, false, open);
    }
  }
  t.depth.store(level, std::memory_order_relaxed);
}

void Recorder::TraceCall(const Boundary& b, ThreadState& t, const Frame& f,
                         uint64_t now_ns, bool marker, bool open) {
  if (t.trace_log == nullptr) return;
  // The call's own counts when it opened and closed its path's interval
  // (the interval is the call: no other thread was inside).
  const uint64_t* counts = nullptr;
  for (int k = 0; k < b.count; ++k) {
    const Transition& tr = b.transitions[k];
    if (tr.path == f.state && tr.step.closed) {
      if (tr.counted && tr.open_ns == f.start_ns) {
        counts = b.trace_counts + k * num_values_;
      }
      break;
    }
  }
  options_.trace->RecordCall(t.trace_log, f.path, f.start_ns, now_ns, marker,
                             open, counts);
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
  if (t->trace_log != nullptr) {
    options_.trace->DetachThread(t->trace_log);
    t->trace_log = nullptr;
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
  // A boundary waiting for another process's node word stops waiting.
  quiescing_.store(true, std::memory_order_release);
  // Every boundary that published this recorder before the fence is seen
  // below; every later one sees that it is no longer the active one.
  common::HeavyFence();
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
  // Quiet: CloseOpenRegions' node steps may wait again (bounded).
  quiescing_.store(false, std::memory_order_release);
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
    if (!node_groups_.empty()) {
      const size_t groups = node_groups_.size();
      t.node.valid =
          !r.node_failed && !node_off_.load(std::memory_order_relaxed);
      t.node.values = r.node_share;
      t.node.values.resize(num_values_, 0);
      std::vector<uint64_t> counts = r.node_counts;
      counts.resize(3 * groups, 0);
      for (size_t g = 0; g < groups; ++g) {
        t.node.opens.push_back(counts[3 * g]);
        t.node.closes.push_back(counts[3 * g + 1]);
        t.node.wall_ns.push_back(counts[3 * g + 2]);
      }
    }
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
    // A path whose calls a LIKWID reset took away may still hold the
    // node's history (its node share): kept for the merge.
    bool node_history = false;
    for (size_t g = 0; g < t.node.opens.size(); ++g) {
      node_history |= t.node.opens[g] != 0 || t.node.closes[g] != 0;
    }
    if (t.calls > 0 || node_history) result.push_back(std::move(t));
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
// its own thread (from a signal handler) is refused.  BeginRegion and
// EndRegion inline it and their lambdas: a perf boundary's cost is mostly
// what follows its read(), each return included.
template <typename F>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void OnActive(regions::Recorder* recorder,
                                                  int name_id, F boundary) {
  if (name_id == regions::kRefusedName || regions::t_busy != 0) {
    regions::g_refused.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  regions::BusyScope busy;
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
