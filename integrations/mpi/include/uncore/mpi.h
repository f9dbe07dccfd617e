/* uncore/mpi.h: uncore counts for MPI programs, programmed once per socket
 * and merged into one report at rank 0 (docs/mpi.md).
 *
 * Nothing to call: link libuncore_sdk_mpi (`pkg-config --libs
 * uncore-sdk-mpi`, CMake `uncore::mpi`) or preload it
 * (`mpirun -x LD_PRELOAD=libuncore_sdk_mpi.so ...`), set UNCORE_EVENTS, and
 * MPI_Init starts each rank's session (the UNCORE_* variables,
 * docs/environment.md) and MPI_Finalize writes the merged report to
 * UNCORE_OUTPUT (placeholders expanded at rank 0):
 *
 *   UNCORE_EVENTS=msr/tsc/ UNCORE_BACKEND=perf UNCORE_OUTPUT=merged.json \
 *     mpirun -np 4 ./prog
 *
 * Or choose the communicator and the moment yourself:
 *
 *   int uncore_mpi_auto_init(void) { return 0; }   // no start in MPI_Init
 *   ...
 *   MPI_Init(&argc, &argv);
 *   if (uncore_mpi_init(MPI_COMM_WORLD) != 0)
 *     fprintf(stderr, "%s\n", uncore_mpi_last_error());
 *   { UNCORE_REGION("solve"); Solve(); }
 *   uncore_mpi_finalize();                          // or MPI_Finalize()
 *
 * Guarantees: on each node, every socket is programmed by one rank (its
 * leader); the other ranks read the leader's counters through shared
 * memory, so no counter is programmed twice however many ranks share a
 * socket.  uncore_mpi_init and uncore_mpi_finalize are collective over the
 * communicator; they never abort the job: a rank that cannot measure runs
 * unmeasured and the merged report lists why.  Not thread-safe: call them
 * from the thread that calls MPI_Init/MPI_Finalize.
 */
#ifndef UNCORE_MPI_H_
#define UNCORE_MPI_H_

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts this rank's session from the UNCORE_* variables over `comm`:
 * elects one leader per socket of each node, starts the leaders' sessions
 * (which program and serve the counters), then the others' (which read
 * them).  Returns 0 when every rank started, or when UNCORE_EVENTS and
 * UNCORE_METRICS are unset (nothing to measure), or when already started;
 * -1 otherwise (uncore_mpi_last_error says why; the other ranks go on). */
int uncore_mpi_init(MPI_Comm comm);

/* Stops every rank's session, gathers the results at rank 0 of the
 * communicator and writes the merged report there.  Collective; 0 on
 * success or when nothing was started, -1 on failure. */
int uncore_mpi_finalize(void);

/* Why the last uncore_mpi_* call of this process failed ("" when none). */
const char* uncore_mpi_last_error(void);

/* Defined by the library, returning 1: MPI_Init starts the session over
 * MPI_COMM_WORLD.  A program that calls uncore_mpi_init itself defines it
 * returning 0. */
int uncore_mpi_auto_init(void);

#ifdef __cplusplus
}
#endif

#endif /* UNCORE_MPI_H_ */
