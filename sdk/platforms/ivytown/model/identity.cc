#include "sdk/platforms/ivytown/model/identity.h"

#include <span>

#include "sdk/platforms/common/platform_records.h"

namespace uncore::ivytown {
namespace {

constexpr perfmon::CpuMatch kCpus[] = {
    {.vendor = "GenuineIntel", .family = 6, .model_lo = 0x3E, .model_hi = 0x3E},
};

}  // namespace

const perfmon::Platform& Identity() {
  static constexpr perfmon::Platform kIdentity = {
      .name = "ivytown",
      .aliases = "ivbep",
      .title = "Xeon E5 v2 / E7 v2 (IvyTown)",
      .source =
          "the Intel Xeon E5-2600 v2 / E7 v2 uncore performance monitoring "
          "reference manual (sdk/platforms/ivytown)",
      .cpus = kCpus,
      .events = {},
      .composites = {},
      .metrics = {},
  };
  return kIdentity;
}

const platforms::PlatformRecord& Record() {
  return *platforms::RecordOf(Identity());  // every register model has one
}

}  // namespace uncore::ivytown
