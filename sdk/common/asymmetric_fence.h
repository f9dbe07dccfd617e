// Asymmetric fences: a store-then-load handshake between a hot side that
// runs on every region boundary and a cold side that runs rarely (a session
// stopping, a thread about to sleep), where the hot side may not pay a
// locked instruction.
//
//   common::EnableAsymmetricFences();   // once, at a session's start
//   // hot:  x.store(1, relaxed);  common::LightFence();  r1 = y.load();
//   // cold: y.store(1, seq_cst);  common::HeavyFence();  r2 = x.load();
//   // never r1 == 0 && r2 == 0
//
// Guarantees: with membarrier's private expedited command registered,
// LightFence is a compiler fence and HeavyFence makes every running thread
// of the process execute a full memory barrier; without it (an old
// kernel, a seccomp filter, a ThreadSanitizer build, which does not model
// membarrier) LightFence is a full fence.  A forked child keeps the
// registration (the kernel clears it at exec only).  HeavyFence never
// fails: where the private command stops serving (a seccomp filter
// installed later), it turns the light sides full for good and reaches the
// threads still in a light one through the global command or, refused too
// (nohz_full kernels), a page-protection change (a TLB shoot-down
// interrupt on every CPU running a thread of the process).
#ifndef UNCORE_SDK_COMMON_ASYMMETRIC_FENCE_H_
#define UNCORE_SDK_COMMON_ASYMMETRIC_FENCE_H_

#include <atomic>

namespace uncore::common {

#if defined(__SANITIZE_THREAD__)
#define UNCORE_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNCORE_TSAN_BUILD 1
#endif
#endif

namespace internal {
extern std::atomic<bool> g_light_fences;
extern std::atomic<unsigned> g_fence_word;
}  // namespace internal

// A full memory fence.  ThreadSanitizer builds (which reject
// atomic_thread_fence) use a sequentially consistent read-modify-write of
// a dummy word instead: a locked instruction, a full fence on x86.
inline void FullFence() {
#if defined(UNCORE_TSAN_BUILD)
  internal::g_fence_word.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// Registers the process for membarrier's private expedited command (a
// system call; idempotent).  Call before the hot sides may run light.
void EnableAsymmetricFences();

inline bool LightFencesEnabled() {
  return internal::g_light_fences.load(std::memory_order_relaxed);
}

inline void LightFence() {
  if (LightFencesEnabled()) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    FullFence();
  }
}

void HeavyFence();

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_ASYMMETRIC_FENCE_H_
