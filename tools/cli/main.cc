// uncore: list the IvyTown uncore catalog and describe event encodings.
//
//   uncore list [PATTERN] [--json] [--metrics]
//   uncore describe SPEC [--json] [--registers]
#include <cstdio>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "tools/cli/commands.h"

namespace {

constexpr std::string_view kUsage =
    "usage: uncore COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  list [PATTERN] [--json] [--metrics]\n"
    "      the event catalog (and derived metrics); PATTERN is a box name\n"
    "      (cbo, imc, ...) or a case-insensitive substring of BOX/EVENT.UMASK\n"
    "  describe SPEC [--json] [--registers]\n"
    "      how SPEC is encoded: control value, filter values, allowed\n"
    "      counters and the registers it would write; SPEC may be a metric;\n"
    "      --registers: the direct backend's exact ordered write sequence\n"
    "      (step, register, location, value, why) on a simulated socket\n"
    "  help\n"
    "      this text\n"
    "\n"
    "examples:\n"
    "  uncore list imc\n"
    "  uncore describe 'cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f'\n"
    "  uncore describe metric/MEM_BW_TOTAL\n"
    "  uncore describe --registers 'cbo[3]/LLC_VICTIMS.M_STATE'\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    fmt::print(stderr, "{}", kUsage);
    return uncore::cli::kExitUsage;
  }
  const std::string_view command = args[0];
  std::span<const std::string_view> rest(args.data() + 1, args.size() - 1);
  if (command == "help" || command == "--help" || command == "-h") {
    fmt::print(stdout, "{}", kUsage);
    return uncore::cli::kExitOk;
  }
  if (command == "list") return uncore::cli::ListCommand(rest, stdout, stderr);
  if (command == "describe") {
    return uncore::cli::DescribeCommand(rest, stdout, stderr);
  }
  fmt::print(stderr, "uncore: unknown command '{}'\n\n{}", command, kUsage);
  return uncore::cli::kExitUsage;
}
