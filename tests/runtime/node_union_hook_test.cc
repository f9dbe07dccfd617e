// NodeUnionHook on a recorder: a process's node share of each path, the
// node words it steps, and when it counts no node union.
#include "sdk/runtime/node_union_hook.h"

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sdk/devices/device.h"
#include "sdk/devices/node_union.h"
#include "sdk/regions/recorder.h"
#include "tests/testing/fake_device.h"
#include "uncore/region.h"
#include "uncore/uncore_c.h"

namespace uncore {
namespace {

// Node sharing (NodeUnionHook on a recorder): the hook steps the node word
// of a path when the path opens or closes in its process, and credits its
// node share: the opener's snapshot subtracted, the closer's added.
class NodeUnionHookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    slots_.reset(new devices::NodeUnionSlot[devices::kNodeUnionSlots]);
    for (size_t i = 0; i < devices::kNodeUnionSlots; ++i) {
      slots_[i].key.store(0);
      slots_[i].word.store(0);
    }
    devices::ProgramRequest request;
    request.events.resize(2);
    ASSERT_TRUE(device_.Program(request).ok());
    device_.Set(0, 1000);
    device_.Set(1, 0);
  }
  std::vector<devices::NodeUnionGroup> Groups() const {
    devices::NodeUnionGroup group;
    group.name = "/uncore-test";
    group.table = table();
    group.entries = 2;
    return {group};
  }
  // The hook (kept for the test) in a recorder's options.
  regions::RecorderOptions Options() {
    hook_ = std::make_unique<runtime::NodeUnionHook>(Groups(), 2, 1);
    regions::RecorderOptions o;
    o.hooks.push_back(hook_.get());
    return o;
  }
  runtime::NodeUnionHook::Share ShareOf(
      const regions::Recorder::RegionTotals& t) const {
    return hook_->ShareOf(t.path_id);
  }
  devices::NodeUnionTable table() const {
    return devices::NodeUnionTable(slots_.get());
  }
  static const regions::Recorder::RegionTotals* Find(
      const std::vector<regions::Recorder::RegionTotals>& totals,
      const std::string& path) {
    for (const regions::Recorder::RegionTotals& t : totals) {
      if (t.path == path) return &t;
    }
    return nullptr;
  }

  std::unique_ptr<devices::NodeUnionSlot[]> slots_;
  std::unique_ptr<runtime::NodeUnionHook> hook_;
  test_devices::BumpDevice device_;
};

// Alone on the node, a process's node share is its own union: the same
// counts, as many node intervals as its own, every node word back at 0.
TEST_F(NodeUnionHookTest, AloneTheNodeShareIsTheProcessUnion) {
  regions::Recorder rec(&device_, Options());
  regions::Activate(&rec);
  {
    std::barrier start(3);
    std::vector<std::thread> team;
    for (int i = 0; i < 3; ++i) {
      team.emplace_back([this, &start, i] {
        start.arrive_and_wait();
        std::this_thread::sleep_for(std::chrono::milliseconds(5 * i));
        UNCORE_REGION("team");
        device_.Bump(0, 100);
        {
          UNCORE_REGION("inner");
          device_.Bump(1, 7);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      });
    }
    for (std::thread& t : team) t.join();
  }
  for (int i = 0; i < 4; ++i) {
    UNCORE_REGION("team");
    device_.Bump(0, 5);
  }
  ASSERT_EQ(regions::Deactivate(&rec, std::chrono::seconds(5)),
            regions::Quiescence::kQuiet);
  const std::vector<regions::Recorder::RegionTotals> totals = rec.Collect();
  for (const std::string path : {"team", "team/inner"}) {
    const regions::Recorder::RegionTotals* t = Find(totals, path);
    ASSERT_NE(t, nullptr) << path;
    const runtime::NodeUnionHook::Share node = ShareOf(*t);
    EXPECT_TRUE(node.valid) << path;
    EXPECT_EQ(node.values, t->inclusive) << path;
    ASSERT_EQ(node.opens.size(), 1u);
    EXPECT_EQ(node.opens[0], t->intervals) << path;
    EXPECT_EQ(node.closes[0], t->intervals) << path;
    // Alone, the node's intervals are the process's, timed by the same
    // snapshots: the node's time is the counters' own window, exactly
    // (the boundaries' clock, wall_ns, differs by up to a read).
    EXPECT_EQ(node.wall_ns[0], t->counted_ns) << path;
    EXPECT_GT(t->counted_ns, 0u) << path;
    std::atomic<uint64_t>* word = table().WordOf(path);
    ASSERT_NE(word, nullptr);
    EXPECT_EQ(word->load(), 0u) << path;
  }
  EXPECT_EQ(Find(totals, "team")->inclusive[0], 3 * 100 + 4 * 5u);
  EXPECT_EQ(Find(totals, "team/inner")->inclusive[1], 3 * 7u);
}

// Another process inside: this one joins and leaves its node interval
// (nothing credited); when the other leaves first, this one closes it and
// adds its snapshot, the other having subtracted its own at the opening.
TEST_F(NodeUnionHookTest, AnotherProcessInsideMakesThisOneJoinOrClose) {
  std::atomic<uint64_t>* word = table().WordOf("phase");
  ASSERT_NE(word, nullptr);
  // The other process opens the node interval at the counters' 1000.
  ASSERT_EQ(devices::StepNodeWord(*word, true, std::chrono::seconds(5)),
            devices::NodeStep::kOpened);
  devices::ReleaseNodeWord(*word);
  const uint64_t other_opened_at = device_.Value(0);
  regions::Recorder rec(&device_, Options());
  regions::Activate(&rec);
  {
    UNCORE_REGION("phase");  // joins: the other stays inside
    device_.Bump(0, 40);
  }
  uint64_t closed_at = 0;
  {
    UNCORE_REGION("phase");
    device_.Bump(0, 2);
    // The other leaves while this process is inside: this one closes.
    ASSERT_EQ(devices::StepNodeWord(*word, false, std::chrono::seconds(5)),
              devices::NodeStep::kJoined);
    device_.Bump(0, 3);
    closed_at = device_.Value(0);
  }
  ASSERT_EQ(regions::Deactivate(&rec, std::chrono::seconds(5)),
            regions::Quiescence::kQuiet);
  const std::vector<regions::Recorder::RegionTotals> totals = rec.Collect();
  const regions::Recorder::RegionTotals* t = Find(totals, "phase");
  ASSERT_NE(t, nullptr);
  const runtime::NodeUnionHook::Share node = ShareOf(*t);
  EXPECT_TRUE(node.valid);
  EXPECT_EQ(node.opens, std::vector<uint64_t>{0});
  EXPECT_EQ(node.closes, std::vector<uint64_t>{1});
  EXPECT_EQ(node.values[0], closed_at);
  // Summed with the other's share (its opening subtracted): the counts
  // while at least one of the two was inside.
  EXPECT_EQ(node.values[0] - other_opened_at, 45u);
  EXPECT_EQ(t->inclusive[0], 45u);  // this process's own view, here equal
  EXPECT_EQ(word->load(), 0u);
}

// A LIKWID reset zeroes the thread's own calls and counts, not the node's
// history: the path stays in Collect with its node share.
TEST_F(NodeUnionHookTest, AResetKeepsTheNodeShare) {
  regions::Recorder rec(&device_, Options());
  regions::Activate(&rec);
  ASSERT_EQ(uncore_marker_start("m"), 0);
  device_.Bump(0, 9);
  ASSERT_EQ(uncore_marker_stop("m"), 0);
  ASSERT_EQ(uncore_marker_reset("m"), 0);
  ASSERT_EQ(regions::Deactivate(&rec, std::chrono::seconds(5)),
            regions::Quiescence::kQuiet);
  const std::vector<regions::Recorder::RegionTotals> totals = rec.Collect();
  const regions::Recorder::RegionTotals* t = Find(totals, "m");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->calls, 0u);
  EXPECT_EQ(t->inclusive[0], 0u);
  const runtime::NodeUnionHook::Share node = ShareOf(*t);
  EXPECT_TRUE(node.valid);
  EXPECT_EQ(node.opens, std::vector<uint64_t>{1});
  EXPECT_EQ(node.closes, std::vector<uint64_t>{1});
  EXPECT_EQ(node.values[0], 9u);
}

// Sampling reads only some intervals: no node union is counted, and the
// session attaches no node hook.
TEST_F(NodeUnionHookTest, SamplingCountsNoNodeUnion) {
  EXPECT_TRUE(runtime::NodeUnionHook(Groups(), 2, /*sample_every=*/1).active());
  EXPECT_FALSE(
      runtime::NodeUnionHook(Groups(), 2, /*sample_every=*/2).active());
}

// Segments without a table, or beyond the read plan, are left out.
TEST_F(NodeUnionHookTest, UnusableGroupsAreLeftOut) {
  std::vector<devices::NodeUnionGroup> groups = Groups();
  groups[0].entries = 3;  // past a plan of 2 entries
  EXPECT_FALSE(runtime::NodeUnionHook(groups, 2, 1).active());
  groups = Groups();
  groups[0].table = devices::NodeUnionTable();
  EXPECT_FALSE(runtime::NodeUnionHook(groups, 2, 1).active());
}
}  // namespace
}  // namespace uncore
