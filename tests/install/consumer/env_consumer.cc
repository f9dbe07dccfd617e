// A C++ program that only annotates a region, built with CMake and with
// pkg-config, against the shared and the static library: run with
// UNCORE_EVENTS set, the session must start when it loads.  Nothing here
// refers to the library's environment-session object: the shared library
// starts it when it is loaded; in a static link only the
// `-Wl,--undefined=uncore_environment_session_anchor` that uncore::sdk_static
// and uncore-sdk-static.pc carry keeps it.
#include <uncore/region.h>
#include <uncore/session.h>

#include <cstdio>

int main() {
  { UNCORE_REGION("env-consumer"); }
  if (uncore::Session::Active() == nullptr) {
    std::fprintf(stderr, "no session started from UNCORE_EVENTS\n");
    return 1;
  }
  std::printf("env consumer ok: the UNCORE_EVENTS session is active\n");
  return 0;
}
