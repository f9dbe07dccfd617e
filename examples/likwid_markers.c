/* likwid_markers: code annotated for LIKWID's marker API, switched to the
 * Uncore SDK by changing one include.  Build with -DLIKWID_PERFMON (as with
 * LIKWID); the events come from UNCORE_EVENTS:
 *
 *   UNCORE_EVENTS=imc/CAS_COUNT.RD UNCORE_BACKEND=sim likwid_markers
 *
 * The markers return what LIKWID's do: 0 on success, a negative value on
 * error (uncore_last_error() says why).
 */
#include <stdio.h>

#include "uncore/likwid_marker.h" /* was: #include <likwid-marker.h> */

#define N (1024 * 1024)

static double x[N];

int main(void) {
  int nevents = 8;
  double events[8];
  double time = 0;
  int count = 0;
  int i, r;

  LIKWID_MARKER_INIT;
  LIKWID_MARKER_THREADINIT;
  if (LIKWID_MARKER_REGISTER("scale") != 0) {
    fprintf(stderr, "LIKWID_MARKER_REGISTER: %s\n", uncore_last_error());
    return 1;
  }
  for (r = 0; r < 10; ++r) {
    if (LIKWID_MARKER_START("scale") != 0) {
      fprintf(stderr, "LIKWID_MARKER_START: %s\n", uncore_last_error());
      return 1;
    }
    for (i = 0; i < N; ++i) x[i] = x[i] * 0.5 + 1.0;
    if (LIKWID_MARKER_STOP("scale") != 0) {
      fprintf(stderr, "LIKWID_MARKER_STOP: %s\n", uncore_last_error());
      return 1;
    }
  }
  LIKWID_MARKER_GET("scale", &nevents, events, &time, &count);
  printf("scale: %d calls, %.3f ms, %d events\n", count, time * 1e3, nevents);
  fflush(stdout); /* before the report, which goes to stderr */
  LIKWID_MARKER_CLOSE;
  return count == 10 ? 0 : 1;
}
