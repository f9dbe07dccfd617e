// KeepAboveStdio: moves a descriptor the SDK opened out of 0-2.
//
//   const int fd = common::KeepAboveStdio(::open(path, O_RDONLY | O_CLOEXEC));
//
// A program started with stdin, stdout or stderr closed gets its next
// descriptors at 0-2; a descriptor of the SDK's there would receive the
// program's own output (a report file its printf writes into, a perf fd its
// stderr line hits).  Every descriptor the SDK keeps open goes through this.
//
// Guarantees: `fd` itself when it is -1 or at least 3; else a close-on-exec
// duplicate at 3 or above and `fd` closed (-1, errno set, when that fails).
// Async-signal-safe (fcntl and close only).
#ifndef UNCORE_SDK_COMMON_FD_H_
#define UNCORE_SDK_COMMON_FD_H_

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace uncore::common {

inline int KeepAboveStdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int error = errno;
  close(fd);
  errno = error;
  return moved;
}

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_FD_H_
