// A program linked to libuncore_sdk.so that opts out of the UNCORE_EVENTS
// session by defining uncore_environment_session_enabled: its definition
// must replace the shared library's default, as it does in a static link.
// Prints "environment session: off" (or "on") after ending a region.
#include <cstdio>

#include "uncore/region.h"
#include "uncore/session.h"
#include "uncore/uncore_c.h"

extern "C" int uncore_environment_session_enabled(void) { return 0; }

int main() {
  { UNCORE_REGION("opt-out"); }
  std::printf("environment session: %s\n",
              uncore::Session::Active() != nullptr ? "on" : "off");
  return 0;
}
