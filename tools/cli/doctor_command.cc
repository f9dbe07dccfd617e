// `uncore doctor`: which backends can count here, and exactly why the others
// cannot, each problem with the command that fixes it.  This file parses the
// arguments; doctor_report.{h,cc} gathers the SDK's probes and renders them.
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
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "tools/cli/commands.h"
#include "tools/cli/doctor_report.h"

namespace uncore::cli {
namespace {

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

// The files doctor reads (doctor_report.h).
using Paths = DoctorInputs;

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

  DoctorInputs inputs = paths;
  inputs.json = json_output;
  return RunDoctorReport(inputs, out);
}

}  // namespace uncore::cli
