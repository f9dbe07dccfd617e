#include "sdk/runtime/process_registry.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/fd.h"

namespace uncore::runtime {
namespace {

// This copy's registration: the bound socket (-1 when none), whether a
// claim is between ClaimProcessSession and Keep or release, and the
// session that kept it.
struct Registry {
  std::mutex mu;
  int fd = -1;
  bool claimed = false;
  const void* owner = nullptr;
};

Registry& TheRegistry() {
  static auto* registry = new Registry;
  return *registry;
}

void CloseLocked(Registry& r) {
  if (r.fd >= 0) close(r.fd);
  r.fd = -1;
  r.claimed = false;
  r.owner = nullptr;
}

// fork(): the child is another process, with a name of its own; the
// parent's registration must not live on in it.  The lock is held across
// fork so that the child's copy of it is consistent.
void BeforeFork() { TheRegistry().mu.lock(); }
void AfterForkInParent() { TheRegistry().mu.unlock(); }
void AfterForkInChild() {
  Registry& r = TheRegistry();
  CloseLocked(r);
  r.mu.unlock();
}

// Where this copy of the SDK is: the file name of the program or library
// that holds this function's static data.
std::string ThisCopy() {
  static const char kHere = 0;
  Dl_info info = {};
  if (dladdr(&kHere, &info) != 0 && info.dli_fname != nullptr &&
      info.dli_fname[0] != '\0') {
    return info.dli_fname;
  }
  return "the program";
}

}  // namespace

std::string ProcessSessionName(pid_t pid) {
  // Abstract names are per network namespace, pids per pid namespace:
  // processes in two containers that share a network can have the same
  // pid, so the pid namespace is part of the name.
  char link[64] = {};
  const ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
  // "pid:[4026531836]" -> "4026531836"; "0" when /proc is not there.
  const std::string_view text(link, n > 0 ? static_cast<size_t>(n) : 0);
  const size_t open = text.find('[');
  const size_t close_at = text.find(']');
  const std::string_view ns_text =
      open != std::string_view::npos && close_at != std::string_view::npos &&
              close_at > open
          ? text.substr(open + 1, close_at - open - 1)
          : std::string_view("0");
  return fmt::format("uncore-sdk-session-{}-{}", ns_text, pid);
}

ProcessSessionClaim::ProcessSessionClaim(ProcessSessionClaim&& other) noexcept
    : held_(other.held_) {
  other.held_ = false;
}

ProcessSessionClaim& ProcessSessionClaim::operator=(
    ProcessSessionClaim&& other) noexcept {
  if (this != &other) {
    Release();
    held_ = other.held_;
    other.held_ = false;
  }
  return *this;
}

ProcessSessionClaim::~ProcessSessionClaim() { Release(); }

void ProcessSessionClaim::Release() {
  if (!held_) return;
  held_ = false;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.claimed && r.owner == nullptr) CloseLocked(r);
}

void ProcessSessionClaim::Keep(const void* owner) {
  if (!held_) return;
  held_ = false;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.claimed) r.owner = owner;
}

absl::StatusOr<ProcessSessionClaim> ClaimProcessSession() {
  static const bool atfork_installed =
      pthread_atfork(&BeforeFork, &AfterForkInParent, &AfterForkInChild) == 0;
  (void)atfork_installed;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.claimed) {
    return absl::FailedPreconditionError(
        "another uncore::Session is active or starting: Stop it first (one "
        "session at a time)");
  }
  ProcessSessionClaim claim;
  claim.held_ = true;
  r.claimed = true;
  const int fd =
      common::KeepAboveStdio(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd < 0) return claim;  // no sockets here: start unregistered
  const std::string name = ProcessSessionName(getpid());
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  // An abstract name: a leading NUL, then the name, no terminator.
  const size_t length = std::min(name.size(), sizeof(address.sun_path) - 1);
  std::memcpy(address.sun_path + 1, name.data(), length);
  const auto address_size =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), address_size) ==
      0) {
    r.fd = fd;
    return claim;
  }
  const int error = errno;
  close(fd);
  if (error != EADDRINUSE) return claim;  // cannot tell: start unregistered
  claim.held_ = false;
  r.claimed = false;
  return absl::FailedPreconditionError(fmt::format(
      "another copy of the Uncore SDK in this process (pid {}) already has "
      "an active session, and two sessions would program the same counters: "
      "this copy, in {}, does not start one, and the regions it records are "
      "not measured.  A program and the libraries "
      "or plugins it loads must share one SDK: link each of them to the "
      "shared library libuncore_sdk.so (CMake target uncore::sdk, "
      "pkg-config uncore-sdk), not to the static libuncore_sdk.a "
      "(docs/building.md, \"One SDK per process\")",
      getpid(), ThisCopy()));
}

void ReleaseProcessSession(const void* owner) {
  if (owner == nullptr) return;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.claimed && r.owner == owner) CloseLocked(r);
}

}  // namespace uncore::runtime
