#include "tools/cli/doctor_checks.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
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
#include "sdk/devices/perf/perf_probe.h"
#include "sdk/machine/topology.h"
#include "sdk/registers/msr_access_probe.h"
#include "sdk/report/report.h"
#include "sdk/runtime/backend_policy.h"
#include "sdk/runtime/backends.h"
#include "sdk/runtime/session_platform.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/platform_catalog.h"
#include "tools/cli/commands.h"

namespace uncore::cli::doctor {
namespace {

using devices::perf::kCapSysRawio;
using devices::perf::PerfReason;
using devices::perf::PerfTrial;

// The sim backend simulates the default record's platform when none is
// named.
std::string SimHint() {
  return fmt::format(
      "UNCORE_BACKEND=sim (or `uncore stat --backend sim`) tries the SDK on "
      "a simulated {} socket",
      ShortTitle(platforms::DefaultPlatformRecord().title()));
}

// ---- perf: checks from devices::perf::ProbePerf ----------------------------

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
              common::ParseUnsigned(std::string_view{n}.substr(us + 1), 10)) {
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

std::string CpuListText(const std::vector<int>& cpus) {
  std::vector<std::string> s;
  s.reserve(cpus.size());
  for (int c : cpus) s.push_back(std::to_string(c));
  return fmt::format("CPU{} {}", cpus.size() == 1 ? "" : "s",
                     common::Join(s, ","));
}

runtime::Rejection PerfRejection(PerfReason reason) {
  switch (reason) {
    case PerfReason::kOk:
      return runtime::Rejection::kNone;
    case PerfReason::kNoPmuFolder:
    case PerfReason::kNoUncorePmus:
    case PerfReason::kCpuOffline:
      return runtime::Rejection::kUnavailable;
    case PerfReason::kNoPermission:
    case PerfReason::kParanoidUnreadable:
      return runtime::Rejection::kNoPermission;
    case PerfReason::kBusy:
      return runtime::Rejection::kBusy;
    default:
      return runtime::Rejection::kFailed;
  }
}

void AddTrial(const PerfTrial& t, BackendReport* r) {
  const std::string name = fmt::format("trial {}", t.spec);
  const std::string_view code = devices::perf::PerfReasonName(t.reason);
  if (t.ok()) {
    r->Add(name, State::kOk,
           fmt::format("opened system-wide on {}; counted {} in {}",
                       CpuListText(t.cpus), report::GroupDigits(t.count),
                       report::FormatDuration(t.ns)),
           "", "", code);
  } else {
    r->Add(name, State::kFail, t.error, t.fix,
           fmt::format("{} does not open", t.spec), code,
           PerfRejection(t.reason));
  }
}

// What to do about no uncore PMU, on this machine.
std::string NoUncorePmuFix(const Machine& m, const PerfProbe& p) {
  if (m.hypervisor()) {
    return fmt::format(
        "a virtual machine does not get the host's uncore PMUs: run on the "
        "bare-metal host (a CPU of `uncore list --platforms`), or {}",
        SimHint());
  }
  if (m.cpu && m.cpu->vendor == "GenuineIntel") {
    return devices::perf::PerfFix(PerfReason::kNoUncorePmus, "", p.sysfs_root);
  }
  return fmt::format(
      "{} has no IvyTown uncore: run on an IvyTown Xeon E5 v2 / E7 v2, "
      "count this machine's own PMUs with raw specs (see below), or {}",
      m.CpuText(), SimHint());
}

}  // namespace

std::string Machine::CpuText() const {
  if (!cpu) return "unknown CPU";
  std::string text = cpu->ToString();
  if (!cpu->model_name.empty()) {
    text += fmt::format(" ({})", cpu->model_name);
  }
  return text;
}

Machine GatherMachine(const DoctorOptions& in) {
  Machine m;
  absl::StatusOr<machine::CpuIdentity> id =
      machine::ReadCpuIdentity(in.cpuinfo);
  if (id.ok()) {
    m.cpu = *id;
    m.platform = spec::FindPlatformRecord(runtime::PlatformOfCpu(*id));
    if (m.platform != nullptr) {
      m.register_platform = runtime::FindRegisterPlatform(m.platform->name());
    }
  } else {
    m.cpu_error = common::StatusMessage(id.status());
  }
  m.privileges = devices::perf::ReadProcessPrivileges(in.proc_status);
  return m;
}

BackendReport CheckPerf(const Machine& m, const PerfProbe& p) {
  BackendReport r;
  r.name = "perf";
  if (!p.pmu_folder) {
    r.Add("PMU folder", State::kFail,
          fmt::format("{}: {}", p.pmu_folder_path, p.pmu_folder_error),
          devices::perf::PerfFix(PerfReason::kNoPmuFolder, "", p.sysfs_root),
          "no perf_event PMU folder",
          devices::perf::PerfReasonName(PerfReason::kNoPmuFolder),
          runtime::Rejection::kUnavailable);
  } else {
    r.Add("PMU folder", State::kOk,
          fmt::format("{}: {} PMUs", p.pmu_folder_path, p.num_pmus));
    if (!p.uncore_pmus.empty()) {
      r.Add("uncore PMUs", State::kOk,
            fmt::format("{}: {}", p.uncore_pmus.size(),
                        CompactPmuList(p.uncore_pmus)));
    } else {
      r.Add("uncore PMUs", State::kFail,
            fmt::format("no uncore_* PMU under {}: the kernel's uncore "
                        "driver is not loaded or has nothing to drive here",
                        p.pmu_folder_path),
            NoUncorePmuFix(m, p), "no uncore_* PMU",
            devices::perf::PerfReasonName(PerfReason::kNoUncorePmus),
            runtime::Rejection::kUnavailable);
    }
    if (p.other_pmus.empty()) {
      r.Add("other PMUs", State::kSkip,
            "none besides the software PMUs (software, tracepoint, ...)");
    } else {
      std::vector<std::string> described;
      for (const devices::perf::OtherPmu& o : p.other_pmus) {
        std::vector<std::string> aliases = o.aliases;
        if (aliases.size() > 4) {
          aliases.resize(4);
          aliases.push_back("...");
        }
        described.push_back(aliases.empty()
                                ? o.name
                                : fmt::format("{} (events: {})", o.name,
                                              common::Join(aliases, " ")));
      }
      r.Add("other PMUs", State::kOk,
            fmt::format("{} (countable with raw specs such as msr/tsc/, "
                        "power/energy-pkg/)",
                        common::Join(described, ", ")));
    }
  }

  // Permission for system-wide counting.
  const std::string_view permission_code =
      devices::perf::PerfReasonName(p.permission);
  if (!p.paranoid) {
    if (p.pmu_folder) {
      r.Add("perf_event_paranoid", State::kFail, p.permission_detail,
            p.permission_fix, "perf_event_paranoid unreadable", permission_code,
            PerfRejection(p.permission));
    } else {
      r.Add("perf_event_paranoid", State::kSkip,
            fmt::format("{} (no perf_event here)", p.permission_detail), "", "",
            permission_code);
    }
  } else {
    const int v = *p.paranoid;
    const std::string detail =
        fmt::format("{} ({}); system-wide counting {}", v,
                    devices::perf::ParanoidMeaning(v), p.permission_detail);
    if (p.permission == PerfReason::kOk) {
      r.Add("perf_event_paranoid", State::kOk, detail, "", "", permission_code);
    } else {
      r.Add("perf_event_paranoid", State::kFail, detail, p.permission_fix,
            fmt::format("perf_event_paranoid is {} and this process lacks "
                        "CAP_PERFMON",
                        v),
            permission_code, PerfRejection(p.permission));
    }
  }

  // Trials.
  if (p.other_trial.tried()) {
    AddTrial(p.other_trial, &r);
  } else {
    r.Add("trial msr/tsc/", State::kSkip,
          p.pmu_folder ? "no msr PMU here" : "no PMU folder", "", "",
          devices::perf::PerfReasonName(PerfReason::kNotTried));
  }
  if (p.uncore_trial.tried()) {
    AddTrial(p.uncore_trial, &r);
  } else {
    r.Add("trial uncore event", State::kSkip, "no uncore_* PMU to try", "", "",
          devices::perf::PerfReasonName(PerfReason::kNotTried));
  }

  r.usable = p.uncore_usable();
  if (r.usable) {
    r.summary = "usable: the kernel's uncore PMUs count here";
  } else if (p.other_usable()) {
    r.summary = fmt::format(
        "not usable for the uncore; counts other PMUs' events (e.g. {})",
        p.other_trial.spec);
  } else {
    r.summary = "not usable here";
  }
  return r;
}

BackendReport CheckDirect(const Machine& m, const DoctorOptions& in,
                          DirectFacts* f) {
  BackendReport r;
  r.name = "direct";
  r.summary = "not usable here";
  using runtime::Rejection;
  if (!m.cpu || m.register_platform == nullptr) {
    // No platform to probe; the machine's msr devices are still facts.
    f->msr = registers::ProbeMsrAccess(in.dev_cpu);
  }
  if (!m.cpu) {
    r.Add(
        "CPU", State::kFail, m.cpu_error,
        fmt::format("make {} readable (mount -t proc proc /proc)", in.cpuinfo),
        "the CPU is unknown", "cpu_unknown", Rejection::kUnavailable);
    return r;
  }
  if (m.register_platform == nullptr) {
    std::vector<std::string> platforms;
    for (const runtime::RegisterPlatform& p : runtime::RegisterPlatforms()) {
      platforms.push_back(fmt::format("{} ({})", p.name(), p.identity().title));
    }
    r.Add("register platform", State::kFail,
          fmt::format("{} is not a CPU of a register platform ({})",
                      m.CpuText(), runtime::RegisterPlatformNames()),
          fmt::format("the direct backend programs a register platform's own "
                      "registers: run on a CPU of {}; elsewhere use the perf "
                      "backend (UNCORE_BACKEND=perf); or {}",
                      common::Join(platforms, ", "), SimHint()),
          "no register platform for this CPU", "no_register_platform",
          Rejection::kUnavailable);
    return r;
  }

  // The CPU is the register platform's; the platform probes the rest.
  const runtime::RegisterPlatform& platform = *m.register_platform;
  r.Add(fmt::format("{} CPU", ShortTitle(platform.identity().title)),
        State::kOk, m.CpuText(), "", "", "ok");
  runtime::DirectProbeRequest request;
  request.sysfs_root = in.sysfs;
  request.cpuinfo = in.cpuinfo;
  request.dev_cpu_root = in.dev_cpu;
  request.cap_sys_rawio = m.privileges.Cap(kCapSysRawio);
  request.trial_time = kTrialTime;
  runtime::DirectProbe probe = platform.probe_direct(request);
  for (runtime::ProbeCheck& c : probe.checks) {
    const State state = c.state == runtime::ProbeState::kOk     ? State::kOk
                        : c.state == runtime::ProbeState::kFail ? State::kFail
                                                                : State::kSkip;
    r.Add(std::move(c.name), state, std::move(c.detail), std::move(c.fix),
          c.why, c.code, c.rejection);
  }
  f->msr = std::move(probe.msr);
  f->pci_per_socket = std::move(probe.pci_per_socket);
  f->trial_stage = std::move(probe.trial_stage);
  r.usable = probe.usable;
  if (r.usable) r.summary = std::move(probe.summary);
  return r;
}

// ---- sim --------------------------------------------------------------------

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
          "says SIMULATED",
          "", "", "ok");
    r.summary =
        fmt::format("usable everywhere, with made-up counts: {}", SimHint());
  } else {
    r.Add("simulator", State::kFail, common::StatusMessage(status),
          "a bug in the SDK: report it with this output",
          "the simulator does not open", "failed");
    r.summary = "not usable (a bug)";
  }
  return r;
}

Verdict Decide(const BackendReport& perf, const BackendReport& direct,
               const PerfProbe& pf) {
  Verdict v;
  runtime::AutoProbes probes;
  probes.perf = perf.Probe();
  probes.direct = direct.Probe();
  v.decision = runtime::DecideAutoBackend(probes);

  // Other PMUs' events (msr/tsc/): perf counts them when its trial opened;
  // direct never does.
  runtime::AutoProbes other;
  other.perf =
      pf.other_usable()
          ? runtime::BackendProbe::Usable()
          : runtime::BackendProbe::Rejected(
                PerfRejection(pf.other_trial.reason),
                pf.other_trial.tried() ? pf.other_trial.error : "no msr PMU");
  other.direct = runtime::BackendProbe::Rejected(
      runtime::Rejection::kUnavailable,
      "the direct backend counts its register platform's uncore events "
      "only");
  v.other = runtime::DecideAutoBackend(other);

  switch (v.decision.backend) {
    case runtime::BackendKind::kPerf:
      v.line = fmt::format(
          "auto → perf: the kernel's uncore PMUs open here ({} of them)",
          pf.uncore_pmus.size());
      break;
    case runtime::BackendKind::kDirect:
      v.line = fmt::format(
          "auto → direct: perf cannot count the uncore here ({}), the direct "
          "backend can",
          v.decision.rejected.front().detail);
      break;
    case runtime::BackendKind::kOff:
      v.line = fmt::format(
          "auto → off: no uncore counters are reachable here ({}); {}",
          v.decision.RejectedText(), SimHint());
      break;
  }
  if (v.other.backend == runtime::BackendKind::kPerf) {
    v.line += fmt::format(
        ". Other PMUs' events ({} ...) do count with perf here, and auto "
        "picks perf for them",
        pf.other_trial.spec);
  }
  v.exit_status = v.decision.backend == runtime::BackendKind::kOff
                      ? kExitNoUncoreBackend
                      : kExitOk;
  return v;
}

std::string YesNo(bool b) { return b ? "yes" : "no"; }

std::string_view ShortTitle(std::string_view title) {
  if (const size_t open = title.rfind('(');
      open != std::string_view::npos && title.ends_with(')')) {
    return title.substr(open + 1, title.size() - open - 2);
  }
  return title;
}

}  // namespace uncore::cli::doctor
