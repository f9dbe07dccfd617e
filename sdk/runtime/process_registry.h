// One counting session per process, across every copy of the SDK in it.
//
// A process can hold two copies of the SDK: a program linked to
// libuncore_sdk.so that dlopen()s a plugin linked to libuncore_sdk.a, say.
// Each copy has its own globals, so its own "one session at a time" check;
// two sessions would program the same counters.  Every copy therefore
// registers its active session under one process-wide name: an abstract
// Unix-domain socket (no file, gone when closed or at exit) named after the
// process's pid and pid namespace, which every copy derives alike.  Binding
// it fails (EADDRINUSE) while another copy holds it.
//
// The socket is close-on-exec, and a forked child closes its copy of it
// (pthread_atfork), so neither keeps the parent's registration alive.  Where
// no socket can be made (a sandbox that forbids AF_UNIX), sessions start
// unregistered: the check is lost, nothing else.
//
//   UNCORE_ASSIGN_OR_RETURN(ProcessSessionClaim claim, ClaimProcessSession());
//   ... open the counters; on an error `claim` releases itself ...
//   claim.Keep(session);                // registered until:
//   ReleaseProcessSession(session);     // in Session::Stop
#ifndef UNCORE_SDK_RUNTIME_PROCESS_REGISTRY_H_
#define UNCORE_SDK_RUNTIME_PROCESS_REGISTRY_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace uncore::runtime {

// This copy's registration while a session starts.  Released when it is
// destroyed, unless Keep() handed it to a session.
class [[nodiscard]] ProcessSessionClaim {
 public:
  ProcessSessionClaim() = default;
  ProcessSessionClaim(ProcessSessionClaim&& other) noexcept;
  ProcessSessionClaim& operator=(ProcessSessionClaim&& other) noexcept;
  ProcessSessionClaim(const ProcessSessionClaim&) = delete;
  ProcessSessionClaim& operator=(const ProcessSessionClaim&) = delete;
  ~ProcessSessionClaim();

  // The registration now belongs to `owner` (a Session): it lasts until
  // ReleaseProcessSession(owner).
  void Keep(const void* owner);

 private:
  friend absl::StatusOr<ProcessSessionClaim> ClaimProcessSession();
  // Ends the registration unless kept (or moved away).
  void Release();
  bool held_ = false;
};

// Registers this copy's session for the process.  FailedPrecondition when
// another copy of the SDK in this process has an active session (saying
// where this copy is and how to link the program so that there is only
// one), or when this copy is already registering one.
absl::StatusOr<ProcessSessionClaim> ClaimProcessSession();

// Ends the registration that `owner` kept; does nothing for anyone else.
void ReleaseProcessSession(const void* owner);

// The abstract socket name (without its leading NUL) for process `pid` in
// the caller's pid namespace.
std::string ProcessSessionName(pid_t pid);

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_PROCESS_REGISTRY_H_
