#include "sdk/devices/perf/perf_probe.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"
#include "sdk/devices/device_trial.h"
#include "sdk/devices/perf/perf_device.h"

namespace uncore::devices::perf {
namespace {

// The whitespace-separated fields after "key:" in /proc/self/status.
std::vector<std::string> StatusFields(std::string_view text,
                                      std::string_view key) {
  std::vector<std::string> out;
  for (std::string_view line : common::Split(text, '\n')) {
    if (!line.starts_with(key) || line.size() <= key.size() ||
        line[key.size()] != ':') {
      continue;
    }
    std::string_view rest = line.substr(key.size() + 1);
    std::string current;
    for (char c : rest) {
      if (c == ' ' || c == '\t') {
        if (!current.empty()) out.push_back(std::move(current));
        current.clear();
      } else {
        current += c;
      }
    }
    if (!current.empty()) out.push_back(std::move(current));
    break;
  }
  return out;
}

bool IsSoftwarePmu(std::string_view name) {
  return name == "software" || name == "tracepoint" || name == "breakpoint" ||
         name == "kprobe" || name == "uprobe";
}

PerfTrial RunPerfTrial(const PerfProbeOptions& options, std::string spec) {
  PerfTrial t;
  t.spec = std::move(spec);
  PerfDevice::Options device_options;
  device_options.sysfs_root = options.sysfs_root;
  device_options.paranoid_path = options.paranoid_path;
  absl::StatusOr<std::unique_ptr<PerfDevice>> device =
      PerfDevice::Open(device_options);
  absl::Status status = device.status();
  if (device.ok()) {
    const DeviceTrial trial =
        RunDeviceTrial(device->get(), {t.spec}, options.trial_time);
    status = trial.status;
    t.count = trial.count;
    t.ns = trial.ns;
    for (const PerfCounter& c : (*device)->counters()) {
      if (std::find(t.cpus.begin(), t.cpus.end(), c.cpu) == t.cpus.end()) {
        t.cpus.push_back(c.cpu);
      }
    }
  }
  t.reason = PerfReasonFromStatus(status);
  if (!status.ok()) {
    t.error = common::StatusMessage(status);
    t.fix = PerfFix(t.reason, t.spec, options.sysfs_root);
  }
  return t;
}

}  // namespace

ProcessPrivileges ReadProcessPrivileges(std::string_view proc_status_path) {
  ProcessPrivileges p;
  utsname u;
  if (uname(&u) == 0) {
    p.kernel = u.release;
    int major = 0;
    int minor = 0;
    if (std::sscanf(u.release, "%d.%d", &major, &minor) == 2) {
      p.kernel_knows_perfmon = major > 5 || (major == 5 && minor >= 8);
    }
  }
  if (std::optional<std::string> status =
          common::ReadSmallFile(std::string(proc_status_path))) {
    std::vector<std::string> uid = StatusFields(*status, "Uid");
    if (uid.size() >= 2) {
      if (std::optional<uint64_t> v = common::ParseUnsigned(uid[1], 10)) {
        p.uid = static_cast<int>(*v);
      }
    }
    std::vector<std::string> cap = StatusFields(*status, "CapEff");
    if (!cap.empty()) p.cap_eff = common::ParseUnsigned(cap[0], 16);
  }
  if (!p.uid) p.uid = static_cast<int>(geteuid());
  return p;
}

std::string_view PerfReasonName(PerfReason reason) {
  switch (reason) {
    case PerfReason::kOk:
      return "ok";
    case PerfReason::kNotTried:
      return "not_tried";
    case PerfReason::kNoPmuFolder:
      return "no_pmu_folder";
    case PerfReason::kNoUncorePmus:
      return "no_uncore_pmus";
    case PerfReason::kParanoidUnreadable:
      return "paranoid_unreadable";
    case PerfReason::kNoPermission:
      return "no_permission";
    case PerfReason::kBusy:
      return "busy";
    case PerfReason::kTooManyFiles:
      return "too_many_files";
    case PerfReason::kCpuOffline:
      return "cpu_offline";
    case PerfReason::kRefused:
      return "refused";
  }
  return "unknown";
}

PerfReason PerfReasonFromStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return PerfReason::kOk;
    case absl::StatusCode::kPermissionDenied:
      return PerfReason::kNoPermission;
    case absl::StatusCode::kUnavailable:
      return PerfReason::kBusy;
    case absl::StatusCode::kResourceExhausted:
      return PerfReason::kTooManyFiles;
    case absl::StatusCode::kFailedPrecondition:
      return PerfReason::kCpuOffline;
    default:
      return PerfReason::kRefused;
  }
}

std::string PerfFix(PerfReason reason, std::string_view spec,
                    std::string_view sysfs_root) {
  switch (reason) {
    case PerfReason::kOk:
    case PerfReason::kNotTried:
      return "";
    case PerfReason::kNoPmuFolder:
      return fmt::format(
          "this kernel has no perf_event support or sysfs is not mounted: "
          "boot a kernel with CONFIG_PERF_EVENTS and mount sysfs (`mount -t "
          "sysfs sysfs {}`)",
          sysfs_root);
    case PerfReason::kNoUncorePmus:
      return "load the kernel's uncore driver: `sudo modprobe intel_uncore` "
             "(CONFIG_PERF_EVENTS_INTEL_UNCORE; built in on most kernels); "
             "if it is loaded and there are still none, the BIOS hides the "
             "uncore PCI devices or the kernel does not know this CPU";
    case PerfReason::kParanoidUnreadable:
      return "this kernel has no perf_event support (CONFIG_PERF_EVENTS) or "
             "/proc is not mounted: `mount -t proc proc /proc`";
    case PerfReason::kNoPermission:
      return std::string(kPerfPermissionFix);
    case PerfReason::kBusy:
      return "another agent holds these counters (a perf session, a "
             "monitoring daemon): stop it and retry";
    case PerfReason::kTooManyFiles:
      return "raise the file descriptor limit: `ulimit -n 65536`";
    case PerfReason::kCpuOffline:
      return "bring the CPU online (`echo 1 | sudo tee "
             "/sys/devices/system/cpu/cpuN/online`) or choose sockets whose "
             "CPUs are online";
    case PerfReason::kRefused:
      return fmt::format(
          "the kernel refuses {} as asked: compare with `perf stat -a -e {} "
          "sleep 1` and the PMU's format/ and events/ folders, and check "
          "`dmesg`",
          spec, spec);
  }
  return "";
}

std::string ParanoidMeaning(int value) {
  if (value <= -1) return "no restriction: anyone may use every event";
  if (value == 0) {
    return "anyone may count system-wide (no raw tracepoints)";
  }
  if (value == 1) {
    return "system-wide counting needs CAP_PERFMON or CAP_SYS_ADMIN; users "
           "may profile their own processes, kernel included";
  }
  if (value == 2) {
    return "system-wide counting needs CAP_PERFMON or CAP_SYS_ADMIN; users "
           "may profile their own processes in user space only";
  }
  return "only CAP_PERFMON or CAP_SYS_ADMIN may use perf_event at all "
         "(Debian's level 3)";
}

std::string UncoreTrialSpec(const PmuCatalog& pmus) {
  const Pmu* pmu = nullptr;
  for (std::string_view preferred :
       {"uncore_imc_0", "uncore_cbox_0", "uncore_ubox"}) {
    if (pmu == nullptr) pmu = pmus.Find(preferred);
  }
  for (const Pmu& p : pmus.pmus) {
    if (pmu == nullptr && p.name.starts_with("uncore_")) pmu = &p;
  }
  if (pmu == nullptr) return "";
  if (pmu->FindAlias("clockticks") != nullptr) {
    return fmt::format("{}/clockticks/", pmu->name);
  }
  if (!pmu->aliases.empty()) {
    return fmt::format("{}/{}/", pmu->name, pmu->aliases.front().name);
  }
  return fmt::format("{}/event=0x0/", pmu->name);
}

PerfProbe ProbePerf(const PerfProbeOptions& options) {
  PerfProbe p;
  p.sysfs_root = options.sysfs_root;
  p.pmu_folder_path = options.sysfs_root + "/bus/event_source/devices";
  p.paranoid_path = options.paranoid_path;

  absl::StatusOr<PmuCatalog> pmus = DiscoverPmus(options.sysfs_root);
  if (pmus.ok()) {
    p.pmu_folder = true;
    p.num_pmus = static_cast<int>(pmus->pmus.size());
    for (const Pmu& pmu : pmus->pmus) {
      if (pmu.name.starts_with("uncore_")) {
        p.uncore_pmus.push_back(pmu.name);
      } else if (!IsSoftwarePmu(pmu.name)) {
        OtherPmu other{.name = pmu.name, .aliases = {}};
        for (const EventAlias& a : pmu.aliases) other.aliases.push_back(a.name);
        p.other_pmus.push_back(std::move(other));
      }
    }
  } else {
    p.pmu_folder_error = common::StatusMessage(pmus.status());
  }

  // Permission for system-wide counting.
  const ProcessPrivileges& m = options.privileges;
  p.paranoid = ReadParanoid(options.paranoid_path);
  if (!p.paranoid) {
    p.permission = PerfReason::kParanoidUnreadable;
    p.permission_detail =
        fmt::format("{} cannot be read", options.paranoid_path);
    p.permission_fix = PerfFix(p.permission, "", options.sysfs_root);
  } else if (*p.paranoid <= 0) {
    p.permission = PerfReason::kOk;
    p.permission_detail = "allowed for any user";
  } else if (m.perfmon_capable()) {
    p.permission = PerfReason::kOk;
    p.permission_detail = fmt::format(
        "allowed: this process has {}",
        m.kernel_knows_perfmon && m.Cap(kCapPerfmon) ? "CAP_PERFMON"
                                                     : "CAP_SYS_ADMIN");
  } else {
    p.permission = PerfReason::kNoPermission;
    p.permission_detail =
        "refused: this process has neither CAP_PERFMON nor CAP_SYS_ADMIN";
    p.permission_fix = PerfFix(p.permission, "", options.sysfs_root);
  }

  // Trials.
  if (p.pmu_folder && options.run_trials) {
    if (const Pmu* msr = pmus->Find("msr"); msr != nullptr) {
      p.other_trial = RunPerfTrial(options, msr->FindAlias("tsc") != nullptr
                                                ? "msr/tsc/"
                                                : "msr/event=0x0/");
    }
    if (!p.uncore_pmus.empty()) {
      p.uncore_trial = RunPerfTrial(options, UncoreTrialSpec(*pmus));
    }
  }
  if (!p.pmu_folder) {
    p.uncore_reason = PerfReason::kNoPmuFolder;
  } else if (p.uncore_pmus.empty()) {
    p.uncore_reason = PerfReason::kNoUncorePmus;
  } else {
    p.uncore_reason = p.uncore_trial.reason;
  }
  return p;
}

}  // namespace uncore::devices::perf
