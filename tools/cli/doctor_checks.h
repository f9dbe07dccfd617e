// `uncore doctor`'s checks: the SDK's probe results turned into named
// checks (ok / fail / skip, detail, fix, reason code) per backend, and the
// verdict of runtime::DecideAutoBackend.  doctor_report.cc renders them.
//
//   const Machine m = GatherMachine(inputs);
//   const BackendReport perf = CheckPerf(m, devices::perf::ProbePerf(...));
//   const Verdict v = Decide(perf, CheckDirect(m, inputs, &facts), probe);
//
// The direct checks come from the CPU's register platform
// (runtime::RegisterPlatforms(): its probe_direct), never from a branch
// per platform here.
//
// Internal to the CLI.
#ifndef UNCORE_TOOLS_CLI_DOCTOR_CHECKS_H_
#define UNCORE_TOOLS_CLI_DOCTOR_CHECKS_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sdk/devices/perf/perf_probe.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/common/platform_records.h"
#include "sdk/registers/msr_access_probe.h"
#include "sdk/runtime/backend_policy.h"
#include "sdk/runtime/backends.h"
#include "tools/cli/doctor_report.h"

namespace uncore::cli::doctor {

using devices::perf::PerfProbe;
using devices::perf::ProcessPrivileges;
using registers::MsrAccessProbe;

inline constexpr auto kTrialTime = std::chrono::milliseconds(2);

enum class State { kOk, kFail, kSkip };

inline std::string_view StateName(State s) {
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
  std::string fix;     // set for every failure
  std::string reason;  // the probe's reason code, "" when none
};

struct BackendReport {
  std::string name;
  bool usable = false;
  std::string summary;  // one line
  std::string why_not;  // the failures, short
  // The first failure's rejection, for the auto policy.
  runtime::Rejection rejection = runtime::Rejection::kNone;
  std::vector<Check> checks;

  // `why`: a few words for the verdict when the check fails; `reason`: the
  // probe's code.
  void Add(std::string check_name, State state, std::string detail,
           std::string fix = "", std::string_view why = "",
           std::string_view reason = "",
           runtime::Rejection rejection = runtime::Rejection::kFailed) {
    if (state == State::kFail) {
      if (!why_not.empty()) why_not += ", ";
      why_not += why.empty() ? check_name + " failed" : std::string(why);
      if (this->rejection == runtime::Rejection::kNone) {
        this->rejection = rejection;
      }
    }
    checks.push_back({std::move(check_name), state, std::move(detail),
                      std::move(fix), std::string(reason)});
  }

  runtime::BackendProbe Probe() const {
    if (usable) return runtime::BackendProbe::Usable();
    return runtime::BackendProbe::Rejected(
        rejection == runtime::Rejection::kNone ? runtime::Rejection::kFailed
                                               : rejection,
        why_not.empty() ? "not usable" : why_not);
  }
};

struct Machine {
  std::optional<machine::CpuIdentity> cpu;  // machine::ReadCpuIdentity
  std::string cpu_error;
  ProcessPrivileges privileges;  // devices::perf::ReadProcessPrivileges

  // The CPU's platform record (runtime::PlatformOfCpu), or nullptr.
  const platforms::PlatformRecord* platform = nullptr;
  // That record's entry in runtime::RegisterPlatforms(): the platform whose
  // direct backend (and its probe) serves this CPU; nullptr: none does.
  const runtime::RegisterPlatform* register_platform = nullptr;

  bool hypervisor() const { return cpu && cpu->hypervisor; }
  // "GenuineIntel family 6 model 0x3e (Intel(R) Xeon(R) ...)".
  std::string CpuText() const;
};

struct DirectFacts {
  MsrAccessProbe msr;
  std::vector<int> pci_per_socket;
  std::string trial_stage;  // devices::TrialStageName, "" when not tried
};

struct Verdict {
  runtime::AutoDecision decision;  // for uncore events
  runtime::AutoDecision other;     // for other PMUs' events
  std::string line;
  int exit_status = 0;
};

// The CPU (machine::ReadCpuIdentity, with the model name and the
// hypervisor flag) and this process's privileges.
Machine GatherMachine(const DoctorOptions& in);

// perf's checks, from devices::perf::ProbePerf's result.
BackendReport CheckPerf(const Machine& m, const PerfProbe& p);

// direct's checks: the CPU's register platform (one failed check when it
// has none), then that platform's own probe (RegisterPlatform::
// probe_direct: the msr driver, MSR access, what else its backend needs,
// and a trial when all pass).
BackendReport CheckDirect(const Machine& m, const DoctorOptions& in,
                          DirectFacts* f);

// The simulator opens and programs.
BackendReport CheckSim();

// runtime::DecideAutoBackend on the checks, for uncore events and for
// other PMUs' events.
Verdict Decide(const BackendReport& perf, const BackendReport& direct,
               const PerfProbe& pf);

// "yes" or "no".
std::string YesNo(bool b);

// A platform's short name from its title: "IvyTown" from "Xeon E5 v2 / E7
// v2 (IvyTown)" (the parenthesized end), else the whole title.
std::string_view ShortTitle(std::string_view title);

}  // namespace uncore::cli::doctor

#endif  // UNCORE_TOOLS_CLI_DOCTOR_CHECKS_H_
