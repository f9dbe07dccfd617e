// uncore/report_file.h: report files as sessions name and write them, for
// tools built on the SDK that write reports of their own (the MPI
// integration's merged report).
//
//   absl::StatusOr<std::string> path =
//       uncore::PrepareReportOutput("merged-%t.json", /*rank=*/0);
//   if (!path.ok()) { /* say it at start: the name cannot be written */ }
//   ...
//   absl::Status s = uncore::WriteReportText(*path, text);
//
//   // Results of one's own (the MPI merged report: Results::mpi), in the
//   // format the name asks for, by the session's writers.
//   std::string text = uncore::FormatReportText(results, *path);
//
//   // Too large to hold (a merged trace): the same write in pieces.
//   auto file = uncore::ReportFileWriter::Open(*path);
//   (*file)->Write(piece);  ...  (*file)->Commit();  // whole, or not at all
//
// Guarantees (docs/environment.md, UNCORE_OUTPUT): the placeholders %p %h
// %r %t %% as for UNCORE_OUTPUT; "-" stays "-" (stderr).  At preparation a
// directory, a missing directory or a name that cannot be written is an
// error saying what to do.  Writing: a regular file (or a new name) is
// written to a temporary file beside it, flushed to disk and renamed into
// place, so it holds the previous report or the new one, whole; a symbolic
// link is followed (the link stays); anything else that exists (a device,
// a FIFO, a terminal) is written in place, never replaced.
#ifndef UNCORE_REPORT_FILE_H_
#define UNCORE_REPORT_FILE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "uncore/results.h"

namespace uncore {

// `output` with its placeholders expanded (%r: `rank`, or the launcher's
// when nullopt), made absolute and checked writable now.
absl::StatusOr<std::string> PrepareReportOutput(
    std::string_view output, std::optional<int64_t> rank = std::nullopt);

// A list of outputs, as UNCORE_OUTPUT and SessionOptions::output take it
// ("merged.json, merged.html,-": names separated by commas, blanks around
// them ignored, an empty name an error), each name prepared as by
// PrepareReportOutput; the first error is returned.
absl::StatusOr<std::vector<std::string>> PrepareReportOutputs(
    std::string_view outputs, std::optional<int64_t> rank = std::nullopt);

// Writes `text` to `path` (from PrepareReportOutput) as above; "-" writes
// to stderr.
absl::Status WriteReportText(const std::string& path, std::string_view text);

// `results` as the report `output`'s name asks for it, as a session writes
// it (docs/report-format.md): "-" or any other name the table, *.json JSON,
// *.hatchet.json the Hatchet tree, *.csv CSV, *.html/*.htm the page (with
// no timeline).  For tools that build Results of their own (the MPI merged
// report: Results::mpi set, which makes the JSON and the table the merged
// report's), so that every report has one writer per format.
std::string FormatReportText(const Results& results, std::string_view output);

// WriteReportText in pieces: Open decides where the bytes go (as above),
// Write appends, Commit makes the file whole (fsync and rename).  Destroyed
// uncommitted, or after a failed Write: the temporary file is removed and
// `path` keeps what it held.  "-" is not a file: an error.
class ReportFileWriter {
 public:
  static absl::StatusOr<std::unique_ptr<ReportFileWriter>> Open(
      const std::string& path);
  ~ReportFileWriter();
  ReportFileWriter(const ReportFileWriter&) = delete;
  ReportFileWriter& operator=(const ReportFileWriter&) = delete;
  absl::Status Write(std::string_view text);
  absl::Status Commit();

 private:
  struct Impl;
  explicit ReportFileWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace uncore

#endif  // UNCORE_REPORT_FILE_H_
