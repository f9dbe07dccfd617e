// `uncore doctor`: which backends can count here, and exactly why the others
// cannot, each problem with the command that fixes it.  main.cc parses its
// options; doctor_checks.{h,cc} turns the SDK's probes into checks and
// doctor_report.{h,cc} renders them.
//
//   uncore doctor          # a report for people
//   uncore doctor --json   # the same as one JSON object
//
// Checks, in order: the CPU (/proc/cpuinfo), the kernel, this process's
// privileges (uid and CapEff from /proc/self/status); perf: the PMU folder,
// uncore_* PMUs, other PMUs, perf_event_paranoid against the privileges, and
// two trials (PerfDevice::Open + Program + two snapshots of msr/tsc/ and of
// one event of an uncore PMU); direct: the CPU's register platform
// (runtime::RegisterPlatforms()), then that platform's own probe
// (RegisterPlatform::probe_direct): the msr driver, MSR access (open and one
// read of IA32_TIME_STAMP_COUNTER), what else its backend needs (IvyTown: the
// uncore PCI functions per socket; the Xeon 7500 / E7: the sockets, MSRs
// only), and a trial through the backend's own stack (Program, which refuses
// boxes another agent uses, two snapshots, Release restores every
// register); sim: the simulator opens.  The verdict says which backend
// `auto` picks here.
//
// Exit status: 0 when perf or direct can count the uncore here, 1 when
// neither can (other PMUs, such as msr/tsc/, may still count), 2 for bad
// arguments.
#include <cstdio>

#include "tools/cli/commands.h"
#include "tools/cli/doctor_report.h"

namespace uncore::cli {

int RunDoctor(const DoctorOptions& options, std::FILE* out,
              std::FILE* /*err*/) {
  return RunDoctorReport(options, out);
}

}  // namespace uncore::cli
