// The session that UNCORE_EVENTS (and the other UNCORE_* variables)
// describes, for programs that make no session themselves.
#ifndef UNCORE_SDK_RUNTIME_ENVIRONMENT_SESSION_H_
#define UNCORE_SDK_RUNTIME_ENVIRONMENT_SESSION_H_

namespace uncore::runtime {

// Starts it unless the program opted out (uncore_environment_session_enabled
// returning 0) or UNCORE_EVENTS is unset; says on stderr why a configured one
// cannot start.  True when a session started.
bool StartEnvironmentSession();

// Stops it and writes its report; does nothing when none is running.
void StopEnvironmentSession();

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_ENVIRONMENT_SESSION_H_
