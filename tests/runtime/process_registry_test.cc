// The process-wide registration of the active session
// (sdk/runtime/process_registry.h).  "Another copy of the SDK" is played
// by the test binding the process's name itself, as that copy would.
#include "sdk/runtime/process_registry.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "uncore/session.h"

namespace uncore::runtime {
namespace {

using ::testing::HasSubstr;

// Binds this process's registration name as another copy would: the
// socket, or -1 with errno set.
int BindAsAnotherCopy() {
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const std::string name = ProcessSessionName(getpid());
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const auto size =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), size) != 0) {
    const int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

// Whether the name is free now (binds and closes at once).
bool NameIsFree() {
  const int fd = BindAsAnotherCopy();
  if (fd < 0) return false;
  close(fd);
  return true;
}

SessionOptions SimOptions() {
  SessionOptions o;
  o.events = {"imc/CAS_COUNT.RD"};
  o.backend = "sim";
  o.output = "";
  return o;
}

TEST(ProcessRegistryTest, NameHoldsThePid) {
  EXPECT_THAT(ProcessSessionName(1234), HasSubstr("-1234"));
  EXPECT_THAT(ProcessSessionName(1234), HasSubstr("uncore-sdk-session-"));
  EXPECT_NE(ProcessSessionName(1234), ProcessSessionName(1235));
}

TEST(ProcessRegistryTest, KeptClaimHoldsTheNameUntilReleased) {
  ASSERT_TRUE(NameIsFree());
  int owner = 0;
  {
    absl::StatusOr<ProcessSessionClaim> claim = ClaimProcessSession();
    ASSERT_TRUE(claim.ok()) << claim.status();
    claim->Keep(&owner);
  }
  EXPECT_FALSE(NameIsFree());
  EXPECT_EQ(errno, EADDRINUSE);
  int someone_else = 0;
  ReleaseProcessSession(&someone_else);
  EXPECT_FALSE(NameIsFree());
  ReleaseProcessSession(&owner);
  EXPECT_TRUE(NameIsFree());
}

TEST(ProcessRegistryTest, ClaimNotKeptIsReleased) {
  {
    absl::StatusOr<ProcessSessionClaim> claim = ClaimProcessSession();
    ASSERT_TRUE(claim.ok()) << claim.status();
    EXPECT_FALSE(NameIsFree());
    // This copy is already registering: a second claim is refused.
    absl::StatusOr<ProcessSessionClaim> second = ClaimProcessSession();
    EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(second.status().message(), HasSubstr("one session at a time"));
  }
  EXPECT_TRUE(NameIsFree());
}

TEST(ProcessRegistryTest, AnotherCopysSessionRefusesOurs) {
  const int other = BindAsAnotherCopy();
  ASSERT_GE(other, 0) << std::strerror(errno);
  absl::StatusOr<ProcessSessionClaim> claim = ClaimProcessSession();
  EXPECT_EQ(claim.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(claim.status().message(),
              HasSubstr("another copy of the Uncore SDK in this process"));
  EXPECT_THAT(claim.status().message(), HasSubstr("libuncore_sdk.so"));
  // Session::Start says the same and starts nothing.
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Start(SimOptions());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(session.status().message(), HasSubstr("another copy"));
  EXPECT_EQ(Session::Active(), nullptr);
  // When that copy's session ends, ours starts.
  close(other);
  session = Session::Start(SimOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_FALSE(NameIsFree());
  ASSERT_TRUE((*session)->Stop().ok());
  EXPECT_TRUE(NameIsFree());
}

TEST(ProcessRegistryTest, FailedStartReleasesTheName) {
  SessionOptions o = SimOptions();
  o.events = {"imc/NO_SUCH_EVENT"};
  EXPECT_FALSE(Session::Start(std::move(o)).ok());
  EXPECT_TRUE(NameIsFree());
}

TEST(ProcessRegistryTest, ForkedChildDoesNotKeepTheParentsName) {
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Start(SimOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  int to_child[2];
  int to_parent[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(to_parent), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child is another process: its own name is free, so a session
    // may start here.  It then waits while the parent checks its name.
    char byte = 0;
    const bool free_here = NameIsFree();
    byte = free_here ? 'y' : 'n';
    if (write(to_parent[1], &byte, 1) != 1) _exit(3);
    if (read(to_child[0], &byte, 1) != 1) _exit(3);
    _exit(free_here ? 0 : 1);
  }
  char answer = 0;
  ASSERT_EQ(read(to_parent[0], &answer, 1), 1);
  EXPECT_EQ(answer, 'y');
  // The child is alive and holds a copy of every descriptor the parent
  // had, except the registration's: stopping frees the name.
  ASSERT_TRUE((*session)->Stop().ok());
  EXPECT_TRUE(NameIsFree());
  const char go = 'x';
  ASSERT_EQ(write(to_child[1], &go, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  for (const int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) {
    close(fd);
  }
}

}  // namespace
}  // namespace uncore::runtime
