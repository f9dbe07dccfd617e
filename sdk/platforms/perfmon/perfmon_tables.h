// Perf-only platforms generated from vendor data: every uncore event and
// metric of a CPU generation, as Linux perf names and encodes them.
//
//   for (const perfmon::Platform* p : perfmon::AllPlatforms()) {
//     // p->name == "sapphirerapids", p->events[i].pmu == "uncore_imc", ...
//   }
//
// The tables are written by tools/gen_perfmon_platforms.py (Intel: from the
// intel-perfmon uncore and perf-metric JSON files; AMD: from the facts of
// Linux perf's amdzen* event lists, restated in the generator) into
// sdk/platforms/perfmon/generated/; a CTest checks that they are current.
// CPUs that intel-perfmon has no uncore file for (the Xeon 7500 /
// Nehalem-EX and Xeon E7 / Westmere-EX) come from hand tables,
// tools/perfmon_hand/*.json, through the same generator.
// They hold names, encodings, units, counters and formulas only, never the
// vendors' description text.  Name lookup lives one layer up, in
// sdk/spec/platform_catalog.h.
//
// Guarantees: constant data, no allocation, no initialisation order issues
// (every table is constexpr); names are unique within a platform.
#ifndef UNCORE_SDK_PLATFORMS_PERFMON_PERFMON_TABLES_H_
#define UNCORE_SDK_PLATFORMS_PERFMON_PERFMON_TABLES_H_

#include <cstdint>
#include <span>
#include <string_view>

namespace uncore::perfmon {

enum class CounterKind : uint8_t {
  kProgrammable,  // any general counter listed in `counters`
  kFixed,         // the box's fixed counter
  kFreeRunning,   // a free-running counter (no programming)
};

// One uncore event as perf encodes it: `<pmu>_N/event=..,umask=..,<terms>/`
// (with `event_term` in place of `event` where the PMU names its selector
// otherwise).
struct Event {
  std::string_view name;  // vendor spelling: UNC_M_CAS_COUNT.RD, umc_cas_cmd.rd
  std::string_view unit;  // vendor unit: iMC, UPI LL, UMCPMC
  std::string_view pmu;   // kernel PMU name prefix: uncore_imc, amd_umc
  uint32_t event = 0;     // perf's event= (ExtSel folded in as bit 8)
  uint64_t umask = 0;     // perf's umask= (UMaskExt folded in above bit 7)
  std::string_view terms;     // further perf terms: "ch_mask=0x4,fc_mask=0x7"
  std::string_view counters;  // "0,1,2,3", "FIXED", "" when not given
  CounterKind kind = CounterKind::kProgrammable;
  bool deprecated = false;
  // The kernel format term that carries `event`: "event" on every PMU but
  // the Xeon 7500 M-Box, whose selector is "inc_sel" (or "set_flag_sel",
  // with flag_mode=1 among `terms`); it has no `event` term at all.
  std::string_view event_term = "event";
  // Empty when the kernel's format attributes for `pmu` can express the
  // event; otherwise why they cannot ("the kernel has no uncore_m2hbm PMU",
  // "umask=0x.. does not fit the kernel's umask field (...)"): such an
  // event is listed but cannot be opened through perf.  The generator
  // computes it from the kernel's formats (tools/gen_perfmon_platforms.py,
  // KERNEL_PMUS).
  std::string_view unopenable = {};
};

// A name that stands for several events summed, e.g. Granite Rapids'
// UNC_M_CAS_COUNT.RD = UNC_M_CAS_COUNT_SCH0.RD + UNC_M_CAS_COUNT_SCH1.RD.
struct Composite {
  std::string_view name;
  std::string_view parts;  // event names separated by one space
};

struct Metric {
  std::string_view name;  // memory_bandwidth_read, MEM_BW_READS
  // The formula in perf's metric syntax (event names, numbers, operators,
  // duration_time, #constants).
  std::string_view expr;
  std::string_view scale_unit;  // "1MB/s", "1B", "100%" ...
  // The uncore events the formula reads, separated by one space; an entry
  // may carry extra terms after a comma ("UNC_CHA_TOR_INSERTS.IA_MISS,
  // config1=0x40433").
  std::string_view uncore_events;
  // Events the formula reads that are not uncore events (core events, TSC):
  // non-empty means the metric needs the core PMU as well.
  std::string_view core_events;
  bool sdk_defined = false;  // one of the SDK's cross-platform MEM_BW_* names
};

// One CPU identity range: vendor, family, models [model_lo, model_hi] and
// steppings [stepping_lo, stepping_hi].
struct CpuMatch {
  std::string_view vendor;  // GenuineIntel, AuthenticAMD
  int family = 0;
  int model_lo = 0;
  int model_hi = 0;
  int stepping_lo = 0;
  int stepping_hi = 15;
};

struct Platform {
  std::string_view name;     // perf's event-table directory: skylakex
  std::string_view aliases;  // other names, separated by one space: skx
  std::string_view title;    // "Skylake-SP"
  std::string_view source;   // where the tables came from (file, version)
  std::span<const CpuMatch> cpus;
  std::span<const Event> events;  // sorted by name
  std::span<const Composite> composites;
  std::span<const Metric> metrics;
};

// Every generated platform, in a fixed order: Intel's intel-perfmon
// platforms by generation, then the hand-tabled ones (nehalemex,
// westmereex), then AMD.
std::span<const Platform* const> AllPlatforms();

// The Xeon 7500 and E7 tables by themselves: their identity is also the
// register platforms' (runtime::RegisterPlatforms()).
const Platform& NehalemexPlatform();
const Platform& WestmereexPlatform();

}  // namespace uncore::perfmon

#endif  // UNCORE_SDK_PLATFORMS_PERFMON_PERFMON_TABLES_H_
