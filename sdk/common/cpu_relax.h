// CpuRelax: the processor's spin-wait hint (x86 `pause`), for loops that
// poll a word another thread or process will change soon.
//
//   while (word.load(std::memory_order_acquire) & kBusy) common::CpuRelax();
//
// Guarantees: no system call, no memory access; a no-op where the
// processor has no such hint.
#ifndef UNCORE_SDK_COMMON_CPU_RELAX_H_
#define UNCORE_SDK_COMMON_CPU_RELAX_H_

namespace uncore::common {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_CPU_RELAX_H_
