/* uncore/uncore_c.h: the Uncore SDK from C (and from Fortran through
 * bind(C)).  Compiles as C89 and as C++.
 *
 *   #include <uncore/uncore_c.h>
 *
 *   uncore_init();                      // the session UNCORE_* describes
 *   uncore_region_begin("solve");
 *   solve();
 *   uncore_region_end("solve");
 *   uncore_finalize();                  // writes the report, restores
 *
 * Or choose in code: uncore_init_with("imc/CAS_COUNT.RD", "MEM_BW_TOTAL",
 * "sim", "report.json").  Every function returning int returns 0 on success
 * and -1 on failure; uncore_last_error() then says why.
 *
 * Fortran:
 *   interface
 *     integer(c_int) function uncore_init() bind(C, name="uncore_init")
 *       import :: c_int
 *     end function
 *     subroutine uncore_region_begin(name) bind(C, name="uncore_region_begin")
 *       import :: c_char
 *       character(kind=c_char), dimension(*) :: name
 *     end subroutine
 *   end interface
 *   call uncore_region_begin("solve" // c_null_char)
 *
 * Counts are socket-wide (see uncore/region.h).  Regions follow the C++
 * rules: nesting per thread, misuse recorded in the report, no allocation
 * or lock once a name is known (a name passed from a new buffer each call
 * is looked up by its text).
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
 * NULL), a backend (NULL: "auto") and an output (NULL: "-"). */
int uncore_init_with(const char* events, const char* metrics,
                     const char* backend, const char* output);
/* Interns a region name ahead of its first use (optional); returns 0. */
int uncore_region_register(const char* name);
void uncore_region_begin(const char* name);
void uncore_region_end(const char* name);
/* The inclusive totals of region `name` so far: up to *nevents event totals
 * (in session order) into `events`, *nevents set to the number written;
 * the total wall time in seconds and the number of calls.  Any pointer may
 * be NULL.  -1 when the region is unknown or no session is active. */
int uncore_region_get(const char* name, int* nevents, double* events,
                      double* seconds, int* calls);
/* Stops the session started by uncore_init*, writes its report. */
int uncore_finalize(void);
/* Why the last call failed ("" if none).  Valid until the next call. */
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
