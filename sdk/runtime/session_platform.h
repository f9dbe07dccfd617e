// Which platform's names a session speaks: always one platform record
// (platforms::AllPlatformRecords(): the hand-made register models and the
// platforms generated from vendor data alike).  The record says how names
// resolve; runtime::RegisterPlatforms() says whether a register model
// counts it on sim and direct as well as perf.
//
//   absl::StatusOr<SessionPlatform> p = ChooseSessionPlatform(
//       options.platform, "auto", /*on_hardware=*/true, ReadCpuIdentity());
//   if (p->record->tabled()) { /* resolve names with ResolveOnPlatform */ }
//
// The rules (docs/platforms.md "Sessions"):
//   - SessionOptions::platform / UNCORE_PLATFORM names one (any alias, any
//     case); the hand-made models answer to theirs too (`ivytown`).  On hardware
//     (auto, perf, direct) the CPU decides: naming a platform other than
//     the CPU's is an error.  `sim` simulates IvyTown and the Xeon 7500 /
//     E7 (nehalemex, westmereex).
//   - Unset: the CPU's platform on hardware; the default record
//     (platforms::DefaultPlatformRecord(), IvyTown) on `sim`, `off` and
//     devices given in code, and on CPUs no platform knows.  On hardware
//     with no platform of its own, names resolve as the default's but only
//     generic perf PMUs (msr/tsc/, ...) can count: uncore_supported is
//     false and reports say "platform none" (RunLabel).
//   - A perf-only platform is the CPU's only where the kernel shows at
//     least one of its PMUs (a virtual machine, or a kernel without the
//     driver, shows none): elsewhere nothing can count its uncore, and the
//     session keeps the default's names (and counts other PMUs, msr/tsc/
//     ...).
//
// Guarantees: pure; errors say what was asked, what the CPU is, and what
// to do.
#ifndef UNCORE_SDK_RUNTIME_SESSION_PLATFORM_H_
#define UNCORE_SDK_RUNTIME_SESSION_PLATFORM_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/common/platform_records.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"

namespace uncore::runtime {

// RunInfo::platform of a session on hardware no platform knows.
inline constexpr std::string_view kNoPlatform = "none";

struct SessionPlatform {
  // Never null: the default record unless another was chosen.
  const platforms::PlatformRecord* record = &platforms::DefaultPlatformRecord();
  std::string name{record->name()};
  // It is one of runtime::RegisterPlatforms(): a register model counts it
  // on the sim and direct backends too (ivytown, the default, and the Xeon
  // 7500 / E7).
  bool has_engine = true;
  // False on hardware whose uncore no platform counts here (a CPU no
  // platform knows, or a perf-only platform whose PMUs the kernel does not
  // show: a virtual machine): only generic perf PMUs can count.
  bool uncore_supported = true;

  // What RunInfo::platform says: the name, or kNoPlatform.
  std::string RunLabel() const {
    return uncore_supported ? name : std::string(kNoPlatform);
  }
};

// The platform of a CPU: the record that matches (stepping decides
// Skylake-SP from Cascade Lake), else "".
std::string PlatformOfCpu(const machine::CpuIdentity& cpu);

// Whether `pmus` holds one of `platform`'s PMUs (`uncore_imc`,
// `uncore_imc_3`, `amd_df`, ...).
bool PlatformPmusVisible(const perfmon::Platform& platform,
                         const devices::perf::PmuCatalog& pmus);

// `requested`: SessionOptions::platform ("" to decide).  `backend`: the
// backend name asked for.  `on_hardware`: false for a device given in code.
// `cpu`: the CPU's identity, or why it could not be read.  `pmus`: the
// kernel's PMUs (nullptr: none could be read).
absl::StatusOr<SessionPlatform> ChooseSessionPlatform(
    std::string_view requested, std::string_view backend, bool on_hardware,
    const absl::StatusOr<machine::CpuIdentity>& cpu,
    const devices::perf::PmuCatalog* pmus);

}  // namespace uncore::runtime

#endif  // UNCORE_SDK_RUNTIME_SESSION_PLATFORM_H_
