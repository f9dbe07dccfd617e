// Report file names (placeholders, resolution, the checks at start) and the
// report write that replaces a file only once the new one is complete.
#include "sdk/report/output.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "sdk/common/fd.h"
#include "sdk/common/host_name.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/report/report.h"
#include "uncore/report_file.h"

namespace uncore::report {
namespace {

constexpr std::string_view kPlaceholders =
    "%p (process id), %h (host name), %r (MPI rank), %t (start time, UTC "
    "YYYYmmdd-HHMMSS) or %% (a literal %)";

// A path as a message quotes it: escaped, and a long one cut
// (common/text.h), with room for a path of a few long directory names.
constexpr size_t kQuotedPathBytes = 600;

std::string Quoted(std::string_view path) {
  return absl::StrCat("'", common::QuoteForMessage(path, kQuotedPathBytes),
                      "'");
}

std::string Reason(int error) { return std::generic_category().message(error); }

absl::Status ErrnoStatus(int error, const std::string& message) {
  return absl::Status(absl::ErrnoToStatusCode(error), message);
}

// "/a/b/c.json" -> "/a/b"; "c.json" -> "."; "/c.json" -> "/".
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseNameOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

uint64_t RandomBits() {
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof(bits), GRND_NONBLOCK) ==
      static_cast<ssize_t>(sizeof(bits))) {
    return bits;
  }
  static std::atomic<uint64_t> counter{0};
  const uint64_t now = static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
  return now * 0x9E3779B97F4A7C15ULL + counter.fetch_add(1);
}

// Creates ".NAME.tmp.PID.RANDOM" next to `path` (O_EXCL, mode 0666 less the
// umask); its name in *temp.  -1 with errno set on failure.
int CreateTemporary(const std::string& path, std::string* temp) {
  const std::string dir = DirectoryOf(path);
  // ".NAME.tmp.PID.RANDOM" must fit in a file name too (NAME_MAX): of a
  // long NAME it keeps the start (a name of 231-255 bytes was refused with
  // ENAMETOOLONG for the temporary file).
  constexpr size_t kSuffixBytes = 1 + 5 + 10 + 1 + 12;  // ".", ".tmp.", ...
  const std::string base = BaseNameOf(path).substr(0, NAME_MAX - kSuffixBytes);
  // "c.json" -> ".c.json.tmp...", "/c.json" -> "/.c.json.tmp...".
  const std::string prefix =
      path.find('/') == std::string::npos ? "" : (dir == "/" ? "/" : dir + "/");
  for (int attempt = 0; attempt < 16; ++attempt) {
    *temp = fmt::format("{}.{}.tmp.{}.{:012x}", prefix, base, getpid(),
                        RandomBits() & 0xFFFFFFFFFFFFULL);
    const int fd = common::KeepAboveStdio(
        open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Writes all of `text` to `fd`, retrying short writes and EINTR.
int WriteAllTo(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace

std::optional<int64_t> RankFromEnvironment(
    const std::function<const char*(const char*)>& lookup) {
  for (const char* name : kRankVariables) {
    const char* value = lookup(name);
    if (value == nullptr || *value == '\0') continue;
    const std::string_view text(value);
    if (text.size() > 9 ||
        text.find_first_not_of("0123456789") != std::string_view::npos) {
      continue;
    }
    return std::strtoll(value, nullptr, 10);
  }
  return std::nullopt;
}

std::optional<int64_t> RankFromEnvironment() {
  return RankFromEnvironment(
      [](const char* name) { return std::getenv(name); });
}

OutputContext CurrentOutputContext(uint64_t start_unix_ns) {
  OutputContext context;
  context.pid = getpid();
  context.host = common::HostName();
  context.rank = RankFromEnvironment();
  context.start_unix_ns = start_unix_ns;
  return context;
}

absl::StatusOr<std::string> ExpandOutput(std::string_view output,
                                         const OutputContext& context) {
  std::string expanded;
  for (size_t i = 0; i < output.size(); ++i) {
    if (output[i] != '%') {
      expanded.push_back(output[i]);
      continue;
    }
    if (i + 1 == output.size()) {
      return absl::InvalidArgumentError(fmt::format(
          "report output \"{}\" ends with a lone '%': use %% for a literal %, "
          "or one of {}",
          EscapeForTable(output), kPlaceholders));
    }
    const char c = output[++i];
    switch (c) {
      case 'p':
        absl::StrAppend(&expanded, context.pid);
        break;
      case 'h':
        expanded += context.host;
        break;
      case 'r':
        if (context.rank.has_value()) {
          absl::StrAppend(&expanded, *context.rank);
        } else {
          absl::StrAppend(&expanded, "pid", context.pid);
        }
        break;
      case 't': {
        const time_t seconds =
            static_cast<time_t>(context.start_unix_ns / 1'000'000'000);
        struct tm utc = {};
        gmtime_r(&seconds, &utc);
        char text[32] = {};
        strftime(text, sizeof(text), "%Y%m%d-%H%M%S", &utc);
        expanded += text;
        break;
      }
      case '%':
        expanded.push_back('%');
        break;
      default:
        return absl::InvalidArgumentError(fmt::format(
            "report output \"{}\" has an unknown placeholder '%{}' at "
            "column {}: use {}",
            EscapeForTable(output),
            EscapeForTable(std::string_view(&output[i], 1)), i, kPlaceholders));
    }
  }
  return expanded;
}

absl::StatusOr<std::string> AbsoluteOutput(const std::string& path,
                                           const std::string& cwd) {
  if (path == "-" || (!path.empty() && path[0] == '/')) return path;
  std::string base = cwd;
  if (base.empty()) {
    char buffer[4096];
    if (getcwd(buffer, sizeof(buffer)) == nullptr) {
      const int error = errno;
      return ErrnoStatus(
          error, fmt::format("report output {} is relative and the working "
                             "directory cannot be read: {}: give an "
                             "absolute path",
                             Quoted(path), Reason(error)));
    }
    base = buffer;
  }
  if (base.empty() || base.back() != '/') base.push_back('/');
  return base + path;
}

// A name the file system cannot hold: a component longer than its NAME_MAX
// (255 on Linux's file systems), or a path of PATH_MAX bytes or more.
absl::Status CheckNameLength(const std::string& path, std::string_view what) {
  if (path.size() >= PATH_MAX) {
    return ErrnoStatus(
        ENAMETOOLONG,
        fmt::format("cannot write the {} to {}: the path is {} bytes, "
                    "and a path has fewer than {} (PATH_MAX): choose a "
                    "shorter one",
                    what, Quoted(path), path.size(), PATH_MAX));
  }
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const size_t length = end - start;
    if (length > NAME_MAX) {
      // The file system's own limit where its directory says (pathconf).
      const std::string dir = start <= 1 ? "/" : path.substr(0, start - 1);
      const int64_t limit = pathconf(dir.c_str(), _PC_NAME_MAX);
      const int64_t name_max = limit > 0 ? limit : NAME_MAX;
      if (length > static_cast<size_t>(name_max)) {
        return ErrnoStatus(
            ENAMETOOLONG,
            fmt::format("cannot write the {} to {}: {} {} is {} bytes, "
                        "and a file name has at most {} (NAME_MAX) here: "
                        "choose a shorter name",
                        what, Quoted(path),
                        end == path.size() ? "its name" : "the directory name",
                        Quoted(path.substr(start, length)), length, name_max));
      }
    }
    start = end + 1;
  }
  return absl::OkStatus();
}

absl::Status CheckOutputWritable(const std::string& path,
                                 std::string_view what) {
  if (path == "-") return absl::OkStatus();
  UNCORE_RETURN_IF_ERROR(CheckNameLength(path, what));
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return ErrnoStatus(EISDIR,
                         fmt::format("cannot write the {} to {}: {}: name "
                                     "a file, not a directory",
                                     what, Quoted(path), Reason(EISDIR)));
    }
    if (!S_ISREG(st.st_mode)) {
      if (access(path.c_str(), W_OK) != 0) {
        const int error = errno;
        return ErrnoStatus(error,
                           fmt::format("cannot write the {} to {}: {}: choose "
                                       "another output",
                                       what, Quoted(path), Reason(error)));
      }
      return absl::OkStatus();
    }
  }
  // A regular file or a new name: written through a temporary file in its
  // directory, which must exist and take a new file.
  const std::string dir = DirectoryOf(path);
  struct stat dir_st;
  if (stat(dir.c_str(), &dir_st) != 0) {
    const int error = errno;
    return ErrnoStatus(
        error, fmt::format("cannot write the {} to {}: directory {}: {}: "
                           "create the directory first, or choose another "
                           "output",
                           what, Quoted(path), Quoted(dir), Reason(error)));
  }
  if (!S_ISDIR(dir_st.st_mode)) {
    return ErrnoStatus(
        ENOTDIR, fmt::format("cannot write the {} to {}: {}: {}: "
                             "choose another output",
                             what, Quoted(path), Quoted(dir), Reason(ENOTDIR)));
  }
  std::string probe;
  const int fd = CreateTemporary(path, &probe);
  if (fd < 0) {
    const int error = errno;
    return ErrnoStatus(
        error, fmt::format("cannot write the {} to {}: cannot create a "
                           "file in directory {}: {}: make the directory "
                           "writable, or choose another output",
                           what, Quoted(path), Quoted(dir), Reason(error)));
  }
  close(fd);
  unlink(probe.c_str());
  return absl::OkStatus();
}

absl::StatusOr<std::string> PrepareOutput(std::string_view output,
                                          const OutputContext& context,
                                          std::string_view what) {
  UNCORE_RETURN_IF_ERROR(ParseOutput(output).status());
  UNCORE_ASSIGN_OR_RETURN(const std::string expanded,
                          ExpandOutput(output, context));
  if (expanded.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{} output \"{}\" expands to an empty name: name a file",
                    what, EscapeForTable(output)));
  }
  UNCORE_ASSIGN_OR_RETURN(const std::string absolute, AbsoluteOutput(expanded));
  UNCORE_RETURN_IF_ERROR(CheckOutputWritable(absolute, what));
  return absolute;
}

namespace {

// `path` normalised: its symbolic links followed, dangling ones too (a
// report written through one creates its target), then weakly_canonical.
std::filesystem::path NormalOutputPath(const std::string& path) {
  std::filesystem::path p(path);
  for (int hops = 0; hops < 40; ++hops) {  // as the kernel's ELOOP limit
    std::error_code error;
    if (!std::filesystem::is_symlink(
            std::filesystem::symlink_status(p, error))) {
      break;
    }
    const std::filesystem::path target =
        std::filesystem::read_symlink(p, error);
    if (error) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  std::error_code error;
  std::filesystem::path normal = std::filesystem::weakly_canonical(p, error);
  return error ? p.lexically_normal() : normal;
}

}  // namespace

bool SameOutputFile(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return false;
  struct stat sa;
  struct stat sb;
  const bool a_exists = stat(a.c_str(), &sa) == 0;
  const bool b_exists = stat(b.c_str(), &sb) == 0;
  if ((a_exists && !S_ISREG(sa.st_mode)) ||
      (b_exists && !S_ISREG(sb.st_mode))) {
    return false;  // a device or a FIFO: written in place, never replaced
  }
  if (a_exists && b_exists) {
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }
  // One or both yet to be created: the names, normalised ("./", "..",
  // symbolic links).
  return NormalOutputPath(a) == NormalOutputPath(b);
}

absl::Status CheckOutputsApart(const std::vector<OutputClaim>& claims) {
  for (size_t i = 0; i < claims.size(); ++i) {
    for (size_t j = i + 1; j < claims.size(); ++j) {
      if (!SameOutputFile(claims[i].path, claims[j].path)) continue;
      const std::filesystem::path file = NormalOutputPath(claims[j].path);
      return absl::InvalidArgumentError(fmt::format(
          "{} and {} are the same file, {}: the one written last would "
          "replace the other; give each its own name (UNCORE_OUTPUT and "
          "UNCORE_TRACE, or uncore stat's -o and --trace)",
          claims[i].what, claims[j].what, Quoted(file.string())));
    }
  }
  return absl::OkStatus();
}

// The stream's opening: where the bytes go, decided as WriteReportFile's
// comment in output.h says.
absl::StatusOr<std::unique_ptr<ReportFileStream>> ReportFileStream::Open(
    const std::string& path, std::string_view what) {
  std::unique_ptr<ReportFileStream> stream(new ReportFileStream());
  stream->path_ = path;
  stream->what_ = std::string(what);
  struct stat st;
  int in_place_flags = -1;  // -1: through a temporary file
  bool existing = false;
  std::string target = path;
  if (stat(path.c_str(), &st) != 0) {
    // A new name (or a dangling symbolic link, written through in place).
    struct stat link;
    if (lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      in_place_flags = O_CREAT | O_TRUNC;
    }
  } else if (S_ISDIR(st.st_mode)) {
    return ErrnoStatus(EISDIR, fmt::format("cannot write the {} to {}: {}",
                                           what, Quoted(path), Reason(EISDIR)));
  } else if (!S_ISREG(st.st_mode)) {
    in_place_flags = 0;
  } else {
    existing = true;
    struct stat link;
    if (lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      if (char* resolved = realpath(path.c_str(), nullptr)) {
        target = resolved;
        std::free(resolved);
      }
    }
  }
  if (in_place_flags >= 0) {
    stream->fd_ = common::KeepAboveStdio(
        open(path.c_str(), O_WRONLY | O_CLOEXEC | in_place_flags, 0666));
    if (stream->fd_ < 0) {
      const int error = errno;
      return ErrnoStatus(
          error, fmt::format("cannot open {} file {} for writing: {}", what,
                             Quoted(path), Reason(error)));
    }
    stream->in_place_ = true;
    return stream;
  }
  stream->fd_ = CreateTemporary(target, &stream->temp_);
  if (stream->fd_ < 0) {
    const int error = errno;
    return ErrnoStatus(
        error, fmt::format("cannot write {} file {}: cannot create a "
                           "temporary file in {}: {}",
                           what, Quoted(path), Quoted(DirectoryOf(target)),
                           Reason(error)));
  }
  stream->target_ = target;
  stream->existing_ = existing;
  // The replaced report's permissions carry over (best effort).
  if (existing) (void)fchmod(stream->fd_, st.st_mode & 07777);
  return stream;
}

ReportFileStream::~ReportFileStream() { Abort(); }

absl::Status ReportFileStream::Failed(int error) {
  if (error_ == 0) error_ = error;
  Abort();
  if (in_place_) {
    return ErrnoStatus(error_,
                       fmt::format("cannot write the {} to {}: {}", what_,
                                   Quoted(path_), Reason(error_)));
  }
  return ErrnoStatus(
      error_, fmt::format("cannot write {} file {}: {}{}", what_, Quoted(path_),
                          Reason(error_),
                          existing_ ? fmt::format(" (the previous {} there is "
                                                  "left as it was)",
                                                  what_)
                                    : std::string()));
}

absl::Status ReportFileStream::Write(std::string_view text) {
  if (fd_ < 0) return Failed(error_ != 0 ? error_ : EBADF);
  const int error = WriteAllTo(fd_, text);
  if (error != 0) return Failed(error);
  return absl::OkStatus();
}

absl::Status ReportFileStream::Commit() {
  if (fd_ < 0) return Failed(error_ != 0 ? error_ : EBADF);
  int error = 0;
  // Some file systems cannot sync a file (EINVAL): nothing to wait for.
  if (!in_place_ && fsync(fd_) != 0 && errno != EINVAL) error = errno;
  if (close(fd_) != 0 && error == 0) error = errno;
  fd_ = -1;
  if (!in_place_ && error == 0 && rename(temp_.c_str(), target_.c_str()) != 0) {
    error = errno;
  }
  if (error != 0) return Failed(error);
  if (!in_place_) {
    temp_.clear();
    // Make the rename itself durable (best effort).
    const int dir =
        open(DirectoryOf(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      (void)fsync(dir);
      close(dir);
    }
  }
  return absl::OkStatus();
}

void ReportFileStream::Abort() {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  if (!temp_.empty()) {
    unlink(temp_.c_str());
    temp_.clear();
  }
}

absl::StatusOr<std::vector<std::string>> SplitOutputs(std::string_view list) {
  std::vector<std::string> outputs;
  for (std::string_view item : common::Split(list, ',')) {
    const std::string_view name = common::StripWhitespace(item);
    if (name.empty()) {
      return absl::InvalidArgumentError(fmt::format(
          "report output \"{}\" has an empty name in its list: separate "
          "names by single commas (\"r.json,r.html,-\")",
          common::QuoteForMessage(list)));
    }
    outputs.emplace_back(name);
  }
  return outputs;
}

absl::Status WriteReportFile(const std::string& path, std::string_view text) {
  UNCORE_ASSIGN_OR_RETURN(std::unique_ptr<ReportFileStream> stream,
                          ReportFileStream::Open(path));
  UNCORE_RETURN_IF_ERROR(stream->Write(text));
  return stream->Commit();
}

}  // namespace uncore::report

namespace uncore {

absl::StatusOr<std::string> PrepareReportOutput(std::string_view output,
                                                std::optional<int64_t> rank) {
  report::OutputContext context =
      report::CurrentOutputContext(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count()));
  if (rank.has_value()) context.rank = rank;
  return report::PrepareOutput(output, context);
}

absl::StatusOr<std::vector<std::string>> PrepareReportOutputs(
    std::string_view outputs, std::optional<int64_t> rank) {
  UNCORE_ASSIGN_OR_RETURN(const std::vector<std::string> names,
                          report::SplitOutputs(outputs));
  std::vector<std::string> paths;
  for (const std::string& name : names) {
    UNCORE_ASSIGN_OR_RETURN(std::string path, PrepareReportOutput(name, rank));
    paths.push_back(std::move(path));
  }
  return paths;
}

absl::Status WriteReportText(const std::string& path, std::string_view text) {
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stderr) != text.size()) {
      return absl::UnavailableError("cannot write the report to stderr");
    }
    return absl::OkStatus();
  }
  return report::WriteReportFile(path, text);
}

struct ReportFileWriter::Impl {
  std::unique_ptr<report::ReportFileStream> stream;
};

ReportFileWriter::ReportFileWriter(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

ReportFileWriter::~ReportFileWriter() = default;

absl::StatusOr<std::unique_ptr<ReportFileWriter>> ReportFileWriter::Open(
    const std::string& path) {
  if (path == "-") {
    return absl::InvalidArgumentError(
        "\"-\" is not a file: name a file to write this to");
  }
  auto impl = std::make_unique<Impl>();
  UNCORE_ASSIGN_OR_RETURN(impl->stream, report::ReportFileStream::Open(path));
  return std::unique_ptr<ReportFileWriter>(
      new ReportFileWriter(std::move(impl)));
}

absl::Status ReportFileWriter::Write(std::string_view text) {
  return impl_->stream->Write(text);
}

absl::Status ReportFileWriter::Commit() { return impl_->stream->Commit(); }

}  // namespace uncore
