#include "sdk/common/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

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

// The last resort where membarrier no longer serves (a seccomp filter
// installed after the registration; the global command is refused on
// nohz_full kernels): taking write access away from a page the process
// has touched makes the kernel shoot its TLB entry down on every CPU that
// runs a thread of the process, with an interrupt, which executes a full
// barrier there (the fallback other asymmetric-fence libraries use).
bool ProtectionChangeBarrier() {
  static std::mutex mu;
  static void* const page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return false;
  std::lock_guard<std::mutex> lock(mu);
  *static_cast<volatile char*>(page) = 1;
  return mprotect(page, 4096, PROT_READ) == 0 &&
         mprotect(page, 4096, PROT_READ | PROT_WRITE) == 0;
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
  // The registration no longer serves: light sides turn full from now on,
  // and this fence reaches the threads that may still be in a light one.
  internal::g_light_fences.store(false, std::memory_order_seq_cst);
  if (Membarrier(MEMBARRIER_CMD_GLOBAL)) return;
  (void)ProtectionChangeBarrier();
  FullFence();
}

}  // namespace uncore::common
