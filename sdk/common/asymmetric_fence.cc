#include "sdk/common/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace uncore::common {
namespace internal {
std::atomic<bool> g_light_fences{false};
}  // namespace internal

namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool kMayUseLightFences = false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kMayUseLightFences = false;
#else
constexpr bool kMayUseLightFences = true;
#endif
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
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!LightFencesEnabled()) return;
  if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return;
  if (Membarrier(MEMBARRIER_CMD_GLOBAL)) return;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace uncore::common
