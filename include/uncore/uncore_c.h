/* uncore/uncore_c.h: the Uncore SDK from C (and from Fortran through
 * bind(C)).  Compiles as C89 and as C++.
 *
 *   #include <uncore/uncore_c.h>
 *
 *   uncore_init();                      // the session UNCORE_* describes
 *   if (uncore_region_begin("solve") != 0) puts(uncore_last_error());
 *   solve();
 *   uncore_region_end("solve");
 *   uncore_finalize();                  // writes the report, restores
 *
 * Or choose in code: uncore_init_with("imc/CAS_COUNT.RD", "MEM_BW_TOTAL",
 * "sim", "report.json").  Every function returning int returns 0 on success
 * and a negative value (-1) on failure; uncore_last_error() then says why.
 * Link: `cc prog.c $(pkg-config --cflags --libs uncore-sdk)`.
 *
 * Fortran (each function returns integer(c_int)):
 *   interface
 *     integer(c_int) function uncore_region_begin(name) &
 *         bind(C, name="uncore_region_begin")
 *       import :: c_int, c_char
 *       character(kind=c_char), dimension(*) :: name
 *     end function
 *   end interface
 *   rc = uncore_region_begin("solve" // c_null_char)
 *
 * Guarantees: regions follow the C++ rules (uncore/region.h): counts are
 * socket-wide, nesting is per thread, misuse is recorded in the report, and
 * once a name is known a region call takes no lock and allocates nothing.
 */
#ifndef UNCORE_UNCORE_C_H_
#define UNCORE_UNCORE_C_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Starts the session the UNCORE_* environment variables describe, unless
 * one is already active (then does nothing).  Without UNCORE_EVENTS or
 * UNCORE_METRICS it succeeds and regions are not measured. */
int uncore_init(void);
/* Starts a session: comma-separated event specs and metrics (either may be
 * NULL), a backend (NULL: "auto") and an output (NULL: "-"; "": no report;
 * placeholders %p %h %r %t %% as in UNCORE_OUTPUT, docs/environment.md).
 * -1 also when the output could not be written (checked now). */
int uncore_init_with(const char* events, const char* metrics,
                     const char* backend, const char* output);
/* Interns a region name ahead of its first use (optional). */
int uncore_region_register(const char* name);
/* Opens / closes region `name` on the calling thread.  0 also when no
 * session is active (regions are then not measured) and when the end does
 * not match the innermost open region (the report records that misuse);
 * -1 when `name` is NULL.  uncore_last_error() is set only on failure. */
int uncore_region_begin(const char* name);
int uncore_region_end(const char* name);
/* The calling thread's share of region `name` so far, summed over every
 * call path it was opened on (under different parents): up to *nevents
 * inclusive event totals (in session order, scaled to their units) into
 * `events`, *nevents set to the number written; the thread's own time in
 * the region in seconds and its number of calls.  A region's counts are
 * socket-wide; each interval with a thread inside is credited to the
 * thread that closed it (the last to leave), so summing every thread's
 * values gives each socket once (LIKWID's GET).  Any pointer may be NULL.
 * -1 when the region is unknown on this thread or no session is active.
 * Begin and end of a name are lock-free and allocation-free after its
 * first use; get takes a lock. */
int uncore_region_get(const char* name, int* nevents, double* events,
                      double* seconds, int* calls);
/* Resetting a region's totals is not supported (they accumulate over the
 * session): always -1, with the reason in uncore_last_error().  Marker
 * regions can be reset: uncore_marker_reset. */
int uncore_region_reset(const char* name);
/* LIKWID's marker semantics (what the LIKWID package's likwid_marker*
 * functions call): marker regions are keyed per thread by name, at the top
 * level of the report (not nested under the thread's open regions), and may
 * overlap in any order (start A, start B, stop A, stop B).  The attribution
 * rule is the same: each socket once while any thread runs the marker.
 * Start of a marker that already runs on this thread, or stop of one that
 * does not: recorded in the report, -1 (uncore_last_error says which).
 * uncore_region_get reads a marker region's calling-thread share.
 * uncore_marker_reset zeroes the calling thread's results of marker
 * `name` (-1 while it runs on this thread). */
int uncore_marker_start(const char* name);
int uncore_marker_stop(const char* name);
int uncore_marker_reset(const char* name);
/* Writes the active session's report so far to `output` ("-": a table on
 * stderr, FILE.json, FILE.csv, any other FILE: the table; placeholders as
 * for uncore_init_with).  -1 when no session is active or the file cannot
 * be written. */
int uncore_write_report(const char* output);
/* Stops the session started by uncore_init*, writes its report. */
int uncore_finalize(void);
/* Why the last call failed ("" if none; at most 2,047 bytes, a longer
 * message ends in "...").  Valid until the next call on the thread. */
const char* uncore_last_error(void);
/* Whether this program starts the session UNCORE_EVENTS / UNCORE_METRICS
 * describe when it loads.  The library's default returns 1; a program that
 * makes its own sessions (the `uncore` tool does) defines this function
 * returning 0, which replaces the default at link time. */
int uncore_environment_session_enabled(void);

#ifdef __cplusplus
}
#endif

#endif /* UNCORE_UNCORE_C_H_ */
