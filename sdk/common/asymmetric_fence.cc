#include "sdk/common/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace uncore::common {
namespace internal {
std::atomic<bool> g_light_fences{false};
std::atomic<unsigned> g_fence_word{0};
}  // namespace internal

namespace {

#if defined(UNCORE_TSAN_BUILD)
constexpr bool kMayUseLightFences = false;
#else
constexpr bool kMayUseLightFences = true;
#endif

bool Membarrier(int command) {
  return syscall(SYS_membarrier, command, 0, 0) == 0;
}

}  // namespace

void EnableAsymmetricFences() {
  // Registered again at every call: a forked child's registration is its
  // own, and the call is cheap next to a session's start.
  if (kMayUseLightFences &&
      Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)) {
    internal::g_light_fences.store(true, std::memory_order_seq_cst);
  }
}

void HeavyFence() {
  FullFence();
  if (!LightFencesEnabled()) return;
  if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return;
  if (Membarrier(MEMBARRIER_CMD_GLOBAL)) return;
  FullFence();
}

}  // namespace uncore::common
