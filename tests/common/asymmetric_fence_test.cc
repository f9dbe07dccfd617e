// Asymmetric fences: the store-then-load handshake between a light side
// and a heavy side never lets both miss the other's store.
#include "sdk/common/asymmetric_fence.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "gtest/gtest.h"

namespace uncore::common {
namespace {

// Dekker's handshake, many rounds: in each, the light thread stores x and
// loads y, the heavy thread stores y and loads x; at least one must see
// the other's store.  Rounds are started together through `round`.
TEST(AsymmetricFenceTest, NeitherSideMissesTheOthersStore) {
  EnableAsymmetricFences();
  constexpr int kRounds = 20000;
  std::atomic<int> round{0};
  std::atomic<int> light_done{0};
  std::atomic<int> heavy_done{0};
  std::atomic<uint64_t> x{0};
  std::atomic<uint64_t> y{0};
  std::atomic<int> both_missed{0};
  std::atomic<int> seen_by_light{-1};
  std::thread light([&] {
    for (int r = 1; r <= kRounds; ++r) {
      while (round.load(std::memory_order_acquire) < r) {
      }
      x.store(static_cast<uint64_t>(r), std::memory_order_relaxed);
      LightFence();
      seen_by_light.store(
          y.load(std::memory_order_relaxed) == static_cast<uint64_t>(r) ? 1 : 0,
          std::memory_order_relaxed);
      light_done.store(r, std::memory_order_release);
    }
  });
  for (int r = 1; r <= kRounds; ++r) {
    round.store(r, std::memory_order_release);
    y.store(static_cast<uint64_t>(r), std::memory_order_relaxed);
    HeavyFence();
    const bool heavy_saw =
        x.load(std::memory_order_relaxed) == static_cast<uint64_t>(r);
    while (light_done.load(std::memory_order_acquire) < r) {
    }
    if (!heavy_saw && seen_by_light.load(std::memory_order_relaxed) == 0) {
      both_missed.fetch_add(1);
    }
    heavy_done.store(r, std::memory_order_relaxed);
  }
  light.join();
  EXPECT_EQ(both_missed.load(), 0);
  EXPECT_EQ(heavy_done.load(), kRounds);
}

TEST(AsymmetricFenceTest, HeavyFenceWorksInAForkedChild) {
  EnableAsymmetricFences();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    HeavyFence();  // registered or not, it returns
    LightFence();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace uncore::common
