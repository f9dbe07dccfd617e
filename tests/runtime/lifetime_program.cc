// A program that knows nothing of sessions (region annotations only), run by
// lifetime_test.py with UNCORE_* variables set, in the situations that used
// to crash or lose the report:
//   lifetime_program detached      detached threads are inside regions when
//                                  main returns
//   lifetime_program fork MARKER   a forked child opens regions and outlives
//                                  its parent; it creates MARKER when done
// In every mode, a static object opens regions in its constructor (static
// initialisation) and destructor (static destruction), and a thread_local
// one in its destructor.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "uncore/region.h"

namespace {

std::atomic<long> g_rounds{0};

struct StaticRegions {
  StaticRegions() { UNCORE_REGION("static init"); }
  ~StaticRegions() { UNCORE_REGION("static exit"); }
};
const StaticRegions g_static_regions;

struct ThreadLocalRegions {
  ~ThreadLocalRegions() { UNCORE_REGION("thread_local exit"); }
};

void Spin() {
  thread_local ThreadLocalRegions at_exit;
  (void)&at_exit;
  for (;;) {
    UNCORE_REGION("detached");
    {
      UNCORE_REGION("inner");
      g_rounds.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

int Detached() {
  for (int t = 0; t < 4; ++t) std::thread(&Spin).detach();
  while (g_rounds.load() < 2000) std::this_thread::yield();
  std::thread([] {
    thread_local ThreadLocalRegions at_exit;
    (void)&at_exit;
  }).join();
  { UNCORE_REGION("main"); }
  return 0;  // the threads are still inside regions
}

int Fork(const char* marker) {
  { UNCORE_REGION("parent"); }
  const pid_t child = fork();
  if (child < 0) return 2;
  if (child == 0) {
    for (int i = 0; i < 200; ++i) {
      UNCORE_REGION("child");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const int fd = open(marker, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) close(fd);
    return 0;  // exits normally: atexit handlers and static destructors
  }
  { UNCORE_REGION("parent again"); }
  return 0;  // the child outlives the parent
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "detached") == 0) return Detached();
  if (argc > 2 && std::strcmp(argv[1], "fork") == 0) return Fork(argv[2]);
  std::fprintf(stderr, "usage: lifetime_program detached | fork MARKER\n");
  return 2;
}
