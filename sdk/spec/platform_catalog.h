// Names on the perf-only platforms generated from vendor data
// (sdk/platforms/perfmon/): find a platform, list its events, and resolve a
// name to the perf encodings and PMU names that count it.
//
//   const perfmon::Platform* p = FindPlatform("sapphirerapids");  // or "spr"
//   absl::StatusOr<Resolution> r = ResolveOnPlatform(*p, "imc/CAS_COUNT.RD");
//   // r->events[0].pmu == "uncore_imc"
//   // r->events[0].terms == "event=0x05,umask=0xcf"
//
// Accepted spellings (case-insensitive; docs/platforms.md has the rules):
//   UNC_M_CAS_COUNT.RD, umc_cas_cmd.rd         the vendor's event name
//   imc/CAS_COUNT.RD, uncore_imc_2/CAS_COUNT.RD  box (or PMU) / short name
//   uncore_imc/event=0x5,umask=0xcf/            the kernel's syntax
//   metric/MEM_BW_READS, memory_bandwidth_read  a metric
// A name that stands for several events (Granite Rapids' two CAS schedulers)
// and a metric resolve to all the events they read; the caller sums them
// (composite) or evaluates the formula (metric).
//
// Guarantees: pure lookups over constant tables; errors are
// absl::NotFoundError / InvalidArgumentError that name the platform and the
// closest valid names.
#ifndef UNCORE_SDK_SPEC_PLATFORM_CATALOG_H_
#define UNCORE_SDK_SPEC_PLATFORM_CATALOG_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/platforms/common/platform_records.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/spec/event_spec.h"

namespace uncore::spec {

// Whether `name` (surrounding spaces ignored, any case) is the platform's
// name or one of its aliases: the one name match of every platform table.
bool PlatformAnswersTo(const perfmon::Platform& platform,
                       std::string_view name);
// The platform named `name` (its name or an alias, any case), or nullptr.
const perfmon::Platform* FindPlatform(std::string_view name);
// As FindPlatform, with an error that lists the platforms.
absl::StatusOr<const perfmon::Platform*> LookupPlatform(std::string_view name);

// Every platform record (platforms::AllPlatformRecords(): the hand-made
// models and the tabled platforms) by name or alias, any case, or nullptr.
const platforms::PlatformRecord* FindPlatformRecord(std::string_view name);
// As FindPlatformRecord, with an error that lists every record's name.
absl::StatusOr<const platforms::PlatformRecord*> LookupPlatformRecord(
    std::string_view name);
// The record of a CPU: the first whose CPUs match vendor, family and model
// and, when `stepping` is known (>= 0), the stepping; with no stepping the
// first of the model's (Skylake-SP before Cascade Lake).  nullptr: none.
const platforms::PlatformRecord* PlatformRecordForCpu(std::string_view vendor,
                                                      int family, int model,
                                                      int stepping);

// The platform whose CPU identity matches exactly (vendor string as in
// /proc/cpuinfo, family, model, stepping), or nullptr.
const perfmon::Platform* PlatformForCpu(std::string_view vendor, int family,
                                        int model, int stepping);

// Every platform whose CPU identity matches vendor, family and model at some
// stepping (Skylake-SP and Cascade Lake share model 0x55), for when the
// stepping is not known.
std::vector<const perfmon::Platform*> PlatformsForModel(std::string_view vendor,
                                                        int family, int model);

// "uncore_imc" -> "imc", "amd_umc" -> "umc": the box part of short names.
std::string BoxName(std::string_view pmu);
// The vendor name without its unit prefix: UNC_M_CAS_COUNT.RD ->
// CAS_COUNT.RD.  AMD names have no prefix and come back whole.
std::string ShortName(std::string_view vendor_name);
// perf's terms for an event: "event=0x05,umask=0xcf", "event=0x0a,rdwrmask=0x1".
std::string PerfTerms(const perfmon::Event& event);

// One event a name resolves to.
struct ResolvedEvent {
  // The table entry; nullptr for kernel-syntax terms that match no event of
  // the vendor's list (still countable: perf checks the terms).
  const perfmon::Event* event = nullptr;
  std::string pmu;              // uncore_imc, amd_umc
  std::optional<int> instance;  // set when the spec named uncore_imc_3
  std::string terms;            // event=0x05,umask=0xcf[,...]

  // "uncore_imc_N/event=0x05,umask=0xcf/" (N: the instance, or "N" for all).
  std::string PerfSpelling() const;
  // How reports name it: the vendor's name, after "uncore_imc_3/" when one
  // instance was asked for, with the terms beyond the event's own after
  // ':' ("TO_R_PROG_EV:match=0x1,mask=0x3"); raw terms: PerfSpelling().
  std::string DisplayName() const;
};

struct Resolution {
  enum class Kind { kEvent, kComposite, kMetric };
  Kind kind = Kind::kEvent;
  std::string input;
  std::string name;  // the vendor's (or the metric's) name, "" for raw terms
  const perfmon::Metric* metric = nullptr;  // kMetric
  // kEvent: one; kComposite: the parts, to be summed; kMetric: every uncore
  // event the formula reads.
  std::vector<ResolvedEvent> events;
};

// Resolves `text` on `platform`.
absl::StatusOr<Resolution> ResolveOnPlatform(const perfmon::Platform& platform,
                                             std::string_view text);

// A metric given by name, as UNCORE_METRICS and `-M` take it:
// "MEM_BW_TOTAL" or "metric/MEM_BW_TOTAL".
absl::StatusOr<Resolution> ResolveMetricOnPlatform(
    const perfmon::Platform& platform, std::string_view text);

// `pmu/terms/` in the kernel's syntax (the trailing slash required) for a
// PMU the platform's tables do not name (`msr/tsc/`, `power/energy-pkg/`,
// `uncore_imc_0/cas_count_read/`): a generic perf event whose terms the perf
// backend checks against sysfs; nullopt when `text` is not of that form.
std::optional<EventSpec> KernelSyntaxEvent(std::string_view text);

// The events of `resolution` as generic perf event specs (kind
// kGenericPerf: the PMU prefix, or one instance, and the perf terms), one per
// resolved event, in order: what the perf backend's PlanPerfCounters opens
// on every instance of the PMU.  `text` is the vendor name (or the terms).
// A composite's or metric's events are summed or combined by the caller.
std::vector<EventSpec> ToPerfEventSpecs(const Resolution& resolution);

// The metric named `name` (any case, with or without "metric/"), or nullptr.
const perfmon::Metric* FindMetric(const perfmon::Platform& platform,
                                  std::string_view name);

}  // namespace uncore::spec

#endif  // UNCORE_SDK_SPEC_PLATFORM_CATALOG_H_
