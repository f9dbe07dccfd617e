// NodeUnionHook: the node union across a node's processes
// (devices/node_union.h, docs/mpi.md "Ranks that share a socket") attached
// to a recorder's boundaries.  When a path of this process opens or closes
// (its first thread enters, its last leaves), the hook steps the path's
// node word in every shared counters segment the process reads, asks for
// the boundary's snapshot where a node word went 0 -> 1 or 1 -> 0, and
// credits it: the opener subtracts its snapshot and its time from its
// share, the closer adds its own.
//
//   NodeUnionHook node(backend->node_union_groups(), plan.size(), every);
//   RecorderOptions o;
//   if (node.active()) o.hooks.push_back(&node);  // outlives the recorder
//   ...
//   NodeUnionHook::Share share = node.ShareOf(totals.path_id);
//
// Guarantees: node words are taken after the path's own word, innermost
// path first and, per path, by segment name (every process in the same
// order), so waiting cannot go round in a circle; a node word held busy by
// another process for over devices::kNodeWordTimeout, or while the session
// stops, turns node unions off for this process (an error says so) and
// the merge falls back to one view per socket.  A path's share is written
// under its path lock only (BoundaryHook's guarantee) and read with
// relaxed atomics.
#ifndef UNCORE_SDK_RUNTIME_NODE_UNION_HOOK_H_
#define UNCORE_SDK_RUNTIME_NODE_UNION_HOOK_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "sdk/devices/device.h"
#include "sdk/devices/node_union.h"
#include "sdk/regions/boundary_hook.h"
#include "sdk/regions/recorder.h"

namespace uncore::runtime {

class NodeUnionHook final : public regions::BoundaryHook {
 public:
  // Node groups a process steps at most (PathChange::marks' bits).
  static constexpr size_t kMaxNodeGroups = 32;

  // `groups`: the segments this process reads (those without a table or
  // outside a read plan of `num_values` entries are left out).
  // `sample_every` > 1 (RecorderOptions::sample_every): inactive (a node
  // union needs every interval read).
  NodeUnionHook(std::vector<devices::NodeUnionGroup> groups, size_t num_values,
                int sample_every);
  ~NodeUnionHook() override;
  NodeUnionHook(const NodeUnionHook&) = delete;
  NodeUnionHook& operator=(const NodeUnionHook&) = delete;

  // Whether there is a node union to count (some group is usable).
  bool active() const { return !groups_.empty(); }
  // The groups stepped, sorted by name (Share's order).
  const std::vector<devices::NodeUnionGroup>& groups() const { return groups_; }

  // This process's share of path `path`'s counts while at least one
  // process of the node was inside it; meaningful only summed over the
  // node's processes (modulo 2^64).  Per group: the node intervals this
  // process opened and closed, and its share of their time
  // (CLOCK_MONOTONIC ns).
  struct Share {
    bool valid = false;            // every node step of the path counted
    std::vector<uint64_t> values;  // per read-plan entry
    std::vector<uint64_t> opens;   // per group
    std::vector<uint64_t> closes;
    std::vector<uint64_t> wall_ns;
  };
  Share ShareOf(int path) const;

  // regions::BoundaryHook
  bool observes_path_changes() const override { return true; }
  void Attached(regions::Recorder& recorder) override;
  void* PathCreated(int path, std::string_view full_path) override;
  bool Stepped(std::span<regions::PathChange> changes) override;
  void Applied(std::span<regions::PathChange> changes,
               const devices::Snapshot* snapshot) override;
  bool KeepsPath(const void* path_data) const override;
  void Quiescing(bool on) override;

 private:
  struct PathShare;
  void Credit(PathShare& path, uint32_t groups, bool opened,
              const devices::Snapshot* snapshot, uint64_t fallback_ns);

  std::vector<devices::NodeUnionGroup> groups_;
  const size_t num_values_;
  size_t dropped_groups_ = 0;  // more than kMaxNodeGroups were given
  regions::Recorder* recorder_ = nullptr;  // for its errors
  // A node word stayed busy past devices::kNodeWordTimeout (a process died
  // holding it): node unions are no longer counted.
  std::atomic<bool> off_{false};
  // Recorder::Quiesce has begun: a boundary waiting for a node word gives
  // up.
  std::atomic<bool> quiescing_{false};
  mutable std::mutex paths_mu_;
  std::deque<std::unique_ptr<PathShare>> paths_;  // by path id; guarded
};

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_NODE_UNION_HOOK_H_
