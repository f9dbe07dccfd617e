#include "sdk/platforms/common/platform_records.h"

#include <span>
#include <string_view>
#include <vector>

#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/platforms/ivytown/model/topology_units.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"

namespace uncore::platforms {
namespace {

// The hand-made register models whose names are their own catalog's
// (registration lines; the Xeon 7500 / E7 are tabled, so they come with
// perfmon::AllPlatforms()).
constexpr struct {
  const perfmon::Platform& (*identity)();
  const RegisterUnits& (*units)();
} kModelCatalogs[] = {
    {&ivytown::Identity, &ivytown::TopologyUnits},  // the default: first
};

// The tabled platforms built by hand (tools/perfmon_hand/) rather than
// from a vendor's list.
bool HandTabled(const perfmon::Platform& p) {
  return &p == &perfmon::NehalemexPlatform() ||
         &p == &perfmon::WestmereexPlatform();
}

std::vector<PlatformRecord> MakeRecords() {
  std::vector<PlatformRecord> out;
  for (const auto& m : kModelCatalogs) {
    out.push_back({.identity = &m.identity(),
                   .names = NameSource::kModelCatalog,
                   .hand_made = true,
                   .units = &m.units()});
  }
  for (const perfmon::Platform* p : perfmon::AllPlatforms()) {
    out.push_back({.identity = p,
                   .names = NameSource::kVendorTables,
                   .hand_made = HandTabled(*p)});
  }
  return out;
}

}  // namespace

std::span<const PlatformRecord> AllPlatformRecords() {
  static const std::vector<PlatformRecord>* const kRecords =
      new std::vector<PlatformRecord>(MakeRecords());
  return *kRecords;
}

const PlatformRecord& DefaultPlatformRecord() {
  return AllPlatformRecords().front();
}

const PlatformRecord* RecordOf(const perfmon::Platform& identity) {
  for (const PlatformRecord& r : AllPlatformRecords()) {
    if (r.identity == &identity) return &r;
  }
  return nullptr;
}

bool CpuIsOf(const perfmon::Platform& platform, std::string_view vendor,
             int family, int model) {
  for (const perfmon::CpuMatch& c : platform.cpus) {
    if (vendor == c.vendor && family == c.family && model >= c.model_lo &&
        model <= c.model_hi) {
      return true;
    }
  }
  return false;
}

}  // namespace uncore::platforms
