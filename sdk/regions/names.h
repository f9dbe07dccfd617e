// Region names: the process-wide name table (a name's id is its index, for
// the life of the process), a per-thread cache in front of it, and the
// per-thread "inside the SDK" count that refuses regions a signal handler
// opens while its thread is inside the SDK.
//
//   int id = regions::InternedNameId("solve");  // locks on a first use only
//   std::string name = regions::RegionName(id);
//   { regions::BusyScope busy; ... }            // the SDK's code on a thread
//
// Guarantees: a lookup of a known name takes no lock and allocates
// nothing; the table's nodes are never freed (names outlive every session);
// fork() finds the table's lock free in the child (LockNamesForFork).
// Every thread_local here is trivially destructible, so names work in
// thread_local destructors and signal handlers.
#ifndef UNCORE_SDK_REGIONS_NAMES_H_
#define UNCORE_SDK_REGIONS_NAMES_H_

#include <atomic>
#include <string>
#include <string_view>

#include "uncore/region.h"

namespace uncore::regions {

// A name that could not be looked up safely (a signal handler interrupted
// the SDK on its thread): the region is refused.
inline constexpr int kRefusedName = -2;

// > 0 while the SDK runs on this thread (a boundary, or a name's first
// use): a region opened then (by a signal handler) is refused.
// (The global-dynamic TLS model, not initial-exec: a library that the
// OpenMP runtime or Kokkos dlopens as a tool would need its whole TLS block
// in the C library's small static reserve, and dlopen fails without it.)
// Hidden: the library's code reaches it through its own module's TLS block
// (one __tls_get_addr per function with t_slot, not one per variable).
[[gnu::visibility("hidden"),
  gnu::tls_model("local-dynamic")]] extern constinit thread_local int t_busy;

class BusyScope {
 public:
  BusyScope() : BusyScope(t_busy) {}
  // `count`: the calling thread's t_busy, its address already taken.
  explicit BusyScope(int& count) : count_(count) {
    ++count_;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~BusyScope() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    --count_;
  }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;

 private:
  int& count_;
};

// The table's entry of `name`, made on its first use.
const internal::InternedName& InternName(std::string_view name);
// The name of `name_id` ("<region N>" for an id never handed out).
std::string RegionName(int name_id);

// fork(): the table's lock is held across it (pthread_atfork).
void LockNamesForFork();
void UnlockNamesAfterFork();
// Makes the table before any fork can happen.
void InitNames();

}  // namespace uncore::regions

#endif  // UNCORE_SDK_REGIONS_NAMES_H_
