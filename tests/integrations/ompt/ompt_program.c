/* An unmodified OpenMP program (no SDK header) for ompt_test.py, which
 * runs it with OMP_TOOL_LIBRARIES=libuncore_ompt.so and checks the report.
 *
 *   ompt_program work     compute_forces 3 times, integrate 40 times
 *   ompt_program nested   a team of 2 whose threads each run a team of 2,
 *                         twice
 *   ompt_program sleep    a team of 1, then a team of OMP_NUM_THREADS,
 *                         every thread sleeping 100 ms in each
 *   ompt_program deep     33 levels of nested teams of 2: both threads of
 *                         a team go deeper for the first 6 levels, the
 *                         primary thread alone after that (64 chains,
 *                         about 3,600 threads in all)
 *   ompt_program deeper   40 levels of nested teams of 2, the primary
 *                         thread alone going deeper
 *
 * The lines marked "construct:" are where the tool's region names point;
 * the test reads them from this file.  Guarantees: exits 0 after a known
 * number of runs of each construct; prints nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kSize = 4096 };
static double g_sink;

static void SleepMs(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

__attribute__((noinline)) void compute_forces(double* f, int n) {
#pragma omp parallel /* construct: compute_forces */
  {
#pragma omp for /* construct: compute_forces for */
    for (int i = 0; i < n; ++i) f[i] = f[i] * 0.5 + 1.0;
#pragma omp single /* construct: compute_forces single */
    g_sink += f[0];
  }
}

__attribute__((noinline)) static void integrate(double* x, const double* f,
                                                int n) {
#pragma omp parallel for /* construct: integrate */
  for (int i = 0; i < n; ++i) x[i] += 0.01 * f[i];
}

__attribute__((noinline)) void nested(double* x) {
#pragma omp parallel num_threads(2) /* construct: outer */
  {
    const int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2) /* construct: inner */
    x[outer * 2 + omp_get_thread_num()] += 1.0;
  }
}

/* Each shares a variable of its own frame: a construct that shares
 * nothing can end its function in a tail call, and the runtime then
 * reports the caller's address (docs/openmp.md, "Limits"). */
__attribute__((noinline)) void sleep_one(double* x) {
  int calls = 0;
#pragma omp parallel num_threads(1) /* construct: sleep_one */
  {
    SleepMs(100);
#pragma omp atomic
    ++calls;
  }
  x[0] += calls;
}

__attribute__((noinline)) void sleep_team(double* x) {
  int calls = 0;
#pragma omp parallel /* construct: sleep_team */
  {
    SleepMs(100);
#pragma omp atomic
    ++calls;
  }
  x[0] += calls;
}

enum { kDeepLevels = 33, kDeepBranching = 6 };

__attribute__((noinline)) void deep(double* x, int level) {
  if (level >= kDeepLevels) return;
#pragma omp parallel num_threads(2) /* construct: deep */
  {
    if (omp_get_thread_num() == 0 || level < kDeepBranching) {
      deep(x, level + 1);
    }
#pragma omp atomic
    x[level] += 1.0;
  }
}

enum { kDeeperLevels = 40 };

__attribute__((noinline)) void deeper(double* x, int level) {
  if (level >= kDeeperLevels) return;
#pragma omp parallel num_threads(2) /* construct: deeper */
  {
    if (omp_get_thread_num() == 0) deeper(x, level + 1);
#pragma omp atomic
    x[level] += 1.0;
  }
}

int main(int argc, char** argv) {
  static double f[kSize];
  static double x[kSize];
  const char* mode = argc > 1 ? argv[1] : "work";
  if (strcmp(mode, "work") == 0) {
    for (int k = 0; k < 3; ++k) compute_forces(f, kSize);
    for (int k = 0; k < 40; ++k) integrate(x, f, kSize);
  } else if (strcmp(mode, "nested") == 0) {
    omp_set_max_active_levels(2);
    for (int k = 0; k < 2; ++k) nested(x);
  } else if (strcmp(mode, "deep") == 0) {
    omp_set_max_active_levels(kDeepLevels);
    deep(x, 0);
  } else if (strcmp(mode, "deeper") == 0) {
    omp_set_max_active_levels(kDeeperLevels);
    deeper(x, 0);
  } else if (strcmp(mode, "sleep") == 0) {
    sleep_one(x);
    sleep_team(x);
  } else {
    return 2;
  }
  return g_sink < 0 ? 1 : 0;
}
