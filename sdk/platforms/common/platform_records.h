// Every platform the SDK knows, as one kind of record: the hand-made
// register models (IvyTown; the Xeon 7500 / E7, whose identity is its perf
// table's) and the platforms generated from vendor data alike.  Sessions,
// `uncore platform`, `uncore list` and `uncore doctor` take names, titles,
// CPUs and how names resolve from here, never from a branch per platform.
//
//   for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords())
//     fmt::print("{} {}\n", r.name(), r.title());   // ivytown, haswellx, ...
//   const platforms::PlatformRecord& d = platforms::DefaultPlatformRecord();
//   if (d.names == platforms::NameSource::kModelCatalog) { /* ParseSpec */ }
//   if (d.units != nullptr) { /* its PCI/MSR units: machine::Topology */ }
//
// The backends a record counts on (perf for every record whose PMUs the
// kernel shows; sim and direct for a register model, with its allow-list)
// are the runtime's table, runtime::RegisterPlatforms(), keyed by the same
// name.  Name matching (aliases, any case) is spec::FindPlatformRecord.
//
// Guarantees: constant data in a fixed order (the default first, then
// perfmon::AllPlatforms()); built once, never freed.
#ifndef UNCORE_SDK_PLATFORMS_COMMON_PLATFORM_RECORDS_H_
#define UNCORE_SDK_PLATFORMS_COMMON_PLATFORM_RECORDS_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "sdk/platforms/common/register_units.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"

namespace uncore::platforms {

// How a platform's event and metric names resolve.
enum class NameSource : uint8_t {
  // Its vendor tables (perfmon::Platform::events / metrics) through
  // spec::ResolveOnPlatform into perf event specs and formulas.
  kVendorTables,
  // A register model's own catalog and metric language (spec::ParseSpec,
  // spec::CompileMetric): IvyTown's box/EVENT.umask and box.METRIC names.
  kModelCatalog,
};

struct PlatformRecord {
  // Name, aliases, title, CPUs (and, for kVendorTables, the tables).
  const perfmon::Platform* identity = nullptr;
  NameSource names = NameSource::kVendorTables;
  // Built into the SDK by hand (a register model) rather than generated.
  bool hand_made = false;
  // The PCI/MSR units its topology holds (register_units.h), what
  // machine::DiscoverTopology looks for and machine::SimulatedTopology
  // lays out; nullptr: none (the platform is counted through perf, or its
  // register model needs no discovery: the Xeon 7500's MSRs).
  const RegisterUnits* units = nullptr;

  std::string_view name() const { return identity->name; }
  std::string_view aliases() const { return identity->aliases; }
  std::string_view title() const { return identity->title; }
  // Whether the vendor tables answer its names (spec::ResolveOnPlatform).
  bool tabled() const { return names == NameSource::kVendorTables; }
};

// Every record: the default platform first, then perfmon::AllPlatforms().
std::span<const PlatformRecord> AllPlatformRecords();
// The platform a session speaks when nothing decides another (the `sim`
// backend, a device given in code, a CPU no platform knows).
const PlatformRecord& DefaultPlatformRecord();
// The record whose identity is `identity`, or nullptr.
const PlatformRecord* RecordOf(const perfmon::Platform& identity);
// Whether the CPU (vendor as /proc/cpuinfo says, family, model) is one of
// `platform`'s at some stepping.
bool CpuIsOf(const perfmon::Platform& platform, std::string_view vendor,
             int family, int model);

}  // namespace uncore::platforms

#endif  // UNCORE_SDK_PLATFORMS_COMMON_PLATFORM_RECORDS_H_
