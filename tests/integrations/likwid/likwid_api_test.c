/* likwid_api_test.c: the LIKWID package's likwid_marker* functions
 * (integrations/likwid) checked against LIKWID 5.2's behaviour; run by
 * likwid_test.py.
 *
 *   UNCORE_EVENTS=imc/CAS_COUNT.RD UNCORE_BACKEND=sim \
 *     likwid_api_test measured NEVENTS REPORT.json   # with a session
 *   likwid_api_test off                              # without one
 *
 * "measured": overlapping regions (start A, start B, stop A, stop B), a
 * second start of a running region (LIKWID: a warning and 0), a stop of a
 * region that does not run (a warning and -EFAULT), reset (only of a
 * stopped region), GET of known and unknown regions, regions per thread,
 * WRITE_FILE, pinning, and -EFAULT after CLOSE.  "off": every int function
 * is -EFAULT and GET gives zeros.  Prints "ok ..." or "FAIL ..." per check
 * (the warnings go to stderr, which the driver checks) and, last, one JSON
 * line of facts; exits 1 when a check failed.  Builds against the real
 * LIKWID 5.2 too (likwid_test.py compiles it there, never runs it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <likwid-marker.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef LIKWID_PERFMON
#error "compile with -DLIKWID_PERFMON"
#endif

#define MAX_EVENTS 8

static int failures = 0;

static void check(int ok, const char* what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

static void sleep_ms(int ms) {
  struct timespec t;
  t.tv_sec = ms / 1000;
  t.tv_nsec = (long)(ms % 1000) * 1000000L;
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

struct get_result {
  int nevents;
  double events[MAX_EVENTS];
  double time;
  int count;
};

/* GET with a full buffer, every output prefilled with a value GET must
 * overwrite. */
static struct get_result get(const char* name) {
  struct get_result r;
  int i;
  r.nevents = MAX_EVENTS;
  for (i = 0; i < MAX_EVENTS; ++i) r.events[i] = -1.0;
  r.time = -1.0;
  r.count = -1;
  LIKWID_MARKER_GET(name, &r.nevents, r.events, &r.time, &r.count);
  return r;
}

static int all_zero(const struct get_result* r, int nevents) {
  int i;
  if (r->nevents != nevents || r->time != 0.0 || r->count != 0) return 0;
  for (i = 0; i < nevents; ++i) {
    if (r->events[i] != 0.0) return 0;
  }
  return 1;
}

/* ---- regions on two threads ---- */

static pthread_barrier_t barrier;

struct team_member {
  int delay_ms; /* staggered start and stop */
  int start_rc;
  int stop_rc;
  struct get_result result;
};

static void* team_member_main(void* arg) {
  struct team_member* m = (struct team_member*)arg;
  pthread_barrier_wait(&barrier);
  sleep_ms(m->delay_ms);
  m->start_rc = LIKWID_MARKER_START("team");
  sleep_ms(60);
  m->stop_rc = LIKWID_MARKER_STOP("team");
  m->result = get("team");
  return NULL;
}

struct owner {
  int start_rc;
  int stop_rc;
  int count;
};

/* Starts "owned", lets the main thread try to stop it, then stops it. */
static void* owner_main(void* arg) {
  struct owner* o = (struct owner*)arg;
  struct get_result r;
  o->start_rc = LIKWID_MARKER_START("owned");
  pthread_barrier_wait(&barrier);
  pthread_barrier_wait(&barrier);
  o->stop_rc = LIKWID_MARKER_STOP("owned");
  r = get("owned");
  o->count = r.count;
  return NULL;
}

static void check_threads(double* team_events, int* team_counts) {
  pthread_t threads[2];
  struct team_member members[2];
  struct owner owner;
  struct get_result r;
  int i;

  pthread_barrier_init(&barrier, NULL, 2);
  memset(&owner, 0, sizeof(owner));
  pthread_create(&threads[0], NULL, owner_main, &owner);
  pthread_barrier_wait(&barrier);
  check(LIKWID_MARKER_STOP("owned") == -EFAULT,
        "STOP of a region another thread runs: -EFAULT");
  pthread_barrier_wait(&barrier);
  pthread_join(threads[0], NULL);
  pthread_barrier_destroy(&barrier);
  check(owner.start_rc == 0 && owner.stop_rc == 0,
        "the owning thread starts and stops it: 0, 0");
  check(owner.count == 1, "the owning thread's GET: count 1");
  r = get("owned");
  check(r.count == 0 && r.time == 0.0,
        "GET on a thread that never ran it: count 0, time 0");

  pthread_barrier_init(&barrier, NULL, 2);
  for (i = 0; i < 2; ++i) {
    memset(&members[i], 0, sizeof(members[i]));
    members[i].delay_ms = 20 * i;
    pthread_create(&threads[i], NULL, team_member_main, &members[i]);
  }
  for (i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&barrier);
  for (i = 0; i < 2; ++i) {
    check(members[i].start_rc == 0 && members[i].stop_rc == 0,
          "team: each thread starts and stops: 0, 0");
    check(members[i].result.count == 1, "team: each thread's GET: count 1");
    check(members[i].result.time >= 0.055 && members[i].result.time < 1.0,
          "team: each thread's GET: its own time, about 60 ms");
    team_events[i] = members[i].result.events[0];
    team_counts[i] = members[i].result.count;
  }
}

static void check_pinning(void) {
  cpu_set_t original;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int last = cpus > 1 ? 1 : 0;
  int id = likwid_getProcessorId();
  check(id >= 0 && id < CPU_SETSIZE, "likwid_getProcessorId: a CPU");
  CPU_ZERO(&original);
  if (sched_getaffinity(0, sizeof(original), &original) != 0) {
    check(0, "sched_getaffinity");
    return;
  }
  if (!CPU_ISSET(0, &original) || !CPU_ISSET(last, &original)) {
    printf("skip pinning: CPU 0 or %d not in this thread's affinity\n", last);
    return;
  }
  check(likwid_pinThread(0) == 1, "likwid_pinThread(0): 1 (TRUE)");
  check(likwid_getProcessorId() == 0 && sched_getcpu() == 0,
        "after likwid_pinThread(0): on CPU 0");
  check(likwid_pinProcess(last) == 1, "likwid_pinProcess(last CPU): 1");
  check(likwid_getProcessorId() == last && sched_getcpu() == last,
        "after likwid_pinProcess: on that CPU");
  check(likwid_pinThread(-1) == 0, "likwid_pinThread(-1): 0 (FALSE)");
  sched_setaffinity(0, sizeof(original), &original);
}

static int run_measured(int nevents, const char* report) {
  struct get_result r;
  struct get_result b;
  double team_events[2] = {0, 0};
  int team_counts[2] = {0, 0};
  int i;
  int positive;

  /* Before INIT the markers are off. */
  check(LIKWID_MARKER_START("early") == -EFAULT, "START before INIT: -EFAULT");
  r = get("early");
  check(all_zero(&r, 0), "GET before INIT: nevents 0, time 0, count 0");

  LIKWID_MARKER_INIT;
  LIKWID_MARKER_THREADINIT;
  LIKWID_MARKER_SWITCH;
  check(LIKWID_MARKER_REGISTER("A") == 0, "REGISTER A: 0");

  /* Overlapping, not nested: start A, start B, stop A, stop B. */
  check(LIKWID_MARKER_START("A") == 0, "START A: 0");
  check(LIKWID_MARKER_START("B") == 0, "START B (A runs): 0");
  sleep_ms(30);
  check(LIKWID_MARKER_STOP("A") == 0, "STOP A (B runs): 0");
  sleep_ms(20);
  check(LIKWID_MARKER_STOP("B") == 0, "STOP B: 0");
  r = get("A");
  check(r.count == 1, "GET A: count 1");
  check(r.nevents == nevents, "GET A: nevents = the session's events");
  check(r.time >= 0.025 && r.time < 1.0, "GET A: time about 30 ms");
  positive = 1;
  for (i = 0; i < r.nevents && i < MAX_EVENTS; ++i) {
    if (!(r.events[i] > 0.0)) positive = 0;
  }
  check(positive, "GET A: every event counted");
  check(r.nevents >= MAX_EVENTS || r.events[r.nevents] == -1.0,
        "GET A: no event written past nevents");
  b = get("B");
  check(b.count == 1 && b.time >= 0.045 && b.time < 1.0,
        "GET B: count 1, time about 50 ms");

  /* Nested the other way round. */
  check(LIKWID_MARKER_START("A") == 0 && LIKWID_MARKER_START("B") == 0 &&
            LIKWID_MARKER_STOP("B") == 0 && LIKWID_MARKER_STOP("A") == 0,
        "START A, START B, STOP B, STOP A: 0 each");

  /* A second START: LIKWID 5.2 warns and returns 0. */
  check(LIKWID_MARKER_START("A") == 0, "START A: 0");
  check(LIKWID_MARKER_START("A") == 0, "START A again while it runs: 0");
  sleep_ms(5);
  check(LIKWID_MARKER_STOP("A") == 0, "STOP A: 0");
  check(LIKWID_MARKER_STOP("A") == -EFAULT, "STOP A again: -EFAULT");
  r = get("A");
  check(r.count == 3, "GET A: count 3 (the second START is no call)");

  /* A STOP of a region never started: a warning, -EFAULT. */
  check(LIKWID_MARKER_STOP("never") == -EFAULT,
        "STOP of a region never started: -EFAULT");

  /* RESET: stopped regions only. */
  check(LIKWID_MARKER_RESET("never") == -EFAULT,
        "RESET of a region never started: -EFAULT");
  check(LIKWID_MARKER_RESET("fresh") == -EFAULT,
        "RESET of an unknown region: -EFAULT");
  check(LIKWID_MARKER_START("B") == 0, "START B: 0");
  check(LIKWID_MARKER_RESET("B") == -EFAULT,
        "RESET of a running region: -EFAULT");
  check(LIKWID_MARKER_STOP("B") == 0, "STOP B: 0");
  b = get("B");
  check(b.count == 3, "GET B: count 3 (the failed RESET changed nothing)");
  check(LIKWID_MARKER_RESET("A") == 0, "RESET A (stopped): 0");
  r = get("A");
  check(all_zero(&r, nevents), "GET A after RESET: count, time, events 0");
  check(LIKWID_MARKER_RESET("A") == 0, "RESET A again: 0");
  check(LIKWID_MARKER_START("A") == 0 && LIKWID_MARKER_STOP("A") == 0,
        "START, STOP A after RESET: 0, 0");
  r = get("A");
  check(r.count == 1 && r.time > 0.0, "GET A: count 1 again");
  b = get("B");
  check(b.count == 3, "GET B: not reset with A");

  /* GET of a region this thread never stopped: zeros, LIKWID's nevents. */
  r = get("unknown");
  check(all_zero(&r, nevents), "GET unknown: count 0, time 0, zero events");
  r.nevents = 0;
  r.count = -1;
  LIKWID_MARKER_GET("A", &r.nevents, r.events, &r.time, &r.count);
  check(r.nevents == 0 && r.count == 1, "GET with nevents 0: nevents stays 0");
  r.nevents = MAX_EVENTS;
  LIKWID_MARKER_GET("A", &r.nevents, NULL, &r.time, &r.count);
  check(r.nevents == MAX_EVENTS, "GET with events NULL: nevents untouched");

  check_threads(team_events, team_counts);

  /* One thread alone: the driver takes the TSC rate from it. */
  check(LIKWID_MARKER_START("one_thread") == 0, "START one_thread: 0");
  sleep_ms(300);
  check(LIKWID_MARKER_STOP("one_thread") == 0, "STOP one_thread: 0");

  check_pinning();

#ifdef LIKWID_MARKER_WRITE_FILE
  check(LIKWID_MARKER_WRITE_FILE(report) == 0, "WRITE_FILE(report): 0");
  check(access(report, R_OK) == 0, "WRITE_FILE: the file is there");
  check(LIKWID_MARKER_WRITE_FILE(NULL) == -EFAULT, "WRITE_FILE(NULL): -EFAULT");
  check(LIKWID_MARKER_WRITE_FILE("/nonexistent-dir/report.json") < 0,
        "WRITE_FILE into a missing directory: < 0");
#else
  (void)report;
#endif

  LIKWID_MARKER_CLOSE;
  check(LIKWID_MARKER_START("A") == -EFAULT, "START after CLOSE: -EFAULT");
  r = get("A");
  check(all_zero(&r, 0), "GET after CLOSE: zeros");
  LIKWID_MARKER_CLOSE;

  printf(
      "{\"team_events\": [%.17g, %.17g], \"team_counts\": [%d, %d], "
      "\"failures\": %d}\n",
      team_events[0], team_events[1], team_counts[0], team_counts[1], failures);
  return failures == 0 ? 0 : 1;
}

static int run_off(void) {
  struct get_result r;
  LIKWID_MARKER_INIT;
  LIKWID_MARKER_THREADINIT;
  check(LIKWID_MARKER_REGISTER("A") == -EFAULT, "off: REGISTER: -EFAULT");
  check(LIKWID_MARKER_START("A") == -EFAULT, "off: START: -EFAULT");
  check(LIKWID_MARKER_STOP("A") == -EFAULT, "off: STOP: -EFAULT");
  check(LIKWID_MARKER_RESET("A") == -EFAULT, "off: RESET: -EFAULT");
  r = get("A");
  check(all_zero(&r, 0), "off: GET: nevents 0, time 0, count 0");
#ifdef LIKWID_MARKER_WRITE_FILE
  check(LIKWID_MARKER_WRITE_FILE("off.json") == -EFAULT,
        "off: WRITE_FILE: -EFAULT");
#endif
  LIKWID_MARKER_CLOSE;
  printf("{\"failures\": %d}\n", failures);
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 4 && strcmp(argv[1], "measured") == 0) {
    return run_measured(atoi(argv[2]), argv[3]);
  }
  if (argc == 2 && strcmp(argv[1], "off") == 0) return run_off();
  fprintf(stderr, "usage: %s measured NEVENTS REPORT | off\n", argv[0]);
  return 2;
}
