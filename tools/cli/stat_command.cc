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
// Exit status: the command's; 128+N when a signal N killed it; 127 when it
// cannot be run; 125 when the counters cannot be opened (the command is not
// run); 2 for bad arguments.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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
#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"
#include "sdk/report/report.h"
#include "sdk/runtime/backends.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"
#include "tools/cli/commands.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore::cli {
namespace {

constexpr int kExitCannotCount = 125;
constexpr int kExitCannotRun = 127;
constexpr int kMinIntervalMs = 10;
constexpr const char* kIntervalRegion = "interval";

constexpr std::string_view kStatUsage =
    "usage: uncore stat [-e SPEC[,SPEC...]] [-M METRIC[,METRIC...]] [-I MS]\n"
    "                   [--backend auto|perf|direct|sim|off] [--sockets LIST]\n"
    "                   [-o OUTPUT] [--multiplex] [--force] -- COMMAND "
    "[ARGS...]\n"
    "\n"
    "Counts uncore events socket-wide (everything the sockets' boxes do, "
    "whoever\n"
    "causes it) while COMMAND runs, in one region named after the command.\n"
    "\n"
    "  -e, --events SPECS    event specs, comma-separated, repeatable (a "
    "metric\n"
    "                        spec such as metric/MEM_BW_TOTAL counts as a "
    "metric)\n"
    "  -M, --metrics NAMES   derived metrics (uncore list --metrics)\n"
    "  -I, --interval MS     also print one line per MS milliseconds (>= 10) "
    "to\n"
    "                        stderr: the time, each event's count in the "
    "interval\n"
    "                        and the metrics over it\n"
    "  --backend B           auto (default: perf, then direct, else off with "
    "a\n"
    "                        warning), perf, direct, sim (SIMULATED counts), "
    "off\n"
    "  --sockets LIST        0, 0,1 or 0-3 (default: every socket)\n"
    "  -o, --output OUTPUT   - (default: the table on stderr), FILE.json, "
    "FILE.csv,\n"
    "                        any other FILE: the table\n"
    "  --multiplex           let perf rotate more events than a box has "
    "counters\n"
    "                        (counts scaled, marked ~)\n"
    "  --force               direct: program registers another agent seems "
    "to use\n"
    "\n"
    "exit status: COMMAND's; 128+N when signal N killed it; 127 when it "
    "cannot be\n"
    "run; 125 when the counters cannot be opened (COMMAND is not run); 2 for "
    "bad\n"
    "arguments\n";

int UsageError(std::FILE* err, std::string_view message) {
  fmt::print(err, "uncore stat: {}\n(uncore stat --help shows the usage)\n",
             message);
  return kExitUsage;
}

// "0,2-3" -> {0, 2, 3}; nullopt when malformed.
std::optional<std::vector<int>> ParseSockets(std::string_view text) {
  std::vector<int> sockets;
  for (std::string_view part : common::Split(text, ',')) {
    part = common::StripWhitespace(part);
    if (part.empty()) return std::nullopt;
    const size_t dash = part.find('-');
    std::optional<uint64_t> lo = common::ParseUnsigned(
        dash == std::string_view::npos ? part : part.substr(0, dash), 10);
    std::optional<uint64_t> hi = dash == std::string_view::npos
                                     ? lo
                                     : common::ParseUnsigned(part.substr(dash + 1), 10);
    if (!lo || !hi || *hi < *lo || *hi > 1023) return std::nullopt;
    for (uint64_t s = *lo; s <= *hi; ++s) {
      if (std::find(sockets.begin(), sockets.end(), static_cast<int>(s)) ==
          sockets.end()) {
        sockets.push_back(static_cast<int>(s));
      }
    }
  }
  if (sockets.empty()) return std::nullopt;
  std::sort(sockets.begin(), sockets.end());
  return sockets;
}

struct StatOptions {
  std::vector<std::string> events;
  std::vector<std::string> metrics;
  uint64_t interval_ms = 0;
  std::string backend = "auto";
  std::vector<int> sockets;
  std::string output = "-";
  bool multiplex = false;
  bool force = false;
  std::vector<std::string> command;
  bool help = false;
};

// Parses the arguments; returns an error message for usage errors.
std::optional<std::string> ParseArgs(std::span<const std::string_view> args,
                                     StatOptions* o) {
  size_t i = 0;
  // The value of an option that takes one: `-e X`, `-eX`, `--events X`,
  // `--events=X`.
  auto value_of = [&](std::string_view arg, std::string_view short_name,
                      std::string_view long_name,
                      std::optional<std::string_view>* value,
                      std::optional<std::string>* error) -> bool {
    std::string_view rest;
    if (!short_name.empty() && arg.starts_with(short_name)) {
      rest = arg.substr(short_name.size());
    } else if (arg.starts_with(long_name) && (arg.size() == long_name.size() ||
                                              arg[long_name.size()] == '=')) {
      rest = arg.substr(long_name.size());
      if (!rest.empty()) rest.remove_prefix(1);  // '='
      if (rest.empty() && arg.size() > long_name.size()) {
        *error = fmt::format("{} needs a value", long_name);
        return true;
      }
    } else {
      return false;
    }
    if (!rest.empty()) {
      *value = rest;
      return true;
    }
    if (i + 1 >= args.size() || args[i + 1] == "--") {
      *error = fmt::format("{} needs a value", arg);
      return true;
    }
    *value = args[++i];
    return true;
  };
  for (; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--") {
      for (size_t j = i + 1; j < args.size(); ++j) {
        o->command.emplace_back(args[j]);
      }
      if (o->command.empty()) {
        return std::string("no COMMAND after `--`: what should run?");
      }
      return std::nullopt;
    }
    if (arg == "-h" || arg == "--help") {
      o->help = true;
      return std::nullopt;
    }
    if (arg == "--multiplex") {
      o->multiplex = true;
      continue;
    }
    if (arg == "--force") {
      o->force = true;
      continue;
    }
    std::optional<std::string_view> value;
    std::optional<std::string> error;
    if (value_of(arg, "-e", "--events", &value, &error)) {
      if (error) return error;
      for (std::string& s : spec::SplitSpecList(*value)) {
        o->events.push_back(std::move(s));
      }
    } else if (value_of(arg, "-M", "--metrics", &value, &error)) {
      if (error) return error;
      for (std::string& s : spec::SplitSpecList(*value)) {
        o->metrics.push_back(std::move(s));
      }
    } else if (value_of(arg, "-I", "--interval", &value, &error)) {
      if (error) return error;
      std::optional<uint64_t> ms = common::ParseUnsigned(*value, 10);
      if (!ms || *ms < kMinIntervalMs || *ms > 86'400'000) {
        return fmt::format(
            "-I takes the interval in milliseconds, {} to 86400000 (got '{}')",
            kMinIntervalMs, *value);
      }
      o->interval_ms = *ms;
    } else if (value_of(arg, "", "--backend", &value, &error)) {
      if (error) return error;
      o->backend = common::ToLower(common::StripWhitespace(*value));
      bool known = false;
      for (std::string_view name : runtime::kBackendNames) {
        known = known || name == o->backend;
      }
      if (!known) {
        return fmt::format(
            "unknown backend '{}': use auto, perf, direct, sim or off", *value);
      }
    } else if (value_of(arg, "", "--sockets", &value, &error)) {
      if (error) return error;
      std::optional<std::vector<int>> sockets = ParseSockets(*value);
      if (!sockets) {
        return fmt::format(
            "--sockets: '{}' is not a socket list; write e.g. 0, 0,1 or 0-3",
            *value);
      }
      o->sockets = *std::move(sockets);
    } else if (value_of(arg, "-o", "--output", &value, &error)) {
      if (error) return error;
      o->output = std::string(*value);
    } else if (arg.size() > 1 && arg[0] == '-') {
      return fmt::format("unknown option '{}'", arg);
    } else {
      return fmt::format(
          "'{}': put the command after `--` (uncore stat -e SPEC -- {} ...)",
          arg, arg);
    }
  }
  return std::string("no `-- COMMAND`: give the command to run after `--`");
}

// Parses and encodes every spec, and compiles the metrics in the order the
// session does (metric specs among the events first, then -M), so that
// interval lines can evaluate them.  An error message on failure.
std::optional<std::string> ValidateSpecs(
    const StatOptions& o, std::vector<spec::CompiledMetric>* metrics) {
  for (const std::string& text : o.events) {
    absl::StatusOr<spec::Spec> s = spec::ParseSpec(text);
    if (!s.ok()) return common::StatusMessage(s.status());
    if (s->is_metric()) {
      absl::StatusOr<spec::CompiledMetric> m =
          spec::CompileMetric(std::get<spec::MetricSpec>(s->value));
      if (!m.ok()) return common::StatusMessage(m.status());
      metrics->push_back(*std::move(m));
      continue;
    }
    const spec::EventSpec& e = std::get<spec::EventSpec>(s->value);
    if (e.kind != spec::EventSpec::Kind::kGenericPerf) {
      absl::StatusOr<spec::Encoding> enc = spec::EncodeEvent(e);
      if (!enc.ok()) return common::StatusMessage(enc.status());
    }
  }
  for (const std::string& text : o.metrics) {
    const std::string full =
        common::StartsWithIgnoreCase(text, "metric/") ? text : "metric/" + text;
    absl::StatusOr<spec::Spec> s = spec::ParseSpec(full);
    if (!s.ok()) return common::StatusMessage(s.status());
    if (!s->is_metric()) {
      return fmt::format("'{}' is not a metric (uncore list --metrics)", text);
    }
    absl::StatusOr<spec::CompiledMetric> m =
        spec::CompileMetric(std::get<spec::MetricSpec>(s->value));
    if (!m.ok()) return common::StatusMessage(m.status());
    metrics->push_back(*std::move(m));
  }
  return std::nullopt;
}

// Prints one line per interval: the time since the command started, each
// shown event's count in the interval and each metric over the interval.
class IntervalPrinter {
 public:
  IntervalPrinter(const Session* session, std::string region_path,
                  std::vector<spec::CompiledMetric> metrics, uint64_t start_ns,
                  std::FILE* err)
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
      wall_ns = region->wall_ns;
    }
    if (previous_.size() != totals.size()) previous_.assign(totals.size(), 0);
    std::vector<uint64_t> delta(totals.size());
    for (size_t e = 0; e < totals.size(); ++e) {
      delta[e] = totals[e] - previous_[e];
    }
    const uint64_t wall_delta = wall_ns - previous_wall_ns_;
    previous_ = totals;
    previous_wall_ns_ = wall_ns;

    std::string line = fmt::format(
        "{:>14.6f}", static_cast<double>(now_ns - start_ns_) * 1e-9);
    size_t column = 0;
    for (size_t e = 0; e < r.events.size(); ++e) {
      if (r.events[e].from_metric) continue;
      const std::string value =
          region == nullptr
              ? std::string("-")
              : report::FormatEventValue(delta[e], r.events[e].scale,
                                         r.events[e].unit, estimated[e]);
      line += fmt::format("  {:>{}}", value, widths_[column++]);
    }
    const double seconds = static_cast<double>(wall_delta) * 1e-9;
    for (size_t m = 0; m < r.metrics.size(); ++m) {
      std::string value = "n/a";
      if (region != nullptr) {
        if (std::optional<double> v = Evaluate(r, m, delta, seconds)) {
          value = report::FormatMetricValue(*v, r.metrics[m].unit);
        }
      }
      line += fmt::format("  {:>{}}", value, widths_[column++]);
    }
    fmt::print(err_, "{}\n", line);
    std::fflush(err_);
  }

 private:
  void PrintHeader(const Results& r) {
    header_printed_ = true;
    std::string line = fmt::format("#{:>13}", "time (s)");
    auto add = [&](std::string_view name) {
      const size_t width = std::max<size_t>(report::DisplayWidth(name), 16);
      widths_.push_back(width);
      line += fmt::format("  {:>{}}", report::EscapeForTable(name), width);
    };
    for (const EventInfo& e : r.events) {
      if (!e.from_metric) add(e.canonical);
    }
    for (const MetricInfo& m : r.metrics) add(m.name);
    fmt::print(err_, "{}\n", line);
  }

  // Metric `m` of `r` over one interval, as Session::Collect computes it
  // over a region: event counts times their scale, rate metrics divided by
  // the time.  nullopt when it cannot be computed.
  std::optional<double> Evaluate(const Results& r, size_t m,
                                 const std::vector<uint64_t>& delta,
                                 double seconds) const {
    if (m >= metrics_.size() || metrics_[m].name != r.metrics[m].name) {
      return std::nullopt;
    }
    const spec::CompiledMetric& c = metrics_[m];
    std::vector<double> values;
    for (const spec::EventSpec& e : c.events) {
      const std::string canonical = e.Canonical();
      size_t index = r.events.size();
      for (size_t i = 0; i < r.events.size(); ++i) {
        if (r.events[i].canonical == canonical) index = i;
      }
      if (index == r.events.size()) return std::nullopt;
      values.push_back(static_cast<double>(delta[index]) *
                       r.events[index].scale);
    }
    double v = c.Evaluate(values, seconds);
    if (c.metric != nullptr && c.metric->rate_per_second) v /= seconds;
    if (!std::isfinite(v)) return std::nullopt;
    return v;
  }

  const Session* session_;
  std::string path_;
  std::vector<spec::CompiledMetric> metrics_;
  uint64_t start_ns_;
  std::FILE* err_;
  bool header_printed_ = false;
  std::vector<size_t> widths_;
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
    ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
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

// Checks that `output` can be written before the command runs.  Creates the
// file when missing (*created says so, to remove it when no report comes).
std::optional<std::string> CheckOutput(const std::string& output,
                                       bool* created) {
  *created = false;
  absl::StatusOr<report::ReportDestination> dest = report::ParseOutput(output);
  if (!dest.ok()) return common::StatusMessage(dest.status());
  if (dest->path.empty()) return std::nullopt;
  struct stat st;
  const bool existed = ::stat(dest->path.c_str(), &st) == 0;
  const int fd =
      open(dest->path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) {
    return fmt::format("cannot write the report to {}: {}", dest->path,
                       std::strerror(errno));
  }
  close(fd);
  *created = !existed;
  return std::nullopt;
}

}  // namespace

int StatCommand(std::span<const std::string_view> args, std::FILE* out,
                std::FILE* err) {
  StatOptions o;
  if (std::optional<std::string> error = ParseArgs(args, &o)) {
    return UsageError(err, *error);
  }
  if (o.help) {
    fmt::print(out, "{}", kStatUsage);
    return kExitOk;
  }
  if (o.events.empty() && o.metrics.empty()) {
    return UsageError(err,
                      "nothing to count: give events with -e (uncore list) or "
                      "metrics with -M (uncore list --metrics)");
  }
  std::vector<spec::CompiledMetric> metrics;
  if (std::optional<std::string> error = ValidateSpecs(o, &metrics)) {
    fmt::print(err, "uncore stat: {}\n", *error);
    return kExitUsage;
  }
  bool output_created = false;
  if (std::optional<std::string> error =
          CheckOutput(o.output, &output_created)) {
    fmt::print(err, "uncore stat: {}\n", *error);
    return kExitUsage;
  }
  auto drop_output = [&] {
    if (output_created) unlink(o.output.c_str());
  };

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
  options.output = "";  // written below, to `err` for "-"
  options.force = o.force;
  options.allow_multiplexing = o.multiplex;
  absl::StatusOr<std::unique_ptr<Session>> started =
      Session::Start(std::move(options));
  if (!started.ok()) {
    fmt::print(err,
               "uncore stat: cannot count, so '{}' was not run: {}\n"
               "(`uncore doctor` says which backends work here and how to fix "
               "the others)\n",
               CommandLine(o.command), common::StatusMessage(started.status()));
    drop_output();
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
    drop_output();
    return kExitCannotRun;
  }
  std::fflush(nullptr);
  signals.IgnoreInterrupts();
  const uint64_t start_ns = common::MonotonicNowNs();
  IntervalPrinter printer(session.get(), name + "/" + kIntervalRegion,
                          std::move(metrics), start_ns, err);
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

  const absl::Status stopped = session->Stop();
  if (!stopped.ok()) {
    fmt::print(err, "uncore stat: stopping the counters: {}\n",
               common::StatusMessage(stopped));
  }
  if (exec_error != 0) {
    fmt::print(err, "uncore stat: cannot run '{}': {}\n", o.command[0],
               std::strerror(exec_error));
    drop_output();
    return kExitCannotRun;
  }
  const absl::Status written =
      report::WriteReport(session->Collect(), o.output, err);
  if (!written.ok()) {
    fmt::print(err, "uncore stat: writing the report: {}\n",
               common::StatusMessage(written));
  }
  if (o.output == "-") {
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
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 1;
}

}  // namespace uncore::cli
