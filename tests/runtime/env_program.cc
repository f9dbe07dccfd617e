// A program that knows nothing of sessions: region annotations only.  Run
// by env_session_test.py with UNCORE_* variables set.
//   env_program [ITERATIONS] [SLEEP_MS]
//   env_program loop         prints "ready", then loops in region
//                            "outer/loop" until a signal ends it
//   env_program own-handler  installs its own SIGTERM handler, prints
//                            "ready", loops until SIGTERM, returns 3
//   env_program close-fds    as `loop`, after closing every descriptor
//                            from 3 on, as a daemon does
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "uncore/region.h"

namespace {

volatile sig_atomic_t g_terminated = 0;

void OnTerm(int) { g_terminated = 1; }

// Loops in regions until `stop` is set (or forever), printing "ready" once
// a region has ended.
void Loop(const volatile sig_atomic_t* stop) {
  UNCORE_REGION("outer");
  bool announced = false;
  while (stop == nullptr || *stop == 0) {
    {
      UNCORE_REGION("loop");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!announced) {
      std::printf("ready\n");
      std::fflush(stdout);
      announced = true;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "loop") == 0) {
    Loop(nullptr);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "close-fds") == 0) {
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    Loop(nullptr);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "own-handler") == 0) {
    struct sigaction action = {};
    action.sa_handler = &OnTerm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    Loop(&g_terminated);
    return 3;
  }
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 3;
  const int sleep_ms = argc > 2 ? std::atoi(argv[2]) : 5;
  for (int i = 0; i < iterations; ++i) {
    UNCORE_REGION("step, \"quoted\"");
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    {
      UNCORE_REGION("inner");
      std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    }
  }
  return 0;
}
