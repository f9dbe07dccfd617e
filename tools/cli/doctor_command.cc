// `uncore doctor`: which backends can count here, and exactly why the others
// cannot, each problem with the command that fixes it.
//
//   uncore doctor          # a report for people
//   uncore doctor --json   # the same as one JSON object
//
// Checks, in order: the CPU (/proc/cpuinfo), the kernel, this process's
// privileges (uid and CapEff from /proc/self/status); perf: the PMU folder,
// uncore_* PMUs, other PMUs, perf_event_paranoid against the privileges, and
// two trials (PerfDevice::Open + Program + two snapshots of msr/tsc/ and of
// one event of an uncore PMU); direct: an IvyTown CPU, the msr driver, MSR
// access (open and one read of IA32_TIME_STAMP_COUNTER), the uncore PCI
// functions per socket, and a trial (OpenDirectDevice + Program of ubox/UCLK
// and imc/DCLK, which refuses boxes another agent uses, two snapshots,
// Release restores every register); sim: the simulator opens.  The verdict
// says which backend `auto` picks here.
//
// Exit status: 0 when perf or direct can count the uncore here, 1 when
// neither can (other PMUs, such as msr/tsc/, may still count), 2 for bad
// arguments.
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/json.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"
#include "sdk/devices/device.h"
#include "sdk/devices/direct/open_direct_device.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/machine/topology.h"
#include "sdk/report/report.h"
#include "sdk/runtime/backends.h"
#include "sdk/spec/event_spec.h"
#include "tools/cli/commands.h"

namespace uncore::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kExitNoUncoreBackend = 1;
constexpr int kCapSysRawio = 17;
constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;
constexpr uint32_t kTscMsr = 0x10;  // IA32_TIME_STAMP_COUNTER
constexpr auto kTrialTime = std::chrono::milliseconds(2);
constexpr std::string_view kSimHint =
    "UNCORE_BACKEND=sim (or `uncore stat --backend sim`) tries the SDK on a "
    "simulated IvyTown socket";

constexpr std::string_view kDoctorUsage =
    "usage: uncore doctor [--json]\n"
    "\n"
    "Says which backends can count here and exactly why the others cannot, "
    "each\n"
    "problem with the command that fixes it, and which backend `auto` "
    "picks.\n"
    "Trials: perf opens msr/tsc/ and one uncore PMU event system-wide for 2 "
    "ms;\n"
    "direct programs ubox/UCLK and imc/DCLK for 2 ms and restores every "
    "register.\n"
    "\n"
    "  --json   one JSON object instead of the report\n"
    "  --sysfs DIR, --cpuinfo FILE, --dev-cpu DIR, --paranoid FILE,\n"
    "  --proc-status FILE\n"
    "           read these instead of /sys, /proc/cpuinfo, /dev/cpu,\n"
    "           /proc/sys/kernel/perf_event_paranoid and /proc/self/status\n"
    "           (tests, or another machine's copies)\n"
    "\n"
    "exit status: 0 when perf or direct can count the uncore here; 1 when "
    "neither\n"
    "can (other PMUs such as msr/tsc/ may still count); 2 for bad arguments\n";

struct Paths {
  std::string sysfs = "/sys";
  std::string cpuinfo = "/proc/cpuinfo";
  std::string dev_cpu = "/dev/cpu";
  std::string paranoid = "/proc/sys/kernel/perf_event_paranoid";
  std::string proc_status = "/proc/self/status";
};

enum class State { kOk, kFail, kSkip };

std::string_view StateName(State s) {
  switch (s) {
    case State::kOk:
      return "ok";
    case State::kFail:
      return "fail";
    case State::kSkip:
      return "skip";
  }
  return "?";
}

struct Check {
  std::string name;
  State state = State::kSkip;
  std::string detail;
  std::string fix;  // set for every failure
};

struct BackendReport {
  std::string name;
  bool usable = false;
  std::string summary;  // one line
  std::string why_not;  // the failures, short
  std::vector<Check> checks;

  // `reason`: a few words for the verdict when the check fails.
  void Add(std::string check_name, State state, std::string detail,
           std::string fix = "", std::string_view reason = "") {
    if (state == State::kFail) {
      if (!why_not.empty()) why_not += ", ";
      why_not += reason.empty() ? check_name + " failed" : std::string(reason);
    }
    checks.push_back(
        {std::move(check_name), state, std::move(detail), std::move(fix)});
  }
};

// ---- machine facts ----------------------------------------------------------

struct Machine {
  std::optional<machine::CpuIdentity> cpu;
  std::string cpu_error;
  std::string model_name;
  bool hypervisor = false;
  std::string kernel;
  bool kernel_knows_perfmon = true;  // CAP_PERFMON exists since Linux 5.8
  std::optional<int> uid;
  std::optional<uint64_t> cap_eff;

  bool is_ivytown() const { return cpu && cpu->is_ivytown(); }
  bool root() const { return uid && *uid == 0; }
  bool Cap(int bit) const { return cap_eff && ((*cap_eff >> bit) & 1) != 0; }
  // What perf_event's perfmon_capable() answers.
  bool perfmon_capable() const {
    return (kernel_knows_perfmon && Cap(kCapPerfmon)) || Cap(kCapSysAdmin);
  }
  std::string CpuText() const {
    if (!cpu) return "unknown CPU";
    std::string text = cpu->ToString();
    if (!model_name.empty()) text += fmt::format(" ({})", model_name);
    return text;
  }
};

// The value of the first "key : value" line of cpuinfo for `key`.
std::string CpuinfoValue(std::string_view text, std::string_view key) {
  for (std::string_view line : common::Split(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (common::StripWhitespace(line.substr(0, colon)) == key) {
      return std::string(common::StripWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

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

Machine ReadMachine(const Paths& paths) {
  Machine m;
  absl::StatusOr<machine::CpuIdentity> id =
      machine::ReadCpuIdentity(paths.cpuinfo);
  if (id.ok()) {
    m.cpu = *id;
  } else {
    m.cpu_error = common::StatusMessage(id.status());
  }
  if (std::optional<std::string> text = common::ReadSmallFile(paths.cpuinfo)) {
    m.model_name = CpuinfoValue(*text, "model name");
    const std::string flags = CpuinfoValue(*text, "flags");
    for (std::string_view flag : common::Split(flags, ' ', /*skip_empty=*/true)) {
      m.hypervisor = m.hypervisor || flag == "hypervisor";
    }
  }
  utsname u;
  if (uname(&u) == 0) {
    m.kernel = u.release;
    int major = 0;
    int minor = 0;
    if (std::sscanf(u.release, "%d.%d", &major, &minor) == 2) {
      m.kernel_knows_perfmon = major > 5 || (major == 5 && minor >= 8);
    }
  }
  if (std::optional<std::string> status = common::ReadSmallFile(paths.proc_status)) {
    std::vector<std::string> uid = StatusFields(*status, "Uid");
    if (uid.size() >= 2) {
      if (std::optional<uint64_t> v = common::ParseUnsigned(uid[1], 10)) {
        m.uid = static_cast<int>(*v);
      }
    }
    std::vector<std::string> cap = StatusFields(*status, "CapEff");
    if (!cap.empty()) m.cap_eff = common::ParseUnsigned(cap[0], 16);
  }
  if (!m.uid) m.uid = static_cast<int>(geteuid());
  return m;
}

std::string YesNo(bool b) { return b ? "yes" : "no"; }

std::string PrivilegesText(const Machine& m) {
  std::string text =
      m.uid ? fmt::format("uid {}{}", *m.uid, m.root() ? " (root)" : "")
            : std::string("uid unknown");
  if (m.cap_eff) {
    text += fmt::format(
        "; CapEff 0x{:016x}: CAP_PERFMON {}{}, CAP_SYS_ADMIN {}, "
        "CAP_SYS_RAWIO {}",
        *m.cap_eff, YesNo(m.Cap(kCapPerfmon)),
        m.kernel_knows_perfmon ? "" : " (ignored: Linux < 5.8)",
        YesNo(m.Cap(kCapSysAdmin)), YesNo(m.Cap(kCapSysRawio)));
  } else {
    text += "; capabilities unknown (no CapEff line)";
  }
  return text;
}

// ---- perf
// --------------------------------------------------------------------

struct PerfFacts {
  bool pmu_folder = false;
  int num_pmus = 0;
  std::vector<std::string> uncore_pmus;
  std::vector<std::string> other_pmus;
  std::optional<int> paranoid;
  bool other_usable = false;
  std::string other_trial_spec;
};

bool IsSoftwarePmu(std::string_view name) {
  return name == "software" || name == "tracepoint" || name == "breakpoint" ||
         name == "kprobe" || name == "uprobe";
}

// "uncore_cbox_0..14 (15), uncore_ubox": instances grouped by name.
std::string CompactPmuList(const std::vector<std::string>& names) {
  std::map<std::string, std::vector<int>> groups;
  std::vector<std::string> order;
  for (const std::string& n : names) {
    const size_t us = n.rfind('_');
    std::string base = n;
    int index = -1;
    if (us != std::string::npos && us + 1 < n.size()) {
      if (std::optional<uint64_t> v =
              common::ParseUnsigned(std::string_view(n).substr(us + 1), 10)) {
        base = n.substr(0, us + 1);
        index = static_cast<int>(*v);
      }
    }
    if (groups.find(base) == groups.end()) order.push_back(base);
    groups[base].push_back(index);
  }
  std::vector<std::string> parts;
  for (const std::string& base : order) {
    std::vector<int>& ids = groups[base];
    std::sort(ids.begin(), ids.end());
    if (ids.size() == 1) {
      parts.push_back(ids[0] < 0 ? base : fmt::format("{}{}", base, ids[0]));
    } else {
      parts.push_back(fmt::format("{}{}..{} ({})", base, ids.front(),
                                  ids.back(), ids.size()));
    }
  }
  return common::Join(parts, ", ");
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

constexpr std::string_view kPerfPermissionFix =
    "run as root, or `sudo setcap cap_perfmon+ep $(command -v uncore)` (and "
    "on your program), or `sudo sysctl kernel.perf_event_paranoid=0` (add it "
    "to /etc/sysctl.d/ to keep it)";

// What to do about a failed perf trial of `spec`.
std::string PerfTrialFix(const absl::Status& s, std::string_view spec) {
  switch (s.code()) {
    case absl::StatusCode::kPermissionDenied:
      return std::string(kPerfPermissionFix);
    case absl::StatusCode::kUnavailable:
      return "another agent holds these counters (a perf session, a "
             "monitoring daemon): stop it and retry";
    case absl::StatusCode::kResourceExhausted:
      return "raise the file descriptor limit: `ulimit -n 65536`";
    case absl::StatusCode::kFailedPrecondition:
      return "bring the CPU online (`echo 1 | sudo tee "
             "/sys/devices/system/cpu/cpuN/online`) or choose sockets whose "
             "CPUs are online";
    default:
      return fmt::format(
          "the kernel refuses {} as asked: compare with `perf stat -a -e {} "
          "sleep 1` and the PMU's format/ and events/ folders, and check "
          "`dmesg`",
          spec, spec);
  }
}

struct Trial {
  absl::Status status;
  uint64_t count = 0;
  uint64_t ns = 0;
  std::vector<int> cpus;
};

// Programs `events` on `device`, counts for kTrialTime, releases.
Trial RunTrial(devices::Device* device, const std::vector<std::string>& specs) {
  Trial t;
  devices::ProgramRequest request;
  for (const std::string& text : specs) {
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(text);
    if (!e.ok()) {
      t.status = e.status();
      return t;
    }
    request.events.push_back(*std::move(e));
  }
  t.status = device->Program(request);
  if (!t.status.ok()) return t;
  const size_t n = device->read_plan().size();
  devices::Snapshot a(n);
  devices::Snapshot b(n);
  const auto begin = std::chrono::steady_clock::now();
  t.status = device->TakeSnapshot(&a);
  if (t.status.ok()) {
    std::this_thread::sleep_for(kTrialTime);
    t.status = device->TakeSnapshot(&b);
  }
  const auto end = std::chrono::steady_clock::now();
  t.ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - begin)
          .count());
  if (t.status.ok()) {
    for (size_t i = 0; i < n; ++i) t.count += b.values[i] - a.values[i];
  }
  const absl::Status released = device->Release();
  if (t.status.ok()) t.status = released;
  return t;
}

Trial PerfTrial(const Paths& paths, const std::string& spec) {
  devices::perf::PerfDevice::Options options;
  options.sysfs_root = paths.sysfs;
  options.paranoid_path = paths.paranoid;
  absl::StatusOr<std::unique_ptr<devices::perf::PerfDevice>> device =
      devices::perf::PerfDevice::Open(options);
  if (!device.ok()) {
    Trial t;
    t.status = device.status();
    return t;
  }
  Trial t = RunTrial(device->get(), {spec});
  for (const devices::perf::PerfCounter& c : (*device)->counters()) {
    if (std::find(t.cpus.begin(), t.cpus.end(), c.cpu) == t.cpus.end()) {
      t.cpus.push_back(c.cpu);
    }
  }
  return t;
}

std::string CpuListText(const std::vector<int>& cpus) {
  std::vector<std::string> s;
  for (int c : cpus) s.push_back(std::to_string(c));
  return fmt::format("CPU{} {}", cpus.size() == 1 ? "" : "s", common::Join(s, ","));
}

// An event of an uncore PMU to try: its clockticks alias, else its first
// alias, else event 0.
std::string UncoreTrialSpec(const devices::perf::PmuCatalog& pmus,
                            const std::vector<std::string>& uncore) {
  const devices::perf::Pmu* pmu = nullptr;
  for (std::string_view preferred :
       {"uncore_imc_0", "uncore_cbox_0", "uncore_ubox"}) {
    if (pmu == nullptr) pmu = pmus.Find(preferred);
  }
  if (pmu == nullptr) pmu = pmus.Find(uncore.front());
  if (pmu->FindAlias("clockticks") != nullptr) {
    return fmt::format("{}/clockticks/", pmu->name);
  }
  if (!pmu->aliases.empty()) {
    return fmt::format("{}/{}/", pmu->name, pmu->aliases.front().name);
  }
  return fmt::format("{}/event=0x0/", pmu->name);
}

BackendReport CheckPerf(const Machine& m, const Paths& paths, PerfFacts* f) {
  BackendReport r;
  r.name = "perf";
  const std::string folder = paths.sysfs + "/bus/event_source/devices";
  absl::StatusOr<devices::perf::PmuCatalog> pmus =
      devices::perf::DiscoverPmus(paths.sysfs);
  f->paranoid = devices::perf::ReadParanoid(paths.paranoid);
  if (!pmus.ok()) {
    r.Add("PMU folder", State::kFail,
          fmt::format("{}: {}", folder, common::StatusMessage(pmus.status())),
          fmt::format("this kernel has no perf_event support or sysfs is not "
                      "mounted: boot a kernel with CONFIG_PERF_EVENTS and "
                      "mount sysfs (`mount -t sysfs sysfs {}`)",
                      paths.sysfs),
          "no perf_event PMU folder");
  } else {
    f->pmu_folder = true;
    f->num_pmus = static_cast<int>(pmus->pmus.size());
    r.Add("PMU folder", State::kOk,
          fmt::format("{}: {} PMUs", folder, pmus->pmus.size()));
    for (const devices::perf::Pmu& p : pmus->pmus) {
      if (p.name.starts_with("uncore_")) {
        f->uncore_pmus.push_back(p.name);
      } else if (!IsSoftwarePmu(p.name)) {
        f->other_pmus.push_back(p.name);
      }
    }
  }
  if (!f->pmu_folder) {
    // Nothing else can be looked at.
  } else if (!f->uncore_pmus.empty()) {
    r.Add("uncore PMUs", State::kOk,
          fmt::format("{}: {}", f->uncore_pmus.size(),
                      CompactPmuList(f->uncore_pmus)));
  } else {
    std::string fix;
    if (m.hypervisor) {
      fix = fmt::format(
          "a virtual machine does not get the host's uncore PMUs: run on the "
          "bare-metal host ({}), or {}",
          m.is_ivytown() ? "this IvyTown" : "an IvyTown Xeon E5 v2 / E7 v2",
          kSimHint);
    } else if (m.cpu && m.cpu->vendor == "GenuineIntel") {
      fix =
          "load the kernel's uncore driver: `sudo modprobe intel_uncore` "
          "(CONFIG_PERF_EVENTS_INTEL_UNCORE; built in on most kernels); if "
          "it is loaded and there are still none, the BIOS hides the uncore "
          "PCI devices or the kernel does not know this CPU";
    } else {
      fix = fmt::format(
          "{} has no IvyTown uncore: run on an IvyTown Xeon E5 v2 / E7 v2, "
          "count this machine's own PMUs with raw specs (see below), or {}",
          m.CpuText(), kSimHint);
    }
    r.Add("uncore PMUs", State::kFail,
          fmt::format("no uncore_* PMU under {}: the kernel's uncore driver "
                      "is not loaded or has nothing to drive here",
                      folder),
          std::move(fix), "no uncore_* PMU");
  }
  if (f->pmu_folder) {
    if (f->other_pmus.empty()) {
      r.Add("other PMUs", State::kSkip,
            "none besides the software PMUs (software, tracepoint, ...)");
    } else {
      std::vector<std::string> described;
      for (const std::string& name : f->other_pmus) {
        const devices::perf::Pmu* p = pmus->Find(name);
        std::vector<std::string> aliases;
        for (const auto& a : p->aliases) aliases.push_back(a.name);
        if (aliases.size() > 4) {
          aliases.resize(4);
          aliases.push_back("...");
        }
        described.push_back(
            aliases.empty()
                ? name
                : fmt::format("{} (events: {})", name, common::Join(aliases, " ")));
      }
      r.Add("other PMUs", State::kOk,
            fmt::format("{} (countable with raw specs such as msr/tsc/, "
                        "power/energy-pkg/)",
                        common::Join(described, ", ")));
    }
  }

  // Permission: system-wide counting.
  if (!f->paranoid) {
    if (f->pmu_folder) {
      r.Add("perf_event_paranoid", State::kFail,
            fmt::format("{} cannot be read", paths.paranoid),
            "this kernel has no perf_event support (CONFIG_PERF_EVENTS) or "
            "/proc is not mounted: `mount -t proc proc /proc`",
            "perf_event_paranoid unreadable");
    } else {
      r.Add("perf_event_paranoid", State::kSkip,
            fmt::format("{} cannot be read (no perf_event here)",
                        paths.paranoid));
    }
  } else {
    const int p = *f->paranoid;
    std::string who;
    if (p <= 0) {
      who = "allowed for any user";
    } else if (m.perfmon_capable()) {
      who = fmt::format("allowed: this process has {}",
                        m.kernel_knows_perfmon && m.Cap(kCapPerfmon)
                            ? "CAP_PERFMON"
                            : "CAP_SYS_ADMIN");
    } else {
      who = "refused: this process has neither CAP_PERFMON nor CAP_SYS_ADMIN";
    }
    r.Add("perf_event_paranoid",
          p <= 0 || m.perfmon_capable() ? State::kOk : State::kFail,
          fmt::format("{} ({}); system-wide counting {}", p, ParanoidMeaning(p),
                      who),
          std::string(kPerfPermissionFix),
          fmt::format("perf_event_paranoid is {} and this process lacks "
                      "CAP_PERFMON",
                      p));
    if (r.checks.back().state == State::kOk) r.checks.back().fix.clear();
  }

  // Trials.
  const devices::perf::Pmu* msr = f->pmu_folder ? pmus->Find("msr") : nullptr;
  if (msr != nullptr) {
    f->other_trial_spec = msr->FindAlias("tsc") != nullptr
                              ? "msr/tsc/"
                              : fmt::format("msr/event=0x0/");
    const Trial t = PerfTrial(paths, f->other_trial_spec);
    const std::string name = fmt::format("trial {}", f->other_trial_spec);
    if (t.status.ok()) {
      f->other_usable = true;
      r.Add(name, State::kOk,
            fmt::format("opened system-wide on {}; counted {} in {}",
                        CpuListText(t.cpus), report::GroupDigits(t.count),
                        report::FormatDuration(t.ns)));
    } else {
      r.Add(name, State::kFail, common::StatusMessage(t.status),
            PerfTrialFix(t.status, f->other_trial_spec),
            fmt::format("{} does not open", f->other_trial_spec));
    }
  } else {
    r.Add("trial msr/tsc/", State::kSkip,
          f->pmu_folder ? "no msr PMU here" : "no PMU folder");
  }
  if (!f->uncore_pmus.empty()) {
    const std::string spec = UncoreTrialSpec(*pmus, f->uncore_pmus);
    const Trial t = PerfTrial(paths, spec);
    const std::string name = fmt::format("trial {}", spec);
    if (t.status.ok()) {
      r.usable = true;
      r.Add(name, State::kOk,
            fmt::format("opened system-wide on {}; counted {} in {}",
                        CpuListText(t.cpus), report::GroupDigits(t.count),
                        report::FormatDuration(t.ns)));
    } else {
      r.Add(name, State::kFail, common::StatusMessage(t.status),
            PerfTrialFix(t.status, spec),
            fmt::format("{} does not open", spec));
    }
  } else {
    r.Add("trial uncore event", State::kSkip, "no uncore_* PMU to try");
  }

  if (r.usable) {
    r.summary = "usable: the kernel's uncore PMUs count here";
  } else if (f->other_usable) {
    r.summary = fmt::format(
        "not usable for the uncore; counts other PMUs' events (e.g. {})",
        f->other_trial_spec);
  } else {
    r.summary = "not usable here";
  }
  return r;
}

// ---- direct
// ------------------------------------------------------------------

struct DirectFacts {
  int msr_devices = 0;
  int msr_safe_devices = 0;
  std::vector<int> pci_per_socket;
};

BackendReport CheckDirect(const Machine& m, const Paths& paths,
                          DirectFacts* f) {
  BackendReport r;
  r.name = "direct";
  constexpr std::string_view kNeedIvyTown =
      "the direct backend programs IvyTown's own registers: run on a Xeon E5 "
      "v2 / E7 v2 (GenuineIntel family 6 model 0x3e); elsewhere use the perf "
      "backend (UNCORE_BACKEND=perf)";
  if (!m.cpu) {
    r.Add("IvyTown CPU", State::kFail, m.cpu_error,
          fmt::format("make {} readable (mount -t proc proc /proc)",
                      paths.cpuinfo),
          "the CPU is unknown");
  } else if (m.is_ivytown()) {
    r.Add("IvyTown CPU", State::kOk, m.CpuText());
  } else {
    r.Add("IvyTown CPU", State::kFail,
          fmt::format("{} is not IvyTown (GenuineIntel family 6 model 0x3e)",
                      m.CpuText()),
          fmt::format("{}; or {}", kNeedIvyTown, kSimHint),
          "not an IvyTown CPU");
  }

  // The msr driver.
  std::vector<int> cpus;
  std::error_code ec;
  for (const fs::directory_entry& e :
       fs::directory_iterator(paths.dev_cpu, ec)) {
    std::optional<uint64_t> cpu =
        common::ParseUnsigned(e.path().filename().string(), 10);
    if (!cpu) continue;
    const bool has_msr = fs::exists(e.path() / "msr", ec);
    const bool has_safe = fs::exists(e.path() / "msr_safe", ec);
    f->msr_devices += has_msr ? 1 : 0;
    f->msr_safe_devices += has_safe ? 1 : 0;
    if (has_msr || has_safe) cpus.push_back(static_cast<int>(*cpu));
  }
  std::sort(cpus.begin(), cpus.end());
  if (cpus.empty()) {
    r.Add("msr driver", State::kFail,
          fmt::format("no {}/*/msr (nor msr_safe): the msr driver is not "
                      "loaded",
                      paths.dev_cpu),
          "`sudo modprobe msr` (add msr to /etc/modules-load.d/ to keep it), "
          "or load msr-safe",
          "msr driver not loaded");
  } else {
    r.Add("msr driver", State::kOk,
          fmt::format("{} CPUs have {}/N/msr{}", f->msr_devices, paths.dev_cpu,
                      f->msr_safe_devices > 0
                          ? fmt::format(", {} msr_safe", f->msr_safe_devices)
                          : std::string()));
  }

  // MSR access: open read-write and read the TSC.
  if (cpus.empty()) {
    r.Add("MSR access", State::kSkip, "no msr device to open");
  } else {
    const std::string base = fmt::format("{}/{}/", paths.dev_cpu, cpus[0]);
    std::string path = base + "msr";
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    int error = fd < 0 ? errno : 0;
    if (fd < 0 && fs::exists(base + "msr_safe", ec)) {
      path = base + "msr_safe";
      fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
      error = fd < 0 ? errno : 0;
    }
    const std::string access_fix = fmt::format(
        "run as root, or give the program CAP_SYS_RAWIO (`sudo setcap "
        "cap_sys_rawio+ep $(command -v uncore)`; this process has it: {}) "
        "and write access to {}/*/msr; or use msr-safe with an allow-list "
        "covering the uncore MSRs",
        YesNo(m.Cap(kCapSysRawio)), paths.dev_cpu);
    if (fd < 0) {
      r.Add(
          "MSR access", State::kFail,
          fmt::format("opening {} read-write: {}", path, std::strerror(error)),
          access_fix, "no write access to the MSRs");
    } else {
      uint64_t value = 0;
      const ssize_t n = pread(fd, &value, sizeof(value), kTscMsr);
      error = n < 0 ? errno : 0;
      close(fd);
      if (n == static_cast<ssize_t>(sizeof(value))) {
        r.Add("MSR access", State::kOk,
              fmt::format("opened {} read-write and read MSR 0x{:x} (TSC)",
                          path, kTscMsr));
      } else {
        r.Add("MSR access", State::kFail,
              fmt::format("reading MSR 0x{:x} through {}: {}", kTscMsr, path,
                          n < 0 ? std::strerror(error) : "short read"),
              error == EIO ? std::string("the CPU or the hypervisor refuses "
                                         "MSR reads: run on bare metal")
                           : access_fix,
              "MSR reads fail");
      }
    }
  }

  // Uncore PCI functions.
  absl::StatusOr<machine::Topology> topology =
      machine::DiscoverTopology(paths.sysfs, paths.cpuinfo);
  if (!topology.ok()) {
    r.Add("uncore PCI functions", State::kFail,
          common::StatusMessage(topology.status()),
          fmt::format("make {}/bus/pci/devices and {}/devices/system/cpu "
                      "readable (mount sysfs)",
                      paths.sysfs, paths.sysfs),
          "PCI discovery failed");
  } else {
    int total = 0;
    std::vector<std::string> per_socket;
    for (const machine::SocketTopology& s : topology->sockets) {
      int n = 0;
      for (const auto& p : s.pci) n += p.pmon ? 1 : 0;
      f->pci_per_socket.push_back(n);
      total += n;
      per_socket.push_back(fmt::format("socket {}: {}", s.socket, n));
    }
    if (total > 0) {
      r.Add(
          "uncore PCI functions", State::kOk,
          fmt::format("{} PMON functions ({})", total, common::Join(per_socket, ", ")));
    } else {
      r.Add("uncore PCI functions", State::kFail,
            fmt::format("no IvyTown uncore PCI function (8086:0e..) under "
                        "{}/bus/pci/devices ({} socket{})",
                        paths.sysfs, topology->sockets.size(),
                        topology->sockets.size() == 1 ? "" : "s"),
            m.is_ivytown()
                ? std::string(
                      "the BIOS hides the uncore devices: check `lspci -d "
                      "8086:` for devices 0x0e.. and enable them in the "
                      "BIOS setup, or use the perf backend "
                      "(UNCORE_BACKEND=perf)")
                : fmt::format("{} has none; {}", m.CpuText(), kNeedIvyTown),
            "no uncore PCI functions");
    }
  }

  // The trial: open, program (the in-use check), count, release.
  bool ready = true;
  for (const Check& c : r.checks) ready = ready && c.state == State::kOk;
  const std::vector<std::string> specs = {"ubox/UCLK", "imc/DCLK"};
  const std::string trial_name = fmt::format("trial {}", common::Join(specs, " + "));
  if (!ready) {
    r.Add(trial_name, State::kSkip, "not tried: the checks above failed");
  } else {
    devices::DirectDeviceConfig config;
    config.sysfs_root = paths.sysfs;
    config.cpuinfo_path = paths.cpuinfo;
    config.dev_cpu_root = paths.dev_cpu;
    absl::StatusOr<std::unique_ptr<devices::DirectDevice>> device =
        devices::OpenDirectDevice(config);
    Trial t;
    if (!device.ok()) {
      t.status = device.status();
    } else {
      t = RunTrial(device->get(), specs);
    }
    if (t.status.ok()) {
      r.usable = true;
      r.Add(trial_name, State::kOk,
            fmt::format("programmed (no other agent uses these boxes), "
                        "counted {} in {}, registers restored",
                        report::GroupDigits(t.count),
                        report::FormatDuration(t.ns)));
    } else {
      const std::string message = common::StatusMessage(t.status);
      std::string fix;
      if (t.status.code() == absl::StatusCode::kPermissionDenied) {
        fix =
            "run as root, or give the program CAP_SYS_RAWIO and write "
            "access to /dev/cpu/*/msr and the uncore PCI config files";
      } else if (common::ContainsIgnoreCase(message, "in use") ||
                 common::ContainsIgnoreCase(message, "another agent")) {
        fix =
            "another agent has these counters enabled (perf's uncore "
            "driver in use, another tool): stop it, or take them over with "
            "UNCORE_FORCE=1 (uncore stat --force)";
      } else if (common::ContainsIgnoreCase(message, "modprobe")) {
        fix = "`sudo modprobe msr`";
      } else {
        fix =
            "read the error above; `uncore describe --registers "
            "ubox/UCLK` shows what the trial writes";
      }
      r.Add(trial_name, State::kFail, message, std::move(fix),
            "programming the trial events failed");
    }
  }
  r.summary = r.usable ? "usable: programs the IvyTown registers itself"
                       : "not usable here";
  return r;
}

// ---- sim
// ---------------------------------------------------------------------

BackendReport CheckSim() {
  BackendReport r;
  r.name = "sim";
  runtime::BackendRequest request;
  request.name = "sim";
  request.sim_demo_traffic = false;
  absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec("imc/CAS_COUNT.RD");
  absl::Status status = e.status();
  if (e.ok()) {
    request.program.events.push_back(*e);
    absl::StatusOr<runtime::OpenedBackend> opened =
        runtime::OpenBackend(std::move(request));
    status = opened.status();
    if (opened.ok()) status = opened->backend->Stop();
  }
  if (status.ok()) {
    r.usable = true;
    r.Add("simulator", State::kOk,
          "a simulated IvyTown socket opens and programs imc/CAS_COUNT.RD; "
          "its counts come from a made-up traffic model and every report "
          "says SIMULATED");
    r.summary =
        fmt::format("usable everywhere, with made-up counts: {}", kSimHint);
  } else {
    r.Add("simulator", State::kFail, common::StatusMessage(status),
          "a bug in the SDK: report it with this output",
          "the simulator does not open");
    r.summary = "not usable (a bug)";
  }
  return r;
}

// ---- verdict
// -----------------------------------------------------------------

struct Verdict {
  std::string auto_backend;  // for IvyTown uncore events
  std::string auto_other;    // for other PMUs' events: "perf" or "off"
  std::string line;
  int exit_status = 0;
};

Verdict Decide(const BackendReport& perf, const BackendReport& direct,
               const PerfFacts& pf) {
  Verdict v;
  v.auto_other = pf.other_usable ? "perf" : "off";
  if (perf.usable) {
    v.auto_backend = "perf";
    v.line = fmt::format(
        "auto → perf: the kernel's uncore PMUs open here ({} of them)",
        pf.uncore_pmus.size());
  } else if (direct.usable) {
    v.auto_backend = "direct";
    v.line = fmt::format(
        "auto → direct: perf cannot count the uncore here ({}), the direct "
        "backend can",
        perf.why_not);
  } else {
    v.auto_backend = "off";
    v.line = fmt::format(
        "auto → off: no uncore counters are reachable here (perf: {}; "
        "direct: {}); {}",
        perf.why_not.empty() ? "not usable" : perf.why_not,
        direct.why_not.empty() ? "not usable" : direct.why_not, kSimHint);
  }
  if (pf.other_usable) {
    v.line += fmt::format(
        ". Other PMUs' events ({} ...) do count with perf here, and auto "
        "picks perf for them",
        pf.other_trial_spec);
  }
  v.exit_status = perf.usable || direct.usable ? kExitOk : kExitNoUncoreBackend;
  return v;
}

// ---- output
// ------------------------------------------------------------------

void WriteChecksJson(const BackendReport& r, common::JsonWriter* json) {
  json->Key("usable");
  json->Bool(r.usable);
  json->Key("summary");
  json->String(r.summary);
  json->Key("why_not");
  if (r.why_not.empty()) {
    json->Null();
  } else {
    json->String(r.why_not);
  }
  json->Key("checks");
  json->BeginArray();
  for (const Check& c : r.checks) {
    json->BeginObject();
    json->Key("name");
    json->String(c.name);
    json->Key("status");
    json->String(StateName(c.state));
    json->Key("detail");
    json->String(c.detail);
    json->Key("fix");
    if (c.fix.empty()) {
      json->Null();
    } else {
      json->String(c.fix);
    }
    json->EndObject();
  }
  json->EndArray();
}

void WriteStrings(const std::vector<std::string>& items, common::JsonWriter* json) {
  json->BeginArray();
  for (const std::string& s : items) json->String(s);
  json->EndArray();
}

std::string FormatJson(const Machine& m, const PerfFacts& pf,
                       const DirectFacts& df, const BackendReport& perf,
                       const BackendReport& direct, const BackendReport& sim,
                       const Verdict& v) {
  common::JsonWriter json(/*pretty=*/true);
  json.BeginObject();
  json.Key("cpu");
  json.BeginObject();
  json.Key("vendor");
  if (m.cpu) {
    json.String(m.cpu->vendor);
  } else {
    json.Null();
  }
  json.Key("family");
  if (m.cpu) {
    json.Int(m.cpu->family);
  } else {
    json.Null();
  }
  json.Key("model");
  if (m.cpu) {
    json.Int(m.cpu->model);
  } else {
    json.Null();
  }
  json.Key("model_name");
  json.String(m.model_name);
  json.Key("description");
  json.String(m.CpuText());
  json.Key("ivytown");
  json.Bool(m.is_ivytown());
  json.Key("hypervisor");
  json.Bool(m.hypervisor);
  json.EndObject();
  json.Key("kernel");
  json.String(m.kernel);
  json.Key("privileges");
  json.BeginObject();
  json.Key("uid");
  if (m.uid) {
    json.Int(*m.uid);
  } else {
    json.Null();
  }
  json.Key("root");
  json.Bool(m.root());
  json.Key("cap_eff");
  if (m.cap_eff) {
    json.String(fmt::format("0x{:016x}", *m.cap_eff));
  } else {
    json.Null();
  }
  json.Key("cap_perfmon");
  json.Bool(m.Cap(kCapPerfmon));
  json.Key("cap_sys_admin");
  json.Bool(m.Cap(kCapSysAdmin));
  json.Key("cap_sys_rawio");
  json.Bool(m.Cap(kCapSysRawio));
  json.EndObject();

  json.Key("perf");
  json.BeginObject();
  WriteChecksJson(perf, &json);
  json.Key("usable_for_other_pmus");
  json.Bool(pf.other_usable);
  json.Key("pmu_folder");
  json.Bool(pf.pmu_folder);
  json.Key("uncore_pmus");
  WriteStrings(pf.uncore_pmus, &json);
  json.Key("other_pmus");
  WriteStrings(pf.other_pmus, &json);
  json.Key("perf_event_paranoid");
  if (pf.paranoid) {
    json.Int(*pf.paranoid);
  } else {
    json.Null();
  }
  json.EndObject();

  json.Key("direct");
  json.BeginObject();
  WriteChecksJson(direct, &json);
  json.Key("msr_devices");
  json.Int(df.msr_devices);
  json.Key("msr_safe_devices");
  json.Int(df.msr_safe_devices);
  json.Key("pci_functions_per_socket");
  json.BeginArray();
  for (int n : df.pci_per_socket) json.Int(n);
  json.EndArray();
  json.EndObject();

  json.Key("sim");
  json.BeginObject();
  WriteChecksJson(sim, &json);
  json.EndObject();

  json.Key("verdict");
  json.BeginObject();
  json.Key("auto");
  json.String(v.auto_backend);
  json.Key("auto_for_other_pmus");
  json.String(v.auto_other);
  json.Key("line");
  json.String(v.line);
  json.Key("exit_status");
  json.Int(v.exit_status);
  json.EndObject();
  json.EndObject();
  return json.Take();
}

std::string FormatText(const Machine& m, const BackendReport& perf,
                       const BackendReport& direct, const BackendReport& sim,
                       const Verdict& v) {
  std::string text;
  text += fmt::format("cpu         {}{}{}\n", m.CpuText(),
                      m.hypervisor ? ", virtual machine" : "",
                      m.is_ivytown() ? ": IvyTown" : ": not IvyTown");
  text += fmt::format("kernel      {}\n", m.kernel);
  text += fmt::format("privileges  {}\n", PrivilegesText(m));
  for (const BackendReport* r : {&perf, &direct, &sim}) {
    text += fmt::format("\n{}: {}\n", r->name, r->summary);
    size_t width = 0;
    for (const Check& c : r->checks) width = std::max(width, c.name.size());
    for (const Check& c : r->checks) {
      const std::string_view mark = c.state == State::kOk     ? "ok  "
                                    : c.state == State::kFail ? "FAIL"
                                                              : "skip";
      text += fmt::format("  {}  {:<{}}  {}\n", mark, c.name, width,
                          report::EscapeForTable(c.detail));
      if (c.state == State::kFail && !c.fix.empty()) {
        text += fmt::format("        {:<{}}  fix: {}\n", "", width,
                            report::EscapeForTable(c.fix));
      }
    }
  }
  text += fmt::format("\nverdict: {}\n", v.line);
  return text;
}

}  // namespace

int RunDoctor(const DoctorOptions& options, std::FILE* out,
              std::FILE* /*err*/) {
  const bool json_output = options.json;
  Paths paths;
  paths.sysfs = options.sysfs;
  paths.cpuinfo = options.cpuinfo;
  paths.dev_cpu = options.dev_cpu;
  paths.paranoid = options.paranoid;
  paths.proc_status = options.proc_status;

  const Machine machine = ReadMachine(paths);
  PerfFacts perf_facts;
  DirectFacts direct_facts;
  const BackendReport perf = CheckPerf(machine, paths, &perf_facts);
  const BackendReport direct = CheckDirect(machine, paths, &direct_facts);
  const BackendReport sim = CheckSim();
  const Verdict verdict = Decide(perf, direct, perf_facts);
  if (json_output) {
    fmt::print(out, "{}\n",
               FormatJson(machine, perf_facts, direct_facts, perf, direct, sim,
                          verdict));
  } else {
    fmt::print(out, "{}", FormatText(machine, perf, direct, sim, verdict));
  }
  return verdict.exit_status;
}

}  // namespace uncore::cli
