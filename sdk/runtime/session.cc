#include "uncore/session.h"

#include <pthread.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/common/host_name.h"
#include "sdk/common/id_list.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/devices/device.h"
#include "sdk/devices/perf/perfmon_plan.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/backend/ivytown_platform.h"
#include "sdk/regions/recorder.h"
#include "sdk/report/output.h"
#include "sdk/report/report.h"
#include "sdk/report/timeline.h"
#include "sdk/runtime/active_session.h"
#include "sdk/runtime/backends.h"
#include "sdk/runtime/check_record.h"
#include "sdk/runtime/name_resolution.h"
#include "sdk/runtime/node_sharing.h"
#include "sdk/runtime/node_union_hook.h"
#include "sdk/runtime/process_registry.h"
#include "sdk/runtime/session_internal.h"
#include "sdk/runtime/session_platform.h"
#include "sdk/runtime/session_testing.h"
#include "sdk/runtime/trace_hook.h"
#include "sdk/sim/simulated_activity.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"
#include "sdk/spec/perf_metric.h"
#include "sdk/spec/platform_catalog.h"
#include "sdk/trace/trace_collector.h"
#include "uncore/uncore_c.h"

namespace uncore {
namespace {

uint64_t UnixNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

// "0,2-3" -> {0, 2, 3}: the rules of common::ParseIdList, the same as
// `uncore stat --sockets`.
absl::StatusOr<std::vector<int>> ParseSocketList(std::string_view text) {
  return common::ParseIdList(text, common::kSocketIdLimit, "UNCORE_SOCKETS");
}

// A metric reported per second of region time ("bytes" -> "bytes/s").
bool IsRate(const spec::CompiledMetric& m) { return m.per_second; }

// "10ms", "500us", "1s", "250000ns", "10" (milliseconds) -> nanoseconds.
absl::StatusOr<uint64_t> ParseTraceInterval(std::string_view text) {
  const std::string_view t = common::StripWhitespace(text);
  size_t digits = 0;
  while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9') ++digits;
  uint64_t value = 0;
  const std::string_view unit = t.substr(digits);
  uint64_t scale = 0;
  if (unit.empty() || unit == "ms") {
    scale = 1'000'000;
  } else if (unit == "us") {
    scale = 1'000;
  } else if (unit == "ns") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1'000'000'000;
  }
  if (digits == 0 || digits > 9 || scale == 0 ||
      !absl::SimpleAtoi(std::string(t.substr(0, digits)), &value) ||
      value * scale < 100'000) {
    return absl::InvalidArgumentError(fmt::format(
        "UNCORE_TRACE_INTERVAL=\"{}\" is not a time of 100us or more: write "
        "a whole number with a unit (10ms, 500us, 1s; no unit: ms), or unset "
        "it to take snapshots only at region boundaries",
        common::QuoteForMessage(text)));
  }
  return value * scale;
}

// The one parser of boolean variables (UNCORE_FORCE, UNCORE_MULTIPLEX,
// UNCORE_FREE_RUNNING): 1, true, yes, on or 0, false, no, off, in any case,
// blanks around them ignored; anything else (blank too) is an error naming
// the variable, its value and the values it takes.
absl::StatusOr<bool> ParseBooleanVariable(std::string_view name,
                                          std::string_view value) {
  const std::string_view v = common::StripWhitespace(value);
  for (const std::string_view yes : {"1", "true", "yes", "on"}) {
    if (common::EqualsIgnoreCase(v, yes)) return true;
  }
  for (const std::string_view no : {"0", "false", "no", "off"}) {
    if (common::EqualsIgnoreCase(v, no)) return false;
  }
  return absl::InvalidArgumentError(fmt::format(
      "{}=\"{}\" is neither yes nor no: set it to 1, true, yes or on, or to "
      "0, false, no or off (any case), or unset it for the default "
      "(docs/environment.md)",
      name, common::QuoteForMessage(value)));
}

using report::SplitOutputs;  // sdk/report/output.h: the list's one parser

bool IsHtmlOutput(std::string_view path) {
  absl::StatusOr<report::ReportDestination> d = report::ParseOutput(path);
  return d.ok() && d->format == report::ReportFormat::kHtml;
}

// How long Stop waits for boundaries under way on other threads (a
// snapshot takes microseconds; a thread may be descheduled for a while).
constexpr std::chrono::seconds kQuiesceTimeout{10};

std::mutex& ActiveMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

Session* g_active_session = nullptr;  // guarded by ActiveMutex()
// A Start between its check and its activation (guarded by ActiveMutex()):
// a second Start must not open the same counters meanwhile.
bool g_starting = false;

// fork(): the child finds the lock free and no active session (the parent's
// is not the child's: docs/concurrency.md).
void LockActiveBeforeFork() { ActiveMutex().lock(); }
void UnlockActiveInParent() { ActiveMutex().unlock(); }
void ForgetActiveInChild() {
  ActiveMutex().unlock();
  g_active_session = nullptr;
  g_starting = false;
}

// Clears g_starting when a Start returns without activating its session.
class StartingGuard {
 public:
  StartingGuard() = default;
  ~StartingGuard() {
    if (!done_) {
      std::lock_guard<std::mutex> lock(ActiveMutex());
      g_starting = false;
    }
  }
  StartingGuard(const StartingGuard&) = delete;
  StartingGuard& operator=(const StartingGuard&) = delete;
  void Done() { done_ = true; }

 private:
  bool done_ = false;
};

}  // namespace

struct Session::Impl {
  SessionOptions options;
  std::vector<spec::EventSpec> events;
  std::vector<EventInfo> event_infos;
  // Compiled again once the counters are planned (CompileForPlan).
  using Metric = runtime::ResolvedMetric;
  std::string platform;  // RunInfo::platform
  int reads_per_snapshot = 0;
  std::vector<Metric> metrics;
  std::unique_ptr<runtime::Backend> backend;
  // The recorder's hooks (declared first: they outlive it).
  std::unique_ptr<runtime::TraceHook> trace_hook;
  std::unique_ptr<runtime::NodeUnionHook> node_hook;
  std::unique_ptr<regions::Recorder> recorder;
  pid_t owner_pid = 0;  // the process that started it
  // Process-wide counts when the session started (regions/recorder.h).
  uint64_t dropped_at_start = 0;
  uint64_t refused_at_start = 0;
  uint64_t dropped = 0;  // at Stop
  uint64_t refused = 0;
  // Stop could not wait for every boundary (a thread stuck in one, or Stop
  // called from a signal handler inside one): the recorder and the device
  // are left alone (never freed, never released).
  bool abandoned = false;
  // Guards what Stop changes and Collect reads (stopped, estimated,
  // frozen_ns_at_stop, dropped, refused, abandoned, warnings) and the
  // device's release: Collect may run on another thread (the C API,
  // uncore_write_report) while Stop runs on the signal thread or at exit.
  mutable std::mutex state_mu;
  std::vector<std::string> warnings;
  std::vector<std::string> setup_errors;
  uint64_t start_unix_ns = 0;
  uint64_t start_steady_ns = 0;
  uint64_t stop_steady_ns = 0;  // 0 while running
  std::string cpu;
  std::string host;
  std::string last_check;  // runtime/check_record.h: "" when none
  bool stopped = false;
  // What the placeholders of an output name expand to, and options.output
  // expanded, made absolute and checked at Start ("" for no report).
  report::OutputContext output_context;
  std::vector<std::string> output_paths;
  std::string trace_path;  // the trace file, "" for none
  // The run's timeline (a trace file or an HTML report asked for it), and
  // after Stop what its file's write said and the timeline it kept.
  std::unique_ptr<trace::TraceCollector> trace;
  absl::Status trace_status;
  std::vector<std::string> trace_notes;
  std::optional<report::Timeline> timeline;
  bool discard_outputs = false;  // SessionAccess::DiscardOutputs
  // The device's read plan as programmed (the device forgets it on
  // release) and the box instance of each entry.
  std::vector<devices::CounterPlacement> plan;
  std::vector<std::string> instance_names;
  std::vector<bool> estimated;  // per entry, refreshed at Stop
  uint64_t frozen_ns_at_stop = 0;
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Session::~Session() {
  Stop().IgnoreError();
  if (impl_->owner_pid != getpid() || impl_->abandoned) {
    // A forked child's copy of the parent's session, or a session whose
    // recorder other threads may still be inside: freeing the backend would
    // release the parent's counters (or the device under those threads).
    (void)impl_.release();
  }
}

Session* Session::Active() {
  std::lock_guard<std::mutex> lock(ActiveMutex());
  return g_active_session;
}

namespace runtime {

// The payload that marks Stop's error as the trace's (IsTraceLoss).
constexpr char kTraceLossPayload[] = "uncore/trace-loss";

bool WithActiveSession(absl::FunctionRef<void(Session&)> use) {
  // Stop's last step clears the active session under this lock: while it
  // is held, the session cannot finish stopping, let alone be destroyed.
  std::lock_guard<std::mutex> lock(ActiveMutex());
  if (g_active_session == nullptr) return false;
  use(*g_active_session);
  return true;
}

}  // namespace runtime

absl::StatusOr<SessionOptions> Session::OptionsFromEnvironment() {
  auto env = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  std::optional<std::string> events = env("UNCORE_EVENTS");
  std::optional<std::string> metrics = env("UNCORE_METRICS");
  if ((!events || common::StripWhitespace(*events).empty()) &&
      (!metrics || common::StripWhitespace(*metrics).empty())) {
    return absl::NotFoundError(
        "neither UNCORE_EVENTS nor UNCORE_METRICS is set");
  }
  SessionOptions o;
  if (events) o.events = spec::SplitSpecList(*events);
  if (metrics) o.metrics = spec::SplitSpecList(*metrics);
  if (std::optional<std::string> b = env("UNCORE_BACKEND")) {
    o.backend = common::ToLower(common::StripWhitespace(*b));
  }
  o.output = env("UNCORE_OUTPUT").value_or("-");
  if (common::StripWhitespace(o.output).empty()) {
    // In code, "" means no report; set in the environment it is a mistake.
    return absl::InvalidArgumentError(
        "UNCORE_OUTPUT is empty: set it to - (a table on stderr), a file name "
        "ending in .json, .csv, .html or .hatchet.json, any other file name "
        "for a table, or several separated by commas (placeholders: %p, %h, "
        "%r, %t; docs/environment.md), or unset it");
  }
  if (std::optional<std::string> t = env("UNCORE_TRACE")) {
    if (common::StripWhitespace(*t).empty()) {
      return absl::InvalidArgumentError(
          "UNCORE_TRACE is empty: set it to a file name for a Chrome trace "
          "(placeholders: %p, %h, %r, %t; docs/views.md), or unset "
          "it");
    }
    o.trace = std::string(common::StripWhitespace(*t));
  }
  if (std::optional<std::string> i = env("UNCORE_TRACE_INTERVAL")) {
    UNCORE_ASSIGN_OR_RETURN(o.trace_interval_ns, ParseTraceInterval(*i));
  }
  if (std::optional<std::string> s = env("UNCORE_SOCKETS")) {
    UNCORE_ASSIGN_OR_RETURN(o.sockets, ParseSocketList(*s));
  }
  if (std::optional<std::string> n = env("UNCORE_SAMPLE")) {
    int every = 0;
    if (!absl::SimpleAtoi(std::string(common::StripWhitespace(*n)), &every) ||
        every < 1) {
      return absl::InvalidArgumentError(fmt::format(
          "UNCORE_SAMPLE=\"{}\" is not a whole number of 1 or more: set it to "
          "N to read the counters on every Nth call of each region, or "
          "unset it",
          common::QuoteForMessage(*n)));
    }
    o.sample_every = every;
  }
  if (std::optional<std::string> p = env("UNCORE_PLATFORM")) {
    o.platform = std::string(common::StripWhitespace(*p));
  }
  // A boolean variable keeps `*value` (its default) when unset.
  auto flag = [&](const char* name, bool* value) -> absl::Status {
    if (std::optional<std::string> f = env(name)) {
      UNCORE_ASSIGN_OR_RETURN(*value, ParseBooleanVariable(name, *f));
    }
    return absl::OkStatus();
  };
  UNCORE_RETURN_IF_ERROR(flag("UNCORE_FREE_RUNNING", &o.use_free_running));
  UNCORE_RETURN_IF_ERROR(flag("UNCORE_FORCE", &o.force));
  UNCORE_RETURN_IF_ERROR(flag("UNCORE_MULTIPLEX", &o.allow_multiplexing));
  return o;
}

absl::StatusOr<std::unique_ptr<Session>> Session::Start(
    SessionOptions options) {
  return runtime::SessionAccess::Start(std::move(options), {});
}

namespace runtime {

absl::StatusOr<std::unique_ptr<Session>> StartSessionOnDevice(
    SessionOptions options, InjectedDevice device) {
  if (device.device == nullptr) {
    return absl::InvalidArgumentError("StartSessionOnDevice: no device");
  }
  return SessionAccess::Start(std::move(options), std::move(device));
}

absl::StatusOr<std::unique_ptr<Session>> StartSessionOnMachine(
    SessionOptions options, const MachineFiles& files) {
  return SessionAccess::Start(std::move(options), {}, files);
}

// A generated platform's formulas again, with the planned counters:
// #num_packages is the sockets counted, source_count(EVENT) the PMU
// instances per socket that count it.
absl::Status SessionAccess::OpenTrace(Session::Impl& s) {
  bool html = false;
  for (const std::string& path : s.output_paths) html |= IsHtmlOutput(path);
  if (s.trace_path.empty() && !html) return absl::OkStatus();
  trace::TraceLayout layout;
  for (const devices::CounterPlacement& p : s.plan) {
    layout.sockets.push_back(p.socket);
  }
  std::sort(layout.sockets.begin(), layout.sockets.end());
  layout.sockets.erase(
      std::unique(layout.sockets.begin(), layout.sockets.end()),
      layout.sockets.end());
  for (const devices::CounterPlacement& p : s.plan) {
    layout.value_event.push_back(p.event);
    layout.value_socket.push_back(
        static_cast<int>(std::lower_bound(layout.sockets.begin(),
                                          layout.sockets.end(), p.socket) -
                         layout.sockets.begin()));
  }
  layout.events = s.event_infos;
  for (const Session::Impl::Metric& m : s.metrics) {
    const bool per_second = IsRate(m.compiled);
    trace::TraceLayout::Metric metric;
    metric.info = {m.compiled.name, m.compiled.expression,
                   m.compiled.unit + (per_second ? "/s" : ""), per_second};
    metric.evaluate = [compiled = m.compiled, index = m.event_index,
                       per_second](const std::vector<double>& counts,
                                   double seconds) {
      std::vector<double> values;
      values.reserve(index.size());
      for (int e : index) {
        values.push_back(
            e >= 0 && e < static_cast<int>(counts.size()) ? counts[e] : 0.0);
      }
      double v = compiled.Evaluate(values, seconds);
      if (per_second) v /= seconds;
      return v;
    };
    layout.metrics.push_back(std::move(metric));
  }
  trace::TraceOptions options;
  options.path = s.trace_path;
  options.keep_timeline = html;
  options.origin_ns = s.start_steady_ns;
  options.origin_unix_ns = s.start_unix_ns;
  options.host = s.host;
  options.pid = s.output_context.pid;
  options.rank = s.output_context.rank;
  options.sample_interval_ns = s.options.trace_interval_ns;
  UNCORE_ASSIGN_OR_RETURN(s.trace, trace::TraceCollector::Open(
                                       std::move(options), std::move(layout)));
  return absl::OkStatus();
}

report::Timeline SessionAccess::TimelineOf(Session::Impl& s,
                                           const Results& results) {
  absl::flat_hash_map<std::string, int> by_path;
  for (size_t i = 0; i < results.regions.size(); ++i) {
    by_path.emplace(results.regions[i].path, static_cast<int>(i));
  }
  std::vector<int> region_of_path;
  return s.trace->TakeTimeline([&](int path) {
    if (path < 0) return -1;
    if (path >= static_cast<int>(region_of_path.size())) {
      region_of_path.resize(path + 1, -2);
    }
    if (region_of_path[path] == -2) {
      auto found = by_path.find(s.recorder->PathNames(path).second);
      region_of_path[path] = found == by_path.end() ? -1 : found->second;
    }
    return region_of_path[path];
  });
}

void SessionAccess::CompileForPlan(Session::Impl& s) {
  std::vector<int> sockets;
  for (const devices::CounterPlacement& p : s.plan) sockets.push_back(p.socket);
  std::sort(sockets.begin(), sockets.end());
  sockets.erase(std::unique(sockets.begin(), sockets.end()), sockets.end());
  const int64_t cores = sysconf(_SC_NPROCESSORS_ONLN);
  for (Session::Impl::Metric& m : s.metrics) {
    if (!m.resolution.has_value()) continue;
    spec::PerfMetricContext context;
    context.num_packages = std::max<int>(1, static_cast<int>(sockets.size()));
    context.num_cores = static_cast<int>(std::max<int64_t>(1, cores));
    context.source_count = [&](size_t i) {
      const int event = m.event_index[i];
      int entries = 0;
      for (const devices::CounterPlacement& p : s.plan) {
        entries += p.event == event ? 1 : 0;
      }
      return std::max(1, entries / context.num_packages);
    };
    absl::StatusOr<spec::CompiledMetric> compiled =
        spec::CompileResolution(*m.resolution, context);
    if (compiled.ok()) {
      m.compiled = *std::move(compiled);
    } else {
      s.warnings.push_back(fmt::format(
          "metric {}: evaluated with one package and one source per event: "
          "{}",
          m.compiled.name, common::StatusMessage(compiled.status())));
    }
  }
}

absl::StatusOr<std::unique_ptr<Session>> SessionAccess::Start(
    SessionOptions options, InjectedDevice injected,
    const MachineFiles& files) {
  constexpr const char* kOneAtATime =
      "another uncore::Session is active: Stop it first (one session at a "
      "time; an UNCORE_EVENTS environment session counts too)";
  static std::once_flag at_fork;
  std::call_once(at_fork, [] {
    pthread_atfork(&LockActiveBeforeFork, &UnlockActiveInParent,
                   &ForgetActiveInChild);
  });
  // Refuse before opening anything: a second session must not touch the
  // registers or PMUs the active (or starting) one counts on.
  {
    std::lock_guard<std::mutex> lock(ActiveMutex());
    if (g_active_session != nullptr || g_starting) {
      return absl::FailedPreconditionError(kOneAtATime);
    }
    g_starting = true;
  }
  StartingGuard starting;
  UNCORE_ASSIGN_OR_RETURN(ProcessSessionClaim claim, ClaimProcessSession());
  SessionMachine machine;
  UNCORE_ASSIGN_OR_RETURN(
      std::unique_ptr<Session::Impl> impl,
      Resolve(options, injected.device != nullptr, files, &machine));
  UNCORE_RETURN_IF_ERROR(PrepareOutputs(*impl, options));
  UNCORE_ASSIGN_OR_RETURN(
      OpenedBackend opened,
      OpenSessionBackend(*impl, options, machine, std::move(injected), files));
  UNCORE_ASSIGN_OR_RETURN(
      std::unique_ptr<Session> session,
      Assemble(std::move(impl), std::move(opened), std::move(options)));
  // The process-wide registration passes to the session (before the
  // session lock: fork handlers take the registry's lock, then this one).
  claim.Keep(session.get());
  {
    std::lock_guard<std::mutex> lock(ActiveMutex());
    // g_starting kept every other Start out since the check above.
    g_active_session = session.get();
    g_starting = false;
    starting.Done();
    regions::Activate(session->recorder_);
  }
  return session;
}

absl::StatusOr<std::unique_ptr<Session::Impl>> SessionAccess::Resolve(
    const SessionOptions& options, bool injected, const MachineFiles& files,
    SessionMachine* machine) {
  auto impl = std::make_unique<Session::Impl>();
  impl->start_unix_ns = UnixNowNs();
  impl->start_steady_ns = common::MonotonicNowNs();
  impl->host = common::HostName();
  impl->last_check = LastCheckSummary();
  const std::string backend =
      common::ToLower(options.backend.empty() ? "auto" : options.backend);
  UNCORE_ASSIGN_OR_RETURN(
      *machine,
      ReadSessionMachine(options.platform, backend, !injected, files));
  impl->cpu = machine->cpu.ok() ? machine->cpu->ToString() : "unknown";
  impl->platform = machine->platform.RunLabel();
  NameRequest request;
  request.events = options.events;
  request.metrics = options.metrics;
  request.backend = backend;
  request.use_free_running = options.use_free_running;
  UNCORE_ASSIGN_OR_RETURN(
      ResolvedNames names,
      ResolveNames(machine->platform, request, machine->pmus_or()));
  impl->events = std::move(names.events);
  impl->event_infos = std::move(names.event_infos);
  impl->metrics = std::move(names.metrics);
  for (std::string& w : names.warnings) impl->warnings.push_back(std::move(w));
  return impl;
}

absl::Status SessionAccess::PrepareOutputs(Session::Impl& s,
                                           const SessionOptions& options) {
  // A mistake is an error now, not a lost report at the end.
  s.output_context = report::CurrentOutputContext(s.start_unix_ns);
  s.output_context.host = s.host;
  // Every file written, so that no two are one (issue 36).
  std::vector<report::OutputClaim> claims;
  if (!options.output.empty()) {
    UNCORE_ASSIGN_OR_RETURN(const std::vector<std::string> outputs,
                            SplitOutputs(options.output));
    for (const std::string& output : outputs) {
      UNCORE_ASSIGN_OR_RETURN(std::string path,
                              report::PrepareOutput(output, s.output_context));
      claims.push_back(
          {fmt::format("report output \"{}\"", common::QuoteForMessage(output)),
           path});
      s.output_paths.push_back(std::move(path));
    }
  }
  if (!options.trace.empty()) {
    if (common::StripWhitespace(options.trace) == "-") {
      return absl::InvalidArgumentError(
          "trace output \"-\": a trace is a file (UNCORE_TRACE=trace-%p.json), "
          "not a table on stderr");
    }
    UNCORE_ASSIGN_OR_RETURN(
        s.trace_path,
        report::PrepareOutput(options.trace, s.output_context, "trace"));
    claims.push_back({fmt::format("the trace \"{}\"",
                                  common::QuoteForMessage(options.trace)),
                      s.trace_path});
  }
  return report::CheckOutputsApart(claims);
}

absl::StatusOr<OpenedBackend> SessionAccess::OpenSessionBackend(
    const Session::Impl& s, const SessionOptions& options,
    const SessionMachine& machine, InjectedDevice injected,
    const MachineFiles& files) {
  const SessionPlatform& platform = machine.platform;
  BackendRequest request;
  request.name =
      common::ToLower(options.backend.empty() ? "auto" : options.backend);
  request.sysfs_root = files.sysfs_root;
  request.platform = platform.name;
  request.cpuinfo = files.cpuinfo;
  if (!platform.has_engine) {
    if (request.name == "direct") {
      return absl::InvalidArgumentError(fmt::format(
          "the direct backend programs the registers of {} only; platform {} "
          "({}) counts through perf: UNCORE_BACKEND=perf or auto",
          RegisterPlatformNames(), platform.name, platform.record->title()));
    }
    request.direct_refusal =
        fmt::format("platform {} counts through perf only", platform.name);
  }
  request.program.events = s.events;
  request.program.sockets = options.sockets;
  request.program.force = options.force;
  request.program.allow_multiplexing = options.allow_multiplexing;
  request.sim_sockets = options.sim_sockets;
  request.sim_demo_traffic = options.sim_demo_traffic;
  request.device = std::move(injected.device);
  request.device_name = std::move(injected.name);
  request.device_simulated = injected.simulated;
  // Node sharing (node_sharing.h): read another process's counters, or
  // serve ours.
  if (!options.share_counters_as.empty() &&
      !options.read_counters_from.empty()) {
    return absl::InvalidArgumentError(
        "SessionOptions: set share_counters_as or read_counters_from, not "
        "both (a session either programs the counters or reads them)");
  }
  OpenedBackend opened;
  if (!options.read_counters_from.empty()) {
    UNCORE_ASSIGN_OR_RETURN(
        opened, OpenSharedBackend(options.read_counters_from, request.program));
  } else {
    UNCORE_ASSIGN_OR_RETURN(opened, OpenBackend(std::move(request)));
  }
  if (!options.share_counters_as.empty()) {
    std::vector<std::string> canonical;
    for (const EventInfo& e : s.event_infos) canonical.push_back(e.canonical);
    UNCORE_ASSIGN_OR_RETURN(opened.backend,
                            ServeBackend(std::move(opened.backend),
                                         options.share_counters_as, canonical));
  }
  return opened;
}

absl::StatusOr<std::unique_ptr<Session>> SessionAccess::Assemble(
    std::unique_ptr<Session::Impl> impl, OpenedBackend opened,
    SessionOptions options) {
  impl->backend = std::move(opened.backend);
  for (std::string& w : opened.warnings) impl->warnings.push_back(std::move(w));
  impl->options = std::move(options);

  std::unique_ptr<Session> session(new Session(std::move(impl)));
  Session::Impl& s = *session->impl_;
  session->backend_ = s.backend->name();
  if (devices::Device* device = s.backend->device()) {
    s.plan = device->read_plan();
    s.reads_per_snapshot = device->reads_per_snapshot();
    for (size_t i = 0; i < s.plan.size(); ++i) {
      s.instance_names.push_back(s.backend->InstanceName(i, s.plan[i]));
    }
    for (size_t i = 0; i < s.event_infos.size(); ++i) {
      const EventScale scale = s.backend->ScaleOf(static_cast<int>(i));
      s.event_infos[i].scale = scale.scale;
      s.event_infos[i].unit = scale.unit;
      if (!scale.encoding.empty()) s.event_infos[i].encoding = scale.encoding;
    }
    CompileForPlan(s);
  }
  s.owner_pid = getpid();
  if (session->backend_ != "off") {
    regions::RecorderOptions recorder_options;
    recorder_options.sample_every = std::max(1, s.options.sample_every);
    UNCORE_RETURN_IF_ERROR(OpenTrace(s));
    if (s.trace != nullptr) {
      s.trace_hook = std::make_unique<runtime::TraceHook>(s.trace.get());
      recorder_options.hooks.push_back(s.trace_hook.get());
    }
    // Node sharing (none with sampling: NodeUnionHook).
    if (s.backend->device() != nullptr) {
      s.node_hook = std::make_unique<runtime::NodeUnionHook>(
          s.backend->node_union_groups(), s.plan.size(),
          recorder_options.sample_every);
      if (s.node_hook->active()) {
        recorder_options.hooks.push_back(s.node_hook.get());
      } else {
        s.node_hook.reset();
      }
    }
    s.recorder = std::make_unique<regions::Recorder>(s.backend->device(),
                                                     recorder_options);
    session->recorder_ = s.recorder.get();
    if (s.trace != nullptr) {
      s.trace->StartSampling(s.recorder->shared_snapshots());
    }
    s.dropped_at_start = regions::DroppedBoundaries();
    s.refused_at_start = regions::RefusedReentrantRegions();
  } else if (!s.trace_path.empty()) {
    s.warnings.push_back(
        fmt::format("no trace is written to {}: backend off measures no region",
                    common::QuoteForMessage(s.trace_path)));
  }
  return session;
}

}  // namespace runtime

absl::Status Session::Stop() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.state_mu);
    if (s.stopped) return absl::OkStatus();
    if (s.owner_pid != getpid()) {
      // A forked child: the session, its report and its counters are the
      // parent's (regions/recorder.h made the child count nothing).
      s.stopped = true;
      return absl::OkStatus();
    }
    s.stop_steady_ns = common::MonotonicNowNs();
    regions::Quiescence quiet = regions::Quiescence::kQuiet;
    if (s.trace != nullptr) s.trace->StopSampling();
    if (s.recorder != nullptr) {
      // No new boundary reaches the recorder; those under way finish.
      quiet = regions::Deactivate(s.recorder.get(), kQuiesceTimeout);
      s.abandoned = quiet != regions::Quiescence::kQuiet;
      s.dropped = regions::DroppedBoundaries() - s.dropped_at_start;
      s.refused = regions::RefusedReentrantRegions() - s.refused_at_start;
      if (!s.abandoned) {
        // Regions still open (an interrupted run): one error per path,
        // under the recorder's cap on errors, then counted up to now as
        // open calls.
        for (const regions::Recorder::OpenRegion& open :
             s.recorder->OpenRegions()) {
          s.recorder->AddError(fmt::format(
              "region \"{}\" was still open on {} when the session stopped: "
              "counted up to then (its open_calls)",
              open.path,
              open.threads == 1 ? fmt::format("thread {}", open.first_thread)
                                : fmt::format("{} threads", open.threads)));
        }
        s.recorder->CloseOpenRegions();
        if (s.trace != nullptr && !s.discard_outputs) {
          // Every call is recorded: the trace file is written whole.
          s.trace_status = s.trace->Finish();
          s.trace_notes = s.trace->Notes();
        }
      }
    }
    if (s.backend != nullptr) {
      if (const devices::Device* device = s.backend->device()) {
        s.frozen_ns_at_stop = device->frozen_ns();
      }
      s.estimated.clear();
      for (size_t i = 0; i < s.plan.size(); ++i) {
        s.estimated.push_back(s.backend->Estimated(static_cast<int>(i)));
      }
    }
    s.stopped = true;
    if (quiet == regions::Quiescence::kCallerInside) {
      // Stop ran in a signal handler that interrupted a region boundary on
      // this thread: that boundary may hold the recorder's locks, so even
      // collecting the results could deadlock.
      return absl::FailedPreconditionError(
          "the session was stopped from a signal handler that interrupted a "
          "region boundary on the same thread: no report was written and "
          "the counters were left as they are");
    }
  }
  // The report first, then the device's release: the report must be on
  // disk before anything else can go wrong.
  absl::Status written = s.trace_status;
  if (!written.ok()) {
    // The trace's own failure: named so, not taken for the report's.
    absl::Status trace_lost(
        written.code(),
        fmt::format("the trace is lost: {}", common::StatusMessage(written)));
    trace_lost.SetPayload(runtime::kTraceLossPayload, absl::Cord("trace"));
    written = std::move(trace_lost);
  }
  if (!s.output_paths.empty() && !s.discard_outputs) {
    const Results results = Collect();
    {
      std::lock_guard<std::mutex> lock(s.state_mu);
      if (s.trace != nullptr && !s.abandoned && !s.timeline.has_value()) {
        s.timeline = runtime::SessionAccess::TimelineOf(s, results);
      }
    }
    for (const std::string& path : s.output_paths) {
      absl::Status w = report::WriteReport(results, path, stderr,
                                           s.timeline ? &*s.timeline : nullptr);
      if (written.ok()) written = w;
    }
  }
  absl::Status status;
  {
    std::lock_guard<std::mutex> lock(s.state_mu);
    if (s.abandoned) {
      status = absl::DeadlineExceededError(fmt::format(
          "a thread stayed inside a region boundary for more than {} s after "
          "the session stopped: the device was left as it is, not released",
          kQuiesceTimeout.count()));
    } else if (s.backend != nullptr) {
      status = s.backend->Stop();
    }
  }
  runtime::ReleaseProcessSession(this);
  {
    // Only now may another session start on the same counters.
    std::lock_guard<std::mutex> lock(ActiveMutex());
    if (g_active_session == this) g_active_session = nullptr;
  }
  return status.ok() ? written : status;
}

absl::Status Session::WriteReport(std::string_view output) const {
  UNCORE_ASSIGN_OR_RETURN(const std::vector<std::string> outputs,
                          SplitOutputs(output));
  const Results results = Collect();
  const report::Timeline* timeline = nullptr;
  {
    std::lock_guard<std::mutex> lock(impl_->state_mu);
    if (impl_->timeline.has_value()) timeline = &*impl_->timeline;
  }
  for (const std::string& name : outputs) {
    UNCORE_ASSIGN_OR_RETURN(const std::string expanded,
                            report::ExpandOutput(name, impl_->output_context));
    UNCORE_RETURN_IF_ERROR(
        report::WriteReport(results, expanded, stderr, timeline));
  }
  return absl::OkStatus();
}

bool Session::simulated() const {
  return impl_->backend != nullptr && impl_->backend->simulated();
}

// Every simulator the same way: the session never asks which platform.
void Session::SetSimulatedActivity(double memory_bytes_per_second) {
  if (sim::SimulatedActivity* a = runtime::SimulatedActivityOf(*this)) {
    (void)a->SetMemoryActivity(memory_bytes_per_second);
  }
}

void Session::AdvanceSimulation() {
  if (sim::SimulatedActivity* a = runtime::SimulatedActivityOf(*this)) {
    (void)a->AdvanceToNow();
  }
}

namespace runtime {

void SessionAccess::DiscardOutputs(Session& session) {
  std::lock_guard<std::mutex> lock(session.impl_->state_mu);
  session.impl_->discard_outputs = true;
}

void SessionAccess::AddWarning(Session& session, std::string warning) {
  std::lock_guard<std::mutex> lock(session.impl_->state_mu);
  session.impl_->warnings.push_back(std::move(warning));
}

void AddSessionWarning(Session& session, std::string warning) {
  SessionAccess::AddWarning(session, std::move(warning));
}

bool IsTraceLoss(const absl::Status& status) {
  return status.GetPayload(kTraceLossPayload).has_value();
}

void DiscardSessionOutputs(Session& session) {
  SessionAccess::DiscardOutputs(session);
}

sim::SimulatedActivity* SessionAccess::Activity(const Session& session) {
  const Session::Impl& s = *session.impl_;
  return s.backend == nullptr ? nullptr : s.backend->simulated_activity();
}

sim::SimulatedActivity* SimulatedActivityOf(const Session& session) {
  return SessionAccess::Activity(session);
}

const Backend* SessionAccess::BackendOf(const Session& session) {
  return session.impl_->backend.get();
}

std::vector<SessionMetric> SessionAccess::Metrics(const Session& session) {
  std::vector<SessionMetric> out;
  for (const Session::Impl::Metric& m : session.impl_->metrics) {
    out.push_back({m.compiled, m.event_index});
  }
  return out;
}

std::vector<SessionMetric> MetricsOf(const Session& session) {
  return SessionAccess::Metrics(session);
}

sim::IvyTownUncore* SimulatorOf(const Session& session) {
  const Backend* backend = SessionAccess::BackendOf(session);
  return backend == nullptr ? nullptr : ivytown::SimulatorOf(*backend);
}

}  // namespace runtime

Results Session::Collect() const { return CollectResults(false); }

Results Session::CollectCallingThread() const { return CollectResults(true); }

std::vector<MetricValue> Session::EvaluateMetrics(
    const std::vector<uint64_t>& totals, uint64_t wall_ns) const {
  const Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.state_mu);
  const double seconds = static_cast<double>(wall_ns) * 1e-9;
  std::vector<MetricValue> out;
  for (const Impl::Metric& m : s.metrics) {
    std::vector<double> values;
    bool missing = false;
    for (int e : m.event_index) {
      if (e < 0 || static_cast<size_t>(e) >= totals.size() ||
          static_cast<size_t>(e) >= s.event_infos.size()) {
        missing = true;
        break;
      }
      values.push_back(static_cast<double>(totals[e]) * s.event_infos[e].scale);
    }
    if (missing) {
      out.push_back({0, false});
      continue;
    }
    // As CollectResults does a region's.
    double v = m.compiled.Evaluate(values, seconds);
    if (IsRate(m.compiled)) v /= seconds;
    out.push_back({v, std::isfinite(v)});
  }
  return out;
}

Results Session::CollectResults(bool calling_thread) const {
  const Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.state_mu);
  Results r;
  r.run.backend = std::string(backend_);
  r.run.platform = s.platform;
  r.run.reads_per_snapshot = s.reads_per_snapshot;
  r.run.host = s.host;
  r.run.cpu = s.cpu;
  r.run.last_check = s.last_check;
  r.run.start_unix_ns = s.start_unix_ns;
  const uint64_t end =
      s.stop_steady_ns != 0 ? s.stop_steady_ns : common::MonotonicNowNs();
  r.run.duration_ns = end - s.start_steady_ns;
  r.run.warnings = s.warnings;
  r.events = s.event_infos;
  for (const Impl::Metric& m : s.metrics) {
    const bool per_second = IsRate(m.compiled);
    r.metrics.push_back({m.compiled.name, m.compiled.expression,
                         m.compiled.unit + (per_second ? "/s" : ""),
                         per_second});
  }
  r.run.simulated = s.backend != nullptr && s.backend->simulated();
  const devices::Device* device =
      s.backend == nullptr ? nullptr : s.backend->device();
  if (s.recorder == nullptr) {
    r.run.sockets = s.options.sockets;
    return r;
  }
  r.run.frozen_ns = s.stopped || device == nullptr ? s.frozen_ns_at_stop
                                                   : device->frozen_ns();
  const std::vector<devices::CounterPlacement>& plan = s.plan;
  for (const devices::CounterPlacement& p : plan) {
    r.run.sockets.push_back(p.socket);
  }
  if (plan.empty()) r.run.sockets = s.options.sockets;
  std::sort(r.run.sockets.begin(), r.run.sockets.end());
  r.run.sockets.erase(std::unique(r.run.sockets.begin(), r.run.sockets.end()),
                      r.run.sockets.end());
  auto socket_index = [&](int socket) {
    return static_cast<size_t>(
        std::lower_bound(r.run.sockets.begin(), r.run.sockets.end(), socket) -
        r.run.sockets.begin());
  };
  auto estimated = [&](size_t entry) {
    if (s.stopped) return entry < s.estimated.size() && s.estimated[entry];
    return s.backend->Estimated(static_cast<int>(entry));
  };

  const regions::Recorder::RegionTime region_time = s.recorder->RegionsTime();
  r.run.regions_open_ns = region_time.any_open_ns;
  r.run.exclusive_overcount_ns = region_time.overcount_ns;
  r.run.errors = s.recorder->Errors();
  const uint64_t dropped =
      s.stopped ? s.dropped : regions::DroppedBoundaries() - s.dropped_at_start;
  const uint64_t refused =
      s.stopped ? s.refused
                : regions::RefusedReentrantRegions() - s.refused_at_start;
  if (dropped > 0) {
    r.run.errors.push_back(fmt::format(
        "{} region boundaries arrived while the session was stopping: not "
        "counted",
        dropped));
  }
  if (refused > 0) {
    r.run.errors.push_back(fmt::format(
        "{} region boundaries were refused: a signal handler opened or "
        "closed a region while the SDK was working on the same thread "
        "(docs/concurrency.md)",
        refused));
  }
  if (s.abandoned) {
    r.run.errors.push_back(
        "a thread was still inside a region boundary when the session "
        "stopped: the counters were left programmed");
    if (s.trace != nullptr) {
      r.run.errors.push_back(
          "the trace and the HTML timeline were not written: a thread was "
          "still recording into them");
    }
  }
  for (const std::string& note : s.trace_notes) r.run.errors.push_back(note);
  if (s.options.sample_every > 1) {
    r.run.warnings.push_back(fmt::format(
        "sampled: counters were read on every {} call of each region "
        "(UNCORE_SAMPLE); counts of regions with unsampled calls are "
        "estimated (~)",
        common::Ordinal(static_cast<uint64_t>(s.options.sample_every))));
  }
  for (regions::Recorder::RegionTotals& t :
       calling_thread ? s.recorder->CollectCallingThread()
                      : s.recorder->Collect()) {
    RegionResult region;
    region.name = std::move(t.name);
    region.path = std::move(t.path);
    region.depth = t.depth;
    region.calls = t.calls;
    region.threads = t.threads;
    region.wall_ns = t.wall_ns;
    region.counted_ns = t.counted_ns;
    region.overlap_ns = t.overlap_ns;
    region.thread_ns = t.thread_ns;
    region.min_ns = t.min_ns;
    region.max_ns = t.max_ns;
    region.overhead_ns = t.overhead_ns;
    region.sampled_calls = t.sampled_calls;
    region.open_calls = t.open_calls;
    auto fold = [&](const std::vector<uint64_t>& values) {
      std::vector<EventCounts> counts(s.events.size());
      for (EventCounts& c : counts) {
        c.per_socket.assign(r.run.sockets.size(), 0);
      }
      for (size_t i = 0; i < plan.size(); ++i) {
        EventCounts& c = counts[plan[i].event];
        c.total += values[i];
        c.per_socket[socket_index(plan[i].socket)] += values[i];
        c.per_instance.push_back(
            {plan[i].socket, s.instance_names[i], values[i]});
        c.estimated = c.estimated || estimated(i) || t.estimated;
      }
      return counts;
    };
    region.inclusive = fold(t.inclusive);
    region.exclusive = fold(t.exclusive);
    // A thread's part of the node share means nothing: only the process's.
    if (!calling_thread && s.node_hook != nullptr) {
      const runtime::NodeUnionHook::Share node =
          s.node_hook->ShareOf(t.path_id);
      RegionResult::NodeShare& share = region.node_share;
      share.valid = node.valid;
      share.counts = fold(node.values);
      for (EventCounts& c : share.counts) {
        c.per_instance.clear();
        c.estimated = false;  // the backend's scaling only (below)
      }
      for (size_t i = 0; i < plan.size(); ++i) {
        if (estimated(i)) share.counts[plan[i].event].estimated = true;
      }
      const size_t sockets = r.run.sockets.size();
      share.opens.assign(sockets, 0);
      share.closes.assign(sockets, 0);
      share.wall_ns.assign(sockets, 0);
      // Each node group covers its sockets' entries of the plan; a socket
      // that two groups cover (servers that overlap) has no one node word.
      const std::vector<devices::NodeUnionGroup>& groups =
          s.node_hook->groups();
      std::vector<size_t> group_of(sockets, groups.size());
      for (size_t g = 0; g < groups.size() && g < node.opens.size(); ++g) {
        for (size_t i = groups[g].first_entry;
             i < groups[g].first_entry + groups[g].entries && i < plan.size();
             ++i) {
          const size_t k = socket_index(plan[i].socket);
          if (group_of[k] != groups.size() && group_of[k] != g) {
            share.valid = false;
          }
          group_of[k] = g;
          share.opens[k] = node.opens[g];
          share.closes[k] = node.closes[g];
          share.wall_ns[k] = node.wall_ns[g];
        }
      }
    }
    // Per second of the counters' own window where there is one: a read's
    // latency then changes no rate.
    const double seconds = static_cast<double>(region.rate_window_ns()) * 1e-9;
    for (const Impl::Metric& m : s.metrics) {
      std::vector<double> values;
      for (int e : m.event_index) {
        values.push_back(static_cast<double>(region.inclusive[e].total) *
                         r.events[e].scale);
      }
      double v = m.compiled.Evaluate(values, seconds);
      // Bandwidth-like metrics are totals the manual divides by time.
      if (IsRate(m.compiled)) v /= seconds;
      region.metrics.push_back({v, std::isfinite(v)});
    }
    r.regions.push_back(std::move(region));
  }
  return r;
}

}  // namespace uncore
