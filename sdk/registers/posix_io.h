// EINTR-safe wrappers of open, pread and pwrite for the register layer's
// device files (/dev/cpu/N/msr, msr_safe, msr_batch, PCI config files).
// Files are opened O_CLOEXEC, never at descriptors 0-2.  They return what the system call returns;
// errno holds the error.
#ifndef UNCORE_SDK_REGISTERS_POSIX_IO_H_
#define UNCORE_SDK_REGISTERS_POSIX_IO_H_

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include "sdk/common/fd.h"

namespace uncore::registers {

inline int OpenRetry(const std::string& path, int flags) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return common::KeepAboveStdio(fd);
}

inline ssize_t PreadRetry(int fd, void* buffer, size_t size, off_t offset) {
  ssize_t n;
  do {
    n = ::pread(fd, buffer, size, offset);
  } while (n < 0 && errno == EINTR);
  return n;
}

inline ssize_t PwriteRetry(int fd, const void* buffer, size_t size,
                           off_t offset) {
  ssize_t n;
  do {
    n = ::pwrite(fd, buffer, size, offset);
  } while (n < 0 && errno == EINTR);
  return n;
}

}  // namespace uncore::registers

#endif  // UNCORE_SDK_REGISTERS_POSIX_IO_H_
