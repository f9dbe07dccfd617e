// WithActiveSession: reads the active session safely against its
// destruction on another thread.
//
//   bool found = runtime::WithActiveSession([&](Session& s) {
//     results = s.CollectCallingThread();
//   });
//
// Session::Active() returns a raw pointer: a C++ owner may destroy the
// session right after it returned.  The C API's readers (uncore_region_get,
// LIKWID's GET, uncore_write_report) go through this instead.
//
// Guarantees: `use` runs while the session cannot finish Stop() (its last
// step waits for the same lock), so it cannot be destroyed under `use`.
// `use` must not start, stop or destroy a session.  False, with `use` not
// called, when no session is active.
#ifndef UNCORE_SDK_RUNTIME_ACTIVE_SESSION_H_
#define UNCORE_SDK_RUNTIME_ACTIVE_SESSION_H_

#include "absl/functional/function_ref.h"
#include "uncore/session.h"

namespace uncore::runtime {

bool WithActiveSession(absl::FunctionRef<void(Session&)> use);

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_ACTIVE_SESSION_H_
