// A program that knows nothing of sessions: region annotations only.  Run
// by env_session_test.py with UNCORE_* variables set.
//   env_program [ITERATIONS] [SLEEP_MS]
#include <chrono>
#include <cstdlib>
#include <thread>

#include "uncore/region.h"

int main(int argc, char** argv) {
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
