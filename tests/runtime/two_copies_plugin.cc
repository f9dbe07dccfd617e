// A plugin for two_copies_host.cc.  Built twice: linked to libuncore_sdk.a
// with every SDK symbol hidden (a second, private copy of the SDK in the
// host's process) and linked to libuncore_sdk.so (the host's copy).
// two_copies_plugin_run ends a region "plugin", then tries to start a
// session on the simulator; writes what happened to `message`; returns 1
// when the session started (it is stopped again at once), 0 when refused.
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "uncore/region.h"
#include "uncore/session.h"

extern "C" __attribute__((visibility("default"))) int two_copies_plugin_run(
    char* message, size_t size) {
  {
    UNCORE_REGION("plugin");
  }
  uncore::SessionOptions options;
  options.events = {"imc/CAS_COUNT.RD"};
  options.backend = "sim";
  options.output = "";
  absl::StatusOr<std::unique_ptr<uncore::Session>> session =
      uncore::Session::Start(std::move(options));
  if (session.ok()) {
    (*session)->Stop().IgnoreError();
    std::snprintf(message, size, "a second session ran");
    return 1;
  }
  std::snprintf(message, size, "%s",
                std::string(session.status().message()).c_str());
  return 0;
}
