/* A C program built against the installed Uncore SDK with nothing but
 * `cc c_consumer.c $(pkg-config --cflags --libs uncore-sdk)` (or
 * uncore-sdk-static).  Run with UNCORE_EVENTS=imc[0]/CAS_COUNT.RD
 * UNCORE_BACKEND=sim: the session the environment describes must start when
 * the program loads (the shared library starts it as it loads; the static
 * one is kept by the anchor in the .pc's Libs), and the LIKWID markers must
 * count into it and return 0. */
#define LIKWID_PERFMON
#include <stdio.h>
#include <uncore/likwid_marker.h>
#include <uncore/uncore_c.h>

int main(void) {
  int nevents = 4;
  double events[4];
  double seconds = 0;
  int calls = 0;

  LIKWID_MARKER_INIT;
  if (LIKWID_MARKER_START("c-consumer") != 0) {
    fprintf(stderr, "start: %s\n", uncore_last_error());
    return 1;
  }
  if (LIKWID_MARKER_STOP("c-consumer") != 0) {
    fprintf(stderr, "stop: %s\n", uncore_last_error());
    return 2;
  }
  if (uncore_region_get("c-consumer", &nevents, events, &seconds, &calls) !=
      0) {
    fprintf(stderr, "get: %s\n", uncore_last_error());
    return 3;
  }
  if (calls != 1 || nevents != 1) {
    fprintf(stderr, "calls %d, events %d: expected 1 and 1\n", calls, nevents);
    return 4;
  }
  LIKWID_MARKER_CLOSE;
  printf("c consumer ok: 1 call, 1 event\n");
  return 0;
}
