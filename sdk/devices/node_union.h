// Regions across the processes of a node (docs/mpi.md, "Ranks that share a
// socket"): the union rule of docs/concurrency.md, one level up.  Each
// shared counters segment (snapshot_server.h) holds a table of node words,
// one per region path: how many processes are inside the path right now.
// A process whose own count of threads inside a path goes 0 -> 1 (or
// 1 -> 0) steps the path's node word of every segment it reads; the step
// that takes a node word 0 -> 1 (or 1 -> 0) holds it busy until its
// snapshot is taken, so the node's opening and closing snapshots of a path
// are taken in the order of its node transitions.  The opener subtracts
// its snapshot from its share and the closer adds its own: summed over the
// node's processes (modulo 2^64), the shares are each socket's counts while
// at least one process of the node was inside the path.
//
//   NodeUnionTable table = server->node_union_table();
//   std::atomic<uint64_t>* word = table.WordOf("solve/assemble");
//   NodeStep step = StepNodeWord(*word, /*enter=*/true, timeout);
//   if (step == NodeStep::kOpened) { ...snapshot...; ReleaseNodeWord(*word); }
//
// Guarantees: the table lives in the segment (no pointers; zero-filled by
// the server); a path's slot is claimed once by whichever process names it
// first and never freed (kNodeUnionSlots paths per segment, then WordOf
// returns nullptr); StepNodeWord waits only while another process holds
// the word busy (that process's snapshot, and its steps of the other node
// words of the same boundary) and gives up after `timeout` (a process that
// died holding it) or when told to, returning kTimedOut: the caller stops
// counting node unions, and the merge, seeing the opens and closes of the
// path disagree, falls back to one view per socket.
#ifndef UNCORE_SDK_DEVICES_NODE_UNION_H_
#define UNCORE_SDK_DEVICES_NODE_UNION_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace uncore::devices {

// One slot of a segment's table: a path's key (0: free) and its node word.
struct NodeUnionSlot {
  std::atomic<uint64_t> key;
  std::atomic<uint64_t> word;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

inline constexpr size_t kNodeUnionSlots = 4096;

// A view of a segment's table (kNodeUnionSlots slots).
class NodeUnionTable {
 public:
  NodeUnionTable() = default;
  explicit NodeUnionTable(NodeUnionSlot* slots) : slots_(slots) {}
  bool present() const { return slots_ != nullptr; }
  // The node word of region path `path`, claimed by the first process that
  // names it; nullptr when every slot holds another path (or no table).
  std::atomic<uint64_t>* WordOf(std::string_view path) const;
  // The 64-bit key of `path` in the table (never 0).
  static uint64_t KeyOf(std::string_view path);

 private:
  NodeUnionSlot* slots_ = nullptr;
};

// The read-plan entries one segment's table covers in a process's plan:
// [first_entry, first_entry + entries).
struct NodeUnionGroup {
  std::string name;  // the segment's; every process steps groups by name
  NodeUnionTable table;
  size_t first_entry = 0;
  size_t entries = 0;
};

enum class NodeStep {
  kJoined,    // other processes stay inside (or still inside): no snapshot
  kOpened,    // 0 -> 1: held busy; take the snapshot, then release
  kClosed,    // 1 -> 0: held busy; take the snapshot, then release
  kTimedOut,  // another process held the word busy for `timeout`
  kBroken,    // a leave of a word that counts no process
};

// Adds (`enter`) or removes this process from the word's count.  While
// it waits, a `cancel` that turns true ends the wait as kTimedOut (the
// process's session is stopping).
NodeStep StepNodeWord(std::atomic<uint64_t>& word, bool enter,
                      std::chrono::nanoseconds timeout,
                      const std::atomic<bool>* cancel = nullptr);
// Ends the busy hold of kOpened or kClosed.
void ReleaseNodeWord(std::atomic<uint64_t>& word);

// How long a process waits for a node word (longer than a follower waits
// for its snapshot, snapshot_server.h's kFollowerTimeout).
inline constexpr std::chrono::seconds kNodeWordTimeout{20};

}  // namespace uncore::devices

#endif  // UNCORE_SDK_DEVICES_NODE_UNION_H_
