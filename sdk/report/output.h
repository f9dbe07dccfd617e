// Report file names and report files: the placeholders of an output name,
// the checks made when a session starts, and the write that never leaves a
// half-written report behind.
//
//   OutputContext context = CurrentOutputContext(start_unix_ns);
//   absl::StatusOr<std::string> path =
//       PrepareOutput("runs/out-%r-%p.json", context);  // expanded, absolute,
//                                                       // checked writable
//   absl::Status s = WriteReportFile(*path, FormatJson(results));
//
// Placeholders (ExpandOutput):
//   %p  the process id                         "4242"
//   %h  the host name (gethostname)            "node17"
//   %r  the MPI rank, from the launcher's environment (RankFromEnvironment);
//       "pid" and the process id when no launcher says ("pid4242"), so
//       processes without a rank never share a file
//   %t  the session's start time, UTC, YYYYmmdd-HHMMSS  "20261123-171730"
//   %%  a literal %
// Any other '%' (an unknown letter, a '%' at the end) is an error.
//
// Writing (WriteReportFile): a regular file, or a name that does not exist
// yet, is written to a temporary file in the same directory
// (".NAME.tmp.PID.RANDOM"), flushed to disk and renamed over NAME, so NAME
// holds either the previous report or the new one, whole; on failure the
// temporary file is removed and NAME is untouched.  A symbolic link is
// followed (the file it points to is replaced; the link stays).  A name
// that exists and is not a regular file (a FIFO, a terminal, /dev/stdout,
// /dev/full) is written in place, and every write error is returned.
#ifndef UNCORE_SDK_REPORT_OUTPUT_H_
#define UNCORE_SDK_REPORT_OUTPUT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace uncore::report {

// What the placeholders expand to.
struct OutputContext {
  int64_t pid = 0;
  std::string host;
  std::optional<int64_t> rank;  // nullopt: no launcher said
  uint64_t start_unix_ns = 0;
};

// The launcher variables RankFromEnvironment reads, in order.
inline constexpr const char* kRankVariables[] = {
    "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK",
    "SLURM_PROCID"};

// The first of kRankVariables that holds a decimal number; `lookup` reads a
// variable (nullptr when unset).
std::optional<int64_t> RankFromEnvironment(
    const std::function<const char*(const char*)>& lookup);
std::optional<int64_t> RankFromEnvironment();  // from the process environment

// This process's pid, host name and rank, and `start_unix_ns`.
OutputContext CurrentOutputContext(uint64_t start_unix_ns);

// `output` with its placeholders expanded; InvalidArgument naming the
// placeholder, its position and the valid ones.  "-" stays "-".
absl::StatusOr<std::string> ExpandOutput(std::string_view output,
                                         const OutputContext& context);

// `path` made absolute against `cwd` (the working directory when empty);
// "-" stays "-".
absl::StatusOr<std::string> AbsoluteOutput(const std::string& path,
                                           const std::string& cwd = "");

// Whether a report could be written to the absolute `path` now: a name that
// is not a regular file must be writable (access W_OK); otherwise its
// directory must exist and a file must be creatable in it (one is created
// and removed).  The error says what is wrong and what to do.
// `what` names the file in the errors: "report", "trace".
absl::Status CheckOutputWritable(const std::string& path,
                                 std::string_view what = "report");

// ExpandOutput, AbsoluteOutput and CheckOutputWritable: the absolute path
// (or "-") that WriteReport should be given.  "" is an error.
absl::StatusOr<std::string> PrepareOutput(std::string_view output,
                                          const OutputContext& context,
                                          std::string_view what = "report");

// One file a session writes: what names it in a message ("report output
// 'r.json'", "the trace 't.json'") and its path as PrepareOutput gives it.
struct OutputClaim {
  std::string what;
  std::string path;
};

// Whether two paths of PrepareOutput name one regular file (or one file yet
// to be created): the same after normalisation (weakly_canonical: "./x" and
// "x", "..", symbolic links), or the same device and inode (a hard link).
// "-" (stderr) and existing files that are not regular (/dev/null, a
// terminal, a FIFO) are never one file: nothing there is overwritten.
bool SameOutputFile(const std::string& a, const std::string& b);

// InvalidArgument when two of `claims` name one file (the later write
// would replace the earlier), saying which two, the file and what to do.
absl::Status CheckOutputsApart(const std::vector<OutputClaim>& claims);

// A report output list, as UNCORE_OUTPUT and SessionOptions::output take
// it: "a.json, b.csv,-" -> {"a.json", "b.csv", "-"}, each name stripped of
// blanks; an empty name (",," or a list that is all blanks) is an error.
absl::StatusOr<std::vector<std::string>> SplitOutputs(std::string_view list);

// Writes `text` to `path` as described above.  Errors name the path and the
// system's reason.
absl::Status WriteReportFile(const std::string& path, std::string_view text);

// The same write in pieces, for outputs too large to hold (traces): Open
// decides where the bytes go (a temporary file next to `path`, or `path`
// itself when it is not a regular file), Write appends, Commit makes the
// file whole (fsync, then the rename over `path`).  A failed Write or
// Commit, Abort, or destroying the stream uncommitted removes the
// temporary file: `path` keeps its previous content.  One writer: not
// thread-safe.
class ReportFileStream {
 public:
  // `what` names the file in messages: "report", "trace".
  static absl::StatusOr<std::unique_ptr<ReportFileStream>> Open(
      const std::string& path, std::string_view what = "report");
  ~ReportFileStream();
  ReportFileStream(const ReportFileStream&) = delete;
  ReportFileStream& operator=(const ReportFileStream&) = delete;

  absl::Status Write(std::string_view text);
  absl::Status Commit();
  void Abort();
  const std::string& path() const { return path_; }

 private:
  ReportFileStream() = default;
  absl::Status Failed(int error);

  std::string path_;    // as given
  std::string what_;    // "report", "trace"
  std::string target_;  // what the temporary file is renamed over
  std::string temp_;    // "" once renamed or removed, or when in place
  int fd_ = -1;
  int error_ = 0;
  bool in_place_ = false;
  bool existing_ = false;  // a previous report is replaced
};

}  // namespace uncore::report

#endif  // UNCORE_SDK_REPORT_OUTPUT_H_
