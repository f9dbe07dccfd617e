// Thread slots: one per live thread that used regions, recycled when it
// exits (a pthread key's destructor, which runs after the thread's C++
// thread_local destructors, so regions opened there still work).  A slot
// is the thread's hazard pointer (docs/concurrency.md, "Lifetime") and
// holds its state on the recorder it last used.
//
//   ThreadSlot& slot = CurrentSlot();             // made on a first use
//   PublishHazard(slot.hazard, recorder);         // then check it is active
//   ...
//   for (ThreadSlot* s = FirstSlot(); s; s = s->next_all) ...  // Quiesce
//
// Guarantees: slots are never freed (FirstSlot's list only grows), so a
// walk over them needs no lock; fork() finds the registry's lock free in
// the child, and the child's other slots hold no hazard.
#ifndef UNCORE_SDK_REGIONS_THREAD_SLOTS_H_
#define UNCORE_SDK_REGIONS_THREAD_SLOTS_H_

#include <atomic>
#include <cstdint>

#include "sdk/common/asymmetric_fence.h"
#include "uncore/region.h"

namespace uncore::regions {

struct ThreadSlot {
  // The recorder this thread is inside a boundary of, or nullptr.
  std::atomic<Recorder*> hazard{nullptr};
  // The recorder (by generation) `state` belongs to.
  uint64_t generation = 0;
  void* state = nullptr;  // Recorder::ThreadState*
  ThreadSlot* next_all = nullptr;
};

// The calling thread's slot, or nullptr before its first boundary.
// (Hidden, as names.h's t_busy.)
[[gnu::visibility("hidden"),
  gnu::tls_model(
      "local-dynamic")]] extern constinit thread_local ThreadSlot* t_slot;
ThreadSlot* NewSlot();
inline ThreadSlot& CurrentSlot() {
  ThreadSlot* slot = t_slot;
  return slot != nullptr ? *slot : *NewSlot();
}
// Every slot ever made (newest first, through next_all).
ThreadSlot* FirstSlot();

// The hazard handshake (docs/concurrency.md, "Lifetime"): a boundary
// publishes its recorder in its slot, then checks that the recorder is still
// the active one; Deactivate clears the active recorder, then looks at the
// slots.  Either side sees the other's store: the boundary's fence is a
// light one (common/asymmetric_fence.h: no locked instruction where
// membarrier serves), Quiesce's the heavy one.
inline void PublishHazard(std::atomic<Recorder*>& hazard, Recorder* recorder) {
  if (common::LightFencesEnabled()) {
    hazard.store(recorder, std::memory_order_relaxed);
    common::LightFence();
  } else {
    hazard.store(recorder, std::memory_order_seq_cst);
  }
}

}  // namespace uncore::regions

#endif  // UNCORE_SDK_REGIONS_THREAD_SLOTS_H_
