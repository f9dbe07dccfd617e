// The session UNCORE_EVENTS describes, started when the library loads so
// that a program that only annotates regions gets a report without code
// changes, and stopped at exit (or by uncore_finalize()).
#include "sdk/runtime/environment_session.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/common/status_macros.h"
#include "uncore/session.h"
#include "uncore/uncore_c.h"

// The default: programs start the UNCORE_EVENTS session.  A program that
// chooses its sessions itself defines a strong version returning 0.
extern "C" __attribute__((weak)) int uncore_environment_session_enabled(void) {
  return 1;
}

namespace uncore::runtime {
namespace {

std::unique_ptr<Session>& EnvironmentSession() {
  static auto* session = new std::unique_ptr<Session>();
  return *session;
}

}  // namespace

void StopEnvironmentSession() {
  std::unique_ptr<Session>& session = EnvironmentSession();
  if (session == nullptr) return;
  absl::Status s = session->Stop();
  if (!s.ok()) {
    std::fprintf(stderr, "uncore: writing the report failed: %s\n",
                 common::StatusMessage(s).c_str());
  }
}

bool StartEnvironmentSession() {
  if (uncore_environment_session_enabled() == 0) return false;
  absl::StatusOr<SessionOptions> options = Session::OptionsFromEnvironment();
  if (!options.ok()) {
    if (options.status().code() != absl::StatusCode::kNotFound) {
      std::fprintf(stderr, "uncore: regions will not be measured: %s\n",
                   common::StatusMessage(options.status()).c_str());
    }
    return false;
  }
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Start(*std::move(options));
  if (!session.ok()) {
    std::fprintf(stderr,
                 "uncore: regions will not be measured: the session "
                 "UNCORE_EVENTS asks for cannot start: %s\n",
                 common::StatusMessage(session.status()).c_str());
    return false;
  }
  EnvironmentSession() = *std::move(session);
  std::atexit(&StopEnvironmentSession);
  return true;
}

}  // namespace uncore::runtime

// Referenced with --undefined by every program that links uncore::sdk, so a
// static link keeps this file and its initializer (sdk/CMakeLists.txt).
extern "C" {
extern const int uncore_environment_session_anchor;
const int uncore_environment_session_anchor = 0;
}

namespace uncore::runtime {
namespace {
[[maybe_unused]] const bool g_environment_session = StartEnvironmentSession();
}  // namespace
}  // namespace uncore::runtime
