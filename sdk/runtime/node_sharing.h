// Node sharing for sessions (SessionOptions::share_counters_as and
// read_counters_from; docs/node-sharing.md): a session that programs the
// counters serves snapshots of them to other processes, and a session that
// reads them counts nothing itself.
//
//   UNCORE_ASSIGN_OR_RETURN(opened.backend,
//       ServeBackend(std::move(opened.backend), "job42.0", canonical_events));
//   UNCORE_ASSIGN_OR_RETURN(OpenedBackend follower,
//       OpenSharedBackend({"job42.0"}, program));
//
// Guarantees: a served backend stops serving (waiting up to
// kServeStopWait for attached readers to detach) before it releases its
// device; a shared backend programs nothing and reports the serving
// backend's name, units, scales and box instances as its own.
#ifndef UNCORE_SDK_RUNTIME_NODE_SHARING_H_
#define UNCORE_SDK_RUNTIME_NODE_SHARING_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/runtime/backends.h"

namespace uncore::runtime {

// How long a serving session's Stop waits for readers still attached.
inline constexpr std::chrono::milliseconds kServeStopWait{5000};

// Wraps `backend` (programmed) so that it serves its snapshots under
// `name`; `canonical_events` are the session's events in order.
absl::StatusOr<std::unique_ptr<Backend>> ServeBackend(
    std::unique_ptr<Backend> backend, const std::string& name,
    const std::vector<std::string>& canonical_events);

// A backend reading the segments `names` (their plans concatenated),
// checked against `program`'s events.
absl::StatusOr<OpenedBackend> OpenSharedBackend(
    const std::vector<std::string>& names,
    const devices::ProgramRequest& program);

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_NODE_SHARING_H_
