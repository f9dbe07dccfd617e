#include "sdk/runtime/backend_policy.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"

namespace uncore::runtime {

std::string_view BackendKindName(BackendKind kind) {
  switch (kind) {
    case BackendKind::kPerf:
      return "perf";
    case BackendKind::kDirect:
      return "direct";
    case BackendKind::kOff:
      return "off";
  }
  return "unknown";
}

std::string_view RejectionName(Rejection rejection) {
  switch (rejection) {
    case Rejection::kNone:
      return "none";
    case Rejection::kUnavailable:
      return "unavailable";
    case Rejection::kNoPermission:
      return "no_permission";
    case Rejection::kBusy:
      return "busy";
    case Rejection::kFailed:
      return "failed";
  }
  return "unknown";
}

Rejection RejectionFromStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return Rejection::kNone;
    case absl::StatusCode::kPermissionDenied:
      return Rejection::kNoPermission;
    case absl::StatusCode::kUnavailable:
      return Rejection::kBusy;
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnimplemented:
      return Rejection::kUnavailable;
    default:
      return Rejection::kFailed;
  }
}

BackendProbe BackendProbe::Usable() {
  return BackendProbe{.rejection = Rejection::kNone, .detail = ""};
}

BackendProbe BackendProbe::Rejected(Rejection rejection, std::string detail) {
  return BackendProbe{.rejection = rejection, .detail = std::move(detail)};
}

BackendProbe BackendProbe::FromStatus(const absl::Status& status) {
  if (status.ok()) return Usable();
  return Rejected(RejectionFromStatus(status), common::StatusMessage(status));
}

std::optional<BackendProbe>& AutoProbes::For(BackendKind kind) {
  return kind == BackendKind::kPerf ? perf : direct;
}

std::string AutoDecision::RejectedText() const {
  std::string text;
  for (const RejectedBackend& r : rejected) {
    if (!text.empty()) text += "; ";
    text += fmt::format("{}: {}", BackendKindName(r.backend),
                        r.detail.empty() ? "not usable" : r.detail);
  }
  return text;
}

AutoDecision DecideAutoBackend(const AutoProbes& probes) {
  AutoDecision d;
  for (BackendKind kind : kAutoOrder) {
    const std::optional<BackendProbe>& probe =
        kind == BackendKind::kPerf ? probes.perf : probes.direct;
    if (!probe) {
      d.probe_next = kind;
      return d;
    }
    if (probe->usable()) {
      d.backend = kind;
      return d;
    }
    d.rejected.push_back(RejectedBackend{.backend = kind,
                                         .rejection = probe->rejection,
                                         .detail = probe->detail});
  }
  d.backend = BackendKind::kOff;
  return d;
}

}  // namespace uncore::runtime
