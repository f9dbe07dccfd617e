/* likwid.h of the Uncore SDK's LIKWID package: the functions of LIKWID 5's
 * marker API with LIKWID's types, on top of the SDK (libuncore_likwid,
 * pkg-config uncore-sdk-likwid).  Code that calls them, or uses the macros
 * of <likwid-marker.h> (included here, as LIKWID's likwid.h does), builds
 * and runs unchanged.
 *
 *   #include <likwid.h>
 *   likwid_markerInit();                    // once, before the threads
 *   #pragma omp parallel
 *   {
 *     likwid_markerStartRegion("solve");    // 0, or a negative errno
 *     solve();
 *     likwid_markerStopRegion("solve");
 *   }
 *   likwid_markerClose();                   // writes the report
 *
 *   cc prog.c $(pkg-config --cflags --libs uncore-sdk-likwid)
 *   UNCORE_EVENTS=imc/CAS_COUNT.RD UNCORE_OUTPUT=report.json ./a.out
 *
 * What is measured comes from the SDK's environment (docs/environment.md):
 * UNCORE_EVENTS and UNCORE_METRICS instead of likwid-perfctr's -g, the
 * report at likwid_markerClose() to UNCORE_OUTPUT (default: a table on
 * stderr) instead of LIKWID_FILEPATH.  Counts are of the socket's uncore
 * (memory controllers, LLC, links, power unit), each socket once.
 *
 * Guarantees, as in LIKWID 5.2: regions are kept per thread and name;
 * they may overlap and nest in any order (start A, start B, stop A, stop
 * B).  Until likwid_markerInit() has started measuring (and after
 * likwid_markerClose()) every int likwid_marker* function returns -EFAULT
 * and likwid_markerGetRegion() gives zeros.  Starting a region that already
 * runs on the thread prints "WARN: Region NAME was already started" on
 * stderr and returns 0; stopping one that does not run prints "WARN:
 * Stopping an unknown/not-started region NAME" and returns -EFAULT;
 * resetting one that is not stopped prints "ERROR: Can only reset stopped
 * regions" and returns -EFAULT.  A NULL name is -EFAULT.  Compiles as C89,
 * C99 and C++.
 *
 * Differences: one event set (THREADINIT and NextGroup have nothing to
 * do); a region started again keeps running from its first start (LIKWID
 * restarts it), and the report lists that misuse; the report is the SDK's
 * table, JSON or CSV, not LIKWID's marker file.
 *
 * Not here: the rest of LIKWID's API.  No perfmon_* (event sets, groups,
 * likwid-perfctr's LIKWID_* environment, perfmon_readMarkerFile and the
 * marker-file readers), topology_*, numa_*, affinity_* (but see
 * likwid_pinThread), power_* and RAPL, timer_*, freq_* and cpuFeatures_*,
 * HPM* and the access daemon, memsweep, the Lua API, and no GPU markers
 * (likwid_gpuMarker*, nvmon_*, rocmon_*; their macros expand to nothing).
 * LIKWID_VERSION and LIKWID_COMMIT are not defined.
 */
#ifndef LIKWID_H
#define LIKWID_H

#include <errno.h> /* the negative return values are -errno codes */

#ifndef LIKWID_MARKER_INIT
#include "likwid-marker.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Starts measuring: the session UNCORE_EVENTS / UNCORE_METRICS describe
 * (uncore_init()), or the one the SDK started when the program loaded.
 * Call once, before the parallel regions.  Without those variables, when
 * the session cannot start, or when its backend measures nothing
 * (UNCORE_BACKEND=off), prints one line starting "Running without Marker
 * API" on stderr and the markers stay off (-EFAULT), as LIKWID does
 * outside likwid-perfctr -m.  A second call does nothing. */
void likwid_markerInit(void);
/* Nothing to do: threads need no registration (LIKWID pins the thread when
 * likwid-perfctr asked it to; here nothing is pinned). */
void likwid_markerThreadInit(void);
/* Nothing to do: the session has one event set (LIKWID switches to its
 * next group). */
void likwid_markerNextGroup(void);
/* Stops measuring and writes the report (uncore_finalize()).  After it the
 * markers are off again. */
void likwid_markerClose(void);
/* Writes the report so far to `markerfile` (FILE.json, FILE.csv, any other
 * name a table; placeholders as UNCORE_OUTPUT; uncore_write_report()).
 * 0; -EFAULT when `markerfile` is NULL or the markers are off; -EIO when
 * the file could not be written (the reason is printed on stderr).  LIKWID
 * 5.4.0 and later have it (LIKWID_MARKER_WRITE_FILE); 5.2 and 5.3 do
 * not. */
int likwid_markerWriteFile(const char* markerfile);
/* Makes `regionTag` known ahead of its first start (optional). */
int likwid_markerRegisterRegion(const char* regionTag);
/* Starts / stops region `regionTag` on the calling thread. */
int likwid_markerStartRegion(const char* regionTag);
int likwid_markerStopRegion(const char* regionTag);
/* Zeroes the calling thread's results of a stopped region: its count, time
 * and event values. */
int likwid_markerResetRegion(const char* regionTag);
/* The calling thread's results of `regionTag` so far: its number of calls
 * (*count), its own time inside in seconds (*time) and, when `events` is
 * not NULL and *nr_events > 0, up to *nr_events event totals in session
 * order (UNCORE_EVENTS, then the events UNCORE_METRICS needs), *nr_events
 * set to the number written.  A socket's counts go to the thread that
 * closed each interval (the last to leave), so the threads' values sum to
 * each socket once.  A region this thread has not stopped yet gives 0
 * calls, 0 seconds and zero events.  Any pointer may be NULL. */
void likwid_markerGetRegion(const char* regionTag, int* nr_events,
                            double* events, double* time, int* count);
/* The CPU the calling thread runs on: the one CPU of its affinity mask
 * when it has exactly one, sched_getcpu() otherwise. */
int likwid_getProcessorId(void);
/* Pins the calling thread to CPU `processorId`, as LIKWID does
 * (sched_setaffinity(0, ...), which on Linux binds the calling thread;
 * threads it starts later inherit it).  1 on success, 0 on failure (with a
 * message on stderr): LIKWID's TRUE and FALSE, not 0 and -errno. */
int likwid_pinProcess(int processorId);
/* Pins the calling thread to CPU `processorId`
 * (pthread_setaffinity_np).  1 on success, 0 on failure. */
int likwid_pinThread(int processorId);

#ifdef __cplusplus
}
#endif

#endif /* LIKWID_H */
