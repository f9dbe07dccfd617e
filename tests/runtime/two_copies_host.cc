// A program linked to libuncore_sdk.so that loads a plugin which may hold
// a second copy of the SDK (two_copies_plugin.cc).  Run by
// two_copies_test.py with UNCORE_EVENTS set:
//   two_copies_host PLUGIN.so
// Ends a region, loads the plugin, lets it end a region and try a session
// of its own, prints "plugin session: started|refused: <message>", ends a
// second region.  Exit 0 when its own session stayed active throughout.
#include <dlfcn.h>

#include <cstddef>
#include <cstdio>

#include "uncore/region.h"
#include "uncore/session.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: two_copies_host PLUGIN.so\n");
    return 2;
  }
  { UNCORE_REGION("host"); }
  if (uncore::Session::Active() == nullptr) {
    std::fprintf(stderr, "host: no session started from UNCORE_EVENTS\n");
    return 2;
  }
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == nullptr) {
    std::fprintf(stderr, "host: %s\n", dlerror());
    return 2;
  }
  using RunFunction = int (*)(char*, size_t);
  auto* run =
      reinterpret_cast<RunFunction>(dlsym(plugin, "two_copies_plugin_run"));
  if (run == nullptr) {
    std::fprintf(stderr, "host: %s\n", dlerror());
    return 2;
  }
  char message[4096] = {};
  const int started = run(message, sizeof(message));
  std::printf("plugin session: %s: %s\n", started != 0 ? "started" : "refused",
              message);
  { UNCORE_REGION("host-after"); }
  if (uncore::Session::Active() == nullptr) {
    std::fprintf(stderr, "host: the session is gone after the plugin ran\n");
    return 1;
  }
  return 0;
}
