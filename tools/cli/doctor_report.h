// `uncore doctor`'s output: renders the checks of doctor_checks.h as a
// report for people or as one JSON object.  The facts and their reason codes
// come from the SDK (machine::ReadCpuIdentity, registers::ProbeMsrAccess,
// devices::perf::ProbePerf, machine::DiscoverTopology, a direct-device
// trial, the simulator) and the verdict from runtime::DecideAutoBackend, the
// policy sessions use; doctor_checks.cc turns the codes into checks and
// fixes, and this file only renders them.
//
//   DoctorOptions in;            // the real machine's files
//   in.json = true;
//   int status = RunDoctorReport(in, stdout);   // 0: perf or direct counts
//
// Exit status: 0 when perf or direct can count the uncore here, 1 when
// neither can.
#ifndef UNCORE_TOOLS_CLI_DOCTOR_REPORT_H_
#define UNCORE_TOOLS_CLI_DOCTOR_REPORT_H_

#include <cstdio>
#include <string>

#include "tools/cli/commands.h"

namespace uncore::cli {

// Where doctor reads the machine's facts (tests point these at fixtures).
inline constexpr int kExitNoUncoreBackend = 1;

// Probes, prints the report (or JSON) to `out`, returns the exit status.
int RunDoctorReport(const DoctorOptions& inputs, std::FILE* out);

}  // namespace uncore::cli

#endif  // UNCORE_TOOLS_CLI_DOCTOR_REPORT_H_
