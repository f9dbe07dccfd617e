/* likwid_headers_test.c: the LIKWID package's likwid.h and likwid-marker.h
 * compile as C89, C99 and C++ (likwid_headers_test.cc includes this file),
 * with and without LIKWID_PERFMON, LIKWID_NVMON and LIKWID_ROCMON, in
 * either include order, every macro used the way LIKWID documents it.
 * tests/integrations/likwid/CMakeLists.txt compiles one object per
 * combination, warnings as errors; nothing is linked or run.
 *
 * Checked by compiling: with LIKWID_PERFMON, REGISTER, START, STOP, RESET
 * and WRITE_FILE are int expressions and the functions have LIKWID's
 * types; the GPU macros always vanish, their GET taking six arguments
 * under LIKWID_NVMON / LIKWID_ROCMON and five otherwise.
 */
#ifdef LIKWID_HEADERS_TEST_MARKER_FIRST
#include <likwid-marker.h>
#include <likwid.h>
#else
#include <likwid.h>

/* (A block of its own: likwid.h first, then likwid-marker.h again.) */
#include <likwid-marker.h>
#endif

#ifdef LIKWID_PERFMON
/* LIKWID's types, checked by assignment to pointers of those types. */
static void (*const init_fn)(void) = likwid_markerInit;
static void (*const close_fn)(void) = likwid_markerClose;
static int (*const start_fn)(const char*) = likwid_markerStartRegion;
static int (*const write_fn)(const char*) = likwid_markerWriteFile;
static void (*const get_fn)(const char*, int*, double*, double*,
                            int*) = likwid_markerGetRegion;
static int (*const cpu_fn)(void) = likwid_getProcessorId;
static int (*const pin_fn)(int) = likwid_pinThread;
#endif

int likwid_headers_test(void);

int likwid_headers_test(void) {
  int nevents = 1;
  double events[1];
  double time = 0.0;
  int count = 0;
  int ngpus = 0;
  int errors = 0;
  events[0] = 0.0;

  LIKWID_MARKER_INIT;
  LIKWID_MARKER_THREADINIT;
  LIKWID_MARKER_REGISTER("region");
  LIKWID_MARKER_START("region");
  LIKWID_MARKER_STOP("region");
  LIKWID_MARKER_GET("region", &nevents, events, &time, &count);
  LIKWID_MARKER_RESET("region");
  LIKWID_MARKER_SWITCH;
  LIKWID_MARKER_WRITE_FILE("markers.json");
  LIKWID_MARKER_CLOSE;
#ifdef LIKWID_PERFMON
  errors += LIKWID_MARKER_REGISTER("region") != 0;
  errors += LIKWID_MARKER_START("region") != 0;
  errors += LIKWID_MARKER_STOP("region") != 0;
  errors += LIKWID_MARKER_RESET("region") != 0;
  errors += LIKWID_MARKER_WRITE_FILE("markers.json") != 0;
  errors += likwid_pinProcess(0) != 1;
  (void)init_fn;
  (void)close_fn;
  (void)start_fn;
  (void)write_fn;
  (void)get_fn;
  (void)cpu_fn;
  (void)pin_fn;
#endif

  NVMON_MARKER_INIT;
  NVMON_MARKER_THREADINIT;
  NVMON_MARKER_REGISTER("gpu");
  NVMON_MARKER_START("gpu");
  NVMON_MARKER_STOP("gpu");
#ifdef LIKWID_NVMON
  NVMON_MARKER_GET("gpu", &ngpus, &nevents, events, &time, &count);
#else
  NVMON_MARKER_GET("gpu", &nevents, events, &time, &count);
#endif
  NVMON_MARKER_RESET("gpu");
  NVMON_MARKER_SWITCH;
  NVMON_MARKER_WRITE_FILE("gpu.txt");
  NVMON_MARKER_CLOSE;

  ROCMON_MARKER_INIT;
  ROCMON_MARKER_THREADINIT;
  ROCMON_MARKER_REGISTER("gpu");
  ROCMON_MARKER_START("gpu");
  ROCMON_MARKER_STOP("gpu");
#ifdef LIKWID_ROCMON
  ROCMON_MARKER_GET("gpu", &ngpus, &nevents, events, &time, &count);
#else
  ROCMON_MARKER_GET("gpu", &nevents, events, &time, &count);
#endif
  ROCMON_MARKER_RESET("gpu");
  ROCMON_MARKER_SWITCH;
  ROCMON_MARKER_WRITE_FILE("gpu.txt");
  ROCMON_MARKER_CLOSE;

  LIKWID_NVMARKER_INIT;
  LIKWID_NVMARKER_THREADINIT;
  LIKWID_NVMARKER_REGISTER("gpu");
  LIKWID_NVMARKER_START("gpu");
  LIKWID_NVMARKER_STOP("gpu");
#ifdef LIKWID_NVMON
  LIKWID_NVMARKER_GET("gpu", &ngpus, &nevents, events, &time, &count);
#else
  LIKWID_NVMARKER_GET("gpu", &nevents, events, &time, &count);
#endif
  LIKWID_NVMARKER_RESET("gpu");
  LIKWID_NVMARKER_SWITCH;
  LIKWID_NVMARKER_CLOSE;

  (void)nevents;
  (void)events;
  (void)time;
  (void)count;
  (void)ngpus;
  return errors;
}
