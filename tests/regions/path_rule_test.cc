#include "sdk/regions/path_rule.h"

#include <cstdint>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"

namespace uncore::regions::path_rule {
namespace {

constexpr uint64_t WordOf(uint64_t threads, uint64_t children) {
  return threads * kThreadOne + children * kChildOne;
}

// The cases the fast path was written for, checked at compile time.
static_assert(StepWord(0, kEnter).next == (kThreadOne | kPathLock));
static_assert(StepWord(0, kEnter).opened);
static_assert(StepWord(0, kEnter).exclusive_started);
static_assert(FastCase(StepWord(0, kEnter), /*has_parent=*/false));
static_assert(!FastCase(StepWord(0, kEnter), /*has_parent=*/true));
static_assert(StepWord(kThreadOne, kLeave).next == kPathLock);
static_assert(StepWord(kThreadOne, kLeave).closed);
static_assert(StepWord(kThreadOne, kLeave).exclusive_stopped);
static_assert(!StepWord(kThreadOne, kEnter).transition);
static_assert(StepWord(kThreadOne, kEnter).next == 2 * kThreadOne);
static_assert(!StepWord(WordOf(2, 1), kLeave).transition);
// A child opening under an open path stops its exclusive stretch; a second
// child changes only the count of children, still a transition.
static_assert(StepWord(WordOf(1, 0), kChildOpened).exclusive_stopped);
static_assert(StepWord(WordOf(1, 1), kChildOpened).transition);
static_assert(!StepWord(WordOf(1, 1), kChildOpened).exclusive_stopped);
// A path whose threads left while a child path (another thread's) stays
// open: the last child closing closes nothing and starts no stretch.
static_assert(!StepWord(WordOf(0, 1), kChildClosed).closed);
static_assert(!StepWord(WordOf(0, 1), kChildClosed).exclusive_started);
static_assert(StepWord(WordOf(0, 1), kChildClosed).next == kPathLock);
// A path opening with a child path still open (a team's worker inside it)
// opens no exclusive stretch, and is not a fast case.
static_assert(StepWord(WordOf(0, 1), kEnter).opened);
static_assert(!StepWord(WordOf(0, 1), kEnter).exclusive_started);
static_assert(!FastCase(StepWord(WordOf(0, 1), kEnter), false));

static_assert(kOpenAlone.next == StepWord(0, kEnter).next);
static_assert(kCloseAlone.closed && kCloseAlone.exclusive_stopped);

struct Model {
  int threads;
  int children;
  bool open() const { return threads > 0; }
  bool exclusive() const { return threads > 0 && children == 0; }
};

struct NamedEvent {
  Event event;
  int threads;  // its change of the model's counts
  int children;
  const char* name;
};

constexpr NamedEvent kEvents[] = {
    {kEnter, 1, 0, "enter"},
    {kLeave, -1, 0, "leave"},
    {kChildOpened, 0, 1, "child opened"},
    {kChildClosed, 0, -1, "child closed"},
    {kLeaveAfterChildClosed, -1, -1, "leave after child closed"},
};

// Every state of 0..3 threads and 0..3 open children, every event that
// leaves both counts non-negative: the step against a model of the rule
// written from its definition (docs/concurrency.md, "Teams of threads").
TEST(PathRuleTest, EverySmallStateAndEventFollowsTheRule) {
  int checked = 0;
  for (int threads = 0; threads <= 3; ++threads) {
    for (int children = 0; children <= 3; ++children) {
      for (const NamedEvent& e : kEvents) {
        const Model before{threads, children};
        const Model after{threads + e.threads, children + e.children};
        if (after.threads < 0 || after.children < 0) continue;
        const std::string where = fmt::format("{} threads, {} children, {}",
                                              threads, children, e.name);
        const uint64_t word = WordOf(threads, children);
        ASSERT_FALSE(Locked(word)) << where;
        const Step s = StepWord(word, e.event);
        EXPECT_EQ(ThreadsOf(s.next), static_cast<uint64_t>(after.threads))
            << where;
        EXPECT_EQ(ChildrenOf(s.next), static_cast<uint64_t>(after.children))
            << where;
        EXPECT_EQ(s.opened, !before.open() && after.open()) << where;
        EXPECT_EQ(s.closed, before.open() && !after.open()) << where;
        EXPECT_EQ(s.exclusive_started, !before.exclusive() && after.exclusive())
            << where;
        EXPECT_EQ(s.exclusive_stopped, before.exclusive() && !after.exclusive())
            << where;
        // Not a transition: only the count of threads changed, with the
        // path open before and after (a join or a leave reads nothing).
        const bool join_or_leave =
            e.children == 0 && before.open() && after.open();
        EXPECT_EQ(s.transition, !join_or_leave) << where;
        EXPECT_EQ(Locked(s.next), s.transition) << where;
        EXPECT_EQ(StepsParent(s), before.open() != after.open()) << where;
        // The fast path: a join or a leave, or the open of a path with no
        // thread and no open child (word 0), or the close of one with one
        // thread and no open child (word 1), at the top level.
        const bool fast_top =
            join_or_leave || (e.children == 0 && children == 0 &&
                              ((threads == 0 && e.threads == 1) ||
                               (threads == 1 && e.threads == -1)));
        EXPECT_EQ(FastCase(s, /*has_parent=*/false), fast_top) << where;
        EXPECT_EQ(FastCase(s, /*has_parent=*/true), join_or_leave) << where;
        // The fast path's own test on the word says the same.
        for (const bool parent : {false, true}) {
          Fast expected = Fast::kNone;
          if (FastCase(s, parent)) {
            expected = s.transition ? Fast::kAlone : Fast::kCount;
          }
          if (e.event.add == kThreadOne && e.event.sub == 0) {
            EXPECT_EQ(FastEnter(word, parent), expected) << where;
          } else if (e.event.sub == kThreadOne && e.event.add == 0) {
            EXPECT_EQ(FastLeave(word, parent), expected) << where;
          }
          EXPECT_EQ(FastEnter(word | kPathLock, parent), Fast::kNone);
          EXPECT_EQ(FastLeave(word | kPathLock, parent), Fast::kNone);
        }
        // The fast path applies its two transitions as constants.
        if (FastCase(s, false) && s.transition) {
          const Step& alone = e.threads > 0 ? kOpenAlone : kCloseAlone;
          EXPECT_EQ(s.next, alone.next) << where;
          EXPECT_EQ(s.opened, alone.opened) << where;
          EXPECT_EQ(s.closed, alone.closed) << where;
          EXPECT_EQ(s.exclusive_started, alone.exclusive_started) << where;
          EXPECT_EQ(s.exclusive_stopped, alone.exclusive_stopped) << where;
        }
        // A snapshot: a close of a read interval always; a change of the
        // exclusive stretches of a read interval where they are kept.
        for (int m = 0; m < 8; ++m) {
          const bool measuring = (m & 1) != 0;
          const bool exclusive_valid = (m & 2) != 0;
          const bool track = (m & 4) != 0;
          const bool expected =
              measuring &&
              (s.closed || (track && (exclusive_valid || s.exclusive_started)));
          EXPECT_EQ(NeedsSnapshot(s, measuring, exclusive_valid, track),
                    expected)
              << where << " m=" << m;
        }
        ++checked;
      }
    }
  }
  // 16 states x 5 events, less those that would go below zero: 4 states
  // cannot leave, 4 cannot close a child, 7 cannot do both.
  EXPECT_EQ(checked, 16 * 5 - 4 - 4 - 7);
}

}  // namespace
}  // namespace uncore::regions::path_rule
