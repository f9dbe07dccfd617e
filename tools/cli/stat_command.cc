// `uncore stat`: count uncore events system-wide while a command runs, like
// `perf stat`.
//
//   uncore stat -e imc/CAS_COUNT.RD -M MEM_BW_TOTAL -- ./solver input
//
// One uncore::Session counts; one region, named after the command, spans the
// fork, exec and wait of the command.  With -I MS a child region "interval"
// is closed and reopened every MS milliseconds and one line per interval
// (time since the start, each event's count in the interval, the metrics
// over the interval) goes to stderr as the command runs.  The report goes to
// -o OUTPUT at the end ("-": the table on stderr).
//
// -o takes the placeholders of UNCORE_OUTPUT (%p: stat's own pid, %h, %r,
// %t, %%; sdk/report/output.h); the name is expanded, made absolute and
// checked writable before the command runs.
//
// Exit status: the command's; 128+N when a signal N killed it; 127 when it
// cannot be run; 125 when the counters cannot be opened (the command is not
// run), or when the command succeeded but its report could not be written
// (a command that failed keeps its own status; stderr says the report is
// lost either way); 2 for bad arguments (an output that cannot be written
// among them).  main.cc parses the options into StatOptions
// (commands.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/report/output.h"
#include "sdk/report/report.h"
#include "sdk/report/text_table.h"
#include "sdk/runtime/name_resolution.h"
#include "sdk/runtime/session_internal.h"
#include "sdk/spec/metric_expression.h"
#include "tools/cli/commands.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore::cli {
namespace {

constexpr int kExitCannotCount = 125;
constexpr int kExitCannotRun = 127;
constexpr const char* kIntervalRegion = "interval";

int UsageError(std::FILE* err, std::string_view message) {
  fmt::print(err, "uncore stat: {}\n(uncore stat --help shows the usage)\n",
             message);
  return kExitUsage;
}

// Resolves every name as the session will (runtime/name_resolution.h: the
// same platform, the same rules), so that a misspelt name is a usage error
// before anything runs.  An error message on failure.
std::optional<std::string> ValidateSpecs(const StatOptions& o) {
  const std::string backend =
      common::ToLower(o.backend.empty() ? "auto" : o.backend);
  absl::StatusOr<runtime::SessionMachine> machine =
      runtime::ReadSessionMachine(o.platform, backend, /*on_hardware=*/true);
  if (!machine.ok()) return common::StatusMessage(machine.status());
  runtime::NameRequest request;
  request.events = o.events;
  request.metrics = o.metrics;
  request.backend = backend;
  request.events_list = "-e";
  request.metrics_list = "-M";
  absl::StatusOr<runtime::ResolvedNames> names =
      runtime::ResolveNames(machine->platform, request, machine->pmus_or());
  if (!names.ok()) return common::StatusMessage(names.status());
  return std::nullopt;
}

// Prints one line per interval: the time since the command started, each
// shown event's count in the interval and each metric over the interval.
class IntervalPrinter {
 public:
  IntervalPrinter(const Session* session, std::string region_path,
                  std::vector<runtime::SessionMetric> metrics,
                  uint64_t start_ns, std::FILE* err)
      : session_(session),
        path_(std::move(region_path)),
        metrics_(std::move(metrics)),
        start_ns_(start_ns),
        err_(err) {}

  // Call after each interval region ends.
  void Print(uint64_t now_ns) {
    const Results r = session_->Collect();
    if (!header_printed_) PrintHeader(r);
    const RegionResult* region = nullptr;
    for (const RegionResult& candidate : r.regions) {
      if (candidate.path == path_) region = &candidate;
    }
    std::vector<uint64_t> totals(r.events.size(), 0);
    std::vector<bool> estimated(r.events.size(), false);
    uint64_t wall_ns = 0;
    if (region != nullptr) {
      for (size_t e = 0; e < r.events.size() && e < region->inclusive.size();
           ++e) {
        totals[e] = region->inclusive[e].total;
        estimated[e] = region->inclusive[e].estimated;
      }
      wall_ns = region->rate_window_ns();  // the counters' own window
    }
    if (previous_.size() != totals.size()) previous_.assign(totals.size(), 0);
    std::vector<uint64_t> delta(totals.size());
    for (size_t e = 0; e < totals.size(); ++e) {
      delta[e] = totals[e] - previous_[e];
    }
    const uint64_t wall_delta = wall_ns - previous_wall_ns_;
    previous_ = totals;
    previous_wall_ns_ = wall_ns;

    std::vector<std::string> cells = {
        fmt::format("{:.6f}", static_cast<double>(now_ns - start_ns_) * 1e-9)};
    for (size_t e = 0; e < r.events.size(); ++e) {
      if (r.events[e].from_metric) continue;
      cells.push_back(region == nullptr ? std::string("-")
                                        : report::FormatEventValue(
                                              delta[e], r.events[e].scale,
                                              r.events[e].unit, estimated[e]));
    }
    const double seconds = static_cast<double>(wall_delta) * 1e-9;
    for (size_t m = 0; m < r.metrics.size(); ++m) {
      std::string value = "n/a";
      if (region != nullptr) {
        if (std::optional<double> v = Evaluate(r, m, delta, seconds)) {
          value = report::FormatMetricValue(*v, r.metrics[m].unit);
        }
      }
      cells.push_back(std::move(value));
    }
    fmt::print(err_, "{}\n", table_.FormatRow(std::move(cells)));
    std::fflush(err_);
  }

 private:
  // The columns, as wide as their names and at least 16 (values wider than
  // that push the rest of their line right).
  void PrintHeader(const Results& r) {
    header_printed_ = true;
    table_.AddColumn(fmt::format("#{:>13}", "time (s)"), report::Align::kRight,
                     14);
    for (const EventInfo& e : r.events) {
      if (!e.from_metric) {
        table_.AddColumn(e.canonical, report::Align::kRight, 16);
      }
    }
    for (const MetricInfo& m : r.metrics) {
      table_.AddColumn(m.name, report::Align::kRight, 16);
    }
    fmt::print(err_, "{}\n", table_.FormatHeader());
  }

  // Metric `m` of `r` over one interval, as Session::Collect computes it
  // over a region: event counts times their scale, rate metrics divided by
  // the time.  nullopt when it cannot be computed.
  std::optional<double> Evaluate(const Results& r, size_t m,
                                 const std::vector<uint64_t>& delta,
                                 double seconds) const {
    if (m >= metrics_.size() ||
        metrics_[m].compiled.name != r.metrics[m].name) {
      return std::nullopt;
    }
    const spec::CompiledMetric& c = metrics_[m].compiled;
    std::vector<double> values;
    for (const int index : metrics_[m].event_index) {
      if (index < 0 || static_cast<size_t>(index) >= r.events.size() ||
          static_cast<size_t>(index) >= delta.size()) {
        return std::nullopt;
      }
      values.push_back(static_cast<double>(delta[index]) *
                       r.events[index].scale);
    }
    double v = c.Evaluate(values, seconds);
    if (c.per_second) v /= seconds;
    if (!std::isfinite(v)) return std::nullopt;
    return v;
  }

  const Session* session_;
  std::string path_;
  std::vector<runtime::SessionMetric> metrics_;
  uint64_t start_ns_;
  std::FILE* err_;
  bool header_printed_ = false;
  report::TextTable table_;
  std::vector<uint64_t> previous_;
  uint64_t previous_wall_ns_ = 0;
};

// The signal state stat changes while the command runs, restored when it
// goes out of scope: SIGCHLD blocked (so that the interval loop can wait for
// it with a timeout; blocked before the session starts so that its threads
// inherit the mask), SIGINT and SIGQUIT ignored (like system(): the
// terminal's Ctrl-C reaches the command, and stat still reports).
class SignalGuard {
 public:
  SignalGuard() {
    sigemptyset(&chld_);
    sigaddset(&chld_, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld_, &old_mask_);
  }
  ~SignalGuard() {
    RestoreHandlers();
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  void IgnoreInterrupts() {
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &old_int_);
    sigaction(SIGQUIT, &ignore, &old_quit_);
    handlers_changed_ = true;
  }
  void RestoreHandlers() {
    if (!handlers_changed_) return;
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGQUIT, &old_quit_, nullptr);
    handlers_changed_ = false;
  }
  // In the child, before exec: async-signal-safe calls only.
  void RestoreInChild() const {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGQUIT, &old_quit_, nullptr);
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  // Waits up to `ns` for a SIGCHLD.
  void WaitForChild(uint64_t ns) const {
    timespec ts;
    ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    ts.tv_nsec = static_cast<decltype(ts.tv_nsec)>(ns % 1'000'000'000);
    sigtimedwait(&chld_, nullptr, &ts);
  }

 private:
  sigset_t chld_;
  sigset_t old_mask_;
  struct sigaction old_int_ = {};
  struct sigaction old_quit_ = {};
  bool handlers_changed_ = false;
};

std::string Basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  if (slash != std::string_view::npos && path.size() > 1) {
    path = path.substr(slash + 1);
  }
  return path.empty() ? std::string("command") : std::string(path);
}

// The command as a shell would read it back: words with anything but
// [A-Za-z0-9_./=:,+-] in single quotes.
std::string CommandLine(const std::vector<std::string>& command) {
  std::string text;
  for (const std::string& word : command) {
    if (!text.empty()) text += ' ';
    const bool plain =
        !word.empty() && word.find_first_not_of(
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
                             "vwxyz0123456789_./=:,+-@%") == std::string::npos;
    if (plain) {
      text += word;
      continue;
    }
    text += '\'';
    for (char c : word) {
      if (c == '\'') {
        text += "'\\''";
      } else {
        text += c;
      }
    }
    text += '\'';
  }
  return text;
}

uint64_t UnixNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

}  // namespace

int RunStat(const StatOptions& stat_options, std::FILE* /*out*/,
            std::FILE* err) {
  StatOptions o = stat_options;
  if (o.command.empty()) {
    return UsageError(err,
                      "no `-- COMMAND`: give the command to run after `--`");
  }
  if (o.events.empty() && o.metrics.empty()) {
    return UsageError(err,
                      "nothing to count: give events with -e (uncore list) or "
                      "metrics with -M (uncore list --metrics)");
  }
  if (std::optional<std::string> error = ValidateSpecs(o)) {
    fmt::print(err, "uncore stat: {}\n", *error);
    return kExitUsage;
  }
  // The report's destination, expanded and checked before the command runs
  // (nothing is created: the report is written whole at the end).
  // "-" (the table on `err`) is written here; files by the session at
  // Stop, with the timeline an HTML page needs.
  bool table_to_err = false;
  std::vector<std::string> file_outputs;
  std::vector<report::OutputClaim> claims;  // no two files one (issue 36)
  for (std::string_view item : common::Split(o.output, ',')) {
    const std::string name(common::StripWhitespace(item));
    absl::StatusOr<std::string> checked =
        report::PrepareOutput(name, report::CurrentOutputContext(UnixNowNs()));
    if (!checked.ok()) {
      fmt::print(err, "uncore stat: {}\n",
                 common::StatusMessage(checked.status()));
      return kExitUsage;
    }
    if (*checked == "-") {
      table_to_err = true;
    } else {
      claims.push_back(
          {fmt::format("-o \"{}\"", common::QuoteForMessage(name)), *checked});
      file_outputs.push_back(name);
    }
  }
  if (!o.trace.empty()) {
    absl::StatusOr<std::string> checked = report::PrepareOutput(
        o.trace, report::CurrentOutputContext(UnixNowNs()), "trace");
    if (!checked.ok() || *checked == "-") {
      fmt::print(err, "uncore stat: --trace: {}\n",
                 checked.ok() ? "a trace is a file, not -"
                              : common::StatusMessage(checked.status()));
      return kExitUsage;
    }
    claims.push_back(
        {fmt::format("--trace \"{}\"", common::QuoteForMessage(o.trace)),
         *checked});
  }
  if (absl::Status apart = report::CheckOutputsApart(claims); !apart.ok()) {
    fmt::print(err, "uncore stat: {}\n", common::StatusMessage(apart));
    return kExitUsage;
  }

  // Everything the child needs, prepared before fork: only
  // async-signal-safe calls happen between fork and exec.
  std::vector<char*> argv;
  for (std::string& word : o.command) argv.push_back(word.data());
  argv.push_back(nullptr);
  const std::string name = Basename(o.command[0]);

  SignalGuard signals;
  SessionOptions options;
  options.events = o.events;
  options.metrics = o.metrics;
  options.backend = o.backend;
  options.sockets = o.sockets;
  options.output = absl::StrJoin(file_outputs, ",");
  options.trace = o.trace;
  options.force = o.force;
  options.allow_multiplexing = o.multiplex;
  options.platform = o.platform;
  absl::StatusOr<std::unique_ptr<Session>> started =
      Session::Start(std::move(options));
  if (!started.ok()) {
    fmt::print(err,
               "uncore stat: cannot count, so '{}' was not run: {}\n"
               "(`uncore doctor` says which backends work here and how to fix "
               "the others)\n",
               CommandLine(o.command), common::StatusMessage(started.status()));
    return kExitCannotCount;
  }
  std::unique_ptr<Session> session = *std::move(started);
  const bool counting_nothing = session->backend() == "off";
  for (const std::string& w : session->Collect().run.warnings) {
    fmt::print(err, "uncore stat: warning: {}{}\n",
               counting_nothing
                   ? "NOTHING IS COUNTED (backend off); the command still "
                     "runs: "
                   : "",
               w);
  }

  const RegionId command_region = InternRegionName(name);
  const RegionId interval_region = InternRegionName(kIntervalRegion);

  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    fmt::print(err, "uncore stat: pipe: {}\n", std::strerror(errno));
    session->Stop().IgnoreError();
    return kExitCannotRun;
  }
  std::fflush(nullptr);
  signals.IgnoreInterrupts();
  const uint64_t start_ns = common::MonotonicNowNs();
  IntervalPrinter printer(session.get(), name + "/" + kIntervalRegion,
                          runtime::MetricsOf(*session), start_ns, err);
  RegionBegin(command_region);
  if (o.interval_ms > 0) RegionBegin(interval_region);
  const pid_t pid = fork();
  if (pid == 0) {
    signals.RestoreInChild();
    close(exec_pipe[0]);
    execvp(argv[0], argv.data());
    const int error = errno;
    ssize_t ignored = write(exec_pipe[1], &error, sizeof(error));
    (void)ignored;
    _exit(kExitCannotRun);
  }
  close(exec_pipe[1]);
  int exec_error = 0;
  if (pid < 0) {
    exec_error = errno;
  } else {
    int got = 0;
    ssize_t n = 0;
    do {
      n = read(exec_pipe[0], &got, sizeof(got));
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof(got))) exec_error = got;
  }
  close(exec_pipe[0]);

  int status = 0;
  if (pid > 0) {
    if (o.interval_ms == 0 || exec_error != 0) {
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    } else {
      const uint64_t period = o.interval_ms * 1'000'000;
      uint64_t next = start_ns + period;
      for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR)) break;
        const uint64_t now = common::MonotonicNowNs();
        if (now >= next) {
          RegionEnd(interval_region);
          RegionBegin(interval_region);
          printer.Print(now);
          next += period;
          if (next <= now) next = now + period;  // fell behind: skip
          continue;
        }
        signals.WaitForChild(next - now);
      }
    }
  }
  const uint64_t end_ns = common::MonotonicNowNs();
  if (o.interval_ms > 0) RegionEnd(interval_region);
  RegionEnd(command_region);
  signals.RestoreHandlers();
  if (o.interval_ms > 0 && exec_error == 0) printer.Print(end_ns);

  // Stop writes the files (and the trace) and says whether they were;
  // none when the command did not run.
  if (exec_error != 0) runtime::DiscardSessionOutputs(*session);
  const absl::Status stopped = session->Stop();
  if (exec_error != 0) {
    fmt::print(err, "uncore stat: cannot run '{}': {}\n", o.command[0],
               std::strerror(exec_error));
    return kExitCannotRun;
  }
  absl::Status written = stopped;
  if (!stopped.ok()) {
    // "the trace is lost: ..." says what it is; else the report is.
    fmt::print(err, "uncore stat: {}{}\n",
               runtime::IsTraceLoss(stopped) ? "" : "the report is lost: ",
               common::StatusMessage(stopped));
  }
  if (table_to_err) {
    const absl::Status table =
        report::WriteReport(session->Collect(), "-", err);
    if (!table.ok()) {
      fmt::print(err, "uncore stat: the report is lost: {}\n",
                 common::StatusMessage(table));
      if (written.ok()) written = table;
    }
  }
  if (table_to_err) {
    fmt::print(err, "\n{:>14.9f} seconds time elapsed ({})\n",
               static_cast<double>(end_ns - start_ns) * 1e-9,
               CommandLine(o.command));
  }
  if (WIFSIGNALED(status)) {
    fmt::print(err, "uncore stat: {} was killed by signal {} ({})\n",
               CommandLine(o.command), WTERMSIG(status),
               strsignal(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
  }
  const int command_status = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (command_status == 0 && !written.ok()) return kExitCannotCount;
  return command_status;
}

}  // namespace uncore::cli
