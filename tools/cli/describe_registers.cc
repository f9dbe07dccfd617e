// `uncore describe --registers [SPEC]` for every register platform
// (runtime::RegisterPlatforms(): IvyTown by default, `--platform
// nehalemex|westmereex`, any platform added to the table): with SPEC, the
// ordered writes that program it on one simulated socket, in the one
// listing (register_listing.h; --json too); without SPEC, the platform's
// register model page where it has one.  The pages themselves are the
// platform's (RegisterPlatform::describe_writes, describe_model).
#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/runtime/backends.h"
#include "tools/cli/commands.h"
#include "tools/cli/register_listing.h"

namespace uncore::cli {

int RunDescribeRegisters(const DescribeOptions& options, std::FILE* out,
                         std::FILE* err) {
  if (!options.registers) return -1;
  const runtime::RegisterPlatform* platform =
      runtime::FindRegisterPlatform(options.platform);
  // A platform only perf counts: its tables answer (and say there is no
  // register model).
  if (platform == nullptr) return -1;
  if (options.spec.empty()) {
    if (platform->describe_model == nullptr) {
      fmt::print(err,
                 "uncore describe --registers: give a SPEC (an event or a "
                 "metric) to see the writes that program it on {}\n",
                 platform->identity().title);
      return kExitUsage;
    }
    if (options.json) {
      fmt::print(err,
                 "uncore describe --platform {} --registers: --json lists the "
                 "writes of a SPEC; the register model without one is text "
                 "only\n",
                 options.platform);
      return kExitUsage;
    }
    fmt::print(out, "{}", platform->describe_model());
    return kExitOk;
  }
  absl::StatusOr<runtime::DescribedWrites> writes =
      platform->describe_writes(options.spec);
  if (!writes.ok()) {
    fmt::print(err, "uncore describe --registers: {}\n",
               common::StatusMessage(writes.status()));
    return kExitUsage;
  }
  fmt::print(out, "{}",
             options.json ? RegisterWritesJson(writes->writes)
                          : RegisterWritesText(writes->header, writes->writes));
  return kExitOk;
}

}  // namespace uncore::cli
