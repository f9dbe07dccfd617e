#include "sdk/runtime/node_union_hook.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/devices/node_union.h"
#include "sdk/regions/boundary_hook.h"
#include "sdk/regions/recorder.h"

namespace uncore::runtime {

// One path's node words and this process's share of it.  Written by the
// boundary that holds the path's lock; read by ShareOf (relaxed).
struct NodeUnionHook::PathShare {
  PathShare(size_t values, size_t groups)
      : share(new std::atomic<uint64_t>[values]),
        counts(new std::atomic<uint64_t>[3 * groups]) {
    for (size_t i = 0; i < values; ++i) {
      share[i].store(0, std::memory_order_relaxed);
    }
    for (size_t i = 0; i < 3 * groups; ++i) {
      counts[i].store(0, std::memory_order_relaxed);
    }
  }
  // Per group, the path's node word in that group's segment; nullptr where
  // its table was full.
  std::vector<std::atomic<uint64_t>*> words;
  // Per read-plan entry (modulo 2^64), then per group [opens, closes, wall]
  // at counts[3 * group].
  std::unique_ptr<std::atomic<uint64_t>[]> share;
  std::unique_ptr<std::atomic<uint64_t>[]> counts;
  std::atomic<bool> failed{false};
};

namespace {

// Single writer at a time (the path's lock holder): relaxed.
void AddTo(std::atomic<uint64_t>& a, uint64_t v) {
  a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

}  // namespace

NodeUnionHook::NodeUnionHook(std::vector<devices::NodeUnionGroup> groups,
                             size_t num_values, int sample_every)
    : num_values_(num_values) {
  if (sample_every > 1) return;  // only some intervals are read
  for (devices::NodeUnionGroup& g : groups) {
    if (g.table.present() && g.first_entry + g.entries <= num_values_) {
      groups_.push_back(std::move(g));
    }
  }
  std::sort(groups_.begin(), groups_.end(),
            [](const devices::NodeUnionGroup& a,
               const devices::NodeUnionGroup& b) { return a.name < b.name; });
  if (groups_.size() > kMaxNodeGroups) {
    // Attached says so (the recorder keeps the errors).
    dropped_groups_ = groups_.size();
    groups_.clear();
  }
}

NodeUnionHook::~NodeUnionHook() = default;

void NodeUnionHook::Attached(regions::Recorder& recorder) {
  recorder_ = &recorder;
  if (dropped_groups_ > 0) {
    recorder.AddError(fmt::format(
        "this process reads {} shared counters segments; node unions are "
        "counted over at most {}: the merged report takes one process's view "
        "per socket",
        dropped_groups_, kMaxNodeGroups));
  }
}

void* NodeUnionHook::PathCreated(int path, std::string_view full_path) {
  auto state = std::make_unique<PathShare>(num_values_, groups_.size());
  bool full = false;
  for (const devices::NodeUnionGroup& g : groups_) {
    state->words.push_back(g.table.WordOf(full_path));
    full |= state->words.back() == nullptr;
  }
  if (full && recorder_ != nullptr) {
    recorder_->AddError(fmt::format(
        "region \"{}\": the node's table of region paths is full ({} paths "
        "per shared counters segment): its merged counts take one process's "
        "view per socket",
        full_path, devices::kNodeUnionSlots));
  }
  PathShare* raw = state.get();
  std::lock_guard<std::mutex> lock(paths_mu_);
  if (paths_.size() <= static_cast<size_t>(path)) paths_.resize(path + 1);
  paths_[path] = std::move(state);
  return raw;
}

bool NodeUnionHook::Stepped(std::span<regions::PathChange> changes) {
  bool needs_snapshot = false;
  // Innermost first (the order of `changes`), and each path's groups by
  // name: every process takes node words in one order, after its own
  // words, so that waiting cannot go round in a circle.
  for (regions::PathChange& change : changes) {
    auto& path = *static_cast<PathShare*>(change.path_data);
    for (size_t g = 0; g < groups_.size(); ++g) {
      std::atomic<uint64_t>* word = path.words[g];
      if (word == nullptr || off_.load(std::memory_order_relaxed)) {
        path.failed.store(true, std::memory_order_relaxed);
        continue;
      }
      switch (devices::StepNodeWord(*word, change.opened,
                                    devices::kNodeWordTimeout, &quiescing_)) {
        case devices::NodeStep::kJoined:
          break;
        case devices::NodeStep::kOpened:
        case devices::NodeStep::kClosed:
          change.marks |= uint32_t{1} << g;
          needs_snapshot = true;
          break;
        case devices::NodeStep::kTimedOut:
        case devices::NodeStep::kBroken:
          path.failed.store(true, std::memory_order_relaxed);
          if (!off_.exchange(true, std::memory_order_relaxed) &&
              recorder_ != nullptr) {
            // Words are held locked until Applied: nothing may throw here.
            try {
              recorder_->AddError(fmt::format(
                  "the node's count of processes inside a region of shared "
                  "counters segment {} was held by another process for over "
                  "{} s or while the session stopped, or was inconsistent (a "
                  "process died inside a boundary?): this process no longer "
                  "counts node unions, and the merged report takes one "
                  "process's view per socket",
                  groups_[g].name, devices::kNodeWordTimeout.count()));
            } catch (...) {  // NOLINT(bugprone-empty-catch): a lost line
            }
          }
          break;
      }
    }
  }
  return needs_snapshot;
}

void NodeUnionHook::Applied(std::span<regions::PathChange> changes,
                            const devices::Snapshot* snapshot) {
  // Only for a snapshot that carries no time of its own (every device the
  // SDK has stamps its snapshots): CLOCK_MONOTONIC, which every process of
  // the node reads alike, once for the boundary.
  uint64_t fallback_ns = 0;
  for (regions::PathChange& change : changes) {
    if (change.marks == 0) continue;
    if (fallback_ns == 0 && snapshot != nullptr &&
        snapshot->timestamp_ns == 0) {
      fallback_ns = common::MonotonicNowNs();
    }
    Credit(*static_cast<PathShare*>(change.path_data), change.marks,
           change.opened, snapshot, fallback_ns);
  }
  // Release the node words, innermost last (the recorder then unlocks the
  // paths' own words).
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    const auto& path = *static_cast<const PathShare*>(it->path_data);
    for (uint32_t bits = it->marks; bits != 0; bits &= bits - 1) {
      devices::ReleaseNodeWord(
          *path.words[static_cast<size_t>(__builtin_ctz(bits))]);
    }
  }
}

void NodeUnionHook::Credit(PathShare& path, uint32_t groups, bool opened,
                           const devices::Snapshot* snapshot,
                           uint64_t fallback_ns) {
  if (snapshot == nullptr) {
    path.failed.store(true, std::memory_order_relaxed);
    return;
  }
  // The opener subtracts its snapshot and its time, the closer adds its
  // own (modulo 2^64).  The time is the snapshot's own
  // (Snapshot::timestamp_ns: when the counts were read, on
  // CLOCK_MONOTONIC; with node sharing, the leader's device's for every
  // process of the node), not a clock read beside it: a reader's snapshot
  // is taken by the leader's server thread, which under load runs
  // milliseconds after (or before) the reader's own clock read, and the
  // counts and the time must cover the same window (docs/mpi.md).
  const uint64_t time_ns =
      snapshot->timestamp_ns != 0 ? snapshot->timestamp_ns : fallback_ns;
  for (uint32_t bits = groups; bits != 0; bits &= bits - 1) {
    const auto g = static_cast<size_t>(__builtin_ctz(bits));
    const devices::NodeUnionGroup& group = groups_[g];
    for (size_t i = group.first_entry; i < group.first_entry + group.entries;
         ++i) {
      const uint64_t v = snapshot->values[i];
      AddTo(path.share[i], opened ? -v : v);
    }
    AddTo(path.counts[3 * g + (opened ? 0 : 1)], 1);
    AddTo(path.counts[3 * g + 2], opened ? -time_ns : time_ns);
  }
}

NodeUnionHook::Share NodeUnionHook::ShareOf(int path) const {
  Share out;
  const PathShare* state = nullptr;
  {
    std::lock_guard<std::mutex> lock(paths_mu_);
    if (path >= 0 && static_cast<size_t>(path) < paths_.size()) {
      state = paths_[path].get();
    }
  }
  out.values.assign(num_values_, 0);
  out.opens.assign(groups_.size(), 0);
  out.closes.assign(groups_.size(), 0);
  out.wall_ns.assign(groups_.size(), 0);
  if (state == nullptr) return out;
  out.valid = !state->failed.load(std::memory_order_relaxed) &&
              !off_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < num_values_; ++i) {
    out.values[i] = state->share[i].load(std::memory_order_relaxed);
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    out.opens[g] = state->counts[3 * g].load(std::memory_order_relaxed);
    out.closes[g] = state->counts[3 * g + 1].load(std::memory_order_relaxed);
    out.wall_ns[g] = state->counts[3 * g + 2].load(std::memory_order_relaxed);
  }
  return out;
}

bool NodeUnionHook::KeepsPath(const void* path_data) const {
  const auto* path = static_cast<const PathShare*>(path_data);
  if (path == nullptr) return false;
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (path->counts[3 * g].load(std::memory_order_relaxed) != 0 ||
        path->counts[3 * g + 1].load(std::memory_order_relaxed) != 0) {
      return true;
    }
  }
  return false;
}

void NodeUnionHook::Quiescing(bool on) {
  quiescing_.store(on, std::memory_order_release);
}

}  // namespace uncore::runtime
