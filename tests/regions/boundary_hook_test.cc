// BoundaryHook: what a recorder tells a hook, and when (boundary_hook.h).
#include "sdk/regions/boundary_hook.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/devices/device.h"
#include "sdk/regions/recorder.h"
#include "tests/testing/fake_device.h"
#include "uncore/region.h"
#include "uncore/uncore_c.h"

namespace uncore::regions {
namespace {

using ::testing::ElementsAre;

// Records what the recorder tells it, as text.
class LogHook : public BoundaryHook {
 public:
  bool observes_path_changes() const override { return true; }
  bool wants_call_counts() const override { return true; }
  void Attached(Recorder& recorder) override { attached = &recorder; }
  void* PathCreated(int path, std::string_view full_path) override {
    std::lock_guard<std::mutex> lock(mu);
    paths.push_back(std::string(full_path));
    EXPECT_EQ(path, static_cast<int>(paths.size()) - 1);
    return &path_tags[path % kTags];
  }
  void* ThreadAttached() override {
    attached_threads.fetch_add(1);
    return &thread_tag;
  }
  void ThreadDetached(void* thread_data) override {
    EXPECT_EQ(thread_data, &thread_tag);
    detached_threads.fetch_add(1);
  }
  bool Stepped(std::span<PathChange> changes) override {
    std::lock_guard<std::mutex> lock(mu);
    std::string line = "stepped";
    for (PathChange& c : changes) {
      EXPECT_EQ(c.path_data, &path_tags[c.path % kTags]);
      EXPECT_EQ(c.marks, 0u);
      c.marks = 7;
      line += (c.opened ? " +" : " -") + paths[c.path];
    }
    log.push_back(line);
    return want_snapshot;
  }
  void Applied(std::span<PathChange> changes,
               const devices::Snapshot* snapshot) override {
    std::lock_guard<std::mutex> lock(mu);
    for (const PathChange& c : changes) EXPECT_EQ(c.marks, 7u);
    log.push_back(snapshot != nullptr ? "applied with snapshot"
                                      : "applied without");
  }
  void CallEnded(void* thread_data, int path, uint64_t begin, uint64_t end,
                 bool marker, bool open, const uint64_t* counts) override {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(thread_data, &thread_tag);
    EXPECT_LE(begin, end);
    EXPECT_FALSE(open);
    log.push_back(std::string(marker ? "marker " : "call ") + paths[path] +
                  (counts != nullptr ? " counted" : ""));
  }
  bool KeepsPath(const void* path_data) const override {
    return path_data == &path_tags[0] && keep_first;
  }
  void Quiescing(bool on) override { quiescing.push_back(on); }

  static constexpr int kTags = 16;
  std::mutex mu;
  Recorder* attached = nullptr;
  std::vector<std::string> paths;
  std::vector<std::string> log;
  std::vector<bool> quiescing;
  int path_tags[kTags] = {};
  int thread_tag = 0;
  std::atomic<int> attached_threads{0};
  std::atomic<int> detached_threads{0};
  bool want_snapshot = false;
  bool keep_first = false;
};

class BoundaryHookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    devices::ProgramRequest request;
    request.events.resize(2);
    ASSERT_TRUE(device_.Program(request).ok());
  }
  RecorderOptions Options() {
    RecorderOptions o;
    o.hooks.push_back(&hook_);
    return o;
  }
  static void Stop(Recorder& rec) {
    ASSERT_EQ(Deactivate(&rec, std::chrono::seconds(5)), Quiescence::kQuiet);
  }

  test_devices::BumpDevice device_;
  LogHook hook_;
};

TEST_F(BoundaryHookTest, AHookMeansTheGeneralPathAtEveryBoundary) {
  EXPECT_EQ(Recorder::FastBoundaries(RecorderOptions{}),
            !GeneralBoundariesOnlyForTesting());
  EXPECT_FALSE(Recorder::FastBoundaries(Options()));
  RecorderOptions sampled;
  sampled.sample_every = 2;
  EXPECT_FALSE(Recorder::FastBoundaries(sampled));
  const Recorder rec(&device_, Options());
  EXPECT_FALSE(rec.fast_boundaries());
  EXPECT_EQ(hook_.attached, &rec);
}

// Opens and closes only, innermost first; a call's counts where it opened
// and closed its path.
TEST_F(BoundaryHookTest, StepsArePathsOpenedAndClosedInnermostFirst) {
  Recorder rec(&device_, Options());
  Activate(&rec);
  {
    UNCORE_REGION("outer");
    {
      UNCORE_REGION("inner");
      device_.Bump(0, 3);
    }
    uncore_region_begin("deep");
    uncore_region_end("outer");  // closes "deep" too
  }
  Stop(rec);
  EXPECT_THAT(hook_.paths, ElementsAre("outer", "outer/inner", "outer/deep"));
  EXPECT_THAT(hook_.log,
              ElementsAre("stepped +outer", "applied with snapshot",
                          "stepped +outer/inner", "applied with snapshot",
                          "stepped -outer/inner", "applied with snapshot",
                          "call outer/inner counted", "stepped +outer/deep",
                          "applied with snapshot", "stepped -outer/deep -outer",
                          "applied with snapshot", "call outer/deep counted",
                          "call outer counted"));
}

// A thread that joins or leaves a path others stay inside changes no path:
// the hook hears of its call only.
TEST_F(BoundaryHookTest, AJoinIsNoStep) {
  Recorder rec(nullptr, Options());  // no device: no snapshot either
  Activate(&rec);
  uncore_region_begin("team");
  std::thread joiner([] { UNCORE_REGION("team"); });
  joiner.join();
  uncore_region_end("team");
  Stop(rec);
  EXPECT_THAT(hook_.log,
              ElementsAre("stepped +team", "applied without", "call team",
                          "stepped -team", "applied without", "call team"));
  EXPECT_EQ(hook_.attached_threads.load(), 2);
  EXPECT_EQ(hook_.detached_threads.load(), 1);  // the thread that exited
}

// Stepped asks for the snapshot: a recorder with no device reads nothing,
// and a marker's call is told as one.
TEST_F(BoundaryHookTest, AHookThatAsksGetsTheSnapshot) {
  hook_.want_snapshot = true;
  Recorder rec(&device_, Options());
  Activate(&rec);
  ASSERT_EQ(uncore_marker_start("m"), 0);
  ASSERT_EQ(uncore_marker_stop("m"), 0);
  Stop(rec);
  EXPECT_THAT(hook_.log,
              ElementsAre("stepped +m", "applied with snapshot", "stepped -m",
                          "applied with snapshot", "marker m counted"));
  EXPECT_THAT(hook_.quiescing, ElementsAre(true, false));
}

// With no device there is no snapshot to give: the hook is told so.
TEST_F(BoundaryHookTest, AHookThatAsksWithNoDeviceGetsNone) {
  hook_.want_snapshot = true;
  Recorder rec(nullptr, Options());
  Activate(&rec);
  { UNCORE_REGION("r"); }
  Stop(rec);
  EXPECT_THAT(hook_.log,
              ElementsAre("stepped +r", "applied without", "stepped -r",
                          "applied without", "call r"));
}

// Collect keeps a region with no call left (a LIKWID reset) where the hook
// holds history for it.
TEST_F(BoundaryHookTest, KeepsPathKeepsAResetRegion) {
  Recorder rec(&device_, Options());
  Activate(&rec);
  ASSERT_EQ(uncore_marker_start("m"), 0);
  ASSERT_EQ(uncore_marker_stop("m"), 0);
  ASSERT_EQ(uncore_marker_reset("m"), 0);
  Stop(rec);
  EXPECT_TRUE(rec.Collect().empty());
  hook_.keep_first = true;
  const std::vector<Recorder::RegionTotals> kept = rec.Collect();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].path, "m");
  EXPECT_EQ(kept[0].path_id, 0);
  EXPECT_EQ(kept[0].calls, 0u);
}

}  // namespace
}  // namespace uncore::regions
