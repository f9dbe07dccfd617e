// StartQuietThread: a std::thread for the SDK's own work (the direct
// device's counter extender, the simulator's traffic model) that never runs
// the program's signal handlers.
//
//   std::thread t = common::StartQuietThread([this] { Loop(); });
//
// A process-directed signal (SIGALRM from setitimer, SIGINT, ...) goes to
// any thread that does not block it; the program's handler, if it opens
// regions, must not run on a thread the program does not know.  The new
// thread starts with every signal blocked; the calling thread's mask is
// unchanged when this returns.  Throws std::system_error as std::thread does.
#ifndef UNCORE_SDK_COMMON_QUIET_THREAD_H_
#define UNCORE_SDK_COMMON_QUIET_THREAD_H_

#include <pthread.h>
#include <signal.h>

#include <thread>
#include <utility>

namespace uncore::common {

template <typename F>
std::thread StartQuietThread(F&& body) {
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  struct Restore {
    sigset_t mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{old};
  return std::thread(std::forward<F>(body));
}

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_QUIET_THREAD_H_
