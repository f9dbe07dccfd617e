/* uncore/likwid_marker.h: LIKWID's marker API (LIKWID 5's likwid-marker.h)
 * on top of the Uncore SDK.  Code annotated for LIKWID switches by changing
 * one include; events come from UNCORE_EVENTS / UNCORE_METRICS, not -g.
 *
 *   #include <uncore/likwid_marker.h>     // was: #include <likwid-marker.h>
 *
 *   LIKWID_MARKER_INIT;
 *   LIKWID_MARKER_THREADINIT;
 *   if (LIKWID_MARKER_START("solve") != 0) abort();   // 0 on success
 *   solve();
 *   LIKWID_MARKER_STOP("solve");
 *   LIKWID_MARKER_GET("solve", &nevents, events, &time, &count);
 *   LIKWID_MARKER_CLOSE;                  // writes the report
 *
 * As in LIKWID, with -DLIKWID_PERFMON the macros have LIKWID's types:
 * REGISTER, START, STOP, RESET and WRITE_FILE are int expressions (0 on
 * success, negative on error: uncore_last_error() says why); INIT,
 * THREADINIT, SWITCH, GET and CLOSE are void.  Without LIKWID_PERFMON every
 * macro expands to nothing, exactly as LIKWID's do: use them as statements
 * (`int r = LIKWID_MARKER_START("x");` compiles with LIKWID_PERFMON only,
 * as with LIKWID).  Regions follow LIKWID's semantics (uncore_marker_*):
 * per thread by name, at the top level of the report, overlapping allowed;
 * GET gives the calling thread's share (summing the threads' gives each
 * socket once); RESET zeroes a stopped region of this thread.  THREADINIT
 * and SWITCH have nothing to do (one event set, counted socket-wide);
 * WRITE_FILE(f) writes the report so far to `f` (a .json, .csv or table
 * file).  For LIKWID's own headers and functions (likwid-marker.h,
 * likwid_marker*, the Fortran module), use the LIKWID package: pkg-config
 * uncore-sdk-likwid (docs/likwid.md).  Compiles as C89 and
 * as C++.
 */
#ifndef UNCORE_LIKWID_MARKER_H_
#define UNCORE_LIKWID_MARKER_H_

#include "uncore/uncore_c.h"

#ifdef LIKWID_PERFMON
#define LIKWID_MARKER_INIT ((void)uncore_init())
#define LIKWID_MARKER_THREADINIT ((void)0)
#define LIKWID_MARKER_SWITCH ((void)0)
#define LIKWID_MARKER_REGISTER(regionTag) uncore_region_register(regionTag)
#define LIKWID_MARKER_START(regionTag) uncore_marker_start(regionTag)
#define LIKWID_MARKER_STOP(regionTag) uncore_marker_stop(regionTag)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count) \
  ((void)uncore_region_get(regionTag, nevents, events, time, count))
#define LIKWID_MARKER_RESET(regionTag) uncore_marker_reset(regionTag)
#define LIKWID_MARKER_WRITE_FILE(markerfile) uncore_write_report(markerfile)
#define LIKWID_MARKER_CLOSE ((void)uncore_finalize())
#else
#define LIKWID_MARKER_INIT
#define LIKWID_MARKER_THREADINIT
#define LIKWID_MARKER_SWITCH
#define LIKWID_MARKER_REGISTER(regionTag)
#define LIKWID_MARKER_START(regionTag)
#define LIKWID_MARKER_STOP(regionTag)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count)
#define LIKWID_MARKER_RESET(regionTag)
#define LIKWID_MARKER_WRITE_FILE(markerfile)
#define LIKWID_MARKER_CLOSE
#endif

#endif /* UNCORE_LIKWID_MARKER_H_ */
