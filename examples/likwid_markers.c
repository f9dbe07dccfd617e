/* likwid_markers: code annotated for LIKWID's marker API, switched to the
 * Uncore SDK by changing one include.  Build with -DLIKWID_PERFMON (as with
 * LIKWID); the events come from UNCORE_EVENTS:
 *
 *   UNCORE_EVENTS=imc/CAS_COUNT.RD UNCORE_BACKEND=sim likwid_markers
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
  LIKWID_MARKER_REGISTER("scale");
  for (r = 0; r < 10; ++r) {
    LIKWID_MARKER_START("scale");
    for (i = 0; i < N; ++i) x[i] = x[i] * 0.5 + 1.0;
    LIKWID_MARKER_STOP("scale");
  }
  LIKWID_MARKER_GET("scale", &nevents, events, &time, &count);
  printf("scale: %d calls, %.3f ms, %d events\n", count, time * 1e3, nevents);
  fflush(stdout); /* before the report, which goes to stderr */
  LIKWID_MARKER_CLOSE;
  return 0;
}
