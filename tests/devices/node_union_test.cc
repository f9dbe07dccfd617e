// Node words (sdk/devices/node_union.h): a path's word is found again by
// its name and claimed once; a full table or no table gives none; a step
// opens (0 -> 1) and closes (1 -> 0) holding the word busy until released,
// joins otherwise, refuses a leave of no process and gives up on a word
// held busy; and processes stepping one word in shared memory open and
// close it as often, never two holding it busy at once.
#include "sdk/devices/node_union.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace uncore::devices {
namespace {

constexpr uint64_t kBusyBit = uint64_t{1} << 63;
constexpr uint64_t kCountMask = (uint64_t{1} << 32) - 1;

// A zero-filled table of kNodeUnionSlots slots.
std::unique_ptr<NodeUnionSlot[]> NewSlots() {
  std::unique_ptr<NodeUnionSlot[]> slots(new NodeUnionSlot[kNodeUnionSlots]);
  for (size_t i = 0; i < kNodeUnionSlots; ++i) {
    slots[i].key.store(0);
    slots[i].word.store(0);
  }
  return slots;
}

bool Busy(const std::atomic<uint64_t>& word) {
  return (word.load() & kBusyBit) != 0;
}

uint64_t CountOf(const std::atomic<uint64_t>& word) {
  return word.load() & kCountMask;
}

TEST(NodeUnionTableTest, APathFindsItsOwnWord) {
  std::unique_ptr<NodeUnionSlot[]> slots = NewSlots();
  const NodeUnionTable table(slots.get());
  EXPECT_TRUE(table.present());
  std::atomic<uint64_t>* solve = table.WordOf("solve");
  std::atomic<uint64_t>* assemble = table.WordOf("solve/assemble");
  ASSERT_NE(solve, nullptr);
  ASSERT_NE(assemble, nullptr);
  EXPECT_NE(solve, assemble);
  EXPECT_EQ(table.WordOf("solve"), solve);
  EXPECT_EQ(table.WordOf("solve/assemble"), assemble);
  EXPECT_NE(table.WordOf("a"), table.WordOf("b"));
  EXPECT_NE(table.WordOf(""), solve);
  // Another view of the same slots (another process's) finds the same word.
  EXPECT_EQ(NodeUnionTable(slots.get()).WordOf("solve"), solve);
  // The slot holds the path's key.
  size_t claimed = 0;
  for (size_t i = 0; i < kNodeUnionSlots; ++i) {
    if (slots[i].key.load() == 0) continue;
    ++claimed;
    if (&slots[i].word == solve) {
      EXPECT_EQ(slots[i].key.load(), NodeUnionTable::KeyOf("solve"));
    }
  }
  EXPECT_EQ(claimed, 5u);  // solve, solve/assemble, a, b, ""
}

TEST(NodeUnionTableTest, PathsWhoseKeysShareASlotGetTwoWords) {
  // Two paths whose keys start probing at the same slot.
  std::string first;
  std::string second;
  std::vector<std::string> seen(kNodeUnionSlots);
  for (int i = 0; second.empty(); ++i) {
    std::string path = "p";  // (not "p" + ...: GCC 12's -Wrestrict)
    path += std::to_string(i);
    const size_t at = NodeUnionTable::KeyOf(path) % kNodeUnionSlots;
    if (seen[at].empty()) {
      seen[at] = path;
    } else {
      first = seen[at];
      second = path;
    }
  }
  ASSERT_NE(NodeUnionTable::KeyOf(first), NodeUnionTable::KeyOf(second));
  std::unique_ptr<NodeUnionSlot[]> slots = NewSlots();
  const NodeUnionTable table(slots.get());
  std::atomic<uint64_t>* a = table.WordOf(first);
  std::atomic<uint64_t>* b = table.WordOf(second);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(table.WordOf(first), a);
  EXPECT_EQ(table.WordOf(second), b);
}

TEST(NodeUnionTableTest, KeysAreNeverZero) {
  EXPECT_NE(NodeUnionTable::KeyOf(""), 0u);
  for (int i = 0; i < 100000; ++i) {
    std::string path = "region/";
    path += std::to_string(i);
    ASSERT_NE(NodeUnionTable::KeyOf(path), 0u) << path;
  }
  EXPECT_EQ(NodeUnionTable::KeyOf("solve"), NodeUnionTable::KeyOf("solve"));
  EXPECT_NE(NodeUnionTable::KeyOf("solve"), NodeUnionTable::KeyOf("solvf"));
}

TEST(NodeUnionTableTest, AFullTableHasNoWordForANewPath) {
  std::unique_ptr<NodeUnionSlot[]> slots = NewSlots();
  const uint64_t key = NodeUnionTable::KeyOf("late");
  for (size_t i = 0; i < kNodeUnionSlots; ++i) {
    uint64_t other = key ^ (i + 1);  // never `key`
    if (other == 0) other = key ^ (kNodeUnionSlots + 1);
    slots[i].key.store(other);
  }
  const NodeUnionTable table(slots.get());
  EXPECT_EQ(table.WordOf("late"), nullptr);
  // Nothing was claimed over another path's slot.
  for (size_t i = 0; i < kNodeUnionSlots; ++i) {
    ASSERT_NE(slots[i].key.load(), key) << i;
  }
  // A path already in the table is still found when the table is full.
  slots[(key + 7) % kNodeUnionSlots].key.store(key);
  EXPECT_EQ(table.WordOf("late"), &slots[(key + 7) % kNodeUnionSlots].word);
}

TEST(NodeUnionTableTest, NoTableNoWord) {
  const NodeUnionTable table;
  EXPECT_FALSE(table.present());
  EXPECT_EQ(table.WordOf("solve"), nullptr);
  EXPECT_EQ(table.WordOf(""), nullptr);
}

TEST(StepNodeWordTest, OpensJoinsAndCloses) {
  constexpr auto kTimeout = std::chrono::seconds(5);
  std::atomic<uint64_t> word{0};
  EXPECT_EQ(StepNodeWord(word, true, kTimeout), NodeStep::kOpened);
  EXPECT_TRUE(Busy(word));
  EXPECT_EQ(CountOf(word), 1u);
  ReleaseNodeWord(word);
  EXPECT_FALSE(Busy(word));
  EXPECT_EQ(CountOf(word), 1u);
  EXPECT_EQ(StepNodeWord(word, true, kTimeout), NodeStep::kJoined);
  EXPECT_FALSE(Busy(word));  // a join holds nothing
  EXPECT_EQ(CountOf(word), 2u);
  EXPECT_EQ(StepNodeWord(word, false, kTimeout), NodeStep::kJoined);
  EXPECT_FALSE(Busy(word));
  EXPECT_EQ(CountOf(word), 1u);
  EXPECT_EQ(StepNodeWord(word, false, kTimeout), NodeStep::kClosed);
  EXPECT_TRUE(Busy(word));
  EXPECT_EQ(CountOf(word), 0u);
  ReleaseNodeWord(word);
  EXPECT_EQ(word.load(), 0u);
  // And again from 0.
  EXPECT_EQ(StepNodeWord(word, true, kTimeout), NodeStep::kOpened);
  ReleaseNodeWord(word);
  EXPECT_EQ(word.load(), 1u);
}

TEST(StepNodeWordTest, ALeaveOfNoProcessIsBroken) {
  std::atomic<uint64_t> word{0};
  EXPECT_EQ(StepNodeWord(word, false, std::chrono::seconds(5)),
            NodeStep::kBroken);
  EXPECT_EQ(word.load(), 0u);  // untouched
}

TEST(StepNodeWordTest, AWordHeldBusyTimesOut) {
  std::atomic<uint64_t> word{0};
  ASSERT_EQ(StepNodeWord(word, true, std::chrono::seconds(5)),
            NodeStep::kOpened);
  // Never released: the others give up (it returns; not exact timing).
  for (const bool enter : {true, false}) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(StepNodeWord(word, enter, std::chrono::milliseconds(50)),
              NodeStep::kTimedOut)
        << enter;
    EXPECT_LT(std::chrono::steady_clock::now() - start,
              std::chrono::seconds(10));
  }
  // The holder's word is as it left it.
  EXPECT_TRUE(Busy(word));
  EXPECT_EQ(CountOf(word), 1u);
  ReleaseNodeWord(word);
  EXPECT_EQ(word.load(), 1u);
}

// A stopping session's boundary does not wait out the timeout.
TEST(StepNodeWordTest, ACancelEndsTheWait) {
  std::atomic<uint64_t> word{0};
  ASSERT_EQ(StepNodeWord(word, true, std::chrono::seconds(5)),
            NodeStep::kOpened);
  std::atomic<bool> cancel{false};
  std::thread stopper([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cancel.store(true);
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(StepNodeWord(word, true, std::chrono::seconds(600), &cancel),
            NodeStep::kTimedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  stopper.join();
  EXPECT_EQ(CountOf(word), 1u);  // untouched
  ReleaseNodeWord(word);
}

TEST(StepNodeWordTest, AWaiterProceedsOnceTheHolderReleases) {
  std::atomic<uint64_t> word{0};
  ASSERT_EQ(StepNodeWord(word, true, std::chrono::seconds(5)),
            NodeStep::kOpened);
  std::thread holder([&word] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ReleaseNodeWord(word);
  });
  EXPECT_EQ(StepNodeWord(word, true, std::chrono::seconds(20)),
            NodeStep::kJoined);
  holder.join();
  EXPECT_EQ(word.load(), 2u);
}

// What the processes share: the table, and the test's own bookkeeping.
struct Shared {
  NodeUnionSlot slots[kNodeUnionSlots];
  std::atomic<uint64_t> opens;
  std::atomic<uint64_t> closes;
  std::atomic<uint32_t> inside;  // 1 while a process holds the word busy
  std::atomic<uint32_t> overlaps;
  std::atomic<uint32_t> ready;  // children at the start line
  std::atomic<uint64_t> spins;  // the children's time inside and outside
};

// A child's loop; its exit status says what went wrong (0: nothing).
int StepLoop(Shared* shared, int child, int children, int rounds) {
  std::atomic<uint64_t>* word =
      NodeUnionTable(shared->slots).WordOf("solve/assemble");
  if (word == nullptr) return 2;
  // All start together, so that their steps interleave.
  shared->ready.fetch_add(1);
  const auto start_by =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (shared->ready.load() < static_cast<uint32_t>(children)) {
    if (std::chrono::steady_clock::now() > start_by) return 6;
    std::this_thread::yield();
  }
  for (int i = 0; i < rounds; ++i) {
    for (const bool enter : {true, false}) {
      // Inside (or outside) the region a while, a different while each
      // round, so that the processes overlap and leave gaps.
      for (int spin = (i * 7 + child * 13) % 400; spin > 0; --spin) {
        shared->spins.fetch_add(1, std::memory_order_relaxed);
      }
      const NodeStep step =
          StepNodeWord(*word, enter, std::chrono::seconds(20));
      const NodeStep transition = enter ? NodeStep::kOpened : NodeStep::kClosed;
      if (step == NodeStep::kJoined) continue;
      if (step != transition) return step == NodeStep::kTimedOut ? 3 : 4;
      if ((word->load() & kBusyBit) == 0) return 5;
      if (shared->inside.exchange(1) != 0) shared->overlaps.fetch_add(1);
      (enter ? shared->opens : shared->closes).fetch_add(1);
      // A snapshot's worth of time, for another process to step in.
      for (int spin = 0; spin < 50; ++spin) {
        if (shared->inside.load() != 1) shared->overlaps.fetch_add(1);
      }
      shared->inside.store(0);
      ReleaseNodeWord(*word);
    }
  }
  return 0;
}

TEST(StepNodeWordTest, ProcessesOpenAndCloseTheNodeAsOftenOneAtATime) {
  constexpr int kChildren = 4;
  constexpr int kRounds = 2000;
  void* mapping = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  auto* shared = new (mapping) Shared;  // the mapping is zero-filled
  for (NodeUnionSlot& slot : shared->slots) {
    slot.key.store(0);
    slot.word.store(0);
  }
  shared->opens.store(0);
  shared->closes.store(0);
  shared->inside.store(0);
  shared->overlaps.store(0);
  shared->ready.store(0);
  shared->spins.store(0);

  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(StepLoop(shared, c, kChildren, kRounds));
    children.push_back(pid);
  }
  // Wait up to 60 s, then kill what is left: the test cannot hang.
  std::vector<int> statuses(kChildren, -1);
  int left = kChildren;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (left > 0 && std::chrono::steady_clock::now() < deadline) {
    for (int c = 0; c < kChildren; ++c) {
      if (statuses[c] != -1) continue;
      int status = 0;
      if (waitpid(children[c], &status, WNOHANG) == children[c]) {
        statuses[c] = status;
        --left;
      }
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int c = 0; c < kChildren; ++c) {
    if (statuses[c] != -1) continue;
    kill(children[c], SIGKILL);
    waitpid(children[c], nullptr, 0);
  }
  ASSERT_EQ(left, 0) << "children still stepping after 60 s (killed)";
  for (int c = 0; c < kChildren; ++c) {
    EXPECT_TRUE(WIFEXITED(statuses[c]) && WEXITSTATUS(statuses[c]) == 0)
        << "child " << c << " status " << statuses[c];
  }
  EXPECT_EQ(shared->overlaps.load(), 0u);
  EXPECT_GT(shared->opens.load(), 0u);
  EXPECT_EQ(shared->opens.load(), shared->closes.load());
  // Each child's enter opened or joined, so no more opens than rounds.
  EXPECT_LE(shared->opens.load(), uint64_t{kChildren} * kRounds);
  RecordProperty("opens", std::to_string(shared->opens.load()));
  std::atomic<uint64_t>* word =
      NodeUnionTable(shared->slots).WordOf("solve/assemble");
  ASSERT_NE(word, nullptr);
  EXPECT_EQ(CountOf(*word), 0u);
  EXPECT_FALSE(Busy(*word));
  EXPECT_EQ(word->load(), 0u);
  shared->~Shared();
  munmap(mapping, sizeof(Shared));
}

}  // namespace
}  // namespace uncore::devices
