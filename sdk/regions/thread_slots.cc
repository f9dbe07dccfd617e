#include "sdk/regions/thread_slots.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include "sdk/common/asymmetric_fence.h"
#include "sdk/regions/names.h"
#include "sdk/regions/recorder.h"
#include "uncore/region.h"

namespace uncore {
namespace internal {
std::atomic<regions::Recorder*> g_active_recorder{nullptr};
}  // namespace internal

namespace regions {

[[gnu::visibility("hidden"),
  gnu::tls_model("local-dynamic")]] constinit thread_local ThreadSlot* t_slot =
    nullptr;

namespace {

struct SlotRegistry {
  std::mutex mu;
  std::atomic<ThreadSlot*> all{nullptr};  // every slot ever made
  std::vector<ThreadSlot*> free;          // guarded by mu
  pthread_key_t key{};
  bool key_ok = false;
};

void ReleaseSlot(void* p);

SlotRegistry& Slots() {
  static SlotRegistry* registry = [] {
    auto* r = new SlotRegistry();
    r->key_ok = pthread_key_create(&r->key, &ReleaseSlot) == 0;
    return r;
  }();
  return *registry;
}

void ReleaseSlot(void* p) {
  auto* slot = static_cast<ThreadSlot*>(p);
  {
    BusyScope busy;
    Recorder* r = internal::g_active_recorder.load(std::memory_order_acquire);
    if (r != nullptr && slot->state != nullptr) {
      slot->hazard.store(r, std::memory_order_seq_cst);
      if (internal::g_active_recorder.load(std::memory_order_seq_cst) == r &&
          slot->generation == r->generation()) {
        r->RetireThread(*slot);
      }
      slot->hazard.store(nullptr, std::memory_order_release);
    }
  }
  slot->state = nullptr;
  slot->generation = 0;
  t_slot = nullptr;
  SlotRegistry& r = Slots();
  std::lock_guard<std::mutex> lock(r.mu);
  r.free.push_back(slot);
}

// fork(): the registry's and the name table's locks are held across it, so
// the child finds them free; the child counts nothing (no active recorder).
void BeforeFork() {
  LockNamesForFork();
  Slots().mu.lock();
}
void AfterForkInParent() {
  Slots().mu.unlock();
  UnlockNamesAfterFork();
}
void AfterForkInChild() {
  Slots().mu.unlock();
  UnlockNamesAfterFork();
  ForgetActiveRecorderInChild();
}

}  // namespace

ThreadSlot* NewSlot() {
  BusyScope busy;
  SlotRegistry& r = Slots();
  ThreadSlot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (!r.free.empty()) {
      slot = r.free.back();
      r.free.pop_back();
    } else {
      slot = new ThreadSlot();
      slot->next_all = r.all.load(std::memory_order_relaxed);
      r.all.store(slot, std::memory_order_seq_cst);
    }
  }
  if (r.key_ok) pthread_setspecific(r.key, slot);
  t_slot = slot;
  return slot;
}

ThreadSlot* FirstSlot() { return Slots().all.load(std::memory_order_seq_cst); }

void ForgetActiveRecorderInChild() {
  internal::g_active_recorder.store(nullptr, std::memory_order_relaxed);
  // The other threads are gone: their hazards must not stall a recorder of
  // the child's own that happens to get the same address.
  for (ThreadSlot* s = Slots().all.load(std::memory_order_relaxed);
       s != nullptr; s = s->next_all) {
    if (s != t_slot) s->hazard.store(nullptr, std::memory_order_relaxed);
  }
}

void Activate(Recorder* recorder) {
  static std::once_flag at_fork;
  std::call_once(at_fork, [] {
    InitNames();
    (void)Slots();
    pthread_atfork(&BeforeFork, &AfterForkInParent, &AfterForkInChild);
  });
  common::EnableAsymmetricFences();
  internal::g_active_recorder.store(recorder, std::memory_order_seq_cst);
}

Quiescence Deactivate(Recorder* recorder, std::chrono::nanoseconds timeout) {
  Recorder* expected = recorder;
  internal::g_active_recorder.compare_exchange_strong(
      expected, nullptr, std::memory_order_seq_cst);
  return recorder->Quiesce(timeout);
}

}  // namespace regions
}  // namespace uncore
