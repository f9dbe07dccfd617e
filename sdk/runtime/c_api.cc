// The C API (include/uncore/uncore_c.h) over uncore::Session.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/common/status_macros.h"
#include "sdk/runtime/active_session.h"
#include "sdk/runtime/environment_session.h"
#include "sdk/spec/event_spec.h"
#include "uncore/region.h"
#include "uncore/session.h"
#include "uncore/uncore_c.h"

namespace {

struct CState {
  std::mutex mu;
  std::unique_ptr<uncore::Session> session;  // started by uncore_init*
};

CState& State() {
  static auto* state = new CState();
  return *state;
}

// A fixed buffer, trivially destructible: the C API is called from other
// libraries' exit paths (libomp's tool finalize runs after the thread's
// C++ thread_locals are destroyed).  A longer message is cut with "...".
constexpr size_t kLastErrorSize = 2048;
thread_local char t_last_error[kLastErrorSize] = {};

void SetLastError(std::string_view message) {
  const size_t n = std::min(message.size(), kLastErrorSize - 1);
  std::memcpy(t_last_error, message.data(), n);
  t_last_error[n] = '\0';
  if (n < message.size() && n >= 3) {
    std::memcpy(t_last_error + n - 3, "...", 3);
  }
}

int Fail(const absl::Status& status) {
  SetLastError(uncore::common::StatusMessage(status));
  return -1;
}

// Region calls are on the hot path: they touch the last error only when
// they fail.
int NullName(const char* function) {
  return Fail(absl::InvalidArgumentError(std::string(function) +
                                         ": the region name is NULL"));
}

int StartLocked(CState& state, absl::StatusOr<uncore::SessionOptions> o) {
  if (!o.ok()) return Fail(o.status());
  absl::StatusOr<std::unique_ptr<uncore::Session>> s =
      uncore::Session::Start(*std::move(o));
  if (!s.ok()) return Fail(s.status());
  state.session = *std::move(s);
  return 0;
}

}  // namespace

extern "C" {

int uncore_init(void) {
  t_last_error[0] = '\0';
  if (uncore::Session::Active() != nullptr) return 0;
  CState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  absl::StatusOr<uncore::SessionOptions> o =
      uncore::Session::OptionsFromEnvironment();
  if (!o.ok() && o.status().code() == absl::StatusCode::kNotFound) return 0;
  return StartLocked(state, std::move(o));
}

int uncore_init_with(const char* events, const char* metrics,
                     const char* backend, const char* output) {
  t_last_error[0] = '\0';
  uncore::SessionOptions o;
  if (events != nullptr) o.events = uncore::spec::SplitSpecList(events);
  if (metrics != nullptr) o.metrics = uncore::spec::SplitSpecList(metrics);
  o.backend = backend != nullptr ? backend : "auto";
  o.output = output != nullptr ? output : "-";
  CState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  return StartLocked(state, std::move(o));
}

int uncore_region_register(const char* name) {
  if (name == nullptr) return NullName("uncore_region_register");
  (void)uncore::InternRegionName(name);
  return 0;
}

int uncore_region_begin(const char* name) {
  if (name == nullptr) return NullName("uncore_region_begin");
  uncore::regions::Recorder* r =
      uncore::internal::g_active_recorder.load(std::memory_order_acquire);
  if (r == nullptr) return 0;  // no session: not measured, not an error
  uncore::internal::BeginRegion(r, uncore::internal::NameIdOf(name));
  return 0;
}

int uncore_region_end(const char* name) {
  if (name == nullptr) return NullName("uncore_region_end");
  uncore::regions::Recorder* r =
      uncore::internal::g_active_recorder.load(std::memory_order_acquire);
  if (r == nullptr) return 0;
  uncore::internal::EndRegion(r, uncore::internal::NameIdOf(name),
                              /*exception=*/false);
  return 0;
}

int uncore_region_get(const char* name, int* nevents, double* events,
                      double* seconds, int* calls) {
  if (name == nullptr) {
    if (nevents != nullptr) *nevents = 0;
    return NullName("uncore_region_get");
  }
  // The calling thread's share (LIKWID's GET): its calls and time, and the
  // counts of the intervals it closed, so the threads' values sum to each
  // socket once.  Read while the session cannot be stopped or destroyed
  // (by uncore_finalize, or by its C++ owner on another thread).
  uncore::Results results;
  if (!uncore::runtime::WithActiveSession([&](uncore::Session& session) {
        results = session.CollectCallingThread();
      })) {
    if (nevents != nullptr) *nevents = 0;
    return Fail(absl::FailedPreconditionError("no active uncore session"));
  }
  // Every call path of the name: "solve" under "setup" and under "run".
  bool found = false;
  uint64_t total_calls = 0;
  uint64_t total_wall_ns = 0;
  std::vector<double> totals(results.events.size(), 0.0);
  for (const uncore::RegionResult& r : results.regions) {
    if (r.name != name) continue;
    found = true;
    total_calls += r.calls;
    total_wall_ns += r.thread_ns;
    for (size_t i = 0; i < r.inclusive.size() && i < totals.size(); ++i) {
      totals[i] +=
          static_cast<double>(r.inclusive[i].total) * results.events[i].scale;
    }
  }
  if (!found) {
    if (nevents != nullptr) *nevents = 0;
    return Fail(absl::NotFoundError(std::string("no region named ") + name +
                                    " has ended yet"));
  }
  if (nevents != nullptr) {
    int n = 0;
    for (size_t i = 0; i < totals.size() && n < *nevents; ++i) {
      if (events != nullptr) events[n] = totals[i];
      ++n;
    }
    *nevents = n;
  }
  if (seconds != nullptr) *seconds = static_cast<double>(total_wall_ns) * 1e-9;
  if (calls != nullptr) *calls = static_cast<int>(total_calls);
  return 0;
}

int uncore_region_reset(const char* name) {
  return Fail(absl::UnimplementedError(
      std::string("uncore_region_reset(") + (name != nullptr ? name : "NULL") +
      "): resetting a region is not supported; its totals accumulate over "
      "the session"));
}

namespace {

// A failed marker call's message; `result` returned as it is.
int MarkerFailure(int result, const char* function, const char* name) {
  switch (result) {
    case uncore::internal::kMarkerRunning:
      Fail(absl::FailedPreconditionError(
          std::string(function) + "(\"" + name +
          "\"): the marker region already runs on this thread"));
      break;
    case uncore::internal::kMarkerNotRunning:
      Fail(absl::FailedPreconditionError(
          std::string(function) + "(\"" + name +
          "\"): the marker region does not run on this thread"));
      break;
    case uncore::internal::kMarkerTooMany:
      Fail(absl::ResourceExhaustedError(
          std::string(function) + "(\"" + name +
          "\"): too many marker regions run on this thread"));
      break;
    default:
      Fail(absl::UnavailableError(
          std::string(function) + "(\"" + name +
          "\"): refused (the session is stopping, or a signal handler "
          "interrupted the SDK)"));
      break;
  }
  return result;
}

}  // namespace

}  // extern "C"

namespace uncore::internal {

namespace {

// A marker call on the active session: `op` with the name's id.
int MarkerCall(int (*op)(regions::Recorder*, int), const char* function,
               const char* name, int without_session) {
  if (name == nullptr) {
    NullName(function);
    return kMarkerNullName;
  }
  regions::Recorder* r = g_active_recorder.load(std::memory_order_acquire);
  if (r == nullptr) {
    if (without_session != 0) {
      Fail(absl::FailedPreconditionError("no active uncore session"));
    }
    return without_session;
  }
  const int result = op(r, NameIdOf(name));
  return result == 0 ? 0 : MarkerFailure(result, function, name);
}

}  // namespace

// Without a session, start and stop are not measured and not an error.
int MarkerStart(const char* name) {
  return MarkerCall(&BeginMarker, "uncore_marker_start", name, 0);
}

int MarkerStop(const char* name) {
  return MarkerCall(&EndMarker, "uncore_marker_stop", name, 0);
}

int MarkerReset(const char* name) {
  return MarkerCall(&ResetMarker, "uncore_marker_reset", name,
                    kMarkerNoSession);
}

}  // namespace uncore::internal

extern "C" {

int uncore_marker_start(const char* name) {
  return uncore::internal::MarkerStart(name) == 0 ? 0 : -1;
}

int uncore_marker_stop(const char* name) {
  return uncore::internal::MarkerStop(name) == 0 ? 0 : -1;
}

int uncore_marker_reset(const char* name) {
  return uncore::internal::MarkerReset(name) == 0 ? 0 : -1;
}

int uncore_write_report(const char* output) {
  t_last_error[0] = '\0';
  if (output == nullptr || *output == '\0') {
    return Fail(absl::InvalidArgumentError(
        "uncore_write_report: no output given (\"-\", FILE.json, FILE.csv, "
        "FILE.html, FILE.hatchet.json, or several separated by commas)"));
  }
  // As uncore_region_get: the session cannot be destroyed meanwhile.
  absl::Status s;
  if (!uncore::runtime::WithActiveSession(
          [&](uncore::Session& session) { s = session.WriteReport(output); })) {
    return Fail(absl::FailedPreconditionError("no active uncore session"));
  }
  return s.ok() ? 0 : Fail(s);
}

int uncore_finalize(void) {
  t_last_error[0] = '\0';
  CState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.session == nullptr) {
    // A session started from UNCORE_* when the program loaded: report now.
    uncore::runtime::StopEnvironmentSession();
    return 0;
  }
  absl::Status s = state.session->Stop();
  state.session.reset();
  return s.ok() ? 0 : Fail(s);
}

const char* uncore_last_error(void) { return t_last_error; }

}  // extern "C"
