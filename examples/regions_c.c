/* regions_c: the Uncore SDK from C.  Two phases bracketed with
 * uncore_region_begin/end; the session comes from UNCORE_EVENTS when set,
 * else from uncore_init_with() here (backend UNCORE_BACKEND, default auto).
 *
 *   UNCORE_BACKEND=sim regions_c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uncore/uncore_c.h"

#define N (4 * 1024 * 1024)

static double a[N], b[N];

static void copy_phase(void) {
  int r;
  for (r = 0; r < 4; ++r) memcpy(a, b, sizeof(a));
}

static double sum_phase(void) {
  double s = 0;
  int i;
  for (i = 0; i < N; ++i) s += a[i];
  return s;
}

int main(void) {
  const char* backend = getenv("UNCORE_BACKEND");
  double events[4];
  int nevents = 4;
  double seconds = 0;
  int calls = 0;
  double s;

  if (getenv("UNCORE_EVENTS") != NULL) {
    if (uncore_init() != 0) {
      fprintf(stderr, "regions_c: %s\n", uncore_last_error());
      return 1;
    }
  } else if (uncore_init_with("imc/CAS_COUNT.RD,imc/CAS_COUNT.WR",
                              "MEM_BW_TOTAL", backend ? backend : "auto",
                              "-") != 0) {
    fprintf(stderr, "regions_c: %s\n", uncore_last_error());
    return 1;
  }

  uncore_region_begin("copy");
  copy_phase();
  uncore_region_end("copy");

  uncore_region_begin("sum");
  s = sum_phase();
  uncore_region_end("sum");

  if (uncore_region_get("copy", &nevents, events, &seconds, &calls) == 0) {
    printf("copy: %d call(s), %.3f ms, %d event(s), first = %.0f\n", calls,
           seconds * 1e3, nevents, nevents > 0 ? events[0] : 0.0);
  } else {
    printf("copy: not measured (%s)\n", uncore_last_error());
  }
  printf("sum = %.1f\n", s);
  fflush(stdout); /* before the report, which goes to stderr */
  return uncore_finalize() == 0 ? 0 : 1;
}
