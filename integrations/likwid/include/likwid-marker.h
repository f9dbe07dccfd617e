/* likwid-marker.h of the Uncore SDK's LIKWID package: LIKWID 5's marker
 * macros, so that code annotated for LIKWID builds and runs unchanged on
 * the SDK (libuncore_likwid, pkg-config uncore-sdk-likwid).
 *
 *   #include <likwid-marker.h>      // the same include as with LIKWID
 *   LIKWID_MARKER_INIT;             // the session UNCORE_EVENTS describes
 *   LIKWID_MARKER_START("solve");
 *   solve();
 *   LIKWID_MARKER_STOP("solve");
 *   LIKWID_MARKER_CLOSE;            // writes the report (UNCORE_OUTPUT)
 *
 *   cc -DLIKWID_PERFMON prog.c $(pkg-config --cflags --libs uncore-sdk-likwid)
 *   UNCORE_EVENTS=imc/CAS_COUNT.RD UNCORE_OUTPUT=report.json ./a.out
 *
 * Guarantees: LIKWID's macro names, arities and types.  With LIKWID_PERFMON
 * defined the LIKWID_MARKER_* macros call the likwid_marker* functions of
 * <likwid.h> (INIT, THREADINIT, SWITCH, GET and CLOSE are void expressions;
 * REGISTER, START, STOP, RESET and WRITE_FILE are int ones: 0 on success,
 * a negative errno value on error); without it they expand to nothing, as
 * LIKWID's do, so use them as statements.  The GPU marker macros
 * (NVMON_MARKER_* of LIKWID 5.4, ROCMON_MARKER_* of 5.3 with WRITE_FILE
 * from 5.4, LIKWID_NVMARKER_* of 5.2 and 5.3) always expand to nothing:
 * GPUs are not measured.  Their GET takes six arguments where
 * LIKWID_NVMON (or LIKWID_ROCMON) is defined and five otherwise, as in
 * LIKWID's header.  Compiles as C89, C99 and C++.
 * Do not include it together with <uncore/likwid_marker.h>, which defines
 * the same macros on the SDK's C API.
 */
#ifndef LIKWID_MARKER_H
#define LIKWID_MARKER_H

#ifdef LIKWID_PERFMON
#include "likwid.h"
#define LIKWID_MARKER_INIT likwid_markerInit()
#define LIKWID_MARKER_THREADINIT likwid_markerThreadInit()
#define LIKWID_MARKER_SWITCH likwid_markerNextGroup()
#define LIKWID_MARKER_REGISTER(regionTag) likwid_markerRegisterRegion(regionTag)
#define LIKWID_MARKER_START(regionTag) likwid_markerStartRegion(regionTag)
#define LIKWID_MARKER_STOP(regionTag) likwid_markerStopRegion(regionTag)
#define LIKWID_MARKER_CLOSE likwid_markerClose()
#define LIKWID_MARKER_WRITE_FILE(markerfile) likwid_markerWriteFile(markerfile)
#define LIKWID_MARKER_RESET(regionTag) likwid_markerResetRegion(regionTag)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count) \
  likwid_markerGetRegion(regionTag, nevents, events, time, count)
#else /* LIKWID_PERFMON */
#define LIKWID_MARKER_INIT
#define LIKWID_MARKER_THREADINIT
#define LIKWID_MARKER_SWITCH
#define LIKWID_MARKER_REGISTER(regionTag)
#define LIKWID_MARKER_START(regionTag)
#define LIKWID_MARKER_STOP(regionTag)
#define LIKWID_MARKER_CLOSE
#define LIKWID_MARKER_WRITE_FILE(markerfile)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count)
#define LIKWID_MARKER_RESET(regionTag)
#endif /* LIKWID_PERFMON */

/* Nvidia GPUs (LIKWID 5.4's names): not measured, always nothing. */
#define NVMON_MARKER_INIT
#define NVMON_MARKER_THREADINIT
#define NVMON_MARKER_SWITCH
#define NVMON_MARKER_REGISTER(regionTag)
#define NVMON_MARKER_START(regionTag)
#define NVMON_MARKER_STOP(regionTag)
#define NVMON_MARKER_CLOSE
#define NVMON_MARKER_RESET(regionTag)
#define NVMON_MARKER_WRITE_FILE(markerfile)
#ifdef LIKWID_NVMON
#define NVMON_MARKER_GET(regionTag, ngpus, nevents, events, time, count)
#else
#define NVMON_MARKER_GET(regionTag, nevents, events, time, count)
#endif

/* AMD GPUs (LIKWID 5.3's names, WRITE_FILE 5.4): not measured, always
 * nothing. */
#define ROCMON_MARKER_INIT
#define ROCMON_MARKER_THREADINIT
#define ROCMON_MARKER_SWITCH
#define ROCMON_MARKER_REGISTER(regionTag)
#define ROCMON_MARKER_START(regionTag)
#define ROCMON_MARKER_STOP(regionTag)
#define ROCMON_MARKER_CLOSE
#define ROCMON_MARKER_RESET(regionTag)
#define ROCMON_MARKER_WRITE_FILE(filename)
#ifdef LIKWID_ROCMON
#define ROCMON_MARKER_GET(regionTag, ngpus, nevents, events, time, count)
#else
#define ROCMON_MARKER_GET(regionTag, nevents, events, time, count)
#endif

/* Nvidia GPUs (LIKWID 5.2's and 5.3's names): not measured, always
 * nothing. */
#define LIKWID_NVMARKER_INIT
#define LIKWID_NVMARKER_THREADINIT
#define LIKWID_NVMARKER_SWITCH
#define LIKWID_NVMARKER_REGISTER(regionTag)
#define LIKWID_NVMARKER_START(regionTag)
#define LIKWID_NVMARKER_STOP(regionTag)
#define LIKWID_NVMARKER_CLOSE
#define LIKWID_NVMARKER_RESET(regionTag)
#ifdef LIKWID_NVMON
#define LIKWID_NVMARKER_GET(regionTag, ngpus, nevents, events, time, count)
#else
#define LIKWID_NVMARKER_GET(regionTag, nevents, events, time, count)
#endif

#endif /* LIKWID_MARKER_H */
