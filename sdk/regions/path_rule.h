// The attribution rule's state machine: a region path's state word and how
// one boundary event steps it.  Pure constexpr functions, no state: the
// recorder's general path (Recorder::Step, Apply) and its fast path
// (OpenFast, CloseFast) both call them, and path_rule_test checks them over
// every small state.
//
//   uint64_t w = word.load();
//   if (path_rule::Locked(w)) { wait; retry; }
//   const path_rule::Step s = path_rule::StepWord(w, path_rule::kEnter);
//   if (word.compare_exchange(w, s.next)) {
//     if (s.transition) { snapshot, apply s.opened ..., unlock the word }
//   }
//
// The word (one per region path, shared by every thread): how many threads
// are inside the path (bits 0-29), how many of its child paths are open
// (bits 30-59), and the path lock (bit 63, kPathLock).  A boundary that
// makes a transition (below) takes the word with the lock set, in the same
// compare-and-swap, holds it over its snapshot and its bookkeeping, and
// unlocks it with a plain store; nothing else changes a locked word.
//
// A transition: the path opens (0 -> 1 threads) or closes (1 -> 0), its
// exclusive stretch (open, no child path open) starts or stops, or its
// number of open child paths changes.  Anything else (a thread joins or
// leaves a path others stay inside) changes the count only.
#ifndef UNCORE_SDK_REGIONS_PATH_RULE_H_
#define UNCORE_SDK_REGIONS_PATH_RULE_H_

#include <cstdint>

// Every function here is inlined where it is called: the boundary's fast
// path is short enough that a call costs.
#define UNCORE_RULE_INLINE [[gnu::always_inline]] inline

namespace uncore::regions::path_rule {

inline constexpr uint64_t kThreadOne = 1;
inline constexpr uint64_t kChildOne = uint64_t{1} << 30;
inline constexpr uint64_t kFieldMask = kChildOne - 1;
// The per-path lock: held from the compare-and-swap of a transition until
// its snapshot is applied (docs/concurrency.md, "The path lock").
inline constexpr uint64_t kPathLock = uint64_t{1} << 63;

UNCORE_RULE_INLINE constexpr uint64_t ThreadsOf(uint64_t word) {
  return word & kFieldMask;
}
UNCORE_RULE_INLINE constexpr uint64_t ChildrenOf(uint64_t word) {
  return (word >> 30) & kFieldMask;
}
UNCORE_RULE_INLINE constexpr bool Locked(uint64_t word) {
  return (word & kPathLock) != 0;
}
UNCORE_RULE_INLINE constexpr bool IsOpen(uint64_t word) {
  return ThreadsOf(word) > 0;
}
UNCORE_RULE_INLINE constexpr bool ExclusiveOpen(uint64_t word) {
  return ThreadsOf(word) > 0 && ChildrenOf(word) == 0;
}

// What a boundary does to one path's word.  Events of one boundary on one
// word come together: a level that leaves its path while the level inside
// it closed its child path steps both at once (kLeaveAfterChildClosed).
struct Event {
  uint64_t add = 0;
  uint64_t sub = 0;
};
inline constexpr Event kEnter{kThreadOne, 0};  // a thread enters the path
inline constexpr Event kLeave{0, kThreadOne};  // a thread leaves it
inline constexpr Event kChildOpened{kChildOne, 0};
inline constexpr Event kChildClosed{0, kChildOne};
inline constexpr Event kLeaveAfterChildClosed{0, kThreadOne + kChildOne};

// The step of an unlocked word `word` by `e`.
struct Step {
  uint64_t next = 0;  // what the compare-and-swap stores (locked: transition)
  // The word is taken locked: the boundary must apply the step and unlock.
  bool transition = false;
  bool opened = false;             // an interval starts: record its snapshot
  bool closed = false;             // the interval ends: credit it
  bool exclusive_started = false;  // an exclusive stretch starts
  bool exclusive_stopped = false;  // the open exclusive stretch ends
};

UNCORE_RULE_INLINE constexpr Step StepWord(uint64_t word, Event e) {
  const uint64_t next = word + e.add - e.sub;
  Step s;
  s.opened = !IsOpen(word) && IsOpen(next);
  s.closed = IsOpen(word) && !IsOpen(next);
  s.exclusive_started = !ExclusiveOpen(word) && ExclusiveOpen(next);
  s.exclusive_stopped = ExclusiveOpen(word) && !ExclusiveOpen(next);
  // A change of the open child paths is a transition too, with no effect
  // of its own: the parent stays locked while its child opens or closes,
  // so every child's snapshot and the parent's exclusive stretches are
  // taken in the order of the state changes they belong to.
  s.transition = s.opened || s.closed || s.exclusive_started ||
                 s.exclusive_stopped || ChildrenOf(word) != ChildrenOf(next);
  s.next = s.transition ? next | kPathLock : next;
  return s;
}

// Whether a transition of a path whose interval is being read
// (`measuring`) needs the boundary's snapshot, given whether its exclusive
// stretch is being read (`exclusive_valid`) and whether exclusive counts
// are kept (`track_exclusive`: every interval is read).  An opening needs
// one when its interval is to be read (sampling decides: not here).
UNCORE_RULE_INLINE constexpr bool NeedsSnapshot(const Step& s, bool measuring,
                                                bool exclusive_valid,
                                                bool track_exclusive) {
  return measuring && (s.closed || ((exclusive_valid || s.exclusive_started) &&
                                    track_exclusive));
}

// The boundaries the fast path (Recorder::OpenFast, CloseFast) takes: a
// join or a leave (no transition), or the open or close of a path with no
// parent path whose only change is its thread, so that its exclusive
// stretch starts or stops with the interval and no other word is stepped.
UNCORE_RULE_INLINE constexpr bool FastCase(const Step& s, bool has_parent) {
  return !s.transition || (!has_parent && ((s.opened && s.exclusive_started) ||
                                           (s.closed && s.exclusive_stopped)));
}

// The two transitions FastCase allows, as constants (the fast path applies
// them with every branch decided at compile time): the open of a path with
// no thread and no open child path, and the close by its last thread.
inline constexpr Step kOpenAlone = StepWord(0, kEnter);
inline constexpr Step kCloseAlone = StepWord(kThreadOne, kLeave);

// FastCase decided on the word before the step, as the fast path asks it
// (path_rule_test checks that they agree on every small state): kNone, a
// join or leave (kCount: no transition), or kOpenAlone / kCloseAlone.
enum class Fast { kNone, kCount, kAlone };
// The exact word of kOpenAlone / kCloseAlone first (it is unlocked): the
// boundary of a path one thread uses alone takes one compare.
UNCORE_RULE_INLINE constexpr Fast FastEnter(uint64_t word, bool has_parent) {
  if (word == 0) return has_parent ? Fast::kNone : Fast::kAlone;
  if (Locked(word) || ThreadsOf(word) == 0) return Fast::kNone;
  return Fast::kCount;
}
UNCORE_RULE_INLINE constexpr Fast FastLeave(uint64_t word, bool has_parent) {
  if (word == kThreadOne) return has_parent ? Fast::kNone : Fast::kAlone;
  if (Locked(word) || ThreadsOf(word) <= 1) return Fast::kNone;
  return Fast::kCount;
}

// The events of one boundary on one path: whether the step opened or
// closed the path, which decides whether the parent's word is stepped
// (kChildOpened, kChildClosed).
UNCORE_RULE_INLINE constexpr bool StepsParent(const Step& s) {
  return s.opened || s.closed;
}

}  // namespace uncore::regions::path_rule

#undef UNCORE_RULE_INLINE

#endif  // UNCORE_SDK_REGIONS_PATH_RULE_H_
