// The `uncore` CLI's sub-commands.  main.cc parses the command line with
// CLI11 into one options struct per sub-command; each Run* function takes
// its struct, writes its report to `out` and errors to `err`, and returns
// the process exit status: 0 on success, 2 on bad arguments (kExitUsage).
// `stat` passes the command's exit status through and `doctor` returns 1
// when no real backend can count the uncore (see each command's file).
#ifndef UNCORE_TOOLS_CLI_COMMANDS_H_
#define UNCORE_TOOLS_CLI_COMMANDS_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace uncore::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;

// uncore list [PATTERN] [--json] [--metrics]
struct ListOptions {
  std::string pattern;  // a box name or a substring of BOX/EVENT.UMASK
  bool json = false;
  bool metrics = false;    // the derived metrics instead of the events
  std::string platform;    // --platform NAME (UNCORE_PLATFORM); "": the
                           // default record's (DefaultPlatformName)
  bool platforms = false;  // --platforms: the platforms instead
};
int RunList(const ListOptions& options, std::FILE* out, std::FILE* err);

// uncore describe SPEC [--json] [--registers]
struct DescribeOptions {
  std::string spec;
  bool json = false;
  bool registers = false;      // the direct backend's ordered register writes
  std::string platform;        // --platform NAME (UNCORE_PLATFORM); "": the
                               // default record's (DefaultPlatformName)
  std::string sysfs = "/sys";  // where describe --platform looks for PMUs
};
int RunDescribe(const DescribeOptions& options, std::FILE* out, std::FILE* err);

// The perf-only platforms generated from vendor data (platform_command.cc):
// `uncore list --platforms`, `uncore list --platform NAME [PATTERN] [--json]
// [--metrics]` and `uncore describe --platform NAME SPEC [--json]`.
// A platform whose names are a register model's own catalog (its record's
// NameSource: IvyTown's) stays with RunList / RunDescribe.
bool IsModelCatalogPlatform(std::string_view name);
// The platform `list` and `describe` speak when none is named or detected:
// platforms::DefaultPlatformRecord()'s name.
std::string DefaultPlatformName();
// `platform` with UNCORE_PLATFORM filled in when it is empty.
std::string PlatformOrEnvironment(const std::string& platform);
// The platform a session would use on this machine when it is a tabled one
// (its CPU, with its PMUs visible: runtime/session_platform.h), else "".
std::string DetectedPlatform();
int RunListPlatforms(const ListOptions& options, std::FILE* out,
                     std::FILE* err);
int RunListPlatform(const ListOptions& options, std::FILE* out, std::FILE* err);
int RunDescribePlatform(const DescribeOptions& options, std::FILE* out,
                        std::FILE* err);

// uncore stat -e SPECS [-M METRICS] [-I MS] [...] -- COMMAND [ARGS...]:
// counts while COMMAND runs; the report and interval lines go to `err` (a
// table) or to -o FILE.  Returns COMMAND's exit status (128+N for signal N),
// 127 when it cannot run, 125 when the counters cannot be opened, 2 when
// there is nothing to count or a spec is bad.
struct StatOptions {
  std::vector<std::string> events;   // one spec each (lists already split)
  std::vector<std::string> metrics;  // metric names, with or without metric/
  uint64_t interval_ms = 0;          // 0: no interval lines
  std::string backend = "auto";      // one of runtime::kBackendNames
  // --platform / UNCORE_PLATFORM ("" decides from the CPU): whose names.
  std::string platform;
  std::vector<int> sockets;  // empty: every socket
  std::string output = "-";  // or a comma-separated list
  std::string trace;         // a Chrome trace file, "" for none
  bool multiplex = false;
  bool force = false;
  std::vector<std::string> command;  // not empty
};
inline constexpr uint64_t kMinIntervalMs = 10;
inline constexpr uint64_t kMaxIntervalMs = 86'400'000;
int RunStat(const StatOptions& options, std::FILE* out, std::FILE* err);

// uncore doctor [--json] [--sysfs DIR] [--cpuinfo FILE] [--dev-cpu DIR]
// [--paranoid FILE] [--proc-status FILE]: which backends work here, why not,
// and the fixes.  The paths read other copies of the system's files (tests,
// another machine's).  Returns 0 when perf or direct can count the uncore,
// 1 otherwise.
struct DoctorOptions {
  bool json = false;
  std::string sysfs = "/sys";
  std::string cpuinfo = "/proc/cpuinfo";
  std::string dev_cpu = "/dev/cpu";
  std::string paranoid = "/proc/sys/kernel/perf_event_paranoid";
  std::string proc_status = "/proc/self/status";
};
int RunDoctor(const DoctorOptions& options, std::FILE* out, std::FILE* err);

// uncore check [--quick] [--json] [--save] [--backend B] [--platform P]:
// runs kernels of known memory traffic and compares the counts with it
// (check_command.cc, docs/check.md).  Returns 0 when every check that ran
// passed, 1 when one failed or is suspicious, 3 when nothing could be
// checked, 4 when --save could not write.
struct CheckOptions {
  bool json = false;
  bool quick = false;  // smaller buffers, fewer passes: under 5 s
  bool save = false;   // write the result to runtime::CheckFilePath()
  std::string backend = "auto";
  std::string platform;  // --platform / UNCORE_PLATFORM
};
int RunCheck(const CheckOptions& options, std::FILE* out, std::FILE* err);

}  // namespace uncore::cli

#endif  // UNCORE_TOOLS_CLI_COMMANDS_H_
