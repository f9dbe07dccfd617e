// `uncore doctor`'s work: gathers each layer's structured probe and renders
// them as a report for people or as one JSON object (the checks themselves:
// doctor_checks.h).  The facts and their
// reason codes come from the SDK (machine::ReadCpuIdentity,
// registers::ProbeMsrAccess, devices::perf::ProbePerf, machine::
// DiscoverTopology, a direct-device trial, the simulator) and the verdict
// from runtime::DecideAutoBackend, the policy sessions use; this file only
// turns codes into checks, fixes and text.
//
//   DoctorInputs in;            // the real machine's files
//   in.json = true;
//   int status = RunDoctorReport(in, stdout);   // 0: perf or direct counts
//
// Exit status: 0 when perf or direct can count the uncore here, 1 when
// neither can.
#ifndef UNCORE_TOOLS_CLI_DOCTOR_REPORT_H_
#define UNCORE_TOOLS_CLI_DOCTOR_REPORT_H_

#include <cstdio>
#include <string>

namespace uncore::cli {

// Where doctor reads the machine's facts (tests point these at fixtures).
struct DoctorInputs {
  std::string sysfs = "/sys";
  std::string cpuinfo = "/proc/cpuinfo";
  std::string dev_cpu = "/dev/cpu";
  std::string paranoid = "/proc/sys/kernel/perf_event_paranoid";
  std::string proc_status = "/proc/self/status";
  bool json = false;  // one JSON object instead of the report
};

inline constexpr int kExitNoUncoreBackend = 1;

// Probes, prints the report (or JSON) to `out`, returns the exit status.
int RunDoctorReport(const DoctorInputs& inputs, std::FILE* out);

}  // namespace uncore::cli

#endif  // UNCORE_TOOLS_CLI_DOCTOR_REPORT_H_
