#include "sdk/runtime/session_platform.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/runtime/backends.h"
#include "sdk/spec/platform_catalog.h"

namespace uncore::runtime {
namespace {

SessionPlatform Named(std::string_view name) {
  SessionPlatform out;
  if (const platforms::PlatformRecord* r = spec::FindPlatformRecord(name)) {
    out.record = r;
    out.name = std::string(r->name());
  }
  out.has_engine = FindRegisterPlatform(out.name) != nullptr;
  return out;
}

}  // namespace

bool PlatformPmusVisible(const perfmon::Platform& platform,
                         const devices::perf::PmuCatalog& pmus) {
  for (const perfmon::Event& e : platform.events) {
    if (pmus.Find(e.pmu) != nullptr) return true;
    for (const std::string& name :
         pmus.NamesStartingWith(std::string(e.pmu) + "_")) {
      const std::string_view whole = name;
      const std::string_view suffix = whole.substr(e.pmu.size() + 1);
      if (!suffix.empty() &&
          suffix.find_first_not_of("0123456789") == std::string_view::npos) {
        return true;
      }
    }
  }
  return false;
}

std::string PlatformOfCpu(const machine::CpuIdentity& cpu) {
  const platforms::PlatformRecord* r = nullptr;
  if (cpu.stepping >= 0) {
    r = spec::PlatformRecordForCpu(cpu.vendor, cpu.family, cpu.model,
                                   cpu.stepping);
  }
  // No stepping (or none that matches): the first of the model's platforms
  // (Skylake-SP before Cascade Lake; their uncore events are the same).
  if (r == nullptr) {
    r = spec::PlatformRecordForCpu(cpu.vendor, cpu.family, cpu.model, -1);
  }
  return r == nullptr ? std::string() : std::string(r->name());
}

absl::StatusOr<SessionPlatform> ChooseSessionPlatform(
    std::string_view requested, std::string_view backend, bool on_hardware,
    const absl::StatusOr<machine::CpuIdentity>& cpu,
    const devices::perf::PmuCatalog* pmus) {
  requested = common::StripWhitespace(requested);
  const bool simulated = backend == "sim";
  const bool counts_hardware =
      on_hardware && (backend == "auto" || backend == "perf" ||
                      backend == "direct" || backend.empty());
  std::string detected = cpu.ok() ? PlatformOfCpu(*cpu) : std::string();
  if (const platforms::PlatformRecord* p = spec::FindPlatformRecord(detected);
      p != nullptr && !Named(detected).has_engine &&
      (pmus == nullptr || !PlatformPmusVisible(*p->identity, *pmus))) {
    detected.clear();  // nothing here can count its uncore
  }
  if (requested.empty()) {
    if (!counts_hardware) return SessionPlatform{};
    if (detected.empty()) {
      SessionPlatform none;
      none.uncore_supported = false;
      return none;
    }
    return Named(detected);
  }
  if (spec::FindPlatformRecord(requested) == nullptr) {
    absl::StatusOr<const platforms::PlatformRecord*> lookup =
        spec::LookupPlatformRecord(requested);
    return absl::NotFoundError(fmt::format(
        "UNCORE_PLATFORM: {}", common::StatusMessage(lookup.status())));
  }
  SessionPlatform chosen = Named(requested);
  if (simulated && !chosen.has_engine) {
    return absl::InvalidArgumentError(fmt::format(
        "platform {} has no simulator: the sim backend simulates {}; "
        "{} counts through perf (UNCORE_BACKEND=perf) on a {} machine",
        chosen.name, RegisterPlatformNames(), chosen.name,
        chosen.record->title()));
  }
  if (counts_hardware && !detected.empty() && detected != chosen.name) {
    return absl::FailedPreconditionError(fmt::format(
        "UNCORE_PLATFORM={} but this CPU ({}) is {}: on hardware the CPU "
        "decides; unset UNCORE_PLATFORM (or set it to {}); `uncore describe "
        "--platform {} SPEC` shows that platform's encodings without counting",
        common::QuoteForMessage(requested), cpu->ToString(), detected, detected,
        common::QuoteForMessage(requested)));
  }
  return chosen;
}

}  // namespace uncore::runtime
