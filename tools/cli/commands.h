// The `uncore` CLI's sub-commands.  Each takes its arguments (after the
// sub-command name), writes its report to `out` and errors to `err`, and
// returns the process exit status: 0 on success, 2 on bad arguments.
// `stat` passes the command's exit status through and `doctor` returns 1
// when no real backend can count the uncore (see each command's file).
#ifndef UNCORE_TOOLS_CLI_COMMANDS_H_
#define UNCORE_TOOLS_CLI_COMMANDS_H_

#include <cstdio>
#include <span>
#include <string_view>

namespace uncore::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;

int ListCommand(std::span<const std::string_view> args, std::FILE* out,
                std::FILE* err);
int DescribeCommand(std::span<const std::string_view> args, std::FILE* out,
                    std::FILE* err);
// uncore stat -e SPECS [-M METRICS] [-I MS] [...] -- COMMAND [ARGS...]: counts
// while COMMAND runs; the report and interval lines go to `err` (a table) or
// to -o FILE.  Returns COMMAND's exit status (128+N for signal N), 127 when
// it cannot run, 125 when the counters cannot be opened, 2 on bad arguments.
int StatCommand(std::span<const std::string_view> args, std::FILE* out,
                std::FILE* err);
// uncore doctor [--json]: which backends work here, why not, and the fixes.
// Returns 0 when perf or direct can count the uncore, 1 otherwise.
int DoctorCommand(std::span<const std::string_view> args, std::FILE* out,
                  std::FILE* err);

}  // namespace uncore::cli

#endif  // UNCORE_TOOLS_CLI_COMMANDS_H_
