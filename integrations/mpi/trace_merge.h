// The ranks' Chrome traces (UNCORE_TRACE) merged at rank 0, their clocks
// aligned (docs/mpi.md, "Traces").
//
//   // every rank, after its session stopped (its trace is on disk):
//   absl::Status s = MergeTraces(comm, own_trace, remove_own, merged_path);
//
// Alignment: each trace's ts 0 is its session's start on that rank's
// CLOCK_MONOTONIC ("origin_monotonic_ns" in its otherData).  After a
// barrier every rank reads its clock; rank 0's reading is broadcast, so a
// rank's clock differs from rank 0's by (its reading - rank 0's), to the
// barrier's skew (microseconds on one node, more across a network).  The
// merged trace's ts 0 is the earliest rank's start on rank 0's clock; every
// event of rank r is shifted by its start's distance from it.
//
// Memory stays bounded: rank 0 receives each rank's file in 1 MiB pieces,
// rank after rank, and streams the merged file (whole or not at all,
// uncore::ReportFileWriter).
#ifndef UNCORE_INTEGRATIONS_MPI_TRACE_MERGE_H_
#define UNCORE_INTEGRATIONS_MPI_TRACE_MERGE_H_

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace uncore::mpi {

// Turns a trace file's text, fed in pieces of any size, into its events,
// each shifted by `shift_ns`, written as ",\n"-separated JSON objects after
// whatever events came before (`first`: none yet).
class TraceEventShifter {
 public:
  TraceEventShifter(int64_t shift_ns, bool* first)
      : shift_ns_(shift_ns), first_(first) {}
  void Feed(std::string_view piece, std::string* out);
  void Finish(std::string* out);  // the last line, if it had no newline

 private:
  void Line(std::string_view line, std::string* out);
  int64_t shift_ns_;
  bool* first_;
  std::string partial_;
};

// An event's "ts" (microseconds, up to three decimals) moved by `shift_ns`;
// the line unchanged when it has none.
std::string ShiftTs(std::string_view event, int64_t shift_ns);

// "origin_monotonic_ns" from the end of a trace file; nullopt when the file
// is not a complete trace of ours.
std::optional<uint64_t> TraceOrigin(const std::string& path);

// `merged_path`: rank 0's ("" at the others, or no merged trace: then the
// ranks only remove their own temporary files).  `own_path`: this rank's
// trace ("" none); removed afterwards when `remove_own`.  Collective.
absl::Status MergeTraces(MPI_Comm comm, const std::string& own_path,
                         bool remove_own, const std::string& merged_path);

}  // namespace uncore::mpi

#endif  // UNCORE_INTEGRATIONS_MPI_TRACE_MERGE_H_
