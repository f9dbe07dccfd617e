// The machine's host name, read one way everywhere: the session's RunInfo,
// the report file name's {host}, and the MPI integration's per-rank record.
// Header-only so that libraries built on the public API alone (the MPI
// integration) name a host exactly as the SDK does.
//
//   std::string host = common::HostName();  // "node17", or "unknown"
//
// Guarantees: never fails; "unknown" when gethostname(2) does; at most 255
// bytes, always terminated.
#ifndef UNCORE_SDK_COMMON_HOST_NAME_H_
#define UNCORE_SDK_COMMON_HOST_NAME_H_

#include <unistd.h>

#include <string>

namespace uncore::common {

inline std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_HOST_NAME_H_
