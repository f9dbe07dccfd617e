/* The C API and the LIKWID-compatible markers, compiled as C.  Exits 0 when
 * every check passes; prints the failed check otherwise. */
#define LIKWID_PERFMON
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uncore/likwid_marker.h"
#include "uncore/uncore_c.h"

static int failures = 0;

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, \
              __LINE__, #cond, uncore_last_error());                          \
      ++failures;                                                             \
    }                                                                         \
  } while (0)

static volatile double sink = 0;

static void work(int n) {
  int i;
  for (i = 0; i < n; ++i) sink = sink + i * 0.5;
}

int main(void) {
  int nevents = 4;
  double events[4] = {0, 0, 0, 0};
  double seconds = 0;
  int calls = 0;
  int i;
  FILE* report;
  char line[256];

  /* No session: regions are not measured, which is no error, and
   * uncore_region_get says why it has nothing. */
  CHECK(uncore_region_register("nothing") == 0);
  CHECK(uncore_region_begin("nothing") == 0);
  CHECK(uncore_region_end("nothing") == 0);
  CHECK(LIKWID_MARKER_START("nothing") == 0);
  CHECK(LIKWID_MARKER_STOP("nothing") == 0);
  CHECK(uncore_write_report("-") == -1);
  CHECK(strstr(uncore_last_error(), "no active uncore session") != NULL);
  CHECK(uncore_region_get("nothing", &nevents, events, &seconds, &calls) == -1);
  CHECK(strstr(uncore_last_error(), "no active uncore session") != NULL);

  /* A NULL name is an error (negative), with a reason. */
  CHECK(uncore_region_begin(NULL) < 0);
  CHECK(strstr(uncore_last_error(), "NULL") != NULL);
  CHECK(uncore_region_end(NULL) < 0);
  CHECK(uncore_region_register(NULL) < 0);

  /* Bad input is an error with a reason. */
  CHECK(uncore_init_with("imc/NOT_AN_EVENT", NULL, "sim", "") == -1);
  CHECK(strstr(uncore_last_error(), "NOT_AN_EVENT") != NULL);

  CHECK(uncore_init_with("imc[0]/CAS_COUNT.RD,ubox/UCLK", "MEM_BW_READS", "sim",
                         "") == 0);
  /* uncore_init() with a session active does nothing. */
  CHECK(uncore_init() == 0);
  for (i = 0; i < 3; ++i) {
    CHECK(uncore_region_begin("c-phase") == 0);
    work(1000);
    CHECK(uncore_region_end("c-phase") == 0);
  }
  nevents = 4;
  CHECK(uncore_region_get("c-phase", &nevents, events, &seconds, &calls) == 0);
  CHECK(calls == 3);
  /* imc[0]/CAS_COUNT.RD, UCLK, and the metric's CAS_COUNT.RD on every
   * channel. */
  CHECK(nevents == 3);
  CHECK(seconds > 0);
  CHECK(uncore_region_get("never", &nevents, events, &seconds, &calls) == -1);

  /* The LIKWID markers map onto the same regions. */
  LIKWID_MARKER_THREADINIT;
  LIKWID_MARKER_SWITCH;
  CHECK(LIKWID_MARKER_REGISTER("likwid-phase") == 0);
  /* LIKWID's idiom: the markers are int expressions, 0 on success. */
  if (LIKWID_MARKER_START("likwid-phase") != 0) {
    CHECK(!"LIKWID_MARKER_START failed");
  }
  work(1000);
  if (LIKWID_MARKER_STOP("likwid-phase") != 0) {
    CHECK(!"LIKWID_MARKER_STOP failed");
  }
  nevents = 4;
  calls = 0;
  LIKWID_MARKER_GET("likwid-phase", &nevents, events, &seconds, &calls);
  CHECK(calls == 1);
  CHECK(nevents == 3);
  /* RESET zeroes this thread's stopped region (LIKWID's semantics); a
   * running one is refused with a negative value. */
  CHECK(LIKWID_MARKER_RESET("likwid-phase") == 0);
  nevents = 4;
  LIKWID_MARKER_GET("likwid-phase", &nevents, events, &seconds, &calls);
  CHECK(calls == 0);
  CHECK(LIKWID_MARKER_START("likwid-phase") == 0);
  CHECK(LIKWID_MARKER_RESET("likwid-phase") < 0);
  CHECK(strstr(uncore_last_error(), "runs on this thread") != NULL);
  CHECK(LIKWID_MARKER_STOP("likwid-phase") == 0);
  /* Overlapping markers, as LIKWID allows. */
  CHECK(LIKWID_MARKER_START("A") == 0);
  CHECK(LIKWID_MARKER_START("B") == 0);
  CHECK(LIKWID_MARKER_STOP("A") == 0);
  CHECK(LIKWID_MARKER_STOP("B") == 0);
  CHECK(LIKWID_MARKER_STOP("B") < 0);
  /* The report so far, to a file. */
  CHECK(LIKWID_MARKER_WRITE_FILE("c_api_test_report.csv") == 0);
  report = fopen("c_api_test_report.csv", "r");
  CHECK(report != NULL);
  if (report != NULL) {
    CHECK(fgets(line, sizeof line, report) != NULL);
    CHECK(strstr(line, "region") != NULL);
    fclose(report);
    remove("c_api_test_report.csv");
  }
  CHECK(LIKWID_MARKER_WRITE_FILE("") < 0);
  LIKWID_MARKER_CLOSE;
  CHECK(uncore_region_get("c-phase", &nevents, events, &seconds, &calls) ==
        -1);                     /* closed */
  CHECK(uncore_finalize() == 0); /* twice is fine */

  if (failures == 0) printf("c_api_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
