// The `uncore` CLI's sub-commands.  Each takes its arguments (after the
// sub-command name), writes its report to `out` and errors to `err`, and
// returns the process exit status: 0 on success, 2 on bad arguments.
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

}  // namespace uncore::cli

#endif  // UNCORE_TOOLS_CLI_COMMANDS_H_
