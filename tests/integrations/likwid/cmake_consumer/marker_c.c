/* marker_c.c: LIKWID 5.4's marker API from C, the way LIKWID's examples
 * use it (INIT, THREADINIT and REGISTER in a parallel region, START and
 * STOP around the work in each thread, SWITCH between rounds, GET, then
 * 5.4's WRITE_FILE and CLOSE).  Built by cmake_consumer/CMakeLists.txt
 * against whatever find_package(likwid COMPONENTS marker) found.
 *
 *   marker_c WRITTEN_FILE
 *
 * Prints "threads N", the calling thread's "count C nevents E time T" from
 * GET, and exits 0 when GET saw the 3 rounds and one event (the session
 * likwid_install_test.py starts: UNCORE_EVENTS=imc/CAS_COUNT.RD), 1
 * otherwise.
 */
#include <likwid-marker.h>
#include <stdio.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef LIKWID_PERFMON
#error "LIKWID_PERFMON is not defined (find_package(likwid COMPONENTS marker))"
#endif

#define ROUNDS 3
#define MAX_EVENTS 10
#define N 1000000

static double data[N];

int main(int argc, char* argv[]) {
  int round;
  int threads = 1;
  int nevents = MAX_EVENTS;
  double events[MAX_EVENTS];
  double time = 0.0;
  int count = 0;
  double sum = 0.0;

  if (argc != 2) {
    fprintf(stderr, "usage: marker_c WRITTEN_FILE\n");
    return 2;
  }
  LIKWID_MARKER_INIT;
#pragma omp parallel
  {
    LIKWID_MARKER_THREADINIT;
    LIKWID_MARKER_REGISTER("consumer");
#ifdef _OPENMP
#pragma omp master
    threads = omp_get_num_threads();
#endif
  }
  for (round = 0; round < ROUNDS; ++round) {
#pragma omp parallel reduction(+ : sum)
    {
      int i;
      LIKWID_MARKER_START("consumer");
      for (i = 0; i < N; ++i) sum += data[i] + i;
      LIKWID_MARKER_STOP("consumer");
    }
    LIKWID_MARKER_SWITCH;
  }
  LIKWID_MARKER_GET("consumer", &nevents, events, &time, &count);
  printf("threads %d\n", threads);
  printf("count %d nevents %d time %g (sum %g)\n", count, nevents, time, sum);
  LIKWID_MARKER_WRITE_FILE(argv[1]);
  LIKWID_MARKER_CLOSE;
  return count == ROUNDS && nevents == 1 && time > 0.0 ? 0 : 1;
}
