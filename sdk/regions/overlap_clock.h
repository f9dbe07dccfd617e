// OverlapClock: how long the recorder's exclusive stretches ran side by
// side.  An exclusive stretch is a region path open with none of its child
// paths open; two open at once belong to paths that are neither ancestor
// nor descendant of each other, entered by different threads (one thread's
// open regions nest).  Their counts then go to both: the socket's counters
// are shared.
//
//   OverlapClock clock;
//   uint64_t mark = clock.Start(now);          // a stretch starts
//   ...
//   uint64_t shared = clock.Stop(later, mark); // the time it had company
//   OverlapClock::Totals t = clock.Read(now);  // over every stretch so far
//
// Times are whatever clock the caller reads (the recorder's ticks); a call
// that comes with an earlier time than the last one is taken at the last
// one.  Guarantees: Start and Stop take a spin lock for a few instructions
// (they come with a boundary's snapshot, which costs far more), allocate
// nothing and never throw.
#ifndef UNCORE_SDK_REGIONS_OVERLAP_CLOCK_H_
#define UNCORE_SDK_REGIONS_OVERLAP_CLOCK_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>

#include "sdk/common/cpu_relax.h"

namespace uncore::regions {

class OverlapClock {
 public:
  // Returns the mark to hand to Stop.
  [[gnu::always_inline]] uint64_t Start(uint64_t now) {
    Lock();
    Advance(now);
    ++open_;
    const uint64_t mark = shared_;
    Unlock();
    return mark;
  }
  // The time, since the stretch's Start, that at least one other stretch
  // was open.
  [[gnu::always_inline]] uint64_t Stop(uint64_t now, uint64_t mark) {
    Lock();
    Advance(now);
    if (open_ > 0) --open_;
    const uint64_t shared = shared_ - mark;
    Unlock();
    return shared;
  }

  struct Totals {
    uint64_t any_open = 0;  // time at least one stretch was open
    // Time counted more than once by summing every stretch's time: the sum
    // of (stretches open - 1) over the time two or more were.
    uint64_t overcount = 0;
  };
  // Up to `now` (stretches still open included).
  Totals Read(uint64_t now) {
    Lock();
    Advance(now);
    const Totals t{any_open_, overcount_};
    Unlock();
    return t;
  }

 private:
  [[gnu::always_inline]] void Lock() {
    for (int spin = 0; lock_.exchange(true, std::memory_order_acquire);
         ++spin) {
      if (spin < 64) {
        common::CpuRelax();
      } else {
        std::this_thread::yield();  // the holder may be off the CPU
      }
    }
  }
  void Unlock() { lock_.store(false, std::memory_order_release); }
  [[gnu::always_inline]] void Advance(uint64_t now) {
    const uint64_t t = std::max(now, last_);
    const uint64_t d = t - last_;
    if (open_ >= 1) any_open_ += d;
    if (open_ >= 2) {
      shared_ += d;
      overcount_ += d * (open_ - 1);
    }
    last_ = t;
  }

  std::atomic<bool> lock_{false};
  // Guarded by lock_.
  uint64_t open_ = 0;
  uint64_t last_ = 0;
  uint64_t shared_ = 0;  // time two or more stretches were open
  uint64_t any_open_ = 0;
  uint64_t overcount_ = 0;
};

}  // namespace uncore::regions

#endif  // UNCORE_SDK_REGIONS_OVERLAP_CLOCK_H_
