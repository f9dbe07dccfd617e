#include "tools/cli/doctor_report.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "sdk/common/json.h"
#include "sdk/common/text.h"
#include "sdk/devices/perf/perf_probe.h"
#include "sdk/devices/perf/read_locality.h"
#include "sdk/registers/msr_access_probe.h"
#include "sdk/report/report.h"
#include "sdk/runtime/backend_policy.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/platform_catalog.h"
#include "tools/cli/doctor_checks.h"
#include "tools/cli/read_cost.h"

namespace uncore::cli {
namespace {

using devices::perf::kCapPerfmon;
using devices::perf::kCapSysAdmin;
using devices::perf::kCapSysRawio;
using devices::perf::ProcessPrivileges;
using doctor::BackendReport;
using doctor::Check;
using doctor::DirectFacts;
using doctor::Machine;
using doctor::State;
using doctor::Verdict;
using doctor::YesNo;

std::string PrivilegesText(const ProcessPrivileges& p) {
  std::string text =
      p.uid ? fmt::format("uid {}{}", *p.uid, p.root() ? " (root)" : "")
            : std::string("uid unknown");
  if (p.cap_eff) {
    text += fmt::format(
        "; CapEff 0x{:016x}: CAP_PERFMON {}{}, CAP_SYS_ADMIN {}, "
        "CAP_SYS_RAWIO {}",
        *p.cap_eff, YesNo(p.Cap(kCapPerfmon)),
        p.kernel_knows_perfmon ? "" : " (ignored: Linux < 5.8)",
        YesNo(p.Cap(kCapSysAdmin)), YesNo(p.Cap(kCapSysRawio)));
  } else {
    text += "; capabilities unknown (no CapEff line)";
  }
  return text;
}

// ---- output -----------------------------------------------------------------

void StringOrNull(std::string_view s, common::JsonWriter* json) {
  if (s.empty()) {
    json->Null();
  } else {
    json->String(s);
  }
}

void WriteChecksJson(const BackendReport& r, common::JsonWriter* json) {
  json->Key("usable");
  json->Bool(r.usable);
  json->Key("summary");
  json->String(r.summary);
  json->Key("why_not");
  StringOrNull(r.why_not, json);
  json->Key("checks");
  json->BeginArray();
  for (const Check& c : r.checks) {
    json->BeginObject();
    json->Key("name");
    json->String(c.name);
    json->Key("status");
    json->String(doctor::StateName(c.state));
    json->Key("detail");
    json->String(c.detail);
    json->Key("fix");
    StringOrNull(c.fix, json);
    json->Key("reason");
    StringOrNull(c.reason, json);
    json->EndObject();
  }
  json->EndArray();
}

void WriteDecision(const runtime::AutoDecision& d, common::JsonWriter* json) {
  json->BeginArray();
  for (const runtime::RejectedBackend& r : d.rejected) {
    json->BeginObject();
    json->Key("backend");
    json->String(runtime::BackendKindName(r.backend));
    json->Key("reason");
    json->String(runtime::RejectionName(r.rejection));
    json->Key("detail");
    json->String(r.detail);
    json->EndObject();
  }
  json->EndArray();
}

// The generated perf-only platforms (docs/platforms.md) matching the CPU:
// the one its stepping picks, else every one of its model.
std::vector<std::string> GeneratedPlatforms(const machine::CpuIdentity& cpu) {
  std::vector<std::string> out;
  if (cpu.stepping >= 0) {
    if (const perfmon::Platform* p = spec::PlatformForCpu(
            cpu.vendor, cpu.family, cpu.model, cpu.stepping)) {
      return {std::string(p->name)};
    }
  }
  for (const perfmon::Platform* p :
       spec::PlatformsForModel(cpu.vendor, cpu.family, cpu.model)) {
    out.emplace_back(p->name);
  }
  return out;
}

// ": IvyTown" (the short title of the CPU's register platform: its direct
// backend is probed below) or ": no register platform".
std::string RegisterPlatformText(const Machine& m) {
  if (m.register_platform == nullptr) return ": no register platform";
  return fmt::format(": {}",
                     doctor::ShortTitle(m.register_platform->identity().title));
}

std::string PlatformText(const Machine& m) {
  if (m.platform != nullptr && !m.platform->tabled()) {
    return fmt::format("{} (built in: every backend)", m.platform->name());
  }
  const std::vector<std::string> names =
      m.cpu ? GeneratedPlatforms(*m.cpu) : std::vector<std::string>();
  if (names.empty()) {
    return "none of the supported ones (uncore list --platforms)";
  }
  return fmt::format(
      "{}{} (from vendor data: sessions and `uncore stat` use its names "
      "and count them through perf where the kernel shows its PMUs, see "
      "perf below; uncore list --platform {})",
      common::Join(names, " or "), names.size() > 1 ? ", by stepping" : "",
      names.front());
}

// ---- reads ------------------------------------------------------------------

// What a boundary costs in reads for each event perf tried here (msr/tsc/,
// an uncore event), and how each PMU here is read (read_locality.h).
struct TrialReads {
  std::string spec;
  ReadCost cost;
};

std::vector<TrialReads> PlanTrialReads(const devices::perf::PerfProbe& pf) {
  std::vector<TrialReads> out;
  if (!pf.pmu_folder) return out;
  for (const devices::perf::PerfTrial* t :
       {&pf.other_trial, &pf.uncore_trial}) {
    if (t->spec.empty()) continue;
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(t->spec);
    if (!e.ok()) continue;
    out.push_back({t->spec, PlanReadCost({*e}, pf.sysfs_root)});
  }
  return out;
}

// The PMUs here by how a read reaches them: uncore_* and the others.
std::vector<std::string> PmuNames(const devices::perf::PerfProbe& pf) {
  std::vector<std::string> names = pf.uncore_pmus;
  for (const devices::perf::OtherPmu& o : pf.other_pmus) {
    names.push_back(o.name);
  }
  return names;
}

std::string ReadsText(const devices::perf::PerfProbe& pf,
                      const std::vector<TrialReads>& trials) {
  if (!pf.pmu_folder) return "";
  std::string text =
      "\nreads: what a region boundary costs in reads here, and which reads "
      "cross CPUs (uncore describe SPEC says it for any event or metric)\n";
  using devices::perf::ReadLocality;
  for (ReadLocality l : {ReadLocality::kPackage, ReadLocality::kEventCpu,
                         ReadLocality::kUnknown}) {
    std::vector<std::string> names;
    for (const std::string& n : PmuNames(pf)) {
      if (devices::perf::PmuReadLocality(n) == l) names.push_back(n);
    }
    if (names.empty()) continue;
    if (names.size() > 6) {
      const size_t more = names.size() - 4;
      names.resize(4);
      names.push_back(fmt::format("... ({} more)", more));
    }
    text += fmt::format(
        "  {:<10} {}: {}\n", devices::perf::ReadLocalityName(l),
        common::Join(names, " "),
        l == ReadLocality::kPackage
            ? "read locally from any CPU of the event's socket, an IPI from "
              "other sockets"
        : l == ReadLocality::kEventCpu
            ? "read locally only on the event's CPU, an IPI from any other"
            : "not classified by the SDK: assumed an IPI from any CPU but "
              "the event's");
  }
  for (const TrialReads& t : trials) {
    text += fmt::format("  event      {}\n", t.spec);
    std::string lines;
    ReadCostText(t.cost, &lines);
    for (std::string_view line : common::Split(lines, '\n')) {
      if (!line.empty()) text += fmt::format("  {}\n", line);
    }
  }
  return text;
}

void WriteReadsJson(const devices::perf::PerfProbe& pf,
                    const std::vector<TrialReads>& trials,
                    common::JsonWriter* json) {
  json->BeginObject();
  json->Key("pmus");
  json->BeginArray();
  for (const std::string& n : PmuNames(pf)) {
    json->BeginObject();
    json->Key("name");
    json->String(n);
    json->Key("locality");
    json->String(
        devices::perf::ReadLocalityName(devices::perf::PmuReadLocality(n)));
    json->EndObject();
  }
  json->EndArray();
  json->Key("events");
  json->BeginArray();
  for (const TrialReads& t : trials) {
    json->BeginObject();
    json->Key("spec");
    json->String(t.spec);
    json->Key("reads");
    ReadCostJson(t.cost, json);
    json->EndObject();
  }
  json->EndArray();
  json->EndObject();
}

std::string FormatJson(const Machine& m, const devices::perf::PerfProbe& pf,
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
  json.String(m.cpu ? m.cpu->model_name : "");
  json.Key("description");
  json.String(m.CpuText());
  // Kept for the readers from before register_platform: this key names a
  // platform, so it matches that platform's record by name.
  json.Key("ivytown");
  json.Bool(m.platform != nullptr && m.platform->name() == "ivytown");
  json.Key("register_platform");  // whose direct backend `direct` probes
  if (m.register_platform != nullptr) {
    json.String(m.register_platform->name());
  } else {
    json.Null();
  }
  json.Key("hypervisor");
  json.Bool(m.hypervisor());
  json.Key("platforms");  // the generated perf-only platforms that match
  json.StringArray(m.cpu ? GeneratedPlatforms(*m.cpu)
                         : std::vector<std::string>());
  json.EndObject();
  json.Key("kernel");
  json.String(m.privileges.kernel);
  json.Key("privileges");
  json.BeginObject();
  json.Key("uid");
  if (m.privileges.uid) {
    json.Int(*m.privileges.uid);
  } else {
    json.Null();
  }
  json.Key("root");
  json.Bool(m.privileges.root());
  json.Key("cap_eff");
  if (m.privileges.cap_eff) {
    json.String(fmt::format("0x{:016x}", *m.privileges.cap_eff));
  } else {
    json.Null();
  }
  json.Key("cap_perfmon");
  json.Bool(m.privileges.Cap(kCapPerfmon));
  json.Key("cap_sys_admin");
  json.Bool(m.privileges.Cap(kCapSysAdmin));
  json.Key("cap_sys_rawio");
  json.Bool(m.privileges.Cap(kCapSysRawio));
  json.EndObject();

  json.Key("perf");
  json.BeginObject();
  WriteChecksJson(perf, &json);
  json.Key("reason");
  json.String(devices::perf::PerfReasonName(pf.uncore_reason));
  json.Key("usable_for_other_pmus");
  json.Bool(pf.other_usable());
  json.Key("pmu_folder");
  json.Bool(pf.pmu_folder);
  json.Key("uncore_pmus");
  json.StringArray(pf.uncore_pmus);
  json.Key("other_pmus");
  json.BeginArray();
  for (const devices::perf::OtherPmu& o : pf.other_pmus) json.String(o.name);
  json.EndArray();
  json.Key("perf_event_paranoid");
  if (pf.paranoid) {
    json.Int(*pf.paranoid);
  } else {
    json.Null();
  }
  json.Key("permission_reason");
  json.String(devices::perf::PerfReasonName(pf.permission));
  json.EndObject();

  json.Key("direct");
  json.BeginObject();
  WriteChecksJson(direct, &json);
  json.Key("msr_devices");
  json.Int(df.msr.msr_devices);
  json.Key("msr_safe_devices");
  json.Int(df.msr.msr_safe_devices);
  json.Key("msr_access_reason");
  json.String(registers::MsrAccessReasonName(df.msr.reason));
  json.Key("pci_functions_per_socket");
  json.BeginArray();
  for (int n : df.pci_per_socket) json.Int(n);
  json.EndArray();
  json.Key("trial_stage");
  StringOrNull(df.trial_stage, &json);
  json.EndObject();

  json.Key("sim");
  json.BeginObject();
  WriteChecksJson(sim, &json);
  json.EndObject();

  json.Key("reads");
  WriteReadsJson(pf, PlanTrialReads(pf), &json);

  json.Key("verdict");
  json.BeginObject();
  json.Key("auto");
  json.String(runtime::BackendKindName(v.decision.backend));
  json.Key("auto_for_other_pmus");
  json.String(runtime::BackendKindName(v.other.backend));
  json.Key("rejected");
  WriteDecision(v.decision, &json);
  json.Key("line");
  json.String(v.line);
  json.Key("exit_status");
  json.Int(v.exit_status);
  json.EndObject();
  json.EndObject();
  return json.Take();
}

std::string FormatText(const Machine& m, const devices::perf::PerfProbe& pf,
                       const BackendReport& perf, const BackendReport& direct,
                       const BackendReport& sim, const Verdict& v) {
  std::string text;
  text += fmt::format("cpu         {}{}{}\n", m.CpuText(),
                      m.hypervisor() ? ", virtual machine" : "",
                      RegisterPlatformText(m));
  text += fmt::format("platform    {}\n", PlatformText(m));
  text += fmt::format("kernel      {}\n", m.privileges.kernel);
  text += fmt::format("privileges  {}\n", PrivilegesText(m.privileges));
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
  text += ReadsText(pf, PlanTrialReads(pf));
  text += fmt::format("\nverdict: {}\n", v.line);
  return text;
}

}  // namespace

int RunDoctorReport(const DoctorOptions& inputs, std::FILE* out) {
  const Machine machine = doctor::GatherMachine(inputs);
  devices::perf::PerfProbeOptions perf_options;
  perf_options.sysfs_root = inputs.sysfs;
  perf_options.paranoid_path = inputs.paranoid;
  perf_options.privileges = machine.privileges;
  perf_options.trial_time = doctor::kTrialTime;
  const devices::perf::PerfProbe perf_probe =
      devices::perf::ProbePerf(perf_options);
  DirectFacts direct_facts;
  const BackendReport perf = doctor::CheckPerf(machine, perf_probe);
  const BackendReport direct =
      doctor::CheckDirect(machine, inputs, &direct_facts);
  const BackendReport sim = doctor::CheckSim();
  const Verdict verdict = doctor::Decide(perf, direct, perf_probe);
  if (inputs.json) {
    fmt::print(out, "{}\n",
               FormatJson(machine, perf_probe, direct_facts, perf, direct, sim,
                          verdict));
  } else {
    fmt::print(out, "{}",
               FormatText(machine, perf_probe, perf, direct, sim, verdict));
  }
  return verdict.exit_status;
}

}  // namespace uncore::cli
