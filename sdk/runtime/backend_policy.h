// The `auto` backend policy, in one place: which backend `auto` counts on,
// given what is known about each real backend, and a coded reason for every
// one it rejects.  Sessions (OpenBackend in backends.cc) and `uncore
// doctor` both decide with DecideAutoBackend.
//
//   AutoProbes probes;
//   AutoDecision d = DecideAutoBackend(probes);   // d.probe_next == kPerf
//   probes.perf = BackendProbe::FromStatus(open_perf_status);
//   d = DecideAutoBackend(probes);                // kDirect next, or chosen
//
// The policy: perf, then direct; the first usable one wins; when neither is
// usable, `off` (regions are not measured; the warning names every reason).
// `auto` never picks `sim`.  A backend the policy needs before it can decide
// and that has not been probed yet is named in `probe_next`, so that callers
// probe lazily (sessions: open perf, and open direct only when perf cannot
// count) or eagerly (doctor: everything, then one decision).
//
// Reasons come from the probes' codes (status codes or the layers' probe
// reasons), never from message text.
#ifndef UNCORE_SDK_RUNTIME_BACKEND_POLICY_H_
#define UNCORE_SDK_RUNTIME_BACKEND_POLICY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace uncore::runtime {

enum class BackendKind { kPerf, kDirect, kOff };

// "perf", "direct", "off".
std::string_view BackendKindName(BackendKind kind);

// Why a backend cannot count here.
enum class Rejection {
  kNone,          // usable
  kUnavailable,   // not here: no uncore PMU, no msr driver, not IvyTown, ...
  kNoPermission,  // here, but this process may not use it
  kBusy,          // another agent holds the counters
  kFailed,        // anything else: the detail says what
};

// "none", "unavailable", "no_permission", "busy", "failed".
std::string_view RejectionName(Rejection rejection);

// A status code's rejection: OK kNone; PermissionDenied kNoPermission;
// Unavailable kBusy; NotFound, FailedPrecondition, Unimplemented
// kUnavailable; the rest kFailed.
Rejection RejectionFromStatus(const absl::Status& status);

// What is known about one backend.
struct BackendProbe {
  Rejection rejection = Rejection::kFailed;
  std::string detail;  // why not, one phrase; empty when usable

  bool usable() const { return rejection == Rejection::kNone; }
  static BackendProbe Usable();
  static BackendProbe Rejected(Rejection rejection, std::string detail);
  // From the status of opening (and programming) the backend.
  static BackendProbe FromStatus(const absl::Status& status);
};

// Unset: not probed yet.
struct AutoProbes {
  std::optional<BackendProbe> perf;
  std::optional<BackendProbe> direct;

  std::optional<BackendProbe>& For(BackendKind kind);
};

struct RejectedBackend {
  BackendKind backend = BackendKind::kPerf;
  Rejection rejection = Rejection::kFailed;
  std::string detail;
};

struct AutoDecision {
  // Set when the policy needs this backend probed before it can decide;
  // then `backend` is meaningless.
  std::optional<BackendKind> probe_next;
  BackendKind backend = BackendKind::kOff;
  // The backends tried before `backend` and rejected, in policy order.
  std::vector<RejectedBackend> rejected;

  bool decided() const { return !probe_next.has_value(); }
  // "perf: <detail>; direct: <detail>".
  std::string RejectedText() const;
};

// The order `auto` tries backends in.
inline constexpr BackendKind kAutoOrder[] = {BackendKind::kPerf,
                                             BackendKind::kDirect};

AutoDecision DecideAutoBackend(const AutoProbes& probes);

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_BACKEND_POLICY_H_
