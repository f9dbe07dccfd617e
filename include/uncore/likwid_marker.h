/* uncore/likwid_marker.h: LIKWID's marker API on top of the Uncore SDK.
 * Code annotated for LIKWID switches by changing one include:
 *
 *   #include <uncore/likwid_marker.h>     // was: #include <likwid-marker.h>
 *
 *   LIKWID_MARKER_INIT;                   // uncore_init(): UNCORE_* env
 *   #pragma omp parallel
 *   { LIKWID_MARKER_THREADINIT; LIKWID_MARKER_START("solve"); ...
 *     LIKWID_MARKER_STOP("solve"); }
 *   LIKWID_MARKER_CLOSE;                  // the report
 *
 * As with LIKWID, the macros do something only when LIKWID_PERFMON is
 * defined (-DLIKWID_PERFMON); otherwise they expand to nothing.  Events come
 * from UNCORE_EVENTS / UNCORE_METRICS, not from likwid-perfctr's -g.
 * LIKWID_MARKER_GET(tag, nevents, events, time, count) fills the region's
 * inclusive totals so far (merged over threads: uncore counts are
 * socket-wide).  THREADINIT, SWITCH and REGISTER have nothing to do here
 * (REGISTER interns the name).  RESET is not supported and does nothing.
 * Compiles as C and C++.
 */
#ifndef UNCORE_LIKWID_MARKER_H_
#define UNCORE_LIKWID_MARKER_H_

#include "uncore/uncore_c.h"

#ifdef LIKWID_PERFMON
#define LIKWID_MARKER_INIT ((void)uncore_init())
#define LIKWID_MARKER_THREADINIT ((void)0)
#define LIKWID_MARKER_SWITCH ((void)0)
#define LIKWID_MARKER_REGISTER(regionTag) (uncore_region_register(regionTag))
#define LIKWID_MARKER_START(regionTag) uncore_region_begin(regionTag)
#define LIKWID_MARKER_STOP(regionTag) uncore_region_end(regionTag)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count) \
  ((void)uncore_region_get(regionTag, nevents, events, time, count))
#define LIKWID_MARKER_RESET(regionTag) ((void)(regionTag))
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
#define LIKWID_MARKER_CLOSE
#endif

#endif /* UNCORE_LIKWID_MARKER_H_ */
