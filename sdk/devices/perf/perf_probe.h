// ProbePerf: can Linux perf_event count the uncore here, and if not, why
// not, as codes with the fix for each.
//
//   PerfProbeOptions o;
//   o.privileges = ReadProcessPrivileges();          // /proc/self/status
//   PerfProbe p = ProbePerf(o);
//   if (!p.uncore_usable()) { p.uncore_reason, p.uncore_trial.fix }
//
// What it looks at, in order: the PMU folder (<sysfs>/bus/event_source/
// devices, through DiscoverPmus), the uncore_* PMUs and the others (msr,
// power, ...; the software PMUs left out), perf_event_paranoid against the
// process's privileges, and two trials (PerfDevice::Open, Program, two
// snapshots, Release): msr/tsc/ (other PMUs' events) and one event of an
// uncore PMU (its clockticks alias, else its first alias, else event 0).
//
// Reasons (PerfReason): kNoPmuFolder, kNoUncorePmus, kParanoidUnreadable,
// kNoPermission (paranoid > 0 without CAP_PERFMON / CAP_SYS_ADMIN, or the
// kernel said EACCES), kBusy (another agent holds the counters),
// kTooManyFiles, kCpuOffline, kRefused (the kernel refuses the event as
// asked), kNotTried, kOk.  Reasons come from status codes and probe facts,
// never from message text.
//
// Guarantees: a trial programs and releases its own counters; never prints.
#ifndef UNCORE_SDK_DEVICES_PERF_PERF_PROBE_H_
#define UNCORE_SDK_DEVICES_PERF_PERF_PROBE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sdk/devices/perf/pmu_discovery.h"

namespace uncore::devices::perf {

inline constexpr int kCapSysRawio = 17;
inline constexpr int kCapSysAdmin = 21;
inline constexpr int kCapPerfmon = 38;

// This process's privileges as perf_event (and the msr driver) judge them.
struct ProcessPrivileges {
  std::optional<int> uid;            // effective uid
  std::optional<uint64_t> cap_eff;   // CapEff
  std::string kernel;                // uname's release
  bool kernel_knows_perfmon = true;  // CAP_PERFMON exists since Linux 5.8

  bool root() const { return uid && *uid == 0; }
  bool Cap(int bit) const { return cap_eff && ((*cap_eff >> bit) & 1) != 0; }
  // What the kernel's perfmon_capable() answers.
  bool perfmon_capable() const {
    return (kernel_knows_perfmon && Cap(kCapPerfmon)) || Cap(kCapSysAdmin);
  }
};

// Uid and CapEff from `proc_status_path` (the uid falls back to geteuid()),
// the kernel release from uname.
ProcessPrivileges ReadProcessPrivileges(
    std::string_view proc_status_path = "/proc/self/status");

enum class PerfReason {
  kOk,
  kNotTried,
  kNoPmuFolder,
  kNoUncorePmus,
  kParanoidUnreadable,
  kNoPermission,
  kBusy,
  kTooManyFiles,
  kCpuOffline,
  kRefused,
};

// "ok", "not_tried", "no_pmu_folder", ...: for JSON.
std::string_view PerfReasonName(PerfReason reason);

// The reason of a failed PerfDevice call, from its status code.
PerfReason PerfReasonFromStatus(const absl::Status& status);

// What to do about `reason` for a trial of `spec`; "" for kOk / kNotTried.
std::string PerfFix(PerfReason reason, std::string_view spec,
                    std::string_view sysfs_root = "/sys");

// The standard fix for system-wide counting without privilege.
inline constexpr std::string_view kPerfPermissionFix =
    "run as root, or `sudo setcap cap_perfmon+ep $(command -v uncore)` (and "
    "on your program), or `sudo sysctl kernel.perf_event_paranoid=0` (add it "
    "to /etc/sysctl.d/ to keep it)";

// What perf_event_paranoid's value means, in words.
std::string ParanoidMeaning(int value);

struct PerfTrial {
  std::string spec;  // "msr/tsc/"; empty when there was nothing to try
  PerfReason reason = PerfReason::kNotTried;
  std::string error;  // the failure's message
  std::string fix;    // what to do; empty unless failed
  uint64_t count = 0;
  uint64_t ns = 0;
  std::vector<int> cpus;  // the CPUs it was opened on

  bool tried() const { return reason != PerfReason::kNotTried; }
  bool ok() const { return reason == PerfReason::kOk; }
};

struct OtherPmu {
  std::string name;
  std::vector<std::string> aliases;
};

struct PerfProbe {
  std::string sysfs_root;
  std::string pmu_folder_path;  // <sysfs>/bus/event_source/devices
  std::string paranoid_path;

  bool pmu_folder = false;
  std::string pmu_folder_error;  // when !pmu_folder
  int num_pmus = 0;
  std::vector<std::string> uncore_pmus;  // uncore_*, sorted
  std::vector<OtherPmu> other_pmus;      // not uncore_*, not software

  // System-wide counting: kOk, kParanoidUnreadable or kNoPermission.
  std::optional<int> paranoid;
  PerfReason permission = PerfReason::kOk;
  std::string permission_detail;  // "allowed for any user", ...
  std::string permission_fix;     // empty for kOk

  PerfTrial other_trial;   // msr/tsc/ (kNotTried: no msr PMU)
  PerfTrial uncore_trial;  // an uncore PMU's event (kNotTried: none)

  // Why perf cannot count the uncore: kNoPmuFolder, kNoUncorePmus, the
  // uncore trial's reason; kOk when it can.
  PerfReason uncore_reason = PerfReason::kNotTried;

  bool uncore_usable() const { return uncore_reason == PerfReason::kOk; }
  bool other_usable() const { return other_trial.ok(); }
};

struct PerfProbeOptions {
  std::string sysfs_root = "/sys";
  std::string paranoid_path = "/proc/sys/kernel/perf_event_paranoid";
  ProcessPrivileges privileges;
  // Open and count (false: facts only; the trials stay kNotTried).
  bool run_trials = true;
  std::chrono::nanoseconds trial_time = std::chrono::milliseconds(2);
};

PerfProbe ProbePerf(const PerfProbeOptions& options);

// The uncore event a probe tries on `pmus`: uncore_imc_0, uncore_cbox_0 or
// uncore_ubox (else the first uncore PMU), its clockticks alias, else its
// first alias, else event 0.  "" when there is no uncore PMU.
std::string UncoreTrialSpec(const PmuCatalog& pmus);

}  // namespace uncore::devices::perf

#endif  // UNCORE_SDK_DEVICES_PERF_PERF_PROBE_H_
